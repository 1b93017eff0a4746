/**
 * Seeded generator of raw BSON documents for differential tests.
 *
 * Documents are written byte by byte with a tiny hand-written BSON writer (not js-bson's serializer),
 * so it can produce what js-bson cannot: duplicate keys, undefined (0x06), symbols (0x0E),
 * DBPointer (0x0C), code-w-scope (0x0F), invalid UTF-8 in keys, arbitrary array element names,
 * regex flags in any order, odd binary subtypes/lengths, etc.
 *
 * Determinism: everything is driven by a mulberry32 PRNG; Math.random is never used.
 */

export type Rng = {
  next(): number
  int(n: number): number
  chance(p: number): boolean
  pick<T>(a: readonly T[]): T
  bytes(n: number): number[]
}

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (arr) => arr[int(arr.length)],
    bytes: (n) => {
      const out: number[] = []
      for (let i = 0; i < n; i++) out.push(int(256))
      return out
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Byte helpers
// ---------------------------------------------------------------------------------------------

export function i32(v: number): number[] {
  const b = Buffer.alloc(4)
  b.writeInt32LE(v | 0)
  return [...b]
}
export function i64(v: bigint): number[] {
  const b = Buffer.alloc(8)
  b.writeBigInt64LE(BigInt.asIntN(64, v))
  return [...b]
}
export function u64(v: bigint): number[] {
  const b = Buffer.alloc(8)
  b.writeBigUInt64LE(BigInt.asUintN(64, v))
  return [...b]
}
export function f64(v: number): number[] {
  const b = Buffer.alloc(8)
  b.writeDoubleLE(v)
  return [...b]
}
export function utf8(s: string): number[] {
  return [...Buffer.from(s, 'utf8')]
}
export function cstr(bytes: number[] | string): number[] {
  const b = typeof bytes === 'string' ? utf8(bytes) : bytes
  return [...b, 0]
}
/** A BSON string: int32 length (incl. NUL), bytes, NUL. */
export function bstr(bytes: number[] | string): number[] {
  const b = typeof bytes === 'string' ? utf8(bytes) : bytes
  return [...i32(b.length + 1), ...b, 0]
}
export type Elem = { type: number; key: number[]; value: number[] }
export function el(type: number, key: number[] | string, value: number[]): Elem {
  return { type, key: typeof key === 'string' ? utf8(key) : key, value }
}
/** Serialises a document from elements. */
export function doc(elems: Elem[]): number[] {
  const body: number[] = []
  for (const e of elems) {
    body.push(e.type, ...e.key, 0, ...e.value)
  }
  return [...i32(body.length + 5), ...body, 0]
}
export function hex(b: Uint8Array | number[]): string {
  return Buffer.from(b as any).toString('hex')
}
export function fromHex(h: string): Buffer {
  return Buffer.from(h.replace(/\s+/g, ''), 'hex')
}

// ---------------------------------------------------------------------------------------------
// Value pools
// ---------------------------------------------------------------------------------------------

const P53 = 2n ** 53n
export const INT64_POOL: bigint[] = [
  0n, 1n, -1n, 42n, -42n, 2147483647n, -2147483648n, 2147483648n, -2147483649n, 4294967295n, 4294967296n,
  P53, P53 - 1n, P53 + 1n, P53 + 2n, -P53, -P53 + 1n, -P53 - 1n, -P53 - 2n,
  2n ** 63n - 1n, -(2n ** 63n), 2n ** 62n, -(2n ** 62n), 2n ** 32n + 1n, -(2n ** 32n) - 1n,
  1234567890123456789n, -1234567890123456789n,
]

export const DOUBLE_POOL: number[] = [
  0, -0, 1, -1, 0.1, 0.5, 1.5, -1.5, 1e21, 1e20, -1e21, 1e-7, 1e-6, -1e-7, 1.0000000000000002, 5e-324, -5e-324,
  2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308, -1.7976931348623157e308, Infinity,
  -Infinity, NaN, 1.2345678901234568e20, 1.2345678921232e18, 9007199254740992, 2 ** 53 + 2, 0.000001234,
  1e300, 1e-300, 3.141592653589793, 100, 1e100, 4.35, 0.3, 1 / 3, 2 ** 31, -(2 ** 31), 2 ** 64,
]

export const DATE_POOL: bigint[] = [
  0n, 1n, -1n, 1000n, -1000n, 1234567890123n, 253402300800000n, 253402300799999n, 253402300799000n,
  -62167219200000n, -62167219200001n, -62135596800000n, -62198755200001n, 8640000000000000n, 8640000000000001n,
  -8640000000000000n, -8640000000000001n, 2n ** 53n + 2n, 2n ** 63n - 1n, -(2n ** 63n), 951782400000n,
  -86400000n, -1n * 10n ** 14n, 10n ** 14n, 1700000000000n,
]

/** Decimal128 values as 16 little-endian bytes (hex), from the corpus / IEEE 754-2008. */
export const DECIMAL_POOL: string[] = [
  '01000000000000000000000000004030', // 1
  '0000000000000000000000000000403C', // 0E+? variants
  '00000000000000000000000000002230', // -0E-8? (sign bit differs)
  '0000000000000000000000000000007C', // NaN
  '000000000000000000000000000000FC', // -NaN
  '0000000000000000000000000000007E', // sNaN
  '00000000000000000000000000000078', // Inf
  '000000000000000000000000000000F8', // -Inf
  'FFFFFFFFFFFFFFFFFFFFFFFFFFFF3F30', // non-canonical coefficient
  'FFFFFFFF638E8D37C087ADBE09EDFF5F', // max
  '01000000000000000000000000000000', // 1E-6176
  '0A00000000000000000000000000B230', // -1.0?
  '3C000000000000000000000000003E30', // 0.0060
  'F2AF967ED05C82DE3297FF6FDE3CFE2F', // 1.234567890123456789012345678901234
  '00000000000000000000000000003CB0', // -0.00
  '01000000000000000000000000000060', // ?
]

/** Code points to build strings from: controls, quotes, backslash, separators, emoji, BOM, U+FFFD... */
const SPECIAL_CHARS: string[] = [
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)),
  '"', '\\', '/', '\u007f', '\u0080', '\u00e9', '\u00ff', '\u0100', '\u2028', '\u2029', '\u2606', '\ud83d\ude00',
  '\ud83c\udff3\ufe0f\u200d\ud83c\udf08', '\ufffd', '\ufeff', '\u0000', '\uffff', '\u4e2d', '\u{10ffff}', '\u0800',
  '\u07ff', '\ue000', '<', '>', '&', "'", '`',
]
const ASCII = 'abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789_-.$'

