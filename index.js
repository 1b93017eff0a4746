'use strict'

/**
 * bson2json: raw BSON bytes to JSON text in one native pass.
 *
 * This file is the public entry point. It resolves options, then calls the native addon
 * (loaded by the generated `binding.js`) or, on a platform without a prebuilt binary, the WASI
 * build of the same core (`lib/wasi.js` over `bson2json.wasi.cjs`).
 */

const { resolveOptions, isTranscodeError, describe, BATCH_KEYS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES } = require('./lib/options')
const { loadBackend } = require('./lib/backend')

const { shapeDocs, ShapeInput } = require('./lib/shape')

const backend = loadBackend()
const native = backend.binding

/**
 * Transcodes one BSON document to a JSON string.
 * @param {Uint8Array} bson one whole BSON document (a Buffer or any Uint8Array view)
 * @param {import('./index').TranscodeOptions} [options]
 * @returns {string}
 */
function toJSON(bson, options) {
  if (options === undefined) return native.transcode(bson)
  const o = resolveOptions(options)
  if (o.shaper !== undefined) return o.shaper.transcode(bson, o.packed, o.maxOutputBytes, false)
  return o.maxOutputBytes === DEFAULT_MAX_OUTPUT_BYTES
    ? native.transcode(bson, o.packed)
    : native.transcode(bson, o.packed, o.maxOutputBytes)
}

/**
 * Transcodes one BSON document to its UTF-8 JSON bytes.
 * @param {Uint8Array} bson
 * @param {import('./index').TranscodeOptions} [options]
 * @returns {Buffer}
 */
function toJSONBuffer(bson, options) {
  if (options === undefined) return native.transcodeBuffer(bson)
  const o = resolveOptions(options)
  if (o.shaper !== undefined) return o.shaper.transcode(bson, o.packed, o.maxOutputBytes, true)
  return native.transcodeBuffer(bson, o.packed, o.maxOutputBytes)
}

// Layout numbers come from the addon's `BatchLayout` enum (native or WASI).
// JOINED is native only: texts of whole documents (<= 64 KiB each) with UTF-16 offsets, cut here
// with `slice` (V8 shares the parent text instead of copying), so a list costs one string
// creation per text rather than one per document.
const { Array: ARRAY, NdjsonBuffer: NDJSON_BUFFER, List: LIST, Joined: JOINED } = native.BatchLayout
const LIST_LAYOUT = backend.name === 'native' ? JOINED : LIST

/**
 * Turns a native `[text0, offsets0, text1, offsets1, ...]` result into the per-document
 * strings (the native side sends a plain list instead when the documents are large). Each
 * text holds whole documents; `offsets` are the UTF-16 indices where they start, plus the end.
 */
function split(joined) {
  if (LIST_LAYOUT !== JOINED || !(joined[1] instanceof Uint32Array)) return joined
  const list = []
  for (let t = 0; t < joined.length; t += 2) {
    const text = joined[t]
    const offsets = joined[t + 1]
    for (let i = 1; i < offsets.length; i++) list.push(text.slice(offsets[i - 1], offsets[i]))
  }
  return list
}

function threadsOf(options) {
  const t = options == null ? undefined : options.threads
  if (t === undefined) return 1
  if (!Number.isInteger(t) || t < 1 || t > 256) {
    throw new RangeError(`bson2json: options.threads must be an integer from 1 to 256, got ${describe(t, 'number')}`)
  }
  return t
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
  const o = resolveOptions(options, BATCH_KEYS)
  const threads = threadsOf(options)
  let cursor = cursorOf(docs)
  if (o.shaper !== undefined) {
    if (cursor !== undefined) cursor = o.shaper.shape(ShapeInput.Cursor, cursor)
    else if (threads === 1 && ArrayBuffer.isView(docs)) {
      // concatenated documents: shaped and transcoded in one native call, no Buffer between
      return o.shaper.transcodeConcatenated(docs, layout, o.flags, o.maxDepth, o.maxOutputBytes)
    } else docs = shapeDocs(o.shaper, docs)
  }
  if (cursor !== undefined) {
    return native.transcodeCursor(cursor, layout, o.flags, o.maxDepth, o.maxOutputBytes).docs
  }
  return native.transcodeBatch(docs, layout, o.flags, o.maxDepth, o.maxOutputBytes, threads)
}

