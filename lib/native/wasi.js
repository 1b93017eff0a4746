'use strict'

/**
 * The WASI build's boundary, on the JavaScript side: wraps the binding that the generated
 * loader returned for `wasm32-wasi` so that it has the native addon's interface, with the
 * per-document and batch calls going through the staged regions of wasm memory
 * (crates/bson2json-node/src/staged.rs says why: through emnapi, taking a `Uint8Array`
 * argument copies its whole `ArrayBuffer` into wasm memory, and making a string builds it one
 * character at a time).
 *
 * Here the input is copied into the staged input region with one `TypedArray#set`, the
 * arguments are written into the staged arguments region (a `Float64Array`), the call (no JS
 * arguments, no result: no Node-API call on success) writes the output's length and encoding
 * there, and the output is read as a string by `Buffer#latin1Slice` (ASCII), `ucs2Slice`
 * (UTF-16 converted in wasm) or `utf8Slice`, or copied into a new `Buffer`. Anything the staged calls do not cover (not a
 * `Uint8Array`, larger than {@link MAX_STAGED}, a batch whose documents do not frame
 * themselves, the async, cursor and change-stream calls) goes to the binding unchanged, so
 * errors and edge cases are the binding's own.
 */

const { types } = require('node:util')

/** Inputs above this many bytes are passed to the binding as they are (not staged). */
const MAX_STAGED = 32 * 1024 * 1024

/**
 * @param {any} b the WASI binding (`binding.js` with `__napiBindingTarget === 'wasm32-wasi'`)
 * @returns {any} an object with the native binding's interface
 */
/**
 * The WASI build's async tasks resolve with the error they fail with (napi-rs's wasm build would
 * reject with a copy that has only the message: no `code`, `offset`, `index` or `name`).
 */
function rejectErrors(value) {
  if (value instanceof Error) throw value
  return value
}

/**
 * What the binding gets in place of a `Proxy` of an array. A native addon's `napi_is_array` is
 * false for a Proxy (so the documents argument is refused with a TypeError), emnapi's is
 * true; the WASI build refuses it too, with the binding's own TypeError for a non-array.
 */
const NOT_AN_ARRAY = Object.freeze({})

function notProxy(docs) {
  return Array.isArray(docs) && types.isProxy(docs) ? NOT_AN_ARRAY : docs
}