/** Invalid UTF-8 byte sequences (for keys, regex, and rare string errors). */
export const BAD_UTF8: number[][] = [
  [0xff], [0xfe], [0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xf0, 0x80, 0x80, 0x80], [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf], [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc3], [0xe2, 0x82],
  [0xf0, 0x9f, 0x98], [0x80], [0xbf], [0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc3, 0x28], [0xe2, 0x28, 0xa1],
]

// ---------------------------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------------------------

export type GenOptions = {
  /** Max nesting depth (documents/arrays), default 8. */
  maxDepth?: number
  /** Probability that a string VALUE contains invalid UTF-8 (makes the doc throw in strict mode). */
  badStringRate?: number
  /** Allow DBRef-shaped code-w-scope scopes (default true; false only to look past a known mismatch). */
  scopeDbref?: boolean
}

export class Gen {
  r: Rng
  maxDepth: number
  badStringRate: number
  scopeDbref: boolean
  /** Features used by the last root() document (for weighting statistics). */
  feat = new Set<string>()
  constructor(seed: number, opts: GenOptions = {}) {
    this.r = mulberry32(seed)
    this.maxDepth = opts.maxDepth ?? 8
    this.badStringRate = opts.badStringRate ?? 0.002
    this.scopeDbref = opts.scopeDbref ?? true
  }

  strBytes(maxLen = 12): number[] {
    const r = this.r
    const n = r.int(maxLen + 1)
    const special = r.chance(0.35)
    let s = ''
    for (let i = 0; i < n; i++) {
      s += special && r.chance(0.5) ? r.pick(SPECIAL_CHARS) : ASCII[r.int(ASCII.length)]
    }
    const b = utf8(s)
    return b
  }

  /** A valid (or, rarely, invalid) string value's bytes. */
  valueStrBytes(maxLen = 12): number[] {
    const b = this.strBytes(maxLen)
    if (this.r.chance(this.badStringRate)) {
      const pos = this.r.int(b.length + 1)
      b.splice(pos, 0, ...this.r.pick(BAD_UTF8))
    }
    return b
  }

