'use strict'

/**
 * The JavaScript fallback: the native binding's contract (see binding.d.ts) in plain JavaScript,
 * used when no prebuilt binary fits the platform or `BSON2JSON_FORCE_FALLBACK=1` is set.
 *
 * - `compat` is js-bson itself: `JSON.stringify(BSON.deserialize(bson, opts))` with the caller's
 *   js-bson options (`validation: { utf8: false }` for `utf8: 'replace'`). For `bsonVersion: 6`
 *   the js-bson 7 tree is changed into js-bson 6's (`Long`s with `low` first, DBRef-shaped
 *   code-with-scope scopes promoted), see `asBson6`. When js-bson throws, the document is walked
 *   again by the raw walker below to find the error code and byte offset the native addon reports.
 * - `relaxed` / `canonical` are written by a raw BSON walker (a port of the core's
 *   `transcode.rs`): keys in BSON order, exact int64 digits, `$dbPointer`, `$undefined`,
 *   `-0.0`, `1.0` / `1E+100` doubles, sorted regex options, the spec's Decimal128 strings and
 *   the native error codes and offsets. js-bson is used for Decimal128 text only.
 *
 * docs/fallback.md lists what still differs from the native addon.
 */

const { BSON } = require('bson')
const { isUtf8 } = require('buffer')
const { FLAG_BITS, DIALECTS, Flags } = require('./options')

const { compat: MODE_COMPAT, relaxed: MODE_RELAXED, canonical: MODE_CANONICAL } = DIALECTS
const {
  UTF8_REPLACE: FLAG_UTF8_REPLACE,
  BSON6: FLAG_BSON6,
  LONGS: FLAG_LONGS,
  BUFFERS: FLAG_BUFFERS,
  BSON_REGEXP: FLAG_BSON_REGEXP,
  NO_PROMOTE: FLAG_NO_PROMOTE,
} = Flags

const DEFAULT_MAX_DEPTH = 1000
const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024

/**
 * The binding's `BatchLayout` enum (crates/bson2json-node/src/batch.rs); __test__/api.spec.ts
 * checks that this copy equals the addon's. The fallback has no `Joined` result: it answers
 * `Joined` with a plain list.
 */
const BatchLayout = Object.freeze({ Array: 0, NdjsonBuffer: 1, List: 2, NdjsonString: 3, Joined: 4 })
const { Array: ARRAY, NdjsonBuffer: NDJSON_BUFFER, NdjsonString: NDJSON_STRING } = BatchLayout

const strictDecoder = new TextDecoder('utf-8', { ignoreBOM: true })

// ---- errors ------------------------------------------------------------------------------

/** An error of the core: a code, a byte offset (relative to the document) and a detail. */
class CoreError {
  constructor(code, offset, detail, extra) {
    this.code = code
    this.offset = offset
    this.detail = detail
    /** For BSON_INVALID_REGEX: the engine's SyntaxError message. */
    this.regexMessage = extra && extra.regexMessage
    /** The js-bson error this was mapped from, if any. */
    this.cause = extra && extra.cause
  }
  shifted(delta) {
    return new CoreError(this.code, this.offset + delta, this.detail, this)
  }
}

function fail(code, offset, detail) {
  return new CoreError(code, offset, detail)
}

/** The JS error the binding throws: `name` TranscodeError, `code`, `offset`, `index`. */
function jsError(code, message, offset, index, cause) {
  const e = new Error(message, cause === undefined ? undefined : { cause })
  e.code = code
  e.name = 'TranscodeError'
  e.offset = offset
  if (index !== undefined && index !== null) e.index = index
  return e
}

/** Single-document message, as the native `throw_transcode_error` formats it. */
function errorOf(ce, index) {
  if (ce.code === 'BSON_INVALID_REGEX') return regexErrorOf(ce, index)
  const msg =
    index === undefined
      ? `${ce.code}: ${ce.detail} at byte ${ce.offset}`
      : `${ce.code}: ${ce.detail} at byte ${ce.offset} (document ${index})`
  return jsError(ce.code, msg, ce.offset, index, ce.cause)
}

function regexErrorOf(ce, index) {
  const msg = `${ce.code}: invalid regular expression at byte ${ce.offset} (${ce.regexMessage})`
  return jsError(ce.code, msg, ce.offset, index, ce.cause)
}

/** Batch message: the offset is reported from the start of the input buffer. */
function batchErrorOf(ce, index, docOffset) {
  if (ce.code === 'BSON_INVALID_REGEX') return regexErrorOf(ce, index)
  const msg = `${ce.code}: ${ce.detail} (document ${index}, byte ${ce.offset} of the document)`
  return jsError(ce.code, msg, docOffset + ce.offset, index, ce.cause)
}

function invalidArg(message) {
  return new TypeError(`bson2json: ${message}`)
}

// ---- bytes -------------------------------------------------------------------------------

// `util.types` checks run no JavaScript (no `Symbol.toStringTag` getter, no Proxy trap).
const { isUint8Array: isU8, isProxy } = require('node:util').types

/**
 * A copy of the bytes of `x`, taken before anything can run JavaScript (js-bson calls the
 * global `RegExp` mid-document, and code there could detach the caller's buffer), as the
 * native addon never reads an input after JavaScript ran. A `SharedArrayBuffer` view becomes
 * a snapshot the same way.
 */
function bytesOf(x, name = 'bson') {
  if (!isU8(x)) throw invalidArg(`${name} must be a Uint8Array or Buffer`)
  return Buffer.from(x)
}

const EMPTY_VIEW = new DataView(new ArrayBuffer(0))

function viewOf(buf) {
  // A view of a detached ArrayBuffer has length 0, and `new DataView` would throw on it.
  if (buf.byteLength === 0) return EMPTY_VIEW
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
}

function asBuffer(buf, from, to) {
  return Buffer.from(buf.buffer, buf.byteOffset + from, to - from)
}

