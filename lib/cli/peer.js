'use strict'

// The packages `export` and `cdc` need but bson2json does not install (peer packages: the
// `mongodb` driver, `@platformatic/kafka`). A project's own copy is found by a plain require;
// for a global install (`npm install -g bson2json`) the package is also looked for from the
// current directory, as if required by a file there (`npm install mongodb` in the project).

const path = require('path')
const { createRequire } = require('module')
const { CliError } = require('./usage')

/** Whether `e` says that `name` itself (not something it requires) was not found. */
function missing(e, name) {
  return e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes(`'${name}'`)
}

/**
 * One package: from bson2json's own resolution, else from the current directory. Throws the
 * MODULE_NOT_FOUND error when neither has it (for lib/kafka.js and the like to wrap).
 * @param {string} name
 */
function loadPeer(name) {
  try {
    return require(name)
  } catch (e) {
    if (!missing(e, name)) throw e
    return createRequire(path.join(process.cwd(), 'x.js'))(name)
  }
}

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