  key(): number[] {
    const r = this.r
    const x = r.next()
    if (x < 0.6) return utf8(r.pick(['a', 'b', 'c', 'd', 'x', 'y', 'name', 'value', '_id']))
    if (x < 0.7)
      return utf8(r.pick(['0', '1', '2', '10', '01', '-1', '1.5', '4294967294', '4294967295', '4294967296', ' 1', '007', '9007199254740991']))
    if (x < 0.74) return utf8(r.pick(['__proto__', 'toJSON', 'constructor', 'toString', 'hasOwnProperty', '']))
    if (x < 0.79) return utf8(r.pick(['$ref', '$id', '$db', '$foo', '$', '$$ref', '$ref ']))
    if (x < 0.84) {
      // invalid UTF-8 in keys (decoded lossily by js-bson)
      const b = this.strBytes(4)
      b.splice(r.int(b.length + 1), 0, ...r.pick(BAD_UTF8))
      return b
    }
    return this.strBytes(8).filter((c) => c !== 0)
  }

  oid(): number[] {
    return this.r.bytes(12)
  }

  regexPattern(): number[] {
    const r = this.r
    const x = r.next()
    if (x < 0.7) return utf8(r.pick(['', 'abc', 'a.b', '^x$', '[a-z]+', '\\d+', 'a|b', '(a)(b)', '\\/', '\u00e9\u2028', '"q"', 'a{2,3}', '\\u0041', '(?:x)', '(?<n>a)\\k<n>', '\\p{L}']))
    if (x < 0.85) return utf8(r.pick(['(?i)a', '(', '[', 'a**', '\\', '?', '*a', '(?<n>a)(?<n>b)', ')', '{1}x', 'a{2,1}', '\\k<x>']))
    const b = this.strBytes(4).filter((c) => c !== 0)
    b.splice(r.int(b.length + 1), 0, ...r.pick(BAD_UTF8))
    return b
  }

  regexFlags(): number[] {
    const r = this.r
    const letters = 'imsxluagy'
    let f = ''
    const n = r.int(5)
    for (let i = 0; i < n; i++) f += letters[r.int(r.chance(0.7) ? 6 : letters.length)]
    if (r.chance(0.05)) f += '\u00e9'
    return utf8(f)
  }

  binary(): number[] {
    const r = this.r
    const sub = r.chance(0.85) ? r.int(10) : r.pick([0x80, 0x81, 0xfe, 0xff, 0x0a, 0x7f])
    let len = r.chance(0.1) ? 16 : r.int(20)
    if (sub === 4 && r.chance(0.6)) len = 16
    const payload = r.bytes(len)
    if (sub === 2) {
      // old binary: inner int32 length; usually right, sometimes wrong
      let inner = len
      if (r.chance(0.1)) inner = r.pick([len + 1, len - 1, -1, 0])
      const body = [...i32(inner), ...payload]
      return [...i32(body.length), 2, ...body]
    }
    return [...i32(len), sub, ...payload]
  }

  /** Element of a DBRef-shaped document, keys shuffled. */
  dbrefElems(depth: number): Elem[] {
    const r = this.r
    const out: Elem[] = []
    // $ref
    if (r.chance(0.92)) {
      if (r.chance(0.85)) {
        const ns = r.pick(['coll', 'db.coll', 'a.b.c', '', '.', 'x.', '.y', 'd\u00e9.c', 'c'])
        out.push(el(0x02, '$ref', bstr(ns)))
      } else out.push(this.valueElem(utf8('$ref'), depth))
    }
    // $id
    if (r.chance(0.9)) {
      const t = r.next()
      if (t < 0.4) out.push(el(0x07, '$id', this.oid()))
      else if (t < 0.5) out.push(el(0x0a, '$id', []))
      else if (t < 0.6) out.push(el(0x06, '$id', []))
      else out.push(this.valueElem(utf8('$id'), depth))
    }
    // $db
    if (r.chance(0.5)) {
      if (r.chance(0.8)) out.push(el(0x02, '$db', bstr(r.pick(['db', '', 'other', 'x.y']))))
      else out.push(this.valueElem(utf8('$db'), depth))
    }
    const extra = r.int(4)
    for (let i = 0; i < extra; i++) {
      const k = r.chance(0.15) ? utf8(r.pick(['$foo', '$ref', '$id', '$db', '3', '0', '__proto__', '$'])) : this.key()
      out.push(this.valueElem(k, depth))
    }
    // shuffle
    for (let i = out.length - 1; i > 0; i--) {
      const j = r.int(i + 1)
      ;[out[i], out[j]] = [out[j], out[i]]
    }
    return out
  }

