'use strict'

/**
 * Extended JSON as the MongoDB Java driver's `JsonWriter` writes it, which is what the Kafka
 * connectors put into their records: `strict` is `JsonMode.STRICT` (the MongoDB connector's
 * `DefaultJson` formatter: `{"$date": millis}`, `{"$numberLong": "…"}` for every int64, legacy
 * `$binary`/`$regex`), `relaxed` is `JsonMode.RELAXED` (Debezium's `updatedFields`: int64 as
 * a number, `{"$date": "ISO-8601"}` within years 1970-9999), `compact` is STRICT's values with
 * no space after a comma (`{"a": 1,"b": [1,2]}`: Debezium's `after` and its key's `id`, written
 * with indentation on and empty indent and newline strings). All with the writer's spacing
 * otherwise (`{"a": 1, "b": [1, 2]}`), its string escapes (`\uXXXX`, lowercase, for every
 * UTF-16 unit the real writer escapes: all but letters other than modifier letters, digits and
 * numbers, space separators, punctuation and symbols, as the JVM assigns them; the table
 * lib/kafka/java-chars.js) and Java's `Double.toString` for doubles.
 *
 * The input is canonical Extended JSON text of a document (what the binding writes with
 * `dialect: 'canonical'`): every BSON type is explicit there, and the text is walked once in
 * order (never `JSON.parse`, whose objects would put integer-like keys first).
 * Written in JavaScript first (docs/kafka.md "Record formats": a per-event cost a native writer
 * would remove).
 */

/**
 * A reader of canonical Extended JSON text from position `i`: `value()` gives a tree that keeps
 * key order (objects are `{ keys, values, start, end }`, `start`/`end` their span in the text).
 */
class Reader {
  constructor(text, i = 0) {
    this.text = text
    this.i = i
  }

  ws() {
    const text = this.text
    let i = this.i
    while (i < text.length) {
      const c = text.charCodeAt(i)
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++
      else break
    }
    this.i = i
  }

  value() {
    this.ws()
    const text = this.text
    const c = text.charCodeAt(this.i)
    if (c === 0x7b /* { */) {
      const start = this.i
      this.i++
      const keys = []
      const values = []
      this.ws()
      if (text.charCodeAt(this.i) === 0x7d) {
        this.i++
        return { keys, values, start, end: this.i }
      }
      for (;;) {
        this.ws()
        keys.push(this.string())
        this.ws()
        this.i++ // ':'
        values.push(this.value())
        this.ws()
        if (text.charCodeAt(this.i++) === 0x7d) return { keys, values, start, end: this.i }
      }
    }
    if (c === 0x5b /* [ */) {
      this.i++
      const items = []
      this.ws()
      if (text.charCodeAt(this.i) === 0x5d) {
        this.i++
        return items
      }
      for (;;) {
        items.push(this.value())
        this.ws()
        if (text.charCodeAt(this.i++) === 0x5d) return items
      }
    }
    if (c === 0x22) return this.string()
    const lit = this.literal()
    return lit === 'true' ? true : lit === 'false' ? false : lit === 'null' ? null : { number: lit }
  }

  /** `true`, `false`, `null` or a number, as text. */
  literal() {
    const m = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/.exec(this.text.slice(this.i, this.i + 40))
    if (m === null) throw new Error(`bson2json/kafka: unexpected character in canonical Extended JSON at ${this.i}`)
    this.i += m[0].length
    return m[0]
  }

  /** A string's span: `[start, end)` of its contents, and whether it holds escapes. */
  stringSpan() {
    const text = this.text
    const start = this.i + 1
    const quote = text.indexOf('"', start)
    const backslash = text.indexOf('\\', start)
    if (backslash < 0 || backslash > quote) {
      this.i = quote + 1
      return { start, end: quote, escaped: false }
    }
    // escapes: the closing quote is the first one not escaped
    let j = backslash
    for (;;) {
      const c = text.charCodeAt(j)
      if (c === 0x5c) j += 2
      else if (c === 0x22) break
      else j++
    }
    this.i = j + 1
    return { start, end: j, escaped: true }
  }

  string() {
    const { start, end, escaped } = this.stringSpan()
    return escaped ? JSON.parse(this.text.slice(start - 1, end + 1)) : this.text.slice(start, end)
  }
}

