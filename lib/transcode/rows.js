'use strict'

/**
 * Rows: each document's top-level fields as values, one per column (`toRow`, `toRows`,
 * `toRowsAsync`), in the general format (values for SQL drivers, nested values as JSON text in
 * the call's dialect) or PowerSync's (`rowFormat: 'powersync'`, its `bufferToSqlite`). The
 * type map is in docs/rows.md; the rows are made in lib/native (core `row`).
 */

const native = require('../native')
const { resolveRowOptions, releaseOptions } = require('../options')
const { isTranscodeError } = require('../errors')
const { cursorOf } = require('./api')

/**
 * One document's row: `{ [key]: value }` in document order.
 * @param {Uint8Array} bson one whole BSON document
 * @param {import('../../index').RowOptions} [options]
 * @returns {import('../../index').Row}
 */
function toRow(bson, options) {
  const o = resolveRowOptions(options)
  try {
    return native.transcodeRow(bson, o, o.rowMode)
  } finally {
    releaseOptions(o)
  }
}

/**
 * The rows of many documents (the inputs of `toNDJSON`: an array of documents, concatenated
 * documents, or a raw cursor reply `{ cursor }`).
 * @param {Uint8Array[] | Uint8Array | { cursor: Uint8Array }} docs
 * @param {import('../../index').RowOptions} [options]
 * @returns {import('../../index').Row[]}
 */
function toRows(docs, options) {
  const o = resolveRowOptions(options)
  try {
    const cursor = cursorOf(docs)
    return native.transcodeRows(cursor === undefined ? docs : cursor, o, o.rowMode, cursor !== undefined)
  } finally {
    releaseOptions(o)
  }
}

/**
 * {@link toRows} on the libuv thread pool: the input is copied before it returns. A wrong
 * argument throws; anything wrong with the BSON rejects the Promise with a TranscodeError.
 * @param {Uint8Array[] | Uint8Array | { cursor: Uint8Array }} docs
 * @param {import('../../index').RowOptions} [options]
 * @returns {Promise<import('../../index').Row[]>}
 */
function toRowsAsync(docs, options) {
  const o = resolveRowOptions(options)
  const cursor = cursorOf(docs)
  try {
    return native.transcodeRowsAsync(cursor === undefined ? docs : cursor, o, o.rowMode, cursor !== undefined)
  } catch (e) {
    if (isTranscodeError(e)) return Promise.reject(e)
    throw e
  } finally {
    // the task holds its own count of the compiled shape
    releaseOptions(o)
  }
}

module.exports = { toRow, toRows, toRowsAsync }