  document(depth: number, isScope = false): number[] {
    const r = this.r
    if (r.chance(0.1) && (this.scopeDbref || !isScope)) {
      this.feat.add('dbref')
      return doc(this.dbrefElems(depth))
    }
    const n = r.int(depth === 0 ? 9 : 6)
    const elems: Elem[] = []
    for (let i = 0; i < n; i++) elems.push(this.valueElem(this.key(), depth))
    return doc(elems)
  }

  array(depth: number): number[] {
    const r = this.r
    const n = r.int(6)
    const elems: Elem[] = []
    const oddNames = r.chance(0.1)
    for (let i = 0; i < n; i++) {
      let k: number[]
      if (!oddNames) k = utf8(String(i))
      else k = r.chance(0.3) ? [0xff, 0x41] : utf8(r.pick(['1', '0', 'x', '', '5', '$ref', '__proto__']))
      elems.push(this.valueElem(k, depth))
    }
    return doc(elems)
  }

  /** One element with the given key and a random value of a random type. */
  valueElem(key: number[], depth: number): Elem {
    const e = this.valueElem0(key, depth)
    this.feat.add('t' + e.type.toString(16))
    const ks = Buffer.from(key).toString('latin1')
    if (ks.startsWith('$')) this.feat.add('$key')
    if (/^\d+$|^-1$/.test(ks)) this.feat.add('indexKey')
    if (ks === '__proto__' || ks === 'toJSON') this.feat.add('protoKey')
    if (Buffer.from(key).toString('utf8').includes('\ufffd')) this.feat.add('badKey')
    return e
  }

  valueElem0(key: number[], depth: number): Elem {
    const r = this.r
    const x = r.int(1000)
    const canNest = depth < this.maxDepth
    // weights: common types ~70%, rare features each ~1.5-3% per element
    if (x < 120) return el(0x10, key, i32(r.chance(0.5) ? r.int(200) - 100 : (r.next() * 2 ** 32) | 0))
    if (x < 220) {
      const v = r.chance(0.6) ? r.pick(DOUBLE_POOL) : null
      if (v !== null) return el(0x01, key, f64(v))
      if (r.chance(0.5)) return el(0x01, key, r.bytes(8)) // random bits incl NaN payloads, subnormals
      return el(0x01, key, f64((r.next() - 0.5) * 10 ** (r.int(40) - 20)))
    }
    if (x < 380) return el(0x02, key, bstr(this.valueStrBytes()))
    if (x < 450 && canNest) return el(0x03, key, this.document(depth + 1))
    if (x < 510 && canNest) return el(0x04, key, this.array(depth + 1))
    if (x < 560) return el(0x08, key, [r.chance(0.002) ? 2 : r.int(2)])
    if (x < 600) return el(0x0a, key, [])
    if (x < 660) {
      const v = r.chance(0.6) ? r.pick(INT64_POOL) : BigInt.asIntN(64, BigInt(r.int(2 ** 32)) << 32n | BigInt(r.int(2 ** 32)))
      return el(0x12, key, i64(r.chance(0.2) ? v >> BigInt(r.int(60)) : v))
    }
    if (x < 700) return el(0x07, key, this.oid())
    if (x < 740) {
      const v = r.chance(0.6) ? r.pick(DATE_POOL) : BigInt(Math.floor((r.next() - 0.5) * 2 * 10 ** (r.int(16) + 1)))
      return el(0x09, key, i64(v))
    }
    if (x < 780) return el(0x05, key, this.binary())
    if (x < 800) return el(0x06, key, [])
    if (x < 820) return el(0x0e, key, bstr(this.valueStrBytes()))
    if (x < 840) {
      const ns = r.chance(0.5) ? utf8(r.pick(['coll', 'db.coll', 'a.b.c', '', 'x.'])) : this.valueStrBytes(6)
      return el(0x0c, key, [...bstr(ns), ...this.oid()])
    }
    if (x < 860) return el(0x0d, key, bstr(this.valueStrBytes(20)))
    if (x < 880) {
      const code = bstr(this.valueStrBytes(10))
      const scope = canNest ? this.document(depth + 1, true) : doc([])
      return el(0x0f, key, [...i32(4 + code.length + scope.length), ...code, ...scope])
    }
    if (x < 910) return el(0x0b, key, [...cstr(this.regexPattern()), ...cstr(this.regexFlags())])
    if (x < 935) {
      const t = r.chance(0.5) ? r.pick([0n, 1n, 2n ** 32n + 2n, 2n ** 64n - 1n, 2n ** 63n, 2n ** 32n - 1n]) : BigInt(r.int(2 ** 32)) << 32n | BigInt(r.int(2 ** 32))
      return el(0x11, key, u64(t))
    }
    if (x < 960) {
      return el(0x13, key, r.chance(0.5) ? [...Buffer.from(r.pick(DECIMAL_POOL), 'hex')] : r.bytes(16))
    }
    if (x < 975) return el(0xff, key, [])
    if (x < 990) return el(0x7f, key, [])
    // fallback: int32
    return el(0x10, key, i32(r.int(1000)))
  }

