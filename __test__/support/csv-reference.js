'use strict'

// The plain twin of the addon's CSV rows (crates/bson2json-core/src/csv.rs), which
// __test__/cli/cli-export.spec.ts holds equal to it on generated documents: the JavaScript
// implementation `export --type csv` used before the rows moved into the core.
//
// `--type csv`: one row per raw BSON document with mongoexport's conventions. A field is a
// dotted path through documents and arrays (`a.0.b` is element 0 of array `a`); a missing
// field, a path through a scalar and null are empty cells. Scalars are written as mongoexport
// writes them (see docs/cli.md for the table): strings as they are, numbers as Go prints them
// (`%v`), ObjectId as `ObjectId(hex)`, dates as `2006-01-02T15:04:05.000Z`, binary as upper-case
// hex, regexes as `/pattern/options`; documents and arrays as compact JSON of the legacy
// Extended JSON mongoexport uses there (`{"$numberLong":"5"}`, `{"$date":"…Z"}`).
// Cells are quoted like Go's encoding/csv: when they hold `,`, `"`, CR or LF or start with
// white space (quotes doubled).

const { T, forEachElement, findElement } = require('../../lib/cli/bson')

const INDEX = /^[+-]?\d+$/

/**
 * Parsed paths: each an array of { key: Buffer, index: number | null }, plus `byFirst`, the
 * paths grouped by their first part (a key read as latin1, so it compares byte for byte).
 */
function compilePaths(fields) {
  const paths = fields.map((f) =>
    f.split('.').map((p) => ({ key: Buffer.from(p, 'utf8'), index: INDEX.test(p) ? Number(p) : null })),
  )
  const byFirst = new Map()
  paths.forEach((p, i) => {
    const k = p[0].key.toString('latin1')
    if (!byFirst.has(k)) byFirst.set(k, [])
    byFirst.get(k).push(i)
  })
  paths.byFirst = byFirst
  return paths
}

/** Follows `path` from its second part on, starting at the element `el`. */
function descend(buf, el, path) {
  for (let i = 1; i < path.length && el !== null; i++) {
    const part = path[i]
    if (el.type === T.DOCUMENT) el = findElement(buf, el.start, part.key)
    else if (el.type === T.ARRAY) el = part.index === null || part.index < 0 ? null : findElement(buf, el.start, Buffer.from(String(part.index)))
    else el = null
  }
  return el
}

/** Go's `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e6 (`1e+06`). */
function goFloat(x) {
  if (Number.isNaN(x)) return 'NaN'
  if (x === Infinity) return '+Inf'
  if (x === -Infinity) return '-Inf'
  if (x === 0) return Object.is(x, -0) ? '-0' : '0'
  const [mant, e] = x.toExponential().split('e')
  const exp = Number(e)
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`
  return String(x)
}

const hex = (b) => b.toString('hex').toUpperCase()

function isoDate(big) {
  // mongoexport formats dates before year 3001 (ms < 32535215999000) as ISO text, others as an
  // object with the exact int64.
  const ms = Number(big)
  if (ms < 32535215999000 && ms >= -62135596800000) return new Date(ms).toISOString()
  return `{ "$date": { "$numberLong" : "${big}" }}`
}

const TEN34 = 10n ** 34n

/** The Decimal128 string of the spec (as js-bson's toString, without building an object). */
function decimal128(bytes) {
  const low = bytes.readBigUInt64LE(0)
  const high = bytes.readBigUInt64LE(8)
  const negative = high >> 63n === 1n
  const combination = Number((high >> 58n) & 0x1fn)
  let biased
  let coefficient
  if (combination >> 3 === 3) {
    if (combination === 0x1e) return negative ? '-Infinity' : 'Infinity'
    if (combination === 0x1f) return 'NaN'
    biased = Number((high >> 47n) & 0x3fffn)
    coefficient = 0n // 2^113 or more: above 10^34 - 1, a zero by the spec
  } else {
    biased = Number((high >> 49n) & 0x3fffn)
    coefficient = ((high & 0x1ffffffffffffn) << 64n) | low
    if (coefficient >= TEN34) coefficient = 0n
  }
  const exponent = biased - 6176
  const digits = coefficient.toString()
  const adjusted = exponent + digits.length - 1
  let text
  if (exponent <= 0 && adjusted >= -6) {
    if (exponent === 0) text = digits
    else {
      const point = digits.length + exponent
      text = point > 0 ? `${digits.slice(0, point)}.${digits.slice(point)}` : `0.${'0'.repeat(-point)}${digits}`
    }
  } else {
    text = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
    text += `E${adjusted >= 0 ? '+' : ''}${adjusted}`
  }
  return negative ? `-${text}` : text
}

function str(buf, at) {
  const n = buf.readInt32LE(at)
  return buf.toString('utf8', at + 4, at + 4 + n - 1)
}

const HEX = '0123456789abcdef'

/** A JSON string as Go's encoding/json writes it (\u00XX for controls, <, > and &). */
// oxlint-disable-next-line no-control-regex -- Go escapes the control characters, so the class must name them
const NEEDS_ESCAPE = new RegExp('[\\u0000-\\u001f"\\\\<>&\\u2028\\u2029]')

function goString(text) {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`
  let out = '"'
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    let esc = null
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) {
      if (c === 0x22 || c === 0x5c) esc = `\\${text[i]}`
      else if (c === 0x0a) esc = '\\n'
      else if (c === 0x0d) esc = '\\r'
      else esc = `\\u00${HEX[c >> 4]}${HEX[c & 15]}`
    } else if (c === 0x2028 || c === 0x2029) {
      esc = `\\u${c.toString(16)}`
    }
    if (esc !== null) {
      out += text.slice(start, i) + esc
      start = i + 1
    }
  }
  return `${out + text.slice(start)}"`
}

