/**
 * Malformed and adversarial input: length lies, every type byte, boolean bytes, a UTF-8 table in every
 * string-ish position, depth limits and the output-size limit.
 *
 * For every input: compat must match js-bson (throw parity, identical text on success); every dialect must
 * either throw a coded TranscodeError (or the V8 regex SyntaxError in compat) or produce text JSON.parse accepts.
 */
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'
import { bstr, cstr, doc, el, f64, hex, i32 } from '../support/gen'

const require = createRequire(import.meta.url)
const { toJSON, isTranscodeError } = require('../../index.js')

const DIALECTS = ['compat', 'relaxed', 'canonical'] as const
type Opts = { utf8?: 'strict' | 'replace' }

function oracle(buf: Uint8Array, utf8Lossy = false): { ok: boolean; out?: string; err?: unknown } {
  try {
    const v = utf8Lossy ? BSON.deserialize(buf, { validation: { utf8: false } }) : BSON.deserialize(buf)
    return { ok: true, out: JSON.stringify(v) }
  } catch (err) {
    return { ok: false, err }
  }
}

/** Checks one input; returns a problem description or null. */
function check(buf: Uint8Array, opts: Opts = {}): string | null {
  const lossy = opts.utf8 === 'replace'
  const o = oracle(buf, lossy)
  let u: { ok: boolean; out?: string; err?: any }
  try {
    u = { ok: true, out: toJSON(buf, { ...opts }) }
  } catch (err) {
    u = { ok: false, err }
  }
  if (o.ok !== u.ok)
    return `hex ${hex(buf)} ${JSON.stringify(opts)}: js-bson ${o.ok ? 'OK ' + o.out : 'threw ' + String(o.err)} / ours ${u.ok ? 'OK ' + u.out : 'threw ' + u.err?.code + ' ' + String(u.err)}`
  if (o.ok && o.out !== u.out) return `hex ${hex(buf)} ${JSON.stringify(opts)}:\n  expected ${o.out}\n  actual   ${u.out}`
  if (!u.ok && !isTranscodeError(u.err) && !(u.err instanceof SyntaxError))
    return `hex ${hex(buf)}: uncoded error ${String(u.err)}`
  for (const dialect of ['relaxed', 'canonical']) {
    try {
      const out = toJSON(buf, { ...opts, dialect })
      JSON.parse(out)
    } catch (e: any) {
      if (!isTranscodeError(e)) return `hex ${hex(buf)} ${dialect}: neither coded error nor valid JSON: ${String(e)}`
    }
  }
  return null
}

function runAll(bufs: Uint8Array[], opts: Opts = {}) {
  const fails: string[] = []
  let throws = 0
  for (const b of bufs) {
    const p = check(b, opts)
    if (p) fails.push(p)
    try {
      toJSON(b, opts)
    } catch {
      throws++
    }
  }
  return { fails, throws }
}

// ---------------------------------------------------------------------------------------------
// Length lies
// ---------------------------------------------------------------------------------------------

/** Offsets of every int32 length field in a well-formed document (root, nested docs, strings, binary, cws). */
function lengthFields(b: Uint8Array): number[] {
  const dv = Buffer.from(b.buffer, b.byteOffset, b.byteLength)
  const out: number[] = []
  const walkDoc = (start: number) => {
    out.push(start)
    const end = start + dv.readInt32LE(start) - 1
    let p = start + 4
    while (p < end) {
      const t = dv[p++]
      while (dv[p] !== 0) p++
      p++
      p = walkValue(t, p)
    }
  }
  const walkValue = (t: number, p: number): number => {
    switch (t) {
      case 0x01: case 0x09: case 0x11: case 0x12: return p + 8
      case 0x10: return p + 4
      case 0x13: return p + 16
      case 0x07: return p + 12
      case 0x08: return p + 1
      case 0x06: case 0x0a: case 0x7f: case 0xff: return p
      case 0x02: case 0x0d: case 0x0e: out.push(p); return p + 4 + dv.readInt32LE(p)
      case 0x0c: out.push(p); return p + 4 + dv.readInt32LE(p) + 12
      case 0x03: case 0x04: walkDoc(p); return p + dv.readInt32LE(p)
      case 0x05: {
        out.push(p)
        const n = dv.readInt32LE(p)
        if (dv[p + 4] === 2) out.push(p + 5)
        return p + 5 + n
      }
      case 0x0b: {
        while (dv[p] !== 0) p++
        p++
        while (dv[p] !== 0) p++
        return p + 1
      }
      case 0x0f: {
        out.push(p)
        const total = dv.readInt32LE(p)
        out.push(p + 4)
        const sl = dv.readInt32LE(p + 4)
        walkDoc(p + 8 + sl)
        return p + total
      }
      default: throw new Error('lengthFields: unknown type ' + t)
    }
  }
  walkDoc(0)
  return out
}

