#!/usr/bin/env node
'use strict'

/**
 * CLI: start the test server and print its connection string as the first
 * line of stdout. Diagnostics go to stderr. Exits on SIGINT / SIGTERM.
 *
 *   npm run test-server -- --port 27017
 */

const { parseArgs } = require('node:util')
const { startTestServer } = require('./index')

const HELP = `Usage: node tools/test-server/cli.js [options]

MongoDB wire-protocol TEST FIXTURE (not a database): an in-memory single-node
replica-set primary with change streams and fault injection.

Options:
  --port <n>              TCP port (default: a free port)
  --host <addr>           bind address (default: 127.0.0.1)
  --replica-set <name>    replica set name (default: rs0)
  --direct                print a directConnection=true URI instead of replicaSet=
  --split-threshold <n>   change event size limit in bytes (default: 16777216)
  --fault-rate <p>        random fault probability 0..1 on change-stream getMores (default: 0)
  --seed <n>              PRNG seed for random faults (default: 1)
  --verbose               also log every command on stderr
  --quiet                 no diagnostics on stderr
  -h, --help              show this help

The first line of stdout is the mongodb:// connection string.`

/**
 * Parse argv and run the server until a signal arrives.
 * @param {string[]} argv arguments after the script name
 * @returns {Promise<void>}
 */
async function main(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'replica-set': { type: 'string' },
      direct: { type: 'boolean' },
      'split-threshold': { type: 'string' },
      'fault-rate': { type: 'string' },
      seed: { type: 'string' },
      quiet: { type: 'boolean' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    process.stdout.write(HELP + '\n')
    return
  }
  const number = (name, value) => {
    if (value === undefined) return undefined
    const n = Number(value)
    if (!Number.isFinite(n)) throw new Error(`--${name} expects a number, got ${value}`)
    return n
  }
  const log = values.quiet ? undefined : (line) => process.stderr.write(`[test-server] ${line}\n`)
  const server = await startTestServer({
    port: number('port', values.port) ?? 0,
    host: values.host,
    replicaSet: values['replica-set'],
    directConnection: Boolean(values.direct),
    splitThresholdBytes: number('split-threshold', values['split-threshold']),
    faultRate: number('fault-rate', values['fault-rate']),
    seed: number('seed', values.seed),
    log,
    logCommands: Boolean(values.verbose),
  })
  process.stdout.write(server.uri + '\n')
  const shutdown = (signal) => {
    log?.(`${signal} received, shutting down`)
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`test-server: ${error.message}\n`)
  process.exit(2)
})