  /** A top-level document as bytes. */
  root(): Uint8Array {
    this.feat = new Set()
    return Uint8Array.from(this.document(0))
  }
}

/** Byte-level mutations: flip / insert / delete random bytes; sometimes fix up the root length. */
export function mutate(r: Rng, src: Uint8Array): Uint8Array {
  const b = [...src]
  const n = 1 + r.int(3)
  for (let i = 0; i < n; i++) {
    const op = r.int(4)
    const pos = r.int(b.length + 1)
    if (op === 0 && b.length) b[Math.min(pos, b.length - 1)] ^= 1 << r.int(8)
    else if (op === 1 && b.length) b[Math.min(pos, b.length - 1)] = r.pick([0, 1, 0xff, 0x7f, 0x80, r.int(256)])
    else if (op === 2) b.splice(pos, 0, r.int(256))
    else if (b.length) b.splice(Math.min(pos, b.length - 1), 1)
  }
  if (b.length >= 4 && r.chance(0.5)) {
    const l = i32(b.length)
    for (let i = 0; i < 4; i++) b[i] = l[i]
  }
  return Uint8Array.from(b)
}

// ---------------------------------------------------------------------------------------------
// Round-trip-safe generator for the canonical Extended JSON oracle
// ---------------------------------------------------------------------------------------------

/** Decimal128 values whose canonical string form parses back to the same bits. */
export const DECIMAL_STRINGS = [
  '0', '-0', '1', '-1', '0.0060', '1.234567890123456789012345678901234', '9.999999999999999999999999999999999E+6144',
  '1E-6176', '-1E-6176', 'NaN', 'Infinity', '-Infinity', '0E+3', '-0E-8', '1.0', '12345678901234567890', '1E+100', '0.001',
]

/**
 * Documents that survive canonical EJSON -> EJSON.parse({relaxed:false}) -> BSON.serialize byte-exactly.
 * Excluded on purpose (each is lossy through js-bson's EJSON/serializer, not a transcoder property):
 * - deprecated types (undefined, symbol, DBPointer) and duplicate keys: no faithful EJSON.parse mapping;
 * - array-index keys and '__proto__': a JS object reorders / swallows them;
 * - '$'-prefixed keys: EJSON.parse interprets them ($ref/$id docs become DBRef with fields reordered);
 * - invalid UTF-8 anywhere (keys/regex decode lossily to U+FFFD);
 * - NaN payloads other than the default quiet NaN, non-canonical Decimal128 bits (they print as the canonical value);
 * - dates beyond ±8.64e15 ms (EJSON.parse makes an Invalid Date) ;
 * - regex options that are unsorted, duplicated or outside "ilmsux" (BSONRegExp sorts/rejects them);
 * - binary subtype 2 with a wrong inner length, subtype 4 of length != 16 (EJSON.parse may reject it as a UUID),
 *   subtype 9 (BSON.serialize validates vector payloads).
 */