const cwsVal = (code: string, scope: number[]) => {
  const c = bstr(code)
  return [...i32(4 + c.length + scope.length), ...c, ...scope]
}

/** Representative well-formed documents. */
const REPRESENTATIVE: number[][] = [
  doc([]),
  doc([el(0x10, 'a', i32(1))]),
  doc([el(0x02, 's', bstr('hello')), el(0x10, 'n', i32(7))]),
  doc([el(0x03, 'd', doc([el(0x02, 'x', bstr('y')), el(0x04, 'arr', doc([el(0x10, '0', i32(1)), el(0x02, '1', bstr('z'))]))]))]),
  doc([el(0x05, 'b', [...i32(3), 0, 1, 2, 3]), el(0x05, 'o', [...i32(7), 2, ...i32(3), 1, 2, 3]), el(0x05, 'u', [...i32(16), 4, ...Array(16).fill(0xab)])]),
  doc([el(0x0f, 'c', cwsVal('function(){}', doc([el(0x10, 'a', i32(1)), el(0x03, 'in', doc([el(0x02, 'k', bstr('v'))]))])))]),
  doc([el(0x0d, 'c', bstr('x=1')), el(0x0e, 'sym', bstr('sym')), el(0x0c, 'p', [...bstr('db.coll'), ...Array(12).fill(1)])]),
  doc([el(0x0b, 'r', [...cstr('a+b'), ...cstr('im')]), el(0x01, 'd', f64(1.5)), el(0x09, 't', f64(0)), el(0x08, 'b', [1])]),
  doc([el(0x03, '$ref', doc([])), el(0x02, '$ref', bstr('c')), el(0x07, '$id', Array(12).fill(2)), el(0x02, '$db', bstr('d'))]),
  doc([el(0x04, 'a', doc([el(0x04, '0', doc([el(0x04, '0', doc([el(0x02, '0', bstr('deep'))]))]))]))]),
]