/** A canonical Extended JSON text as a tree that keeps key order (see {@link Reader}). */
function parseCanonical(text) {
  return new Reader(text).value()
}

/** Java's `Double.toString` (shortest round-trip digits; decimal in [1e-3, 1e7), else `d.dddE±n`). */
function javaDouble(x) {
  if (Number.isNaN(x)) return 'NaN'
  if (x === Infinity) return 'Infinity'
  if (x === -Infinity) return '-Infinity'
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0'
  const a = Math.abs(x)
  const [m, e] = a.toExponential().split('e')
  const digits = m.replace('.', '')
  const exp = Number(e)
  let s
  if (a >= 1e-3 && a < 1e7) {
    if (exp >= 0) s = `${digits.slice(0, exp + 1).padEnd(exp + 1, '0')}.${digits.slice(exp + 1) || '0'}`
    else s = `0.${'0'.repeat(-exp - 1)}${digits}`
  } else {
    s = `${digits[0]}.${digits.slice(1) || '0'}E${exp}`
  }
  return x < 0 ? `-${s}` : s
}

// The UTF-16 units the Java writer writes as they are (by their Character.getType: letters but
// modifier letters, digits and other numbers, space separators, punctuation, symbols, as assigned
// in the JVM's Unicode version); every other one (modifier letters, controls, format characters,
// marks, line/paragraph separators, private use, surrogates, unassigned) as \uXXXX. The table is
// the real writer's (lib/kafka/java-chars.js, generated by scripts/kafka-java-chars.sh), the one
// the native writer uses too; as a bitmap here, one bit per code unit.
const KEPT = new Uint8Array(8192)
for (const [a, b] of require('./java-chars')) for (let c = a; c <= b; c++) KEPT[c >> 3] |= 1 << (c & 7)
const kept = (c) => (KEPT[c >> 3] & (1 << (c & 7))) !== 0
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const SHORT = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** A string as the Java writer quotes it. */
function javaString(s) {
  if (PLAIN.test(s)) return `"${s}"`
  let out = '"'
  for (let k = 0; k < s.length; k++) {
    const ch = s[k]
    const c = s.charCodeAt(k)
    if (SHORT[ch] !== undefined) out += SHORT[ch]
    else if (kept(c)) out += ch
    else out += `\\u${c.toString(16).padStart(4, '0')}`
  }
  return `${out}"`
}

/** ISO-8601 as java.time's ISO_OFFSET_DATE_TIME writes a UTC instant: the fraction only when not zero, without trailing zeros. */
function javaIsoDate(ms) {
  const iso = new Date(ms).toISOString() // 2023-11-14T22:13:20.120Z
  const [head, frac] = iso.slice(0, -1).split('.')
  const f = frac.replace(/0+$/, '')
  return `${head}${f === '' ? '' : `.${f}`}Z`
}

const obj = (pairs, sep = ', ') => `{${pairs.map(([k, v]) => `${javaString(k)}: ${v}`).join(sep)}}`

/**
 * A parsed canonical value written by the Java writer in `mode` ('strict' | 'relaxed' | 'compact').
 * @param {any} v a value of {@link parseCanonical}
 * @param {'strict'|'relaxed'|'compact'} mode
 */
