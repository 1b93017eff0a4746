'use strict'

/**
 * bson2json: raw BSON bytes to JSON text in one native pass.
 *
 * This file is the public entry point. It resolves options, then calls the native addon
 * (loaded by the generated `binding.js`) or, on a platform without a prebuilt binary, the
 * JavaScript fallback in `lib/fallback.js`.
 */

const { resolveOptions, isTranscodeError, DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES } = require('./lib/options')
const { loadBackend } = require('./lib/backend')

const backend = loadBackend()
const native = backend.binding

/**
 * Transcodes one BSON document to a JSON string.
 * @param {Uint8Array} bson one whole BSON document (a Buffer or any Uint8Array view)
 * @param {import('./index').TranscodeOptions} [options]
 * @returns {string}
 */
function toJSON(bson, options) {
  const o = resolveOptions(options)
  return native.transcode(bson, o.flags, o.maxDepth, o.maxOutputBytes)
}

/**
 * Transcodes one BSON document to its UTF-8 JSON bytes.
 * @param {Uint8Array} bson
 * @param {import('./index').TranscodeOptions} [options]
 * @returns {Buffer}
 */
function toJSONBuffer(bson, options) {
  const o = resolveOptions(options)
  return native.transcodeBuffer(bson, o.flags, o.maxDepth, o.maxOutputBytes)
}

module.exports.toJSON = toJSON
module.exports.toJSONBuffer = toJSONBuffer
module.exports.isTranscodeError = isTranscodeError
module.exports.DEFAULT_MAX_DEPTH = DEFAULT_MAX_DEPTH
module.exports.DEFAULT_MAX_OUTPUT_BYTES = DEFAULT_MAX_OUTPUT_BYTES
module.exports.backend = backend.name
