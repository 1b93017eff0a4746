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
 * Loads the packages `names` for `command`: each from bson2json's own resolution, then from the
 * current directory. Throws one CliError (exit 2) naming every missing package and where it looked.
 * @param {string|string[]} names
 * @param {string} command for the message
 * @param {string} [install] what to `npm install` (default: the names)
 * @returns the first package's exports (all of them loaded)
 */
function requirePeer(names, command, install) {
  const list = Array.isArray(names) ? names : [names]
  const here = path.join(process.cwd(), 'x.js')
  const loaded = []
  const absent = []
  for (const name of list) {
    let mod
    try {
      mod = require(name)
    } catch (e) {
      if (!missing(e, name)) throw e
      try {
        mod = createRequire(here)(name)
      } catch (e2) {
        if (!missing(e2, name)) throw e2
        absent.push(name)
        continue
      }
    }
    loaded.push(mod)
  }
  if (absent.length > 0) {
    const own = path.resolve(__dirname, '../..')
    const quoted = absent.map((n) => `'${n}'`).join(' and ')
    throw new CliError(
      `${command} needs the package${absent.length === 1 ? '' : 's'} ${quoted}, not found next to bson2json (${own}) ` +
        `nor from the current directory (${process.cwd()}): npm install ${install ?? absent.join(' ')}`,
      2,
    )
  }
  return loaded[0]
}

module.exports = { requirePeer }
