'use strict'

/**
 * A guard for a bug of the mongodb driver that a server (or anything between it and the client)
 * can trigger: a reply whose header says `messageLength` 0 makes the driver's
 * `SizedMessageTransform` (lib/cmap/connection.js) read 0 bytes, push an empty message and loop,
 * forever and synchronously: the process spins at 100 % CPU until it runs out of memory, and no
 * timer, signal handler or `timeoutMS` can run. Every driver release the package accepts has it
 * (6.x and 7.x, 7.9.1 the newest checked); the driver's own `find()` spins the same way.
 *
 * The guard wraps that class's `_transform` once per copy of the driver: a read of 0 bytes from
 * its buffer pool (which only that loop asks for) ends the transform with a `MongoParseError`
 * instead, so the driver closes the connection and the command fails as on any network error.
 * It is installed by the first find()/aggregate()/watch() on a client of that driver copy and
 * then protects every command of that copy, the driver's own included. docs/reliability.md.
 */

const { sep } = require('node:path')
const { createRequire } = require('node:module')

const GUARDED = Symbol.for('bson2json.sizedMessageGuard')
/** The driver's module of that class (under any package name: an npm alias is one too). */
const CONNECTION_MODULE = `${sep}lib${sep}cmap${sep}connection.js`
/** The client classes already looked at (one scan per copy of the driver). */
const seen = new WeakSet()

class ZeroLengthMessage extends Error {}

/**
 * Installs the guard in the driver copy `client` comes from (and in any other copy loaded).
 * @param {any} client a MongoClient
 */
function guardDriver(client) {
  const ctor = client !== null && typeof client === 'object' ? client.constructor : undefined
  if (typeof ctor !== 'function' || seen.has(ctor)) return
  seen.add(ctor)
  for (const path of Object.keys(require.cache)) {
    if (!path.endsWith(CONNECTION_MODULE)) continue
    const mod = require.cache[path]
    const T = mod && mod.exports && mod.exports.SizedMessageTransform
    if (typeof T === 'function') guard(T, path)
  }
}

/**
 * @param {Function} T the driver's SizedMessageTransform
 * @param {string} path its module's file (the driver's error classes are next to it)
 */
function guard(T, path) {
  const proto = T.prototype
  if (proto[GUARDED] === true || typeof proto._transform !== 'function') return
  const original = proto._transform
  let ParseError = Error
  try {
    ParseError = createRequire(path)('../error').MongoParseError || Error
  } catch {
    // a layout without it: a plain Error ends the transform the same way
  }
  proto._transform = function guardedTransform(chunk, encoding, callback) {
    const pool = this.bufferPool
    if (pool !== null && typeof pool === 'object' && typeof pool.read === 'function' && pool[GUARDED] !== true) {
      const read = pool.read
      pool.read = function guardedRead(size) {
        if (size === 0) throw new ZeroLengthMessage()
        return read.call(this, size)
      }
      pool[GUARDED] = true
    }
    try {
      return original.call(this, chunk, encoding, callback)
    } catch (e) {
      if (!(e instanceof ZeroLengthMessage)) throw e
      return callback(new ParseError('a reply header says messageLength 0 (a message is at least its 16-byte header): the connection is closed'))
    }
  }
  proto[GUARDED] = true
}

module.exports = { guardDriver }