/** Index of the first byte of the first invalid UTF-8 sequence (Rust's `valid_up_to`). */
function validUpTo(b) {
  let i = 0
  const n = b.length
  while (i < n) {
    const c = b[i]
    if (c < 0x80) {
      i++
      continue
    }
    let need
    let lo = 0x80
    let hi = 0xbf
    if (c >= 0xc2 && c <= 0xdf) need = 1
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2
      if (c === 0xe0) lo = 0xa0
      else if (c === 0xed) hi = 0x9f
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3
      if (c === 0xf0) lo = 0x90
      else if (c === 0xf4) hi = 0x8f
    } else return i
    const c1 = b[i + 1]
    if (c1 === undefined || c1 < lo || c1 > hi) return i
    for (let k = 2; k <= need; k++) {
      const ck = b[i + k]
      if (ck === undefined || ck < 0x80 || ck > 0xbf) return i
    }
    i += need + 1
  }
  return n
}

/** Decodes `buf[from..to)`; invalid UTF-8 throws (strict) or becomes U+FFFD (replace). */
function decodeStr(buf, from, to, replace, what) {
  if (from === to) return ''
  const sub = buf.subarray(from, to)
  if (replace || isUtf8(sub)) return strictDecoder.decode(sub)
  throw fail('BSON_INVALID_UTF8', from + validUpTo(sub), what || 'string is not valid UTF-8')
}

function lossy(sub) {
  return sub.length === 0 ? '' : strictDecoder.decode(sub)
}

const HEX = []
for (let i = 0; i < 256; i++) HEX.push((i < 16 ? '0' : '') + i.toString(16))

function hexOf(buf, from, to) {
  let s = ''
  for (let i = from; i < to; i++) s += HEX[buf[i]]
  return s
}

// ---- numbers -----------------------------------------------------------------------------

/** Extended JSON text of a finite double: `1.0`, `-0.0`, `0.1`, `1.2345678921232E+18`, `1E-7`. */
function ejsonDouble(x) {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0'
  const sign = x < 0 ? '-' : ''
  const s = String(Math.abs(x))
  let mant = s
  let exp = 0
  const ei = s.indexOf('e')
  if (ei >= 0) {
    mant = s.slice(0, ei)
    exp = Number(s.slice(ei + 1))
  }
  const dot = mant.indexOf('.')
  const intPart = dot >= 0 ? mant.slice(0, dot) : mant
  const fracPart = dot >= 0 ? mant.slice(dot + 1) : ''
  let digits = intPart + fracPart
  let e
  if (intPart !== '0') {
    e = intPart.length - 1 + exp
  } else {
    let lz = 0
    while (lz < fracPart.length && fracPart[lz] === '0') lz++
    e = -(lz + 1) + exp
  }
  digits = digits.replace(/^0+/, '').replace(/0+$/, '')
  if (digits === '') digits = '0'
  const n = digits.length
  if (e > -7 && e < 16) {
    if (e >= 0) {
      const intDigits = e + 1
      if (n <= intDigits) return sign + digits + '0'.repeat(intDigits - n) + '.0'
      return sign + digits.slice(0, intDigits) + '.' + digits.slice(intDigits)
    }
    return sign + '0.' + '0'.repeat(-e - 1) + digits
  }
  return sign + digits[0] + (n > 1 ? '.' + digits.slice(1) : '') + 'E' + (e < 0 ? '-' : '+') + Math.abs(e)
}

const TEN34 = 10n ** 34n
const LOW113 = (1n << 113n) - 1n

/** The BSON spec's Decimal128 string (non-canonical significands print as zero). */
function decimal128Text(buf, v) {
  const bytes = Buffer.from(buf.subarray(v, v + 16))
  const dv = viewOf(bytes)
  const high = dv.getUint32(12, true)
  const combination = (high >>> 26) & 0x1f
  let exponent = -1
  if (combination >>> 3 === 3) {
    if (combination !== 0x1f && combination !== 0x1e) exponent = (high >>> 15) & 0x3fff
  } else {
    const bits = dv.getBigUint64(0, true) | (dv.getBigUint64(8, true) << 64n)
    if ((bits & LOW113) > TEN34 - 1n) exponent = (high >>> 17) & 0x3fff
  }
  if (exponent >= 0) {
    bytes.fill(0)
    dv.setUint32(12, (high & 0x80000000) | (exponent << 17), true)
  }
  return new BSON.Decimal128(bytes).toString()
}

const DATE_RELAXED_MAX = 253402300799999n

function isoDate(ms) {
  const s = new Date(ms).toISOString()
  return s.endsWith('.000Z') ? s.slice(0, -5) + 'Z' : s
}

// ---- the raw walker (relaxed / canonical, and error diagnosis for compat) ---------------------

/**
 * Transcodes one whole BSON document to Extended JSON, checking exactly what the native core
 * checks, in the same order. `mode` MODE_COMPAT only validates (output is not compat JSON) and
 * records the regexes js-bson would compile. Returns the JSON text; throws a CoreError.
 * `base` is the output size already written before this document (batches share the cap).
 */