/** strconv.FormatFloat(x, 'g', -1, 64), with `.0` on integral values as mongoexport adds. */
function legacyFloat(x) {
  if (x === Infinity) return '+Infinity'
  if (x === -Infinity) return '-Infinity'
  const g = goFloat(x)
  return Number.isFinite(x) && Number.isInteger(x) && !g.includes('e') ? `${g}.0` : g
}

/**
 * A nested document or array as mongoexport writes it in a CSV cell: compact JSON of its
 * legacy Extended JSON (`{"$numberLong":"5"}`, `{"$date":"…Z"}`, `{"$binary":"…","$type":"00"}`,
 * `{"$regex":…,"$options":…}`), int32 and doubles as numbers.
 */
function legacyJSON(buf, type, at) {
  switch (type) {
    case T.DOCUMENT:
    case T.ARRAY: {
      const parts = []
      forEachElement(buf, at, (t, ks, ke, vs) => {
        const v = legacyJSON(buf, t, vs)
        parts.push(type === T.ARRAY ? v : `${goString(buf.toString('utf8', ks, ke))}:${v}`)
      })
      return type === T.ARRAY ? `[${parts.join(',')}]` : `{${parts.join(',')}}`
    }
    case T.STRING:
    case T.SYMBOL:
      return goString(str(buf, at))
    case T.INT32:
      return String(buf.readInt32LE(at))
    case T.INT64:
      return `{"$numberLong":"${buf.readBigInt64LE(at)}"}`
    case T.DOUBLE:
      return legacyFloat(buf.readDoubleLE(at))
    case T.DECIMAL128:
      return `{"$numberDecimal":"${decimal128(buf.subarray(at, at + 16))}"}`
    case T.BOOLEAN:
      return buf[at] === 0 ? 'false' : 'true'
    case T.NULL:
      return 'null'
    case T.UNDEFINED:
      return '{"$undefined":true}'
    case T.OBJECTID:
      return `{"$oid":"${buf.toString('hex', at, at + 12)}"}`
    case T.DATE: {
      const big = buf.readBigInt64LE(at)
      const ms = Number(big)
      return ms < 32535215999000 && ms >= -62135596800000 ? `{"$date":"${new Date(ms).toISOString()}"}` : `{"$date":{"$numberLong":"${big}"}}`
    }
    case T.TIMESTAMP:
      return `{"$timestamp":{"t":${buf.readUInt32LE(at + 4)},"i":${buf.readUInt32LE(at)}}}`
    case T.BINARY: {
      const n = buf.readInt32LE(at)
      const subtype = buf[at + 4]
      let data = buf.subarray(at + 5, at + 5 + n)
      if (subtype === 0x02 && data.length >= 4) data = data.subarray(4)
      return `{"$binary":"${data.toString('base64')}","$type":"${HEX[subtype >> 4]}${HEX[subtype & 15]}"}`
    }
    case T.REGEX: {
      const p = buf.indexOf(0, at)
      const o = buf.indexOf(0, p + 1)
      return `{"$regex":${goString(buf.toString('utf8', at, p))},"$options":"${buf.toString('utf8', p + 1, o)}"}`
    }
    case T.CODE:
      return `{"$code":${goString(str(buf, at))}}`
    case T.CODE_W_SCOPE:
      return `{"$code":${goString(str(buf, at + 4))},"$scope":${legacyJSON(buf, T.DOCUMENT, at + 8 + buf.readInt32LE(at + 4))}}`
    case T.DBPOINTER: {
      const n = buf.readInt32LE(at)
      return `{"$ref":${goString(buf.toString('utf8', at + 4, at + 3 + n))},"$id":{"$oid":"${buf.toString('hex', at + 4 + n, at + 16 + n)}"}}`
    }
    case T.MINKEY:
      return '{"$minKey":1}'
    case T.MAXKEY:
      return '{"$maxKey":1}'
    default:
      throw new RangeError(`unknown BSON type 0x${type.toString(16)}`)
  }
}