/**
 * The `*Async` calls: a wrong argument (type, option, range) throws its TypeError/RangeError
 * synchronously, as the sync calls do; anything wrong with the BSON itself rejects the Promise
 * with a TranscodeError, whether it is found before or on the thread pool.
 */
function batchAsync(docs, layout, options) {
  const o = resolveOptions(options, BATCH_KEYS)
  const threads = threadsOf(options)
  let cursor = cursorOf(docs)
  try {
    // Shaping (projection, redact) runs here, on the calling thread; transcoding on the pool.
    if (o.shaper !== undefined) {
      if (cursor !== undefined) cursor = o.shaper.shape(ShapeInput.Cursor, cursor)
      else docs = shapeDocs(o.shaper, docs)
    }
    return native.transcodeBatchAsync(
      cursor === undefined ? docs : cursor,
      layout,
      o.flags,
      o.maxDepth,
      o.maxOutputBytes,
      threads,
      cursor !== undefined,
    )
  } catch (e) {
    if (isTranscodeError(e)) return Promise.reject(e)
    throw e
  }
}

/**
 * Transcodes many documents into an array of JSON strings, one per document.
 * @param {Uint8Array[] | Uint8Array | { cursor: Uint8Array }} docs
 * @param {import('./index').BatchOptions} [options]
 * @returns {string[]}
 */
function toJSONList(docs, options) {
  return split(batch(docs, LIST_LAYOUT, options))
}

/**
 * Transcodes many documents into one JSON array text: `[doc,doc,...]`.
 * @param {Uint8Array[] | Uint8Array | { cursor: Uint8Array }} docs
 * @param {import('./index').BatchOptions} [options]
 * @returns {string}
 */
function toJSONArray(docs, options) {
  return batch(docs, ARRAY, options)
}

/**
 * Transcodes many documents into newline-delimited JSON bytes (every document followed by `\n`).
 * @param {Uint8Array[] | Uint8Array | { cursor: Uint8Array }} docs
 * @param {import('./index').BatchOptions} [options]
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
 * @param {import('./index').TranscodeOptions} [options]
 */
function cursorBatch(reply, options) {
  const o = resolveOptions(options)
  let cursor = ArrayBuffer.isView(reply) ? reply : reply && reply.cursor
  if (!ArrayBuffer.isView(cursor)) {
    throw new TypeError('bson2json: cursorBatch expects a raw command reply ({ cursor: Buffer }) or its cursor Buffer')
  }
  if (o.shaper !== undefined) cursor = o.shaper.shape(ShapeInput.Cursor, cursor)
  const parts = native.transcodeCursor(cursor, LIST_LAYOUT, o.flags, o.maxDepth, o.maxOutputBytes)
  parts.docs = split(parts.docs)
  return parts
}

/** Async {@link toJSON}: runs on the libuv thread pool; the input is copied first. */
function toJSONAsync(bson, options) {
  return batchAsync([bson], LIST_LAYOUT, options).then(
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

module.exports.toJSON = toJSON
module.exports.toJSONBuffer = toJSONBuffer
module.exports.toJSONList = toJSONList
module.exports.toJSONArray = toJSONArray
module.exports.toNDJSON = toNDJSON
module.exports.cursorBatch = cursorBatch
module.exports.toJSONAsync = toJSONAsync
module.exports.toJSONListAsync = toJSONListAsync
module.exports.toJSONArrayAsync = toJSONArrayAsync
module.exports.toNDJSONAsync = toNDJSONAsync
module.exports.isTranscodeError = isTranscodeError
module.exports.DEFAULT_MAX_DEPTH = DEFAULT_MAX_DEPTH
module.exports.DEFAULT_MAX_OUTPUT_BYTES = DEFAULT_MAX_OUTPUT_BYTES
module.exports.backend = backend.name
module.exports.createTranscodeStream = require('./lib/stream').createTranscodeStream
module.exports.watch = require('./lib/change-stream').watch
module.exports.ChangeStreamInvalidatedError = require('./lib/change-stream').ChangeStreamInvalidatedError
module.exports.find = require('./lib/cursor').find
module.exports.aggregate = require('./lib/cursor').aggregate