function walk(buf, mode, replace, maxDepth, maxOut, base, regexes, bsonRegExp = false) {
  const compat = mode === MODE_COMPAT
  const canonical = mode === MODE_CANONICAL
  const n = buf.length
  const dv = viewOf(buf)
  if (n < 5) {
    if (n >= 4 && dv.getInt32(0, true) < 5) throw fail('BSON_BAD_LENGTH', 0, 'document length must be at least 5')
    throw fail('BSON_TRUNCATED', n, 'input is shorter than a BSON document')
  }
  const size = dv.getInt32(0, true)
  if (size < 5) throw fail('BSON_BAD_LENGTH', 0, 'document length must be at least 5')
  if (n < size) throw fail('BSON_TRUNCATED', n, "input ends before the document's declared length")
  if (n > size) throw fail('BSON_BAD_LENGTH', size, 'trailing bytes after the document')
  // Every document's terminator (this one's too) is checked when the walk reaches it, as the
  // native walker does: errors come in input order.
  if (maxDepth === 0) throw fail('BSON_TOO_DEEP', 0, 'nesting deeper than maxDepth')

  const need = (at, k, end) => {
    if (at + k > end) throw fail('BSON_TRUNCATED', at, 'value runs past the end of its document')
  }
  const readString = (at, end) => {
    need(at, 4, end)
    const len = dv.getInt32(at, true)
    if (len <= 0) throw fail('BSON_BAD_LENGTH', at, 'string length must be at least 1')
    const start = at + 4
    if (len > end - start) throw fail('BSON_BAD_LENGTH', at, 'string length runs past the end of its document')
    const stop = start + len - 1
    if (buf[stop] !== 0) throw fail('BSON_BAD_TERMINATOR', stop, 'string is not NUL-terminated where its length says')
    return stop + 1
  }
  const findNul = (from, end) => {
    const i = buf.indexOf(0, from)
    return i < 0 || i >= end ? -1 : i
  }

  let out = '{'
  let sz = base + 1
  // Bytes of `s` in UTF-8 (a JSON text is ASCII unless it holds decoded strings).
  const quoted = (s) => {
    const q = JSON.stringify(s)
    sz += Buffer.byteLength(q)
    return q
  }
  const stack = [{ end: size - 1, isArray: false, count: 0, extra: 0 }]
  let pos = 4
  for (;;) {
    const top = stack[stack.length - 1]
    const end = top.end
    if (pos >= end) {
      if (buf[end] !== 0) {
        const what = stack.length === 1 ? 'document' : top.extra ? 'code-with-scope scope' : 'embedded document'
        throw fail('BSON_BAD_TERMINATOR', end, `${what} does not end with a NUL byte`)
      }
      stack.pop()
      out += top.isArray ? ']' : '}'
      sz += 1 + top.extra
      if (top.extra) out += '}'.repeat(top.extra)
      pos = end + 1
      if (sz > maxOut) throw fail('BSON_OUTPUT_TOO_LARGE', end, 'JSON output exceeds maxOutputBytes')
      if (stack.length === 0) break
      continue
    }
    const t = buf[pos]
    if (t === 0) throw fail('BSON_BAD_TERMINATOR', pos, 'document ends before its declared length')
    const ks = pos + 1
    const ke = findNul(ks, end)
    if (ke < 0) throw fail('BSON_TRUNCATED', ks, 'key has no NUL terminator inside its document')
    const v = ke + 1
    if (top.count > 0) {
      out += ','
      sz++
    }
    top.count++
    if (!top.isArray) {
      const key = compat ? lossy(buf.subarray(ks, ke)) : decodeStr(buf, ks, ke, replace)
      out += quoted(key) + ':'
      sz++
    }
    let piece
    switch (t) {
      case 0x01: {
        need(v, 8, end)
        const x = dv.getFloat64(v, true)
        pos = v + 8
        if (Number.isFinite(x) && !canonical) piece = ejsonDouble(x)
        else {
          const s = Number.isNaN(x) ? 'NaN' : x === Infinity ? 'Infinity' : x === -Infinity ? '-Infinity' : ejsonDouble(x)
          piece = '{"$numberDouble":"' + s + '"}'
        }
        break
      }
      case 0x02:
      case 0x0d:
      case 0x0e: {
        const next = readString(v, end)
        pos = next
        const s = quoted(decodeStr(buf, v + 4, next - 1, replace))
        if (t === 0x02) piece = s
        else piece = (t === 0x0d ? '{"$code":' : '{"$symbol":') + s + '}'
        sz -= Buffer.byteLength(s)
        break
      }
      case 0x03:
      case 0x04: {
        need(v, 4, end)
        const len = dv.getInt32(v, true)
        if (len < 5 || len > end - v) {
          throw fail('BSON_BAD_LENGTH', v, 'embedded document length is below 5 or runs past its parent')
        }
        const childEnd = v + len - 1
        if (stack.length >= maxDepth) throw fail('BSON_TOO_DEEP', v, 'nesting deeper than maxDepth')
        const isArray = t === 0x04
        out += isArray ? '[' : '{'
        sz++
        stack.push({ end: childEnd, isArray, count: 0, extra: 0 })
        pos = v + 4
        continue
      }
      case 0x05: {
        need(v, 5, end)
        const len = dv.getInt32(v, true)
        if (len < 0) throw fail('BSON_BAD_BINARY', v, 'negative binary length')
        const sub = buf[v + 4]
        const data = v + 5
        if (len > end - data) throw fail('BSON_BAD_LENGTH', v, 'binary length runs past the end of its document')
        pos = data + len
        let from = data
        if (sub === 0x02) {
          if (len < 4 || dv.getInt32(data, true) !== len - 4) {
            throw fail('BSON_BAD_BINARY', data, 'binary subtype 0x02 inner length disagrees with outer length')
          }
          from = data + 4
        }
        piece = '{"$binary":{"base64":"' + asBuffer(buf, from, pos).toString('base64') + '","subType":"' + HEX[sub] + '"}}'
        break
      }
      case 0x06:
        pos = v
        piece = '{"$undefined":true}'
        break
      case 0x07:
        need(v, 12, end)
        pos = v + 12
        piece = '{"$oid":"' + hexOf(buf, v, pos) + '"}'
        break
      case 0x08:
        need(v, 1, end)
        pos = v + 1
        if (buf[v] === 0) piece = 'false'
        else if (buf[v] === 1) piece = 'true'
        else throw fail('BSON_BAD_BOOLEAN', v, 'boolean byte is neither 0 nor 1')
        break
      case 0x09: {
        need(v, 8, end)
        const ms = dv.getBigInt64(v, true)
        pos = v + 8
        if (!canonical && ms >= 0n && ms <= DATE_RELAXED_MAX) piece = '{"$date":"' + isoDate(Number(ms)) + '"}'
        else piece = '{"$date":{"$numberLong":"' + ms + '"}}'
        break
      }
      case 0x0a:
        pos = v
        piece = 'null'
        break
      case 0x0b: {
        const pe = findNul(v, end)
        if (pe < 0) throw fail('BSON_TRUNCATED', v, 'regex pattern has no NUL terminator inside its document')
        const fs = pe + 1
        const fe = findNul(fs, end)
        if (fe < 0) throw fail('BSON_TRUNCATED', fs, 'regex flags have no NUL terminator inside its document')
        pos = fe + 1
        if (compat && bsonRegExp) {
          // js-bson's BSONRegExp constructor rejects options outside imxlsu.
          for (let i = fs; i < fe; i++) {
            if (!'imxlsu'.includes(String.fromCharCode(buf[i]))) {
              throw fail('BSON_INVALID_REGEX', i, "regex option outside imxlsu (js-bson's BSONRegExp rejects it)")
            }
          }
          piece = '{}'
        } else if (compat) {
          let mapped = ''
          for (const c of lossy(buf.subarray(fs, fe))) {
            if (c === 'i' || c === 'm') mapped += c
            else if (c === 's') mapped += 'g'
          }
          if (regexes) regexes.push({ offset: v, pattern: lossy(buf.subarray(v, pe)), flags: mapped })
          piece = '{}'
        } else {
          const p = quoted(decodeStr(buf, v, pe, replace))
          sz -= Buffer.byteLength(p)
          const flags = buf.subarray(fs, fe)
          if (!replace && !isUtf8(flags)) throw fail('BSON_INVALID_UTF8', fs, 'regex options are not valid UTF-8')
          const sorted = Uint8Array.from(flags).sort()
          piece = '{"$regularExpression":{"pattern":' + p + ',"options":' + JSON.stringify(lossy(sorted)) + '}}'
        }
        break
      }
      case 0x0c: {
        const next = readString(v, end)
        need(next, 12, end)
        pos = next + 12
        if (compat) {
          if (!replace && !isUtf8(buf.subarray(v + 4, next - 1))) {
            throw fail('BSON_INVALID_UTF8', v + 4, 'DBPointer namespace is not valid UTF-8')
          }
          piece = '{}'
        } else {
          const ns = JSON.stringify(decodeStr(buf, v + 4, next - 1, replace))
          piece = '{"$dbPointer":{"$ref":' + ns + ',"$id":{"$oid":"' + hexOf(buf, next, pos) + '"}}}'
        }
        break
      }
      case 0x0f: {
        need(v, 4, end)
        const total = dv.getInt32(v, true)
        if (total < 13) throw fail('BSON_BAD_CODE_W_SCOPE', v, 'code-with-scope length is below the minimum of 13')
        if (total > end - v) throw fail('BSON_BAD_LENGTH', v, 'code-with-scope length runs past the end of its document')
        const cwsEnd = v + total
        const scopeAt = readString(v + 4, cwsEnd)
        need(scopeAt, 4, cwsEnd)
        const slen = dv.getInt32(scopeAt, true)
        if (slen < 5 || scopeAt + slen !== cwsEnd) {
          throw fail('BSON_BAD_CODE_W_SCOPE', scopeAt, 'code-with-scope scope length disagrees with the total length')
        }
        const scopeEnd = cwsEnd - 1
        if (stack.length >= maxDepth) throw fail('BSON_TOO_DEEP', scopeAt, 'nesting deeper than maxDepth')
        const code = quoted(decodeStr(buf, v + 8, scopeAt - 1, replace))
        out += '{"$code":' + code + ',"$scope":{'
        sz += 20
        stack.push({ end: scopeEnd, isArray: false, count: 0, extra: 1 })
        pos = scopeAt + 4
        continue
      }
      case 0x10: {
        need(v, 4, end)
        pos = v + 4
        const x = dv.getInt32(v, true)
        piece = canonical ? '{"$numberInt":"' + x + '"}' : String(x)
        break
      }
      case 0x11: {
        need(v, 8, end)
        pos = v + 8
        piece = '{"$timestamp":{"t":' + dv.getUint32(v + 4, true) + ',"i":' + dv.getUint32(v, true) + '}}'
        break
      }
      case 0x12: {
        need(v, 8, end)
        pos = v + 8
        const x = dv.getBigInt64(v, true)
        piece = canonical ? '{"$numberLong":"' + x + '"}' : String(x)
        break
      }
      case 0x13:
        need(v, 16, end)
        pos = v + 16
        piece = '{"$numberDecimal":"' + decimal128Text(buf, v) + '"}'
        break
      case 0xff:
        pos = v
        piece = '{"$minKey":1}'
        break
      case 0x7f:
        pos = v
        piece = '{"$maxKey":1}'
        break
      default:
        throw fail('BSON_UNKNOWN_TYPE', pos, 'unknown BSON element type')
    }
    out += piece
    sz += Buffer.byteLength(piece)
    if (sz > maxOut) throw fail('BSON_OUTPUT_TOO_LARGE', pos, 'JSON output exceeds maxOutputBytes')
  }
  return out
}

