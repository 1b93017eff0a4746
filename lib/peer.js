'use strict'

// Optional peer packages (the `mongodb` driver, `@platformatic/kafka`) that bson2json uses but
// does not install. A project's own copy is found by a plain require; for a global install
// (`npm install -g bson2json`, the CLI) the package is also looked for from the current
// directory, as if required by a file there (`npm install mongodb` in the project).

const path = require('path')
const { createRequire } = require('module')

/** Whether `e` says that `name` itself (not something it requires) was not found. */
function missing(e, name) {
  return e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes(`'${name}'`)
}

/**
 * One package: from bson2json's own resolution, else from the current directory. Throws the
 * MODULE_NOT_FOUND error when neither has it (for lib/kafka/ and the like to wrap).
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

module.exports = { loadPeer, missing }
