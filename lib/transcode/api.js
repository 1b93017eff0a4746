'use strict'

/**
 * The transcoding calls of the public API: one document (`toJSON`, `toJSONBuffer`), many
 * documents (`toJSONList`, `toJSONArray`, `toNDJSON`, each with an `*Async` twin on the libuv
 * pool) and a raw cursor reply (`cursorBatch`). Options are resolved here (lib/options.js) and
 * the binding is called through lib/native.
 */

const native = require('../native')
const { resolveOptions, releaseOptions } = require('../options')
const { isTranscodeError } = require('../errors')

const { Layout, LIST_LAYOUT, split, transcodeDefault, transcodeBufferDefault } = native
const { Array: ARRAY, NdjsonBuffer: NDJSON_BUFFER } = Layout

/**
 * Transcodes one BSON document to a JSON string.
 * @param {Uint8Array} bson one whole BSON document (a Buffer or any Uint8Array view)
 * @param {import('../../index').TranscodeOptions} [options]
 * @returns {string}
 */
function toJSON(bson, options) {
  if (options === undefined) return transcodeDefault(bson)
  return one(bson, options, false)
}

/** One document with options: a string, or its UTF-8 bytes when `buffer`. */
function one(bson, options, buffer) {
  const o = resolveOptions(options, 'toJSON')
  if (o.lease === undefined) return native.transcode(bson, o, buffer)
  try {
    return native.transcode(bson, o, buffer)
  } finally {
    releaseOptions(o)
  }
}

/**
 * Transcodes one BSON document to its UTF-8 JSON bytes.
 * @param {Uint8Array} bson
 * @param {import('../../index').TranscodeOptions} [options]
 * @returns {Buffer}
 */
function toJSONBuffer(bson, options) {
  if (options === undefined) return transcodeBufferDefault(bson)
  return one(bson, options, true)
}

/**
 * The `cursor` bytes of a raw reply `{ cursor: Uint8Array }`, or undefined if `docs` is not one.
 * The property is read exactly once (a getter may return something different each time).
 */
function cursorOf(docs) {
  if (docs === null || typeof docs !== 'object' || Array.isArray(docs) || ArrayBuffer.isView(docs)) return undefined
  const cursor = docs.cursor
  return ArrayBuffer.isView(cursor) ? cursor : undefined
}

function batch(docs, layout, options) {
  const o = resolveOptions(options, 'batch')
  try {
    // projection / redact (o.shaper): each document shaped in the same native call
    const cursor = cursorOf(docs)
    if (cursor !== undefined) return native.transcodeCursor(cursor, layout, o).docs
    return native.transcodeBatch(docs, layout, o, o.threads)
  } finally {
    releaseOptions(o)
  }
}

/**
 * The `*Async` calls: a wrong argument (type, option, range) throws its TypeError/RangeError
 * synchronously, as the sync calls do; anything wrong with the BSON itself rejects the Promise
 * with a TranscodeError, whether it is found before or on the thread pool.
 */
function batchAsync(docs, layout, options, api = 'batch') {
  const o = resolveOptions(options, api)
  try {
    const cursor = cursorOf(docs)
    // shaping (projection, redact) and transcoding both run on the pool; the task holds its
    // own count of the compiled shape, so the lease ends with this call
    return native.transcodeBatchAsync(cursor === undefined ? docs : cursor, layout, o, o.threads, cursor !== undefined)
  } catch (e) {
    if (isTranscodeError(e)) return Promise.reject(e)
    throw e
  } finally {
    releaseOptions(o)
  }
}

/**
 * Transcodes many documents into an array of JSON strings, one per document.
 * @param {Uint8Array[] | Uint8Array | { cursor: Uint8Array }} docs
 * @param {import('../../index').BatchOptions} [options]
 * @returns {string[]}
 */
function toJSONList(docs, options) {
  return split(batch(docs, LIST_LAYOUT, options))
}

/**
 * Transcodes many documents into one JSON array text: `[doc,doc,...]`.
 * @param {Uint8Array[] | Uint8Array | { cursor: Uint8Array }} docs
 * @param {import('../../index').BatchOptions} [options]
 * @returns {string}
 */
function toJSONArray(docs, options) {
  return batch(docs, ARRAY, options)
}

/**
 * Transcodes many documents into newline-delimited JSON bytes (every document followed by `\n`).
 * @param {Uint8Array[] | Uint8Array | { cursor: Uint8Array }} docs
 * @param {import('../../index').BatchOptions} [options]
 * @returns {Buffer}
 */
function toNDJSON(docs, options) {
  return batch(docs, NDJSON_BUFFER, options)
}

/**
 * Reads a raw cursor reply in place: `reply` is what `db.command({find|aggregate|getMore ...},
 * { raw: true })` returns (or its `cursor` Buffer). Returns the cursor id, namespace, the raw
 * `postBatchResumeToken` bytes and the batch's documents as JSON strings.
 * @param {{ cursor: Uint8Array } | Uint8Array} reply
 * @param {import('../../index').TranscodeOptions} [options]
 */
function cursorBatch(reply, options) {
  const o = resolveOptions(options, 'toJSON')
  try {
    const cursor = ArrayBuffer.isView(reply) ? reply : reply && reply.cursor
    if (!ArrayBuffer.isView(cursor)) {
      throw new TypeError('bson2json: cursorBatch expects a raw command reply ({ cursor: Buffer }) or its cursor Buffer')
    }
    const parts = native.transcodeCursor(cursor, LIST_LAYOUT, o)
    parts.docs = split(parts.docs)
    return parts
  } finally {
    releaseOptions(o)
  }
}

/** Async {@link toJSON}: runs on the libuv thread pool; the input is copied first. */
function toJSONAsync(bson, options) {
  return batchAsync([bson], LIST_LAYOUT, options, 'toJSON').then(
    (joined) => split(joined)[0],
    (e) => {
      if (e && typeof e === 'object') delete e.index
      throw e
    },
  )
}

/** Async {@link toJSONList} on the libuv thread pool (`options.threads` spreads it over cores). */
function toJSONListAsync(docs, options) {
  return batchAsync(docs, LIST_LAYOUT, options).then(split)
}

/** Async {@link toJSONArray} on the libuv thread pool. */
function toJSONArrayAsync(docs, options) {
  return batchAsync(docs, ARRAY, options)
}

/** Async {@link toNDJSON} on the libuv thread pool. */
function toNDJSONAsync(docs, options) {
  return batchAsync(docs, NDJSON_BUFFER, options)
}

module.exports = {
  toJSON,
  toJSONBuffer,
  toJSONList,
  toJSONArray,
  toNDJSON,
  cursorBatch,
  toJSONAsync,
  toJSONListAsync,
  toJSONArrayAsync,
  toNDJSONAsync,
  cursorOf,
}