// ---- compat through js-bson ----------------------------------------------------------------

/** js-bson deserialize options by the option flags they come from. */
const deserOptions = new Map()
function deserOf(flags) {
  const key = flags & (FLAG_UTF8_REPLACE | FLAG_LONGS | FLAG_BUFFERS | FLAG_BSON_REGEXP | FLAG_NO_PROMOTE)
  let o = deserOptions.get(key)
  if (o === undefined) {
    o = {}
    if (key & FLAG_UTF8_REPLACE) o.validation = { utf8: false }
    if (key & FLAG_LONGS) o.promoteLongs = false
    if (key & FLAG_NO_PROMOTE) o.promoteValues = false
    if (key & FLAG_BUFFERS) o.promoteBuffers = true
    if (key & FLAG_BSON_REGEXP) o.bsonRegExp = true
    deserOptions.set(key, Object.freeze(o))
  }
  return o
}

/** js-bson 6's `Long` as JSON.stringify sees it: its own fields, `low` first. */
function long6(l) {
  return { low: l.low, high: l.high, unsigned: l.unsigned }
}

/** js-bson's `isDBRefLike` plus the deserializer's rule that every `$` key is `$ref`/`$id`/`$db`. */
function dbrefLike(o) {
  let dollar = false
  for (const k of Object.keys(o)) {
    if (k[0] !== '$') continue
    if (k !== '$ref' && k !== '$id' && k !== '$db') return false
    dollar = true
  }
  return (
    dollar &&
    typeof o.$ref === 'string' &&
    '$id' in o &&
    o.$id != null &&
    (!('$db' in o) || typeof o.$db === 'string')
  )
}

/**
 * Turns what js-bson 7 deserialized into what js-bson 6 would have: every `Long` (also as a
 * DBRef `$id` or field) with its fields in 6's order, and a code-with-scope scope shaped like
 * a DBRef promoted to one (7.3+ keeps it a plain object). Everything else prints the same.
 */
