'use strict'

// A small reader of raw BSON elements for the command line's --fields projection and CSV
// output. It only finds element boundaries and reads scalar values; transcoding to JSON is the
// native core's job. Every read is bounds-checked: a malformed document throws a RangeError
// (the caller then hands the original bytes to the transcoder, which reports it with its code
// and offset).

const T = {
  DOUBLE: 0x01,
  STRING: 0x02,
  DOCUMENT: 0x03,
  ARRAY: 0x04,
  BINARY: 0x05,
  UNDEFINED: 0x06,
  OBJECTID: 0x07,
  BOOLEAN: 0x08,
  DATE: 0x09,
  NULL: 0x0a,
  REGEX: 0x0b,
  DBPOINTER: 0x0c,
  CODE: 0x0d,
  SYMBOL: 0x0e,
  CODE_W_SCOPE: 0x0f,
  INT32: 0x10,
  TIMESTAMP: 0x11,
  INT64: 0x12,
  DECIMAL128: 0x13,
  MINKEY: 0xff,
  MAXKEY: 0x7f,
}

function bad(what, at) {
  return new RangeError(`malformed BSON (${what}) at byte ${at}`)
}

function cstringEnd(buf, at, end) {
  const nul = buf.indexOf(0, at)
  if (nul === -1 || nul >= end) throw bad('unterminated string', at)
  return nul
}

function int32(buf, at, end) {
  if (at + 4 > end) throw bad('truncated', at)
  return buf.readInt32LE(at)
}

/** End (exclusive) of the value of `type` starting at `at`. */
function valueEnd(buf, type, at, end) {
  let e
  switch (type) {
    case T.DOUBLE:
    case T.DATE:
    case T.TIMESTAMP:
    case T.INT64:
      e = at + 8
      break
    case T.STRING:
    case T.CODE:
    case T.SYMBOL: {
      const n = int32(buf, at, end)
      if (n < 1) throw bad('string length', at)
      e = at + 4 + n
      break
    }
    case T.DOCUMENT:
    case T.ARRAY:
    case T.CODE_W_SCOPE: {
      const n = int32(buf, at, end)
      if (n < 5) throw bad('length', at)
      e = at + n
      break
    }
    case T.BINARY: {
      const n = int32(buf, at, end)
      if (n < 0) throw bad('binary length', at)
      e = at + 5 + n
      break
    }
    case T.UNDEFINED:
    case T.NULL:
    case T.MINKEY:
    case T.MAXKEY:
      e = at
      break
    case T.OBJECTID:
      e = at + 12
      break
    case T.BOOLEAN:
      e = at + 1
      break
    case T.REGEX:
      e = cstringEnd(buf, cstringEnd(buf, at, end) + 1, end) + 1
      break
    case T.DBPOINTER: {
      const n = int32(buf, at, end)
      if (n < 1) throw bad('string length', at)
      e = at + 4 + n + 12
      break
    }
    case T.INT32:
      e = at + 4
      break
    case T.DECIMAL128:
      e = at + 16
      break
    default:
      throw bad(`unknown type 0x${type.toString(16)}`, at - 1)
  }
  if (e > end) throw bad('truncated', at)
  return e
}

/**
 * Calls `fn(type, keyStart, keyEnd, valueStart, valueEnd)` for each element of the document at
 * `start`; `fn` returning `false` stops the walk. Returns the document's end.
 */
function forEachElement(buf, start, fn, limit = buf.length) {
  const len = int32(buf, start, limit)
  const end = start + len
  if (len < 5 || end > limit) throw bad('document length', start)
  if (buf[end - 1] !== 0) throw bad('terminator', end - 1)
  let at = start + 4
  while (at < end - 1) {
    const type = buf[at]
    const keyStart = at + 1
    const keyEnd = cstringEnd(buf, keyStart, end - 1)
    const vs = keyEnd + 1
    const ve = valueEnd(buf, type, vs, end - 1)
    if (fn(type, keyStart, keyEnd, vs, ve) === false) return end
    at = ve
  }
  if (at !== end - 1) throw bad('element overruns its document', at)
  return end
}

/** The element of `doc` (a document at `start`) named `key` (a Buffer), or null. */
function findElement(buf, start, key) {
  let found = null
  forEachElement(buf, start, (type, ks, ke, vs, ve) => {
    if (ke - ks === key.length && buf.compare(key, 0, key.length, ks, ke) === 0) {
      found = { type, start: vs, end: ve }
      return false
    }
    return true
  })
  return found
}

module.exports = { T, forEachElement, findElement, valueEnd }