export class EjsonGen {
  r: Rng
  decimals: number[][]
  constructor(seed: number, decimalBytes: (s: string) => number[]) {
    this.r = mulberry32(seed)
    this.decimals = DECIMAL_STRINGS.map(decimalBytes)
  }
  str(maxLen = 10): number[] {
    const r = this.r
    let s = ''
    const n = r.int(maxLen + 1)
    for (let i = 0; i < n; i++) s += r.chance(0.3) ? r.pick(SPECIAL_CHARS) : ASCII[r.int(ASCII.length)]
    return utf8(s)
  }
  keys(n: number): number[][] {
    const pool = ['a', 'b', 'c', 'name', 'value', '_id', 'x y', '\u00e9', '\ud83d\ude00', '', 'k\u2028', 'q"\\', 'toJSON', 'a.b', 'a1', '-1', '01', '1.5']
    const seen = new Set<string>()
    const out: number[][] = []
    while (out.length < n) {
      const k = this.r.chance(0.7) ? this.r.pick(pool) : Buffer.from(this.str(6).filter((c) => c !== 0)).toString()
      if (seen.has(k) || k.startsWith('$') || /^(0|[1-9]\d*)$/.test(k) || k === '__proto__') continue
      seen.add(k)
      out.push(utf8(k))
    }
    return out
  }
  document(depth: number): number[] {
    const n = this.r.int(depth === 0 ? 8 : 5)
    return doc(this.keys(n).map((k) => this.value(k, depth)))
  }
  array(depth: number): number[] {
    const n = this.r.int(5)
    const out: Elem[] = []
    for (let i = 0; i < n; i++) out.push(this.value(utf8(String(i)), depth))
    return doc(out)
  }
  value(key: number[], depth: number): Elem {
    const r = this.r
    const canNest = depth < 6
    const x = r.int(20)
    switch (x) {
      case 0: return el(0x10, key, i32(r.chance(0.5) ? r.int(200) - 100 : (r.next() * 2 ** 32) | 0))
      case 1: {
        let v = r.chance(0.5) ? r.pick(DOUBLE_POOL) : (r.next() - 0.5) * 10 ** (r.int(40) - 20)
        if (r.chance(0.3)) {
          const b = Buffer.from(r.bytes(8))
          v = b.readDoubleLE(0)
        }
        return el(0x01, key, f64(Number.isNaN(v) ? NaN : v))
      }
      case 2: return el(0x02, key, bstr(this.str()))
      case 3: return canNest ? el(0x03, key, this.document(depth + 1)) : el(0x0a, key, [])
      case 4: return canNest ? el(0x04, key, this.array(depth + 1)) : el(0x0a, key, [])
      case 5: return el(0x08, key, [r.int(2)])
      case 6: return el(0x0a, key, [])
      case 7: {
        const v = r.chance(0.6) ? r.pick(INT64_POOL) : BigInt.asIntN(64, (BigInt(r.int(2 ** 32)) << 32n) | BigInt(r.int(2 ** 32)))
        return el(0x12, key, i64(v))
      }
      case 8: return el(0x07, key, r.bytes(12))
      case 9: {
        let v = r.chance(0.5) ? r.pick(DATE_POOL) : BigInt(Math.floor((r.next() - 0.5) * 2 * 10 ** (r.int(16) + 1)))
        if (v > 8640000000000000n || v < -8640000000000000n) v = 0n
        return el(0x09, key, i64(v))
      }
      case 10: {
        const sub = r.pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 0x80, 0xff])
        const len = sub === 4 ? 16 : r.int(20)
        const payload = r.bytes(len)
        if (sub === 2) return el(0x05, key, [...i32(len + 4), 2, ...i32(len), ...payload])
        return el(0x05, key, [...i32(len), sub, ...payload])
      }
      case 11: return el(0x0d, key, bstr(this.str(20)))
      case 12: {
        const code = bstr(this.str(10))
        const scope = canNest ? this.document(depth + 1) : doc([])
        return el(0x0f, key, [...i32(4 + code.length + scope.length), ...code, ...scope])
      }
      case 13: {
        const flags = [...'ilmsux'].filter(() => r.chance(0.3)).join('')
        const pattern = r.pick(['', 'abc', '(?i)a', '[', 'a\u00e9\u2028', '"\\\\d', '\u0001', '/'])
        return el(0x0b, key, [...cstr(pattern), ...cstr(flags)])
      }
      case 14: return el(0x11, key, u64(BigInt(r.int(2 ** 32)) << 32n | BigInt(r.int(2 ** 32))))
      case 15: return el(0x13, key, r.pick(this.decimals))
      case 16: return el(0xff, key, [])
      case 17: return el(0x7f, key, [])
      default: return el(0x10, key, i32(r.int(100)))
    }
  }
  root(): Uint8Array {
    return Uint8Array.from(this.document(0))
  }
}