function asBson6(v) {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = asBson6(v[i])
    return v
  }
  switch (v._bsontype) {
    case undefined:
      for (const k of Object.keys(v)) {
        const x = v[k]
        if (x !== null && typeof x === 'object') {
          const y = asBson6(x)
          if (y !== x) Object.defineProperty(v, k, { value: y, enumerable: true, writable: true, configurable: true })
        }
      }
      return v
    case 'Long':
      return long6(v)
    case 'DBRef':
      v.oid = asBson6(v.oid)
      asBson6(v.fields)
      return v
    case 'Code':
      if (v.scope != null) {
        asBson6(v.scope)
        if (dbrefLike(v.scope)) {
          const fields = Object.assign({}, v.scope)
          delete fields.$ref
          delete fields.$id
          delete fields.$db
          v.scope = new BSON.DBRef(v.scope.$ref, v.scope.$id, v.scope.$db, fields)
        }
      }
      return v
    default:
      return v
  }
}

/** Maps a js-bson (or engine) error message to our code when the raw walker finds nothing. */
function codeOfMessage(e) {
  const m = String((e && e.message) || '')
  if (e && e.name === 'SyntaxError') return 'BSON_INVALID_REGEX'
  if (e instanceof RangeError && /call stack/i.test(m)) return 'BSON_TOO_DEEP'
  if (/UTF-8/i.test(m)) return 'BSON_INVALID_UTF8'
  if (/boolean/i.test(m)) return 'BSON_BAD_BOOLEAN'
  if (/unknown BSON type/i.test(m)) return 'BSON_UNKNOWN_TYPE'
  if (/code_w_scope/i.test(m)) return 'BSON_BAD_CODE_W_SCOPE'
  if (/binary/i.test(m)) return 'BSON_BAD_BINARY'
  if (/terminat|EOO|CString/i.test(m)) return 'BSON_BAD_TERMINATOR'
  if (/expected|< 5 bytes|must be <= buffer/i.test(m)) return 'BSON_TRUNCATED'
  return 'BSON_BAD_LENGTH'
}

/** The first regex the engine rejects, as the native addon's `check_regexes` reports it. */
function firstBadRegex(regexes) {
  for (const r of regexes) {
    try {
      new RegExp(r.pattern, r.flags)
    } catch (e) {
      return new CoreError('BSON_INVALID_REGEX', r.offset, 'invalid regular expression', {
        regexMessage: e && e.message,
      })
    }
  }
  return null
}

/**
 * Why js-bson rejected `buf` (or why it is too deep): the raw walker's error (code and offset
 * as the native addon reports them), else the first regex the engine rejects, else a code
 * mapped from js-bson's message with offset 0.
 */
function diagnoseCompat(buf, replace, maxDepth, cause, bsonRegExp) {
  const regexes = []
  try {
    walk(buf, MODE_COMPAT, replace, maxDepth, Infinity, 0, regexes, bsonRegExp)
  } catch (ce) {
    if (ce instanceof CoreError) {
      ce.cause = cause
      return ce
    }
    throw ce
  }
  const bad = bsonRegExp ? null : firstBadRegex(regexes)
  if (bad) {
    bad.cause = cause
    return bad
  }
  const code = codeOfMessage(cause)
  return new CoreError(code, 0, String((cause && cause.message) || cause), { cause })
}

/** `JSON.stringify(BSON.deserialize(buf))`, with native-style limits and errors. */
function compatJSON(buf, flags, maxDepth, maxOut, base) {
  const replace = (flags & FLAG_UTF8_REPLACE) !== 0
  // Duplicate keys hide parts of the BSON from the deserialized tree, so depth is checked on
  // the bytes; every nesting level costs at least 7 bytes, so small documents need no check.
  // (Checking first also keeps js-bson's recursion away from very deep input.)
  if ((buf.length - 5) / 7 + 1 > maxDepth) walk(buf, MODE_COMPAT, replace, maxDepth, Infinity, 0, null)
  let text
  try {
    const tree = BSON.deserialize(buf, deserOf(flags))
    text = JSON.stringify(flags & FLAG_BSON6 ? asBson6(tree) : tree)
  } catch (e) {
    throw diagnoseCompat(buf, replace, maxDepth, e, (flags & FLAG_BSON_REGEXP) !== 0)
  }
  if (base + (text.length > (maxOut - base) / 3 ? Buffer.byteLength(text) : text.length) > maxOut) {
    throw fail('BSON_OUTPUT_TOO_LARGE', buf.length - 1, 'JSON output exceeds maxOutputBytes')
  }
  return text
}

// ---- one document --------------------------------------------------------------------------

/** JSON of one whole document in the dialect of `flags`; throws a CoreError. */
function docJSON(buf, flags, maxDepth, maxOut, base) {
  const mode = flags & 3
  const replace = (flags & 4) !== 0
  if (mode === MODE_RELAXED || mode === MODE_CANONICAL) return walk(buf, mode, replace, maxDepth, maxOut, base, null)
  return compatJSON(buf, flags, maxDepth, maxOut, base)
}

function limits(maxDepth, maxOutputBytes) {
  const depth = Number.isInteger(maxDepth) && maxDepth >= 0 ? maxDepth : DEFAULT_MAX_DEPTH
  const out = Number.isFinite(maxOutputBytes) && maxOutputBytes >= 0 ? Math.floor(maxOutputBytes) : DEFAULT_MAX_OUTPUT_BYTES
  return [depth, out]
}

/**
 * `[flags, maxDepth, maxOutputBytes]` of a single-document call. Two argument forms exist:
 * `(bson, flags, maxDepth, maxOutputBytes)` and the native fast path's
 * `(bson, packed = flags | maxDepth << FLAG_BITS, maxOutputBytes?)`; `(bson)` alone means defaults.
 */
/** `(bson[, packed[, maxOutputBytes]])`, exactly the addon's single-document arguments. */
function singleArgs(args) {
  if (args.length >= 2 && args[1] !== undefined) {
    const packed = args[1]
    if (typeof packed !== 'number' || !(packed >= 0 && packed <= 2 ** (32 + FLAG_BITS) - 1)) {
      throw invalidArg('invalid resolved options')
    }
    const p = Math.floor(packed)
    const [, out] = limits(0, args.length >= 3 ? args[2] : undefined)
    return [p % 2 ** FLAG_BITS, Math.floor(p / 2 ** FLAG_BITS), out]
  }
  return [0, DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES]
}

function transcodeWith(bson, flags, depth, out) {
  const buf = bytesOf(bson)
  try {
    return docJSON(buf, flags, depth, out, 0)
  } catch (e) {
    if (e instanceof CoreError) throw errorOf(e)
    throw e
  }
}

