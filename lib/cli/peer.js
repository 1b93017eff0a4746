'use strict'

// The peer packages `export` and `cdc` need (lib/peer.js finds them), or one line saying which
// are missing, where they were looked for and what to install.

const path = require('path')
const { CliError } = require('./usage')
const { loadPeer, missing } = require('../peer')

/**
 * Loads the packages (`loadPeer` each). Throws one CliError (exit 2) naming every missing
 * package, where it looked, and what to install.
 * @param {Record<string, string>} packages name -> what to `npm install` (e.g. with a version range)
 * @returns the first package's exports (all of them loaded)
 */
function requirePeer(packages) {
  const loaded = []
  const absent = []
  for (const name of Object.keys(packages)) {
    try {
      loaded.push(loadPeer(name))
    } catch (e) {
      if (!missing(e, name)) throw e
      absent.push(name)
    }
  }
  if (absent.length > 0) {
    const own = path.resolve(__dirname, '../..')
    const quoted = absent.map((n) => `'${n}'`).join(' and ')
    throw new CliError(
      `needs the package${absent.length === 1 ? '' : 's'} ${quoted}, not found next to bson2json (${own}) ` +
        `nor from the current directory (${process.cwd()}): npm install ${absent.map((n) => packages[n]).join(' ')}`,
      2,
    )
  }
  return loaded[0]
}

module.exports = { requirePeer, loadPeer }
