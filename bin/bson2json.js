#!/usr/bin/env node
'use strict'

// bson2json's command line. Each subcommand is one line below and lives in lib/cli/<name>.js,
// which exports `main(argv)` (a Promise; it sets process.exitCode). Without a command name the
// arguments go to `dump`, the bsondump counterpart, so `bson2json FILE` keeps working.

const COMMANDS = {
  dump: () => require('../lib/cli/dump'),
  export: () => require('../lib/cli/export'),
  cdc: () => require('../lib/cli/cdc'),
}

const argv = process.argv.slice(2)
const name = argv.length > 0 && Object.hasOwn(COMMANDS, argv[0]) ? argv.shift() : 'dump'

Promise.resolve()
  .then(() => COMMANDS[name]().main(argv))
  .catch((e) => {
    process.stderr.write(`bson2json: ${e && e.stack ? e.stack : e}\n`)
    process.exit(1)
  })