function transcode(bson, ...rest) {
  const [flags, depth, out] = singleArgs([bson, ...rest])
  return transcodeWith(bson, flags, depth, out)
}

function transcodeBuffer(bson, ...rest) {
  return Buffer.from(transcode(bson, ...rest), 'utf8')
}

// ---- batches -------------------------------------------------------------------------------

class BatchFailure {
  constructor(error, index, docOffset) {
    this.error = error
    this.index = index
    this.docOffset = docOffset
  }
  toJS() {
    return batchErrorOf(this.error, this.index, this.docOffset)
  }
}

/** Splits concatenated documents by their length prefixes: `[start, end)` ranges. */
function splitConcatenated(buf) {
  const dv = viewOf(buf)
  const ranges = []
  let pos = 0
  while (pos < buf.length) {
    const index = ranges.length
    if (buf.length - pos < 4) {
      throw new BatchFailure(fail('BSON_TRUNCATED', 0, "input ends inside a document's length prefix"), index, pos)
    }
    const len = dv.getInt32(pos, true)
    if (len < 5) throw new BatchFailure(fail('BSON_BAD_LENGTH', 0, 'document length must be at least 5'), index, pos)
    if (len > buf.length - pos) {
      throw new BatchFailure(fail('BSON_TRUNCATED', 0, "input ends before the document's declared length"), index, pos)
    }
    ranges.push([pos, pos + len])
    pos += len
  }
  return ranges
}

/** `{ docs: Uint8Array[], starts: number[] | null }` of a batch argument. */
function collectDocs(input) {
  if (Array.isArray(input) && !isProxy(input)) {
    // Every element is read (getters may run) before any is checked or copied, as natively.
    const n = input.length
    const values = Array.from({ length: n })
    for (let i = 0; i < n; i++) values[i] = input[i]
    const docs = values.map((d, i) => bytesOf(d, `docs[${i}]`))
    return { docs, starts: null }
  }
  if (!isU8(input)) {
    throw invalidArg('docs must be an array of Uint8Arrays, one Uint8Array of concatenated BSON documents, or a raw reply { cursor: Uint8Array }')
  }
  input = Buffer.from(input)
  let ranges
  try {
    ranges = splitConcatenated(input)
  } catch (f) {
    if (f instanceof BatchFailure) throw f.toJS()
    throw f
  }
  return { docs: ranges.map(([s, e]) => input.subarray(s, e)), starts: ranges.map((r) => r[0]) }
}

/**
 * Transcodes `docs` joined per `layout`; throws a BatchFailure. As in the native addon, regex
 * errors (compat) are reported only after every document passed the structural checks.
 */
function runBatch(docs, starts, layout, flags, maxDepth, maxOut) {
  const texts = Array.from({ length: docs.length })
  const lines = layout === NDJSON_BUFFER || layout === NDJSON_STRING
  let size = layout === ARRAY ? 1 : 0
  let regexFailure = null
  for (let i = 0; i < docs.length; i++) {
    if (layout === ARRAY && i > 0) size++
    let text
    try {
      text = docJSON(docs[i], flags, maxDepth, maxOut, size)
    } catch (e) {
      if (!(e instanceof CoreError)) throw e
      if (e.code === 'BSON_INVALID_REGEX') {
        if (!regexFailure) regexFailure = new BatchFailure(e, i, 0)
        texts[i] = ''
        continue
      }
      throw new BatchFailure(e, i, starts ? starts[i] : 0)
    }
    texts[i] = text
    size += Buffer.byteLength(text) + (lines ? 1 : 0)
    if (size > maxOut) {
      throw new BatchFailure(fail('BSON_OUTPUT_TOO_LARGE', 0, 'JSON output exceeds maxOutputBytes'), i, 0)
    }
  }
  if (regexFailure) throw regexFailure
  switch (layout) {
    case ARRAY:
      return '[' + texts.join(',') + ']'
    case NDJSON_BUFFER:
      return Buffer.from(texts.length ? texts.join('\n') + '\n' : '', 'utf8')
    case NDJSON_STRING:
      return texts.length ? texts.join('\n') + '\n' : ''
    default:
      return texts
  }
}

function transcodeBatch(input, layout, flags, maxDepth, maxOutputBytes, _threads) {
  const { docs, starts } = collectDocs(input)
  const [depth, out] = limits(maxDepth, maxOutputBytes)
  try {
    return runBatch(docs, starts, layout >>> 0, flags >>> 0, depth, out)
  } catch (f) {
    if (f instanceof BatchFailure) throw f.toJS()
    throw f
  }
}

// ---- cursor replies -------------------------------------------------------------------------

/** Length of the value of an element of type `t` at `at` (before `end`); core `value_len`. */
function valueLen(buf, dv, t, at, end) {
  const need = (k) => {
    if (at + k > end) throw fail('BSON_TRUNCATED', at, 'value runs past the end of its document')
    return k
  }
  const lenpref = (extra, min) => {
    need(4)
    const l = dv.getInt32(at, true)
    if (l < min) throw fail('BSON_BAD_LENGTH', at, 'length field below its minimum')
    return need(l + extra)
  }
  switch (t) {
    case 0x01:
    case 0x09:
    case 0x11:
    case 0x12:
      return need(8)
    case 0x02:
    case 0x0d:
    case 0x0e:
      return lenpref(4, 1)
    case 0x03:
    case 0x04:
    case 0x0f:
      return lenpref(0, 5)
    case 0x05:
      return lenpref(5, 0)
    case 0x06:
    case 0x0a:
    case 0x7f:
    case 0xff:
      return 0
    case 0x07:
      return need(12)
    case 0x08:
      return need(1)
    case 0x0b: {
      const p = buf.indexOf(0, at)
      if (p < 0 || p >= end) throw fail('BSON_TRUNCATED', at, 'regex pattern has no NUL terminator')
      const f = buf.indexOf(0, p + 1)
      if (f < 0 || f >= end) throw fail('BSON_TRUNCATED', at, 'regex flags have no NUL terminator')
      return f + 1 - at
    }
    case 0x0c:
      return need(lenpref(4, 1) + 12)
    case 0x10:
      return need(4)
    case 0x13:
      return need(16)
    default:
      throw fail('BSON_UNKNOWN_TYPE', at - 1, 'unknown BSON element type')
  }
}