describe('length lies', () => {
  it('every length field set to -1, 0, 1..5, v±1, v±4, INT32_MAX, INT32_MIN', () => {
    const bufs: Uint8Array[] = []
    for (const d of REPRESENTATIVE) {
      const base = Uint8Array.from(d)
      expect(check(base)).toBeNull()
      for (const off of lengthFields(base)) {
        const v = Buffer.from(base).readInt32LE(off)
        for (const nv of [-1, 0, 1, 2, 3, 4, 5, v - 1, v + 1, v - 4, v + 4, 0x7fffffff, -0x80000000]) {
          const b = Buffer.from(base)
          b.writeInt32LE(nv | 0, off)
          bufs.push(b)
        }
      }
    }
    const { fails, throws } = runAll(bufs)
    console.log(`[malformed length lies] inputs=${bufs.length} throws=${throws}`)
    expect(bufs.length).toBeGreaterThan(300)
    expect(fails, fails.slice(0, 10).join('\n')).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
// Type bytes, boolean bytes
// ---------------------------------------------------------------------------------------------

describe('type bytes', () => {
  it('every type byte 0x00-0xFF with several payloads', () => {
    const payloads: number[][] = [
      [],
      Array(8).fill(1),
      [...bstr('a')],
      [...doc([])],
      [...i32(2), 0, 0xaa, 0xbb],
      Array(16).fill(0),
      [...cstr('ab'), ...cstr('i')],
      [...cwsVal('c', doc([]))],
    ]
    const bufs: Uint8Array[] = []
    for (let t = 0; t <= 0xff; t++) {
      for (const p of payloads) {
        bufs.push(Uint8Array.from(doc([el(t, 'a', p)])))
        // inside an array too (name is the index) and followed by another element
        bufs.push(Uint8Array.from(doc([el(0x04, 'arr', doc([el(t, '0', p)])), el(0x10, 'z', i32(1))])))
      }
    }
    const { fails, throws } = runAll(bufs)
    console.log(`[malformed type bytes] inputs=${bufs.length} throws=${throws}`)
    expect(fails, fails.slice(0, 10).join('\n')).toEqual([])
  })

  it('boolean bytes 0..255', () => {
    const bufs: Uint8Array[] = []
    for (let v = 0; v <= 255; v++) bufs.push(Uint8Array.from(doc([el(0x08, 'b', [v])])))
    const { fails, throws } = runAll(bufs)
    expect(throws).toBe(254)
    for (let v = 2; v <= 255; v++) {
      try {
        toJSON(Uint8Array.from(doc([el(0x08, 'b', [v])])))
      } catch (e: any) {
        expect(e.code).toBe('BSON_BAD_BOOLEAN')
      }
    }
    expect(fails, fails.join('\n')).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
// UTF-8 table
// ---------------------------------------------------------------------------------------------

const UTF8_TABLE: [string, number[]][] = [
  ['overlong C0 80', [0xc0, 0x80]],
  ['overlong C1 BF', [0xc1, 0xbf]],
  ['overlong E0 80 AF', [0xe0, 0x80, 0xaf]],
  ['overlong E0 9F BF', [0xe0, 0x9f, 0xbf]],
  ['overlong F0 80 80 80', [0xf0, 0x80, 0x80, 0x80]],
  ['overlong F0 8F BF BF', [0xf0, 0x8f, 0xbf, 0xbf]],
  ['surrogate ED A0 80', [0xed, 0xa0, 0x80]],
  ['surrogate ED AD BF', [0xed, 0xad, 0xbf]],
  ['surrogate ED AE 80', [0xed, 0xae, 0x80]],
  ['surrogate ED B0 80', [0xed, 0xb0, 0x80]],
  ['surrogate ED BF BF', [0xed, 0xbf, 0xbf]],
  ['CESU-8 pair U+1F600', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
  ['CESU-8 pair U+10000', [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80]],
  ['F4 90 80 80 > U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ['F5..FF lead bytes', [0xf5, 0x80, 0x80, 0x80]],
  ['FE', [0xfe]],
  ['FF', [0xff]],
  ['5-byte F8', [0xf8, 0x88, 0x80, 0x80, 0x80]],
  ['truncated 2-byte C3', [0xc3]],
  ['truncated 2-byte C3 + ascii', [0xc3, 0x41]],
  ['truncated 3-byte E2 82', [0xe2, 0x82]],
  ['truncated 3-byte E2', [0xe2]],
  ['truncated 4-byte F0 9F 98', [0xf0, 0x9f, 0x98]],
  ['truncated 4-byte F0 9F', [0xf0, 0x9f]],
  ['truncated 4-byte F0', [0xf0]],
  ['stray continuation 80', [0x80]],
  ['stray continuation BF', [0xbf]],
  ['two stray 80 80', [0x80, 0x80]],
  ['bad continuation C3 28', [0xc3, 0x28]],
  ['bad continuation E2 28 A1', [0xe2, 0x28, 0xa1]],
  ['bad continuation F0 28 8C BC', [0xf0, 0x28, 0x8c, 0xbc]],
  // valid controls for comparison
  ['valid max U+10FFFF', [0xf4, 0x8f, 0xbf, 0xbf]],
  ['valid U+FFFD', [0xef, 0xbf, 0xbd]],
  ['valid BOM', [0xef, 0xbb, 0xbf]],
  ['valid U+D7FF', [0xed, 0x9f, 0xbf]],
  ['valid U+E000', [0xee, 0x80, 0x80]],
  ['valid emoji', [0xf0, 0x9f, 0x98, 0x80]],
  ['valid U+2028', [0xe2, 0x80, 0xa8]],
]

/** The bytes placed in every string-ish position, with ASCII around them. */
function placements(bad: number[]): [string, number[]][] {
  const s = [0x61, ...bad, 0x62]
  return [
    ['string', doc([el(0x02, 's', bstr(s))])],
    ['string in array', doc([el(0x04, 'a', doc([el(0x02, '0', bstr(s))]))])],
    ['key', doc([el(0x10, s as any, i32(1))])],
    ['nested key', doc([el(0x03, 'd', doc([el(0x10, s as any, i32(1))]))])],
    ['array element name', doc([el(0x04, 'a', doc([el(0x10, s as any, i32(1))]))])],
    ['regex pattern', doc([el(0x0b, 'r', [...cstr(s), ...cstr('i')])])],
    ['regex flags', doc([el(0x0b, 'r', [...cstr('a'), ...cstr(s)])])],
    ['code', doc([el(0x0d, 'c', bstr(s))])],
    ['code-w-scope code', doc([el(0x0f, 'c', cwsVal('', doc([])).slice(0, 0).concat((() => { const c = bstr(s); const sc = doc([]); return [...i32(4 + c.length + sc.length), ...c, ...sc] })()))])],
    ['code-w-scope scope string', doc([el(0x0f, 'c', cwsVal('x', doc([el(0x02, 'v', bstr(s))])))])],
    ['symbol', doc([el(0x0e, 'y', bstr(s))])],
    ['dbpointer ns', doc([el(0x0c, 'p', [...bstr(s), ...Array(12).fill(3)])])],
    ['$ref value', doc([el(0x03, 'r', doc([el(0x02, '$ref', bstr(s)), el(0x10, '$id', i32(1))]))])],
  ]
}

describe('UTF-8 table', () => {
  for (const [name, bad] of UTF8_TABLE) {
    it(`${name}: strict parity in every position`, () => {
      const fails: string[] = []
      for (const [pos, d] of placements(bad)) {
        const p = check(Uint8Array.from(d))
        if (p) fails.push(`${pos}: ${p}`)
      }
      expect(fails, fails.join('\n')).toEqual([])
    })
    it(`${name}: utf8 'replace' equals js-bson validation {utf8:false} and Buffer#toString`, () => {
      const fails: string[] = []
      for (const [pos, d] of placements(bad)) {
        const p = check(Uint8Array.from(d), { utf8: 'replace' })
        if (p) fails.push(`${pos}: ${p}`)
      }
      const sdoc = Uint8Array.from(doc([el(0x02, 's', bstr([0x61, ...bad, 0x62]))]))
      const expected = Buffer.from([0x61, ...bad, 0x62]).toString('utf8')
      for (const dialect of DIALECTS) {
        const got = JSON.parse(toJSON(sdoc, { utf8: 'replace', dialect })).s
        if (got !== expected) fails.push(`${dialect}: ${JSON.stringify(got)} !== ${JSON.stringify(expected)} (hex ${hex(sdoc)})`)
      }
      expect(fails, fails.join('\n')).toEqual([])
    })
  }
})

// ---------------------------------------------------------------------------------------------
// Depth and output limits
// ---------------------------------------------------------------------------------------------

/** N nested documents {a:{a:{...{}}}}, the root counting as level 1; built in place (no recursion). */
function nested(N: number, type = 0x03): Buffer {
  const total = 5 + (N - 1) * 8
  const b = Buffer.alloc(total)
  for (let i = 0; i < N; i++) {
    const s = 7 * i
    b.writeInt32LE(5 + (N - 1 - i) * 8, s)
    if (i < N - 1) {
      b[s + 4] = type
      b[s + 5] = type === 0x04 ? 0x30 : 0x61
      b[s + 6] = 0
    }
  }
  return b
}

describe('depth', () => {
  for (const type of [0x03, 0x04]) {
    const kind = type === 0x03 ? 'documents' : 'arrays'
    it(`${kind}: 999 and 1000 levels OK and equal to js-bson, 1001 -> BSON_TOO_DEEP`, () => {
      for (const n of [999, 1000]) {
        const b = nested(n, type)
        for (const dialect of DIALECTS) JSON.parse(toJSON(b, { dialect }))
        expect(toJSON(b)).toBe(JSON.stringify(BSON.deserialize(b)))
      }
      for (const dialect of DIALECTS) {
        let err: any
        try {
          toJSON(nested(1001, type), { dialect })
        } catch (e) {
          err = e
        }
        expect(isTranscodeError(err)).toBe(true)
        expect(err.code).toBe('BSON_TOO_DEEP')
      }
      // maxDepth is honoured exactly
      expect(() => toJSON(nested(11, type), { maxDepth: 10 })).toThrow(/TOO_DEEP/)
      expect(JSON.parse(toJSON(nested(10, type), { maxDepth: 10 }))).toBeTruthy()
      expect(JSON.parse(toJSON(nested(1, type), { maxDepth: 1 }))).toEqual({})
    })
  }
  it('100,000 levels: BSON_TOO_DEEP by default; OK with maxDepth 200000 and JSON.parse accepts it', () => {
    const b = nested(100_000)
    let err: any
    try {
      toJSON(b)
    } catch (e) {
      err = e
    }
    expect(err?.code).toBe('BSON_TOO_DEEP')
    expect(typeof err.offset).toBe('number')
    for (const dialect of DIALECTS) {
      const out = toJSON(b, { maxDepth: 200_000, dialect })
      expect(out.length).toBe(99_999 * 6 + 2)
      expect(typeof JSON.parse(out)).toBe('object')
    }
    // root document {"0": [[[ ... ]]]}: 1 document + 99,999 arrays
    const arr = toJSON(nested(100_000, 0x04), { maxDepth: 200_000 })
    expect(arr).toBe('{"0":' + '['.repeat(99_998) + '[]' + ']'.repeat(99_998) + '}')
  })
})

describe('maxOutputBytes', () => {
  it('small limits -> BSON_OUTPUT_TOO_LARGE; the exact output length is accepted', () => {
    const b = Uint8Array.from(doc([el(0x02, 's', bstr('x'.repeat(100))), el(0x10, 'n', i32(5))]))
    for (const dialect of DIALECTS) {
      const full = toJSON(b, { dialect })
      const len = Buffer.byteLength(full)
      expect(toJSON(b, { dialect, maxOutputBytes: len })).toBe(full)
      for (const lim of [1, 2, 10, 50, len - 2]) {
        let err: any
        try {
          toJSON(b, { dialect, maxOutputBytes: lim })
        } catch (e) {
          err = e
        }
        expect(err?.code, `dialect ${dialect} limit ${lim}`).toBe('BSON_OUTPUT_TOO_LARGE')
        expect(isTranscodeError(err)).toBe(true)
      }
    }
  })
  // MISMATCH (found by this suite): output of exactly L bytes is accepted with maxOutputBytes L-1, in every
  // dialect and for toJSONBuffer; e.g. 0c0000001061000100000000 with {maxOutputBytes: 6} returns '{"a":1}' (7 bytes).
  it('output of L bytes with maxOutputBytes L-1 throws (boundary)', () => {
    const { toJSONBuffer } = require('../../index.js')
    const fails: string[] = []
    for (const b of [
      Uint8Array.from(doc([el(0x10, 'a', i32(1))])),
      Uint8Array.from(doc([])),
      Uint8Array.from(doc([el(0x02, 's', bstr('x'.repeat(1000)))])),
    ]) {
      for (const dialect of DIALECTS) {
        const len = Buffer.byteLength(toJSON(b, { dialect }))
        for (const fn of [toJSON, toJSONBuffer]) {
          try {
            const out = fn(b, { dialect, maxOutputBytes: len - 1 })
            fails.push(`${fn.name} ${dialect} hex ${hex(b).slice(0, 48)} maxOutputBytes ${len - 1}: returned ${String(out).length} chars`)
          } catch (e: any) {
            if (e.code !== 'BSON_OUTPUT_TOO_LARGE') fails.push(`${dialect}: wrong code ${e.code}`)
          }
        }
      }
    }
    expect(fails, fails.join('\n')).toEqual([])
  })
  it('limit applies to multi-byte output by UTF-8 bytes', () => {
    const b = Uint8Array.from(doc([el(0x02, 's', bstr('\u2606'.repeat(10)))]))
    const full = toJSON(b)
    const len = Buffer.byteLength(full)
    expect(len).toBeGreaterThan(full.length)
    expect(toJSON(b, { maxOutputBytes: len })).toBe(full)
    // by bytes, not UTF-16 units: a limit of full.length (< byte length) must throw
    expect(() => toJSON(b, { maxOutputBytes: full.length })).toThrow(/OUTPUT_TOO_LARGE/)
  })
})
