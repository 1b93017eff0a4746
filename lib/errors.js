'use strict'

/**
 * The one error module: how bson2json's errors are recognised, built and moved, and how a wrong
 * argument is quoted in a TypeError.
 *
 * A `TranscodeError` is an `Error` named `TranscodeError` with string `code` (`BSON_*`), `detail`
 * (the fault, without its position), numeric `offset` (bytes from the start of the input) and,
 * for many documents, `index`. The binding builds the ones it finds and sets those properties;
 * {@link transcodeError} builds the ones JavaScript finds (a stream's framing) the same way, and
 * {@link rebase} moves one onto a stream's positions. No message is ever parsed.
 */

/**
 * A value as an error message quotes it: strings in quotes, and the type named when it is not
 * the one expected (`'7' (a string)`, `null`, `[1] (an array)`).
 * @param {unknown} v
 * @param {string} [expected] the `typeof` the caller wanted; the type is named when `v` has another
 */
function describe(v, expected) {
  let text
  let kind
  if (v === null) return 'null'
  if (v === undefined) return 'undefined'
  switch (typeof v) {
    case 'string':
      text = `'${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`
      kind = 'a string'
      break
    case 'number':
      text = String(v)
      kind = 'a number'
      break
    case 'bigint':
      text = `${v}n`
      kind = 'a bigint'
      break
    case 'boolean':
      text = String(v)
      kind = 'a boolean'
      break
    case 'symbol':
      return v.toString()
    case 'function':
      return 'a function'
    default:
      if (Array.isArray(v)) return `an array of ${v.length}`
      if (ArrayBuffer.isView(v)) return `a ${v.constructor && v.constructor.name ? v.constructor.name : 'typed array'}`
      return v instanceof Map ? 'a Map' : 'an object'
  }
  return expected !== undefined && typeof v !== expected ? `${text} (${kind})` : text
}

/** Levenshtein distance, for "did you mean" suggestions (names are short). */
function editDistance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1))
    }
    prev = cur
  }
  return prev[b.length]
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


/**
 * A TranscodeError found in JavaScript, at `index` / `offset` of a stream.
 * @param {string} code
 * @param {string} detail
 * @param {number} index
 * @param {number} offset
 */
function transcodeError(code, detail, index, offset) {
  const e = new Error(`${code}: ${detail} (document ${index}, byte offset ${offset} in the stream)`)
  e.name = 'TranscodeError'
  e.code = code
  e.detail = detail
  e.offset = offset
  e.index = index
  return e
}

/**
 * A batch's TranscodeError moved onto a stream: its document index and byte offset become
 * stream-wide, its message says both (and the byte within the document, which the batch's
 * offset minus the document's start gives).
 * @param {any} e the binding's error (anything else is returned as it is)
 * @param {number} baseIndex the batch's first document in the stream
 * @param {number} baseOffset the batch's first byte in the stream
 * @param {number[]} [starts] each document's start in the batch
 */
function rebase(e, baseIndex, baseOffset, starts) {
  if (!isTranscodeError(e) || typeof e.index !== 'number' || typeof e.detail !== 'string') return e
  const index = baseIndex + e.index
  const offset = baseOffset + e.offset
  const inDoc = starts !== undefined && e.index < starts.length ? `byte ${e.offset - starts[e.index]} of the document, ` : ''
  e.message = `${e.code}: ${e.detail} (document ${index}, ${inDoc}byte offset ${offset} in the stream)`
  e.index = index
  e.offset = offset
  return e
}

module.exports = { describe, editDistance, isTranscodeError, transcodeError, rebase }