function keyEq(buf, from, to, s) {
  if (to - from !== s.length) return false
  for (let i = 0; i < s.length; i++) if (buf[from + i] !== s.charCodeAt(i)) return false
  return true
}

function keyAt(buf, ks, end) {
  const k = buf.indexOf(0, ks)
  if (k < 0 || k >= end) throw fail('BSON_TRUNCATED', ks, 'key has no NUL terminator')
  return k
}

/** Top-level elements of `doc` (framing checked): `{ type, ks, ke, v, ve }`. */
function topLevelElements(doc) {
  const dv = viewOf(doc)
  if (doc.length < 5) throw fail('BSON_TRUNCATED', 0, 'document is shorter than 5 bytes')
  const size = dv.getInt32(0, true)
  if (size < 5 || size !== doc.length) throw fail('BSON_BAD_LENGTH', 0, 'document length disagrees with its bytes')
  const end = doc.length - 1
  if (doc[end] !== 0) throw fail('BSON_BAD_TERMINATOR', end, 'document does not end with a NUL byte')
  const els = []
  let pos = 4
  while (pos < end) {
    const t = doc[pos]
    const ks = pos + 1
    const ke = keyAt(doc, ks, end)
    const v = ke + 1
    const n = valueLen(doc, dv, t, v, end)
    els.push({ type: t, ks, ke, v, ve: v + n })
    pos = v + n
  }
  if (pos !== end) throw fail('BSON_BAD_TERMINATOR', pos, 'document ends before its declared length')
  return els
}

/** The parts of a cursor document: `{ id, ns, pbrt, docs }` (ranges). Core `cursor_parts`. */
function cursorParts(cursor) {
  const dv = viewOf(cursor)
  const parts = { id: 0n, ns: null, pbrt: null, docs: [] }
  let hasId = false
  let hasBatch = false
  if (cursor.length < 5) throw fail('BSON_TRUNCATED', 0, 'cursor document is shorter than 5 bytes')
  const size = dv.getInt32(0, true)
  if (size < 5 || size !== cursor.length) throw fail('BSON_BAD_LENGTH', 0, 'cursor document length disagrees with its bytes')
  const end = cursor.length - 1
  if (cursor[end] !== 0) throw fail('BSON_BAD_TERMINATOR', end, 'cursor document does not end with NUL')
  let pos = 4
  while (pos < end) {
    const t = cursor[pos]
    const ks = pos + 1
    const ke = keyAt(cursor, ks, end)
    const v = ke + 1
    const n = valueLen(cursor, dv, t, v, end)
    if (keyEq(cursor, ks, ke, 'id') && t === 0x12) {
      parts.id = dv.getBigInt64(v, true)
      hasId = true
    } else if (keyEq(cursor, ks, ke, 'id') && t === 0x10) {
      parts.id = BigInt(dv.getInt32(v, true))
      hasId = true
    }
    else if (keyEq(cursor, ks, ke, 'ns') && t === 0x02) parts.ns = [v + 4, v + n - 1]
    else if (keyEq(cursor, ks, ke, 'postBatchResumeToken') && t === 0x03) parts.pbrt = [v, v + n]
    else if ((keyEq(cursor, ks, ke, 'firstBatch') || keyEq(cursor, ks, ke, 'nextBatch')) && t === 0x04) {
      hasBatch = true
      const aend = v + n - 1
      if (cursor[aend] !== 0) throw fail('BSON_BAD_TERMINATOR', aend, 'batch array does not end with NUL')
      let p = v + 4
      while (p < aend) {
        const et = cursor[p]
        const eks = p + 1
        const eke = keyAt(cursor, eks, aend)
        const ev = eke + 1
        if (et !== 0x03) throw fail('BSON_UNKNOWN_TYPE', p, 'batch element is not a document')
        const en = valueLen(cursor, dv, et, ev, aend)
        parts.docs.push([ev, ev + en])
        p = ev + en
      }
    }
    pos = v + n
  }
  if (pos !== end) throw fail('BSON_BAD_TERMINATOR', pos, 'document ends before its declared length')
  if (!(hasId && hasBatch)) {
    throw fail('BSON_NOT_A_CURSOR', 0, "not a cursor document (no id or no firstBatch/nextBatch array; pass the reply's cursor field)")
  }
  return parts
}

function parseCursor(cursor) {
  try {
    return cursorParts(cursor)
  } catch (e) {
    if (e instanceof CoreError) throw errorOf(e)
    throw e
  }
}

function transcodeCursor(cursor, layout, flags, maxDepth, maxOutputBytes) {
  const bytes = bytesOf(cursor, 'cursor')
  const parts = parseCursor(bytes)
  const docs = parts.docs.map(([s, e]) => bytes.subarray(s, e))
  const starts = parts.docs.map((d) => d[0])
  const [depth, out] = limits(maxDepth, maxOutputBytes)
  let value
  try {
    value = runBatch(docs, starts, layout >>> 0, flags >>> 0, depth, out)
  } catch (f) {
    if (f instanceof BatchFailure) throw f.toJS()
    throw f
  }
  return {
    id: parts.id,
    ns: parts.ns ? lossy(bytes.subarray(parts.ns[0], parts.ns[1])) : null,
    postBatchResumeToken: parts.pbrt ? Buffer.from(bytes.subarray(parts.pbrt[0], parts.pbrt[1])) : null,
    count: docs.length,
    docs: value,
  }
}

// ---- async batches -------------------------------------------------------------------------

function transcodeBatchAsync(input, layout, flags, maxDepth, maxOutputBytes, threads, isCursor) {
  let docs
  let starts
  if (isCursor) {
    const bytes = bytesOf(input, 'cursor')
    const parts = parseCursor(bytes)
    docs = parts.docs.map(([s, e]) => bytes.subarray(s, e))
    starts = parts.docs.map((d) => d[0])
  } else {
    // collectDocs copies every input before returning, so the caller may reuse its buffers.
    const c = collectDocs(input)
    docs = c.docs
    starts = c.starts
  }
  const [depth, out] = limits(maxDepth, maxOutputBytes)
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      try {
        resolve(runBatch(docs, starts, layout >>> 0, flags >>> 0, depth, out))
      } catch (f) {
        reject(f instanceof BatchFailure ? f.toJS() : f)
      }
    })
  })
}

