'use strict'

/**
 * What every subcommand does with its command line before any work: parse it, answer
 * `--help`, or report a usage error in one line with exit code 2.
 */

/** A mistake in the command line (exit code 2), as opposed to a failure while running (1). */
class UsageError extends Error {}

/**
 * @param {string} command the subcommand's name, e.g. `export`
 * @param {(argv: string[]) => { help?: boolean }} parseArgs throws `UsageError` on bad input
 * @param {string[]} argv
 * @param {string} help the `--help` text
 * @returns the parsed options, or `null` when the command line has been answered (help or usage error)
 */
function parseCommandLine(command, parseArgs, argv, help) {
  let o
  try {
    o = parseArgs(argv)
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    process.stderr.write(`bson2json ${command}: ${e.message}\nTry 'bson2json ${command} --help'.\n`)
    process.exitCode = 2
    return null
  }
  if (o.help) {
    process.stdout.write(help)
    return null
  }
  return o
}

module.exports = { UsageError, parseCommandLine }
