'use strict'

/**
 * Option validation shared by the native binding and the JavaScript fallback.
 * Options are resolved once into the numbers the native functions take, so a call costs no
 * property lookups on the native side.
 */

const DIALECTS = { compat: 0, relaxed: 1, canonical: 2 }

/** Default maximum nesting depth (see README: Limits). */
const DEFAULT_MAX_DEPTH = 1000
/** Default maximum output size in bytes: 256 MiB. */
const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024
/** Largest accepted `maxOutputBytes` (4 GiB - 1, the largest Node Buffer on 64-bit hosts). */
const MAX_OUTPUT_BYTES_LIMIT = 2 ** 32 - 1

/**
 * @typedef {{ flags: number, packed: number, maxDepth: number, maxOutputBytes: number, dialect: string, utf8: string }} Resolved
 */

/** @type {Resolved} */
const DEFAULTS = Object.freeze({
  flags: 0,
  packed: DEFAULT_MAX_DEPTH * 8,
  maxDepth: DEFAULT_MAX_DEPTH,
  maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
  dialect: 'compat',
  utf8: 'strict',
})

/**
 * @param {unknown} options
 * @returns {Resolved}
 */
function resolveOptions(options) {
  if (options === undefined || options === null) return DEFAULTS
  if (typeof options !== 'object') {
    throw new TypeError('bson2json: options must be an object')
  }
  let flags = 0
  let dialect = 'compat'
  const d = options.dialect
  if (d !== undefined) {
    if (typeof d !== 'string' || !Object.prototype.hasOwnProperty.call(DIALECTS, d)) {
      throw new TypeError(`bson2json: options.dialect must be 'compat', 'relaxed' or 'canonical', got ${String(d)}`)
    }
    flags = DIALECTS[d]
    dialect = d
  }
  let utf8 = 'strict'
  const u = options.utf8
  if (u !== undefined) {
    if (u === 'replace') flags |= 4
    else if (u !== 'strict') {
      throw new TypeError(`bson2json: options.utf8 must be 'strict' or 'replace', got ${String(u)}`)
    }
    utf8 = u
  }
  let maxDepth = DEFAULT_MAX_DEPTH
  if (options.maxDepth !== undefined) {
    maxDepth = options.maxDepth
    if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > 0xffffffff) {
      throw new RangeError(`bson2json: options.maxDepth must be an integer from 1 to 4294967295, got ${String(maxDepth)}`)
    }
  }
  let maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES
  if (options.maxOutputBytes !== undefined) {
    maxOutputBytes = options.maxOutputBytes
    if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 1 || maxOutputBytes > MAX_OUTPUT_BYTES_LIMIT) {
      throw new RangeError(
        `bson2json: options.maxOutputBytes must be an integer from 1 to ${MAX_OUTPUT_BYTES_LIMIT}, got ${String(maxOutputBytes)}`,
      )
    }
  }
  // `packed` carries flags and maxDepth in one exact double for the per-document calls.
  return { flags, packed: flags + maxDepth * 8, maxDepth, maxOutputBytes, dialect, utf8 }
}

/**
 * True for the errors bson2json throws for bad input: an `Error` with a string `code`
 * starting with `BSON_` and a numeric byte `offset`. Works across realms (no `instanceof`).
 * @param {unknown} e
 * @returns {boolean}
 */
function isTranscodeError(e) {
  return (
    e !== null &&
    typeof e === 'object' &&
    typeof e.code === 'string' &&
    e.code.startsWith('BSON_') &&
    typeof e.offset === 'number' &&
    typeof e.message === 'string'
  )
}

module.exports = {
  DIALECTS,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_OUTPUT_BYTES,
  MAX_OUTPUT_BYTES_LIMIT,
  resolveOptions,
  isTranscodeError,
}