// ---- change-stream batches -----------------------------------------------------------------

function strOf(buf, v) {
  const len = Math.max(viewOf(buf).getInt32(v, true), 1)
  return lossy(buf.subarray(v + 4, v + 4 + len - 1))
}

/** `[value, plain]`: `{ _data }` for the usual token shape, else its canonical EJSON text. */
function tokenValue(doc) {
  const els = topLevelElements(doc)
  if (els.length === 1 && els[0].type === 0x02 && keyEq(doc, els[0].ks, els[0].ke, '_data')) {
    return [{ _data: strOf(doc, els[0].v) }, true]
  }
  return [walk(doc, MODE_CANONICAL, false, DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES, 0, null), false]
}

const EVENT_DOC_KEYS = ['fullDocument', 'fullDocumentBeforeChange', 'updateDescription']

function transcodeChangeBatch(cursor, whole, flags, maxDepth, maxOutputBytes) {
  const bytes = bytesOf(cursor, 'cursor')
  const parts = parseCursor(bytes)
  const [depth, maxOut] = limits(maxDepth, maxOutputBytes)
  flags = flags >>> 0
  let regexFailure = null
  const json = (doc, i, shift) => {
    try {
      return docJSON(doc, flags, depth, maxOut, 0)
    } catch (e) {
      if (e instanceof CoreError && e.code === 'BSON_INVALID_REGEX') {
        if (!regexFailure) regexFailure = [e, i]
        return ''
      }
      if (e instanceof CoreError) throw [e.shifted(shift), i]
      throw e
    }
  }
  const result = {}
  try {
    result.id = parts.id
    result.ns = parts.ns ? lossy(bytes.subarray(parts.ns[0], parts.ns[1])) : null
    let pbrt = null
    if (parts.pbrt) {
      let v
      let plain
      try {
        ;[v, plain] = tokenValue(bytes.subarray(parts.pbrt[0], parts.pbrt[1]))
      } catch (e) {
        if (e instanceof CoreError) throw [e, 0]
        throw e
      }
      if (!plain) result.postBatchResumeTokenEJSON = v
      else pbrt = v
    }
    result.postBatchResumeToken = pbrt
    const events = Array.from({ length: parts.docs.length })
    for (let i = 0; i < parts.docs.length; i++) {
      const [a, b] = parts.docs[i]
      const ev = bytes.subarray(a, b)
      let els
      try {
        els = topLevelElements(ev)
      } catch (e) {
        if (e instanceof CoreError) throw [e.shifted(a), i]
        throw e
      }
      const o = {}
      for (const el of els) {
        const v = el.v
        const sub = ev.subarray(v, el.ve)
        const is = (k) => keyEq(ev, el.ks, el.ke, k)
        if (is('_id') && el.type === 0x03) {
          let tv
          try {
            tv = tokenValue(sub)
          } catch (e) {
            if (e instanceof CoreError) throw [e.shifted(a + v), i]
            throw e
          }
          o[tv[1] ? 'resumeToken' : 'resumeTokenEJSON'] = tv[0]
        } else if (is('operationType') && el.type === 0x02) {
          o.operationType = strOf(ev, v)
        } else if (is('ns') && el.type === 0x03) {
          const nso = {}
          let nels
          try {
            nels = topLevelElements(sub)
          } catch (e) {
            if (e instanceof CoreError) throw [e.shifted(a + v), i]
            throw e
          }
          for (const n of nels) {
            if (n.type !== 0x02) continue
            if (keyEq(sub, n.ks, n.ke, 'db')) nso.db = strOf(sub, n.v)
            else if (keyEq(sub, n.ks, n.ke, 'coll')) nso.coll = strOf(sub, n.v)
          }
          o.ns = nso
        } else if (is('clusterTime') && el.type === 0x11) {
          const dv = viewOf(ev)
          o.clusterTime = { t: dv.getUint32(v + 4, true), i: dv.getUint32(v, true) }
        } else if (is('wallTime') && el.type === 0x09) {
          o.wallTime = new Date(Number(viewOf(ev).getBigInt64(v, true)))
        } else if (is('splitEvent') && el.type === 0x03) {
          const so = {}
          let sels
          try {
            sels = topLevelElements(sub)
          } catch (e) {
            if (e instanceof CoreError) throw [e.shifted(a + v), i]
            throw e
          }
          const sdv = viewOf(sub)
          for (const n of sels) {
            if (n.type !== 0x10) continue
            if (keyEq(sub, n.ks, n.ke, 'fragment')) so.fragment = sdv.getInt32(n.v, true)
            else if (keyEq(sub, n.ks, n.ke, 'of')) so.of = sdv.getInt32(n.v, true)
          }
          o.splitEvent = so
        } else if (is('documentKey') && el.type === 0x03) {
          o.documentKey = json(sub, i, a + v)
        } else if (!whole && EVENT_DOC_KEYS.some(is)) {
          const key = EVENT_DOC_KEYS.find(is)
          o[key] = el.type === 0x03 ? json(sub, i, a + v) : null
        }
      }
      if (whole) o.json = json(ev, i, a)
      events[i] = o
    }
    result.events = events
  } catch (x) {
    if (Array.isArray(x) && x[0] instanceof CoreError) {
      const [e, i] = x
      throw jsError(e.code, `${e.code}: ${e.detail} at byte ${e.offset} (event ${i})`, e.offset, i, e.cause)
    }
    throw x
  }
  if (regexFailure) throw regexErrorOf(regexFailure[0], regexFailure[1])
  return result
}

// ---- test hook -----------------------------------------------------------------------------

/** The native addon's test-only panic hook: here, simply an Error. */
function __panicForTests() {
  throw new Error('bson2json fallback: deliberate panic for tests')
}


module.exports = {
  __napiBindingTarget: 'fallback',
  __panicForTests,
  BatchLayout,
  transcode,
  transcodeBuffer,
  transcodeBatch,
  transcodeBatchAsync,
  transcodeCursor,
  transcodeChangeBatch,
  // Internals for __test__/fallback.spec.ts.
  _internal: { ejsonDouble, decimal128Text, walk, splitConcatenated },
}