/** The cell text of one element (null: empty cell). */
function cell(buf, el) {
  const at = el.start
  switch (el.type) {
    case T.STRING:
    case T.SYMBOL:
    case T.CODE:
      return str(buf, at)
    case T.CODE_W_SCOPE:
      return str(buf, at + 4)
    case T.INT32:
      return String(buf.readInt32LE(at))
    case T.INT64:
      return String(buf.readBigInt64LE(at))
    case T.DOUBLE:
      return goFloat(buf.readDoubleLE(at))
    case T.DECIMAL128:
      return decimal128(buf.subarray(at, at + 16))
    case T.BOOLEAN:
      return buf[at] === 0 ? 'false' : 'true'
    case T.NULL:
      return null
    case T.UNDEFINED:
      return '{ "$undefined": true }'
    case T.OBJECTID:
      return `ObjectId(${buf.toString('hex', at, at + 12)})`
    case T.DATE:
      return isoDate(buf.readBigInt64LE(at))
    case T.TIMESTAMP:
      return `{ "$timestamp": { "t": ${buf.readUInt32LE(at + 4)}, "i": ${buf.readUInt32LE(at)} } }`
    case T.BINARY: {
      const n = buf.readInt32LE(at)
      const subtype = buf[at + 4]
      let data = buf.subarray(at + 5, at + 5 + n)
      // Subtype 2 carries its own length (dropped by the driver), then mongoexport drops 4 more bytes.
      if (subtype === 0x02) data = data.subarray(Math.min(8, data.length))
      return hex(data)
    }
    case T.REGEX: {
      const p = buf.indexOf(0, at)
      const o = buf.indexOf(0, p + 1)
      return `/${buf.toString('utf8', at, p)}/${buf.toString('utf8', p + 1, o)}`
    }
    case T.DBPOINTER: {
      const n = buf.readInt32LE(at)
      const ns = buf.toString('utf8', at + 4, at + 4 + n - 1)
      return `{ "$ref": "${ns}", "$id": ObjectID("${buf.toString('hex', at + 4 + n, at + 16 + n)}") }`
    }
    case T.MINKEY:
      return '$MinKey'
    case T.MAXKEY:
      return '$MaxKey'
    case T.DOCUMENT:
    case T.ARRAY:
      return legacyJSON(buf, el.type, at)
    default:
      return null
  }
}

const LEADING_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/

const NEEDS_QUOTES = /[",\r\n]/

/** Go encoding/csv's quoting of one field. */
function quote(s) {
  if (s === '') return s
  if (NEEDS_QUOTES.test(s) || s === '\\.' || LEADING_SPACE.test(s)) return `"${s.replaceAll('"', '""')}"`
  return s
}

/** The header line (field names as given). */
function csvHeader(fields) {
  return `${fields.map(quote).join(',')}\n`
}

/** One CSV line for the raw document `doc`; throws a RangeError when it is malformed. */
function csvRow(doc, paths) {
  const found = Array.from({ length: paths.length }, () => null)
  const byFirst = paths.byFirst
  // One walk over the top level (it also checks the document's framing); the first element of a
  // name wins, as in mongoexport.
  forEachElement(doc, 0, (type, ks, ke, vs, ve) => {
    const hit = byFirst.get(doc.toString('latin1', ks, ke))
    if (hit === undefined) return true
    for (const i of hit) if (found[i] === null) found[i] = descend(doc, { type, start: vs, end: ve }, paths[i]) ?? false
    return true
  })
  let line = ''
  for (let i = 0; i < paths.length; i++) {
    const el = found[i]
    const text = el === null || el === false ? null : cell(doc, el)
    if (i > 0) line += ','
    if (text !== null) line += quote(text)
  }
  return `${line}\n`
}

module.exports = { compilePaths, csvHeader, csvRow, decimal128, goFloat, quote }
