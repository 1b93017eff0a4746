#!/usr/bin/env node
'use strict'

// bson2json's command line. Each subcommand lives in lib/cli/<name>.js and is one line of
// COMMANDS below; its `main(argv)` resolves to an exit status or throws: a UsageError (exit 2,
// with a hint to --help) or a CliError (its exit status) becomes one line on stderr here.
// Without a command name the arguments go to `dump`, the bsondump counterpart, so
// `bson2json FILE` keeps working.

// Node 22.1+ keeps V8's compiled code for the modules required from here on across runs, in
// $NODE_COMPILE_CACHE or else os.tmpdir()/node-compile-cache (NODE_DISABLE_COMPILE_CACHE=1 turns
// it off; docs/cli.md, "Start-up"). It never throws: where the directory cannot be written, the
// modules are compiled as without it. Node 20 has no such cache.
const { enableCompileCache } = require('module')
if (typeof enableCompileCache === 'function') enableCompileCache()

const { CliError, UsageError, version } = require('../lib/cli/usage')

const COMMANDS = {
  dump: { load: () => require('../lib/cli/dump'), summary: 'a mongodump .bson/.bson.gz file, archive or stdin to JSON (the default; like bsondump)' },
  export: { load: () => require('../lib/cli/export'), summary: 'a live collection to JSON or CSV (like mongoexport)' },
  cdc: { load: () => require('../lib/cli/cdc'), summary: 'a change stream into a Kafka topic, exactly once' },
  help: { load: null, summary: "a command's options: bson2json help [COMMAND]" },
}
const NAMES = Object.keys(COMMANDS)

function commandList() {
  const width = Math.max(...NAMES.map((n) => n.length))
  return NAMES.map((n) => `  ${n.padEnd(width)}  ${COMMANDS[n].summary}`).join('\n')
}

function overview() {
  return `bson2json ${version()} - BSON to JSON, fast

Usage:
  bson2json [dump] [options] [FILE]
  bson2json export --uri URI --db DB --collection COLL [options]
  bson2json cdc --uri URI --kafka HOST:PORT --topic T --checkpoint-topic T --id NAME [options]
  bson2json help [COMMAND]      bson2json COMMAND --help      bson2json --version

Commands:
${commandList()}

`
}

/** The prefix of this command's messages: `bson2json` for dump (the default), else `bson2json NAME`. */
const prefixOf = (name) => (name === 'dump' ? 'bson2json' : `bson2json ${name}`)

async function run(argv) {
  const first = argv[0]
  if (first === undefined && process.stdin.isTTY) {
    // Nothing to read: stdin is a terminal. Waiting silently would look like a hang.
    process.stderr.write(`bson2json: no input: give a FILE, or pipe BSON into stdin\n${overview().split('\n\n')[1]}\nTry 'bson2json --help'.\n`)
    return { name: 'dump', code: 2 }
  }
  if (first === '-h' || first === '--help') {
    process.stdout.write(overview() + COMMANDS.dump.load().HELP)
    return { name: 'dump', code: 0 }
  }
  if (first === 'help') {
    const topic = argv[1]
    if (topic === undefined || topic === 'help') {
      process.stdout.write(overview())
      return { name: 'help', code: 0 }
    }
    if (!Object.hasOwn(COMMANDS, topic)) throw Object.assign(new UsageError(`no command '${topic}' (commands: ${NAMES.join(', ')})`), { command: 'help' })
    process.stdout.write(COMMANDS[topic].load().HELP)
    return { name: 'help', code: 0 }
  }
  const explicit = first !== undefined && Object.hasOwn(COMMANDS, first)
  const name = explicit ? first : 'dump'
  const rest = explicit ? argv.slice(1) : argv
  try {
    return { name, code: await COMMANDS[name].load().main(rest, { implicit: !explicit }) }
  } catch (e) {
    if (e && typeof e === 'object' && e.command === undefined) e.command = name
    throw e
  }
}

run(process.argv.slice(2)).then(
  ({ code }) => {
    if (code !== undefined) process.exitCode = code
  },
  (e) => {
    const name = (e && e.command) || 'dump'
    const prefix = prefixOf(name)
    if (e instanceof UsageError) {
      process.stderr.write(`${prefix}: ${e.message}\nTry '${name === 'dump' || name === 'help' ? 'bson2json' : prefix} --help'.\n`)
    } else if (e instanceof CliError) {
      process.stderr.write(`${prefix}: ${e.message}\n`)
    } else {
      // A bug, not a failure the command knows: one line, the stack with BSON2JSON_DEBUG=1.
      const detail = process.env.BSON2JSON_DEBUG ? `\n${e && e.stack}` : ' (BSON2JSON_DEBUG=1 shows the stack)'
      process.stderr.write(`${prefix}: internal error: ${e && e.message ? e.message : e}${detail}\n`)
    }
    process.exitCode = e instanceof CliError ? e.exitCode : 1
  },
)