function write(v, mode) {
  if (v === null) return 'null'
  if (v === true) return 'true'
  if (v === false) return 'false'
  if (typeof v === 'string') return javaString(v)
  const sep = mode === 'compact' ? ',' : ', '
  if (Array.isArray(v)) return `[${v.map((x) => write(x, mode)).join(sep)}]`
  if (v.number !== undefined) return v.number
  const { keys, values } = v
  const k0 = keys.length > 0 && keys[0].charCodeAt(0) === 0x24 /* $ */ ? keys[0] : null
  if (k0 !== null) {
    const x = values[0]
    switch (k0) {
      case '$numberInt':
        if (keys.length === 1) return x
        break
      case '$numberLong':
        if (keys.length === 1) return mode !== 'relaxed' ? obj([['$numberLong', javaString(x)]]) : x
        break
      case '$numberDouble':
        if (keys.length === 1) {
          const d = javaDouble(Number(x))
          if (mode === 'relaxed' && !Number.isFinite(Number(x))) return obj([['$numberDouble', javaString(d)]])
          return d
        }
        break
      case '$date':
        if (keys.length === 1 && x !== null && typeof x === 'object' && x.keys && x.keys[0] === '$numberLong') {
          const ms = x.values[0]
          if (mode !== 'relaxed') return obj([['$date', ms]])
          const n = Number(ms)
          if (n >= 0 && n <= 253402300799999) return obj([['$date', javaString(javaIsoDate(n))]])
          return obj([['$date', obj([['$numberLong', javaString(ms)]])]])
        }
        break
      case '$binary':
        if (keys.length === 1 && x && x.keys) {
          const b64 = x.values[x.keys.indexOf('base64')]
          const sub = String(x.values[x.keys.indexOf('subType')]).toUpperCase().padStart(2, '0')
          if (mode !== 'relaxed') return obj([['$binary', javaString(b64)], ['$type', javaString(sub)]], sep)
          return obj([['$binary', obj([['base64', javaString(b64)], ['subType', javaString(sub)]], sep)]])
        }
        break
      case '$regularExpression':
        if (keys.length === 1 && x && x.keys && mode !== 'relaxed') {
          return obj([['$regex', javaString(x.values[x.keys.indexOf('pattern')])], ['$options', javaString(x.values[x.keys.indexOf('options')])]], sep)
        }
        break
      case '$dbPointer':
        if (keys.length === 1 && x && x.keys && mode !== 'relaxed') return write(x, mode)
        break
      default:
    }
  }
  return obj(
    keys.map((k, j) => [k, write(values[j], mode)]),
    sep,
  )
}

/** The wrappers whose Java form differs from their canonical one (the rest are written as objects). */
const REWRITTEN = new Set(['$numberInt', '$numberLong', '$numberDouble', '$date', '$binary', '$regularExpression', '$dbPointer'])

/**
 * Canonical Extended JSON text (from `start` to `end`, default all of it) → the Java writer's text
 * in `mode`, in one pass over it: objects and arrays written as they are read, the wrappers
 * above through {@link write}, strings copied as they are when they hold nothing Java escapes
 * differently. The same text as `write(parseCanonical(canonical), mode)`, which the tests compare.
 */
function javaJson(canonical, mode, start = 0, end = canonical.length) {
  const r = new Reader(canonical, start)
  const sep = mode === 'compact' ? ',' : ', '
  let out = ''
  const value = () => {
    r.ws()
    const c = canonical.charCodeAt(r.i)
    if (c === 0x7b) {
      const open = r.i
      r.i++
      r.ws()
      if (canonical.charCodeAt(r.i) === 0x7d) {
        r.i++
        out += '{}'
        return
      }
      const k0 = r.string()
      if (k0.charCodeAt(0) === 0x24 && REWRITTEN.has(k0)) {
        r.i = open
        out += write(r.value(), mode)
        return
      }
      out += '{'
      let key = k0
      for (;;) {
        out += `${javaString(key)}: `
        r.ws()
        r.i++ // ':'
        value()
        r.ws()
        if (canonical.charCodeAt(r.i++) === 0x7d) break
        out += sep
        r.ws()
        key = r.string()
      }
      out += '}'
      return
    }
    if (c === 0x5b) {
      r.i++
      r.ws()
      out += '['
      if (canonical.charCodeAt(r.i) === 0x5d) {
        r.i++
        out += ']'
        return
      }
      for (let first = true; ; first = false) {
        if (!first) out += sep
        value()
        r.ws()
        if (canonical.charCodeAt(r.i++) === 0x5d) break
      }
      out += ']'
      return
    }
    if (c === 0x22) {
      const { start: s, end: e, escaped } = r.stringSpan()
      const raw = canonical.slice(s, e)
      out += !escaped && PLAIN.test(raw) ? `"${raw}"` : javaString(escaped ? JSON.parse(canonical.slice(s - 1, e + 1)) : raw)
      return
    }
    out += r.literal()
  }
  value()
  if (r.i > end) throw new Error('bson2json/kafka: canonical Extended JSON span overrun')
  return out
}

module.exports = { parseCanonical, write, javaJson, javaDouble, javaString, javaIsoDate }