function wrapWasi(b) {
  const { Array: ARRAY, NdjsonBuffer: NDJSON_BUFFER, List: LIST, NdjsonString: NDJSON_STRING } = b.BatchLayout
  // the slots of the arguments region and the output's encodings (staged.rs `StagedArg`,
  // `StagedEncoding`); the options' pair as options.rs decodes it
  const { Length: LENGTH, Packed: PACKED, MaxOutputBytes: MAX_OUTPUT_BYTES, Kind: KIND, Threads: THREADS, Encoding: ENCODING, Result: RESULT } = b.StagedArg
  const { Ascii: ASCII, Utf16: UTF16 } = b.StagedEncoding
  const DEFAULT_PACKED = b.DEFAULT_MAX_DEPTH * 2 ** b.FLAG_BITS
  const { DEFAULT_MAX_OUTPUT_BYTES } = b
  let input = b.stagedInput(0)
  let output = b.stagedOutput()
  // The staged calls' arguments and result. They take no JS arguments and return nothing: each
  // Node-API call through emnapi costs a JavaScript function and a DataView.
  const argsView = b.stagedArgs()
  const args = new Float64Array(argsView.buffer, argsView.byteOffset, b.STAGED_ARGS)

  /** The staged output's length after a call (a fresh view first if the region moved). */
  function outLength() {
    const r = args[RESULT]
    if (r >= 0) return r
    output = b.stagedOutput()
    return -1 - r
  }

  function ensureInput(n) {
    if (n > input.length) input = b.stagedInput(n)
  }

  function copyOut(len) {
    const buf = Buffer.allocUnsafeSlow(len)
    output.copy(buf, 0, 0, len)
    return buf
  }

  function transcodeStaged(bson, packed, maxOutputBytes, text) {
    const n = bson.length
    ensureInput(n)
    input.set(bson)
    args[LENGTH] = n
    args[PACKED] = packed
    args[MAX_OUTPUT_BYTES] = maxOutputBytes
    args[KIND] = text
    b.transcodeStaged()
    return outLength()
  }

  /** The staged output as a string, in the encoding the call chose (staged.rs `encode_text`). */
  function outText(len) {
    const encoding = args[ENCODING]
    if (encoding === ASCII) return output.latin1Slice(0, len)
    if (encoding === UTF16) return output.ucs2Slice(0, len)
    return output.utf8Slice(0, len)
  }

  /** Whether `bson` goes to the binding as it is: not a `Uint8Array`, empty (detached, say), too large. */
  function unstaged(bson) {
    return !(bson instanceof Uint8Array) || bson.length === 0 || bson.length > MAX_STAGED
  }

  function transcode(bson, packed, maxOutputBytes, shaper) {
    if (shaper !== undefined || unstaged(bson)) return b.transcode(...arguments)
    const len = transcodeStaged(
      bson,
      packed === undefined ? DEFAULT_PACKED : packed,
      maxOutputBytes === undefined ? DEFAULT_MAX_OUTPUT_BYTES : maxOutputBytes,
      1,
    )
    return outText(len)
  }

  function transcodeBuffer(bson, packed, maxOutputBytes, shaper) {
    if (shaper !== undefined || unstaged(bson)) return b.transcodeBuffer(...arguments)
    const len = transcodeStaged(
      bson,
      packed === undefined ? DEFAULT_PACKED : packed,
      maxOutputBytes === undefined ? DEFAULT_MAX_OUTPUT_BYTES : maxOutputBytes,
      0,
    )
    return copyOut(len)
  }

  /**
   * The documents of an array argument as plain `Uint8Array`s whose first four bytes give their
   * own length (so that concatenated, they frame exactly as they do one by one), or undefined.
   */
  function selfFramed(docs) {
    const n = docs.length
    if (n === 0) return undefined
    // Every element is read before any is looked at, as the binding does: a getter on a later
    // element may detach or shrink an earlier one.
    const list = []
    for (let i = 0; i < n; i++) list.push(docs[i])
    let total = 0
    for (let i = 0; i < n; i++) {
      const d = list[i]
      if (!(d instanceof Uint8Array)) return { list, total: -1 }
      const len = d.length
      if (len < 5 || (d[0] | (d[1] << 8) | (d[2] << 16) | (d[3] << 24)) !== len) return { list, total: -1 }
      total += len
    }
    return { list, total }
  }

  function transcodeBatch(docs, layout, packed, maxOutputBytes, threads, shaper) {
    if (shaper !== undefined || (layout !== ARRAY && layout !== NDJSON_BUFFER && layout !== LIST && layout !== NDJSON_STRING)) {
      return b.transcodeBatch(...arguments)
    }
    let n
    let list
    if (docs instanceof Uint8Array) {
      n = docs.length
      if (unstaged(docs)) return b.transcodeBatch(...arguments)
      ensureInput(n)
      input.set(docs)
    } else {
      if (!Array.isArray(docs)) return b.transcodeBatch(...arguments)
      if (types.isProxy(docs)) return b.transcodeBatch(NOT_AN_ARRAY, layout, packed, maxOutputBytes, threads)
      const framed = selfFramed(docs)
      if (framed === undefined) return b.transcodeBatch(...arguments)
      list = framed.list
      // Each element was read once, above; the binding gets the same values.
      if (framed.total < 0 || framed.total > MAX_STAGED) {
        return b.transcodeBatch(list, layout, packed, maxOutputBytes, threads)
      }
      n = framed.total
      ensureInput(n)
      let at = 0
      for (let i = 0; i < list.length; i++) {
        input.set(list[i], at)
        at += list[i].length
      }
    }
    let len
    try {
      args[LENGTH] = n
      args[PACKED] = packed
      args[MAX_OUTPUT_BYTES] = maxOutputBytes
      args[KIND] = layout
      args[THREADS] = threads
      b.transcodeBatchStaged()
      len = outLength()
    } catch (e) {
      // Offsets of an array's documents count from the document's start, not the batch's.
      if (list !== undefined && e && typeof e.index === 'number' && typeof e.offset === 'number') {
        let start = 0
        for (let i = 0; i < e.index; i++) start += list[i].length
        e.offset -= start
      }
      throw e
    }
    if (layout === NDJSON_BUFFER) return copyOut(len)
    if (layout !== LIST) return outText(len)
    const k = output.readUInt32LE(len - 4)
    const base = len - 4 - 4 * k
    const strings = []
    let from = output.readUInt32LE(base)
    for (let i = 1; i < k; i++) {
      const to = output.readUInt32LE(base + 4 * i)
      strings.push(output.utf8Slice(from, to))
      from = to
    }
    return strings
  }

  /** The binding's async batch; its task resolves with the TranscodeError it rejects with. */
  function transcodeBatchAsync(docs, ...rest) {
    return b.transcodeBatchAsync(notProxy(docs), ...rest).then(rejectErrors)
  }

  return Object.assign(Object.create(b), { transcode, transcodeBuffer, transcodeBatch, transcodeBatchAsync })
}

module.exports = { wrapWasi, MAX_STAGED }
