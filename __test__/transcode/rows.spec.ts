/**
 * Rows (`toRow`, `toRows`, `toRowsAsync`): the general format's type map (docs/rows.md), its
 * nested JSON text as `toJSON` writes the value in every dialect, its keys in js-bson's order,
 * options, batch inputs and errors, projection and redaction, the objects' own properties (no
 * setter called, no prototype changed), the packed transport read exactly to its end, byte
 * values that are copies of their own, JavaScript that runs mid-call, and the row objects' two
 * builders (the loop and the compiled literal) compared, also where code generation is off.
 * PowerSync's format against PowerSync's converter is rows-powersync.spec.ts.
 */
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { BSON, Binary, Code, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, BSONRegExp, BSONSymbol } from 'bson'
import { Gen, doc, el, i32, i64 } from '../support/gen'

const require = createRequire(import.meta.url)
const b2j = require('../../index.js')
const { toRow, toRows, toRowsAsync, toJSON, isTranscodeError } = b2j
const native = require('../../lib/native/index.js')
const { rowDecoder } = require('../../lib/native/rows.js')

const ROOT = join(__dirname, '../..')
const ser = (o: object) => Buffer.from(BSON.serialize(o))

function thrown(f: () => unknown): any {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error('expected a throw')
}

/** The top-level elements of a document: [key bytes, type, the element's bytes]. */
function elements(d: Uint8Array): { type: number; bytes: Uint8Array }[] {
  const b = Buffer.from(d)
  const out: { type: number; bytes: Uint8Array }[] = []
  let at = 4
  const end = b.readInt32LE(0) - 1
  while (at < end) {
    const type = b[at]
    const v = b.indexOf(0, at + 1) + 1
    let n: number
    switch (type) {
      case 0x01: case 0x09: case 0x11: case 0x12: n = 8; break
      case 0x02: case 0x0d: case 0x0e: n = 4 + b.readInt32LE(v); break
      case 0x03: case 0x04: case 0x0f: n = b.readInt32LE(v); break
      case 0x05: n = 5 + b.readInt32LE(v); break
      case 0x06: case 0x0a: case 0x7f: case 0xff: n = 0; break
      case 0x07: n = 12; break
      case 0x08: n = 1; break
      case 0x0b: n = b.indexOf(0, b.indexOf(0, v) + 1) + 1 - v; break
      case 0x0c: n = 16 + b.readInt32LE(v); break
      case 0x10: n = 4; break
      case 0x13: n = 16; break
      default: throw new Error(`type ${type}`)
    }
    out.push({ type, bytes: b.subarray(at, v + n) })
    at = v + n
  }
  return out
}

/** `{ x: value }` of one element's bytes (its key replaced by `x`). */
function single(e: { bytes: Uint8Array }): Buffer {
  const b = Buffer.from(e.bytes)
  const v = b.indexOf(0, 1) + 1
  return Buffer.from(doc([el(b[0], 'x', [...b.subarray(v)])]))
}

describe('rows: the general format', () => {
  it('each BSON type as the type map of docs/rows.md says', () => {
    const uuid = new Binary(Buffer.from('00112233445566778899aabbccddeeff', 'hex'), 4)
    const d = ser({
      double: new Double(1.5),
      integral: new Double(3),
      nan: NaN,
      string: 'héllo',
      doc: { a: 1 },
      array: [1, 'x'],
      bin: new Binary(Buffer.from([1, 2, 3])),
      uuid,
      oid: new ObjectId('0123456789abcdef01234567'),
      t: true,
      f: false,
      date: new Date(1700000000123),
      null: null,
      regex: new BSONRegExp('a.b', 'i'),
      code: new Code('f()'),
      symbol: new BSONSymbol('sym'),
      cws: new Code('g()', { x: 1 }),
      int32: new Int32(-7),
      ts: new Timestamp({ t: 2, i: 3 }),
      long: Long.fromBigInt(2n ** 62n),
      dec: Decimal128.fromString('1.50'),
      min: new MinKey(),
      max: new MaxKey(),
    })
    const row = toRow(d)
    expect(row).toStrictEqual({
      double: 1.5,
      integral: 3,
      nan: NaN,
      string: 'héllo',
      doc: '{"a":1}',
      array: '[1,"x"]',
      bin: new Uint8Array([1, 2, 3]),
      uuid: '00112233-4455-6677-8899-aabbccddeeff',
      oid: '0123456789abcdef01234567',
      t: true,
      f: false,
      date: '2023-11-14T22:13:20.123Z',
      null: null,
      regex: '{}',
      code: '{"code":"f()"}',
      symbol: 'sym',
      cws: '{"code":"g()","scope":{"x":1}}',
      int32: -7,
      ts: (2n << 32n) | 3n,
      long: 2n ** 62n,
      dec: '1.50',
      min: '{}',
      max: '{}',
    })
    expect(Object.getPrototypeOf(row.bin)).toBe(Uint8Array.prototype)
    // undefined is null; a date outside JavaScript's range is null (as compat's JSON has it)
    const odd = Uint8Array.from(doc([el(0x06, 'u', []), el(0x09, 'far', i64(2n ** 60n))]))
    expect(toRow(odd)).toStrictEqual({ u: null, far: null })
    // relaxed: nested values in Extended JSON
    expect(toRow(ser({ r: new BSONRegExp('a', 'i'), n: { l: Long.fromNumber(5) } }), { dialect: 'relaxed' })).toStrictEqual({
      r: '{"$regularExpression":{"pattern":"a","options":"i"}}',
      n: '{"l":5}',
    })
  })

  it("a nested value's text is toJSON's text of that value, in every dialect (generated documents)", () => {
    const g = new Gen(20261205, { badStringRate: 0 })
    let compared = 0
    for (let i = 0; i < 3000; i++) {
      const d = g.root()
      let els: { type: number; bytes: Uint8Array }[]
      try {
        els = elements(d)
      } catch {
        continue // a generated key with a NUL misframes the document
      }
      for (const e of els) {
        if (![0x03, 0x04, 0x0b, 0x0c, 0x0d, 0x0f, 0x7f, 0xff].includes(e.type)) continue
        const one = single(e)
        for (const dialect of ['compat', 'relaxed', 'canonical']) {
          let json: string
          try {
            json = toJSON(one, { dialect })
          } catch (err) {
            expect(isTranscodeError(thrown(() => toRow(one, { dialect })))).toBe(true)
            expect(isTranscodeError(err)).toBe(true)
            continue
          }
          const row = toRow(one, { dialect })
          expect(`{"x":${row.x}}`, `${dialect} ${one.toString('hex')}`).toBe(json)
          compared++
        }
      }
    }
    expect(compared).toBeGreaterThan(5000)
  })

  it("keys in js-bson's order: index keys first, a repeated key where it first was, __proto__ an own property", () => {
    const g = new Gen(20261206, { badStringRate: 0 })
    let compared = 0
    for (let i = 0; i < 3000; i++) {
      const d = g.root()
      let want: any
      try {
        want = BSON.deserialize(d, { promoteValues: true })
      } catch {
        continue
      }
      if (want._bsontype === 'DBRef') continue // js-bson makes a DBRef of a document shaped like one
      let row: any
      try {
        row = toRow(d, { utf8: 'replace' })
      } catch {
        continue // a regex V8 refuses, a value js-bson lets through that bson2json checks
      }
      expect(Object.keys(row)).toEqual(Object.keys(want))
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype)
      compared++
    }
    expect(compared).toBeGreaterThan(2000)
    const proto = Uint8Array.from(doc([el(0x10, '__proto__', i32(1)), el(0x10, '1', i32(2)), el(0x10, 'a', i32(3)), el(0x10, '1', i32(4))]))
    const row = toRow(proto)
    expect(Object.keys(row)).toEqual(['1', '__proto__', 'a'])
    expect(row[1]).toBe(4)
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')!.value).toBe(1)
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype)
  })

  it('invalid UTF-8 in a string fails by default and is replaced with utf8: replace', () => {
    const bad = Uint8Array.from(doc([el(0x02, 's', [...i32(3), 0x61, 0xff, 0])]))
    expect(thrown(() => toRow(bad)).code).toBe('BSON_INVALID_UTF8')
    expect(toRow(bad, { utf8: 'replace' })).toStrictEqual({ s: 'a\ufffd' })
    expect(toRow(bad, { rowFormat: 'powersync' })).toStrictEqual({ s: 'a\ufffd' })
  })
})

describe('rows: options', () => {
  const D = ser({ a: 1, d: new Date(0) })
  it('rowFormat and dateRenderMode', () => {
    expect(toRow(D, { rowFormat: 'general' })).toStrictEqual({ a: 1, d: '1970-01-01T00:00:00.000Z' })
    expect(toRow(D, { rowFormat: 'powersync' })).toStrictEqual({ a: 1n, d: '1970-01-01 00:00:00.000Z' })
    expect(toRow(D, { rowFormat: 'powersync', dateRenderMode: 2 })).toStrictEqual({ a: 1n, d: '1970-01-01T00:00:00Z' })
  })
  const bad: [string, unknown, any, RegExp][] = [
    ['rowFormat unknown', { rowFormat: 'sqlite' }, TypeError, /rowFormat must be 'general' or 'powersync'/],
    ['rowFormat number', { rowFormat: 1 }, TypeError, /rowFormat/],
    ['dateRenderMode without powersync', { dateRenderMode: 1 }, TypeError, /applies to rowFormat 'powersync' only/],
    ['dateRenderMode 3', { rowFormat: 'powersync', dateRenderMode: 3 }, RangeError, /0, 1 or 2/],
    ['dateRenderMode string', { rowFormat: 'powersync', dateRenderMode: '1' }, RangeError, /0, 1 or 2/],
    ['powersync with a dialect', { rowFormat: 'powersync', dialect: 'relaxed' }, TypeError, /dialect does not apply to rowFormat 'powersync'/],
    ['powersync with utf8', { rowFormat: 'powersync', utf8: 'replace' }, TypeError, /utf8 does not apply/],
    ['powersync with promoteLongs', { rowFormat: 'powersync', promoteLongs: false }, TypeError, /promoteLongs does not apply/],
    ['a near miss', { rowFormats: 'general' }, TypeError, /did you mean 'rowFormat'/],
    ['threads', { threads: 2 }, TypeError, /unknown option 'threads'/],
  ]
  for (const [name, o, type, message] of bad) {
    it(`rejects ${name}`, () => {
      for (const f of [() => toRow(D, o), () => toRows([D], o), () => toRowsAsync([D], o)]) {
        const e = thrown(f)
        expect(e).toBeInstanceOf(type)
        expect(e.message).toMatch(message)
      }
    })
  }
  it('maxDepth, maxOutputBytes, projection and redact apply', () => {
    const nested = ser({ a: { b: { c: 1 } } })
    expect(thrown(() => toRow(nested, { maxDepth: 2 })).code).toBe('BSON_TOO_DEEP')
    expect(thrown(() => toRow(nested, { rowFormat: 'powersync', maxDepth: 2 })).code).toBe('BSON_TOO_DEEP')
    expect(toRow(nested, { maxDepth: 3 })).toStrictEqual({ a: '{"b":{"c":1}}' })
    expect(thrown(() => toRow(ser({ a: { s: 'x'.repeat(100) } }), { maxOutputBytes: 50 })).code).toBe('BSON_OUTPUT_TOO_LARGE')
    expect(thrown(() => toRow(ser({ a: { s: 'x'.repeat(100) } }), { rowFormat: 'powersync', maxOutputBytes: 50 })).code).toBe('BSON_OUTPUT_TOO_LARGE')
    const d = ser({ _id: 1, name: 'n', secret: 's', nested: { keep: 1, drop: 2 } })
    expect(toRow(d, { projection: { name: 1, 'nested.keep': 1 } })).toStrictEqual({ _id: 1, name: 'n', nested: '{"keep":1}' })
    expect(toRow(d, { rowFormat: 'powersync', projection: { secret: 0 }, redact: { paths: ['nested.drop'] } })).toStrictEqual({
      _id: 1n,
      name: 'n',
      nested: '{"keep":1,"drop":null}',
    })
    expect(toRows([d, d], { redact: { paths: ['secret'] } }).map((r: any) => r.secret)).toEqual([null, null])
  })
})

describe('rows: batches', () => {
  const docs = [ser({ a: 1 }), ser({ a: 2, b: 'x' }), ser({ a: 3 }), ser({})]
  const want = [{ a: 1 }, { a: 2, b: 'x' }, { a: 3 }, {}]
  const cursor = BSON.serialize({ firstBatch: docs.map((d) => BSON.deserialize(d)), id: 0n, ns: 'db.c' })
  it('an array, concatenated documents and a raw cursor reply, sync and async', async () => {
    expect(toRows(docs)).toStrictEqual(want)
    expect(toRows(Buffer.concat(docs))).toStrictEqual(want)
    expect(toRows({ cursor })).toStrictEqual(want)
    expect(toRows([])).toStrictEqual([])
    expect(await toRowsAsync(docs)).toStrictEqual(want)
    expect(await toRowsAsync(Buffer.concat(docs))).toStrictEqual(want)
    expect(await toRowsAsync({ cursor })).toStrictEqual(want)
  })
  it("errors: a bad document's index and its offset in the input; argument errors throw, BSON errors reject", async () => {
    const bad = Uint8Array.from(doc([el(0x08, 'b', [7])]))
    const all = Buffer.concat([docs[0], bad])
    const e = thrown(() => toRows(all))
    expect([e.name, e.code, e.index, e.offset]).toEqual(['TranscodeError', 'BSON_BAD_BOOLEAN', 1, docs[0].length + 7])
    const a = thrown(() => toRows([docs[0], bad]))
    expect([a.code, a.index, a.offset]).toEqual(['BSON_BAD_BOOLEAN', 1, 7])
    const one = thrown(() => toRow(bad))
    expect([one.code, one.index, one.offset]).toEqual(['BSON_BAD_BOOLEAN', undefined, 7])
    await expect(toRowsAsync(all)).rejects.toMatchObject({ code: 'BSON_BAD_BOOLEAN', index: 1, offset: docs[0].length + 7 })
    await expect(toRowsAsync(Buffer.from([1, 2, 3]))).rejects.toMatchObject({ name: 'TranscodeError' })
    expect(() => toRowsAsync([1])).toThrow(TypeError)
    expect(() => toRows('x')).toThrow(TypeError)
    expect(() => toRow('x')).toThrow(TypeError)
    expect(thrown(() => toRows({ cursor: ser({ a: 1 }) })).code).toBe('BSON_NOT_A_CURSOR')
  })
  it('a batch of several MiB runs as several pool tasks: the same rows, the first error in input order', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => ser({ i, pad: 'p'.repeat(1000 + (i % 7)), d: { n: i } }))
    const all = Buffer.concat(many)
    const want = toRows(all)
    expect(await toRowsAsync(all)).toStrictEqual(want)
    expect(await toRowsAsync(many)).toStrictEqual(want)
    const bad = Uint8Array.from(doc([el(0x08, 'b', [7])]))
    for (const at of [0, 1500, 2999]) {
      const list = [...many]
      list[at] = bad
      const start = list.slice(0, at).reduce((n, d) => n + d.length, 0)
      const sync = thrown(() => toRows(Buffer.concat(list)))
      expect([sync.index, sync.offset]).toEqual([at, start + 7])
      await expect(toRowsAsync(Buffer.concat(list))).rejects.toMatchObject({ code: 'BSON_BAD_BOOLEAN', index: at, offset: start + 7 })
      await expect(toRowsAsync(list)).rejects.toMatchObject({ code: 'BSON_BAD_BOOLEAN', index: at, offset: 7 })
    }
    // two bad documents in different tasks: the first is reported
    const two = [...many]
    two[2500] = bad
    two[200] = bad
    await expect(toRowsAsync(two)).rejects.toMatchObject({ index: 200 })
    // an unframed tail: the framing error of the whole input
    const cut = Buffer.concat([all, Buffer.from([9, 0, 0])])
    const e = thrown(() => toRows(cut))
    await expect(toRowsAsync(cut)).rejects.toMatchObject({ code: e.code, index: e.index, offset: e.offset })
  })

  it("a batch's texts made as they fill (long strings flat or as ropes, after the walk): the rows toRow makes", async () => {
    // strings of every kind the texts hold, in a batch well past the size at which the sync
    // call makes the texts so far (rows.rs MadeTexts): short, a text of their own (flat), and
    // long enough to be ropes (ASCII over 128 KiB, non-ASCII over 64 KiB), made after the walk
    const kinds = [
      'x', 'é', '', 'a'.repeat(20_000), 'é'.repeat(9_000), 'b'.repeat(100_000), 'c'.repeat(200_000),
      'ü'.repeat(40_000), '😀'.repeat(20_000), 'd'.repeat(3_000),
    ]
    const many = Array.from({ length: 60 }, (_, i) => {
      const s = kinds[i % kinds.length]
      const t = kinds[(i * 7 + 3) % kinds.length]
      return ser({ i, s, n: { t: t.slice(0, 10) }, t })
    })
    const want = many.map((d) => toRow(d))
    expect(want[6]).toStrictEqual({ i: 6, s: kinds[6], n: `{"t":"${kinds[5].slice(0, 10)}"}`, t: kinds[5] })
    const all = Buffer.concat(many)
    const cursor = BSON.serialize({ firstBatch: many.map((d) => BSON.deserialize(d)), id: 0n, ns: 'db.c' })
    for (const rows of [toRows(all), toRows(many), toRows({ cursor }), await toRowsAsync(all)]) {
      expect(rows.length).toBe(many.length)
      for (let i = 0; i < many.length; i++) expect(rows[i]).toStrictEqual(want[i])
    }
  })

  it('the input is copied before toRowsAsync returns', async () => {
    const buf = Buffer.concat(docs)
    const p = toRowsAsync(buf)
    buf.fill(0)
    expect(await p).toStrictEqual(want)
  })
})

describe('rows: the objects and their memory', () => {
  it('each byte value is a plain Uint8Array with a buffer of its own, a copy of its bytes', () => {
    const d = Uint8Array.from(doc([el(0x05, 'a', [...i32(3), 0, 1, 2, 3]), el(0x05, 'b', [...i32(2), 0x80, 9, 9]), el(0x05, 'e', [...i32(0), 0])]))
    for (const row of [toRow(d), toRows([d, d])[1], toRow(d, { rowFormat: 'powersync' })]) {
      expect(row.a).toStrictEqual(new Uint8Array([1, 2, 3]))
      expect(row.b).toStrictEqual(new Uint8Array([9, 9]))
      expect(row.e).toStrictEqual(new Uint8Array(0))
      for (const k of ['a', 'b', 'e']) {
        expect(Object.getPrototypeOf(row[k])).toBe(Uint8Array.prototype)
        expect(row[k].buffer.byteLength).toBe(row[k].byteLength)
      }
      expect(row.a.buffer).not.toBe(row.b.buffer)
    }
    const row = toRow(d)
    d.fill(0x55) // the input changed after the call: the values are copies
    expect(row.b).toStrictEqual(new Uint8Array([9, 9]))
  })

  it('the packed transport is read to its exact end (an unfilled or stale word would not be)', () => {
    const decode = rowDecoder(native.RowTag)
    const T = native.RowTag
    const text = 'xa\u0000'
    const words = new Uint32Array([T.Str, 1, T.NewShape, 3])
    const view = new DataView(words.buffer)
    expect(decode(words, view, 0, 4, [words, null, text])).toStrictEqual([{ a: 'x' }])
    // words left over after the last row, a string or bytes not consumed
    const extra = new Uint32Array([T.Str, 1, T.NewShape, 3, T.Null, 0])
    expect(() => decode(extra, new DataView(extra.buffer), 0, 6, [extra, null, text])).toThrow(/packed rows/)
    expect(() => decode(words, view, 0, 4, [words, null, text + 'tail'])).toThrow(/packed rows/)
    expect(() => decode(words, view, 0, 4, [words, new Uint8Array(1), text])).toThrow(/packed rows/)
    expect(() => decode(words, view, 0, 4, [words, null, text, 'another text'])).toThrow(/packed rows/)
    // toRow's scratch keeps a longer row's words after a shorter one: only the count is read
    const long = ser(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i])))
    const short = ser({ z: 1 })
    expect(Object.keys(toRow(long)).length).toBe(300)
    expect(toRow(short)).toStrictEqual({ z: 1 })
    const longer = ser(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, { i }])))
    expect(Object.keys(toRow(longer)).length).toBe(5000)
    expect(toRow(short)).toStrictEqual({ z: 1 })
  })

  it('no setter of Object.prototype runs, and the two builders (loop, compiled literal) agree', () => {
    const calls: string[] = []
    const keys = ['rowsSetterKey', 'toString', '7', '__proto__', 'constructor', 'valueOf']
    Object.defineProperty(Object.prototype, 'rowsSetterKey', { configurable: true, set: () => {
        calls.push('set')
      }, get: () => undefined })
    let rows: any[]
    try {
      const d = Uint8Array.from(doc(keys.map((k, i) => el(0x10, k, i32(i)))))
      // the first rows of a shape come from the loop, later ones from the compiled literal
      rows = [toRow(d), toRow(d), toRow(d), ...toRows([d, d, d])]
    } finally {
      delete (Object.prototype as any).rowsSetterKey
    }
    expect(calls).toEqual([])
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(['7', 'rowsSetterKey', 'toString', '__proto__', 'constructor', 'valueOf'])
      expect(Object.getOwnPropertyDescriptor(row, 'rowsSetterKey')!.value).toBe(0)
      expect(Object.getOwnPropertyDescriptor(row, '7')!.value).toBe(2)
      expect(Object.getOwnPropertyDescriptor(row, '__proto__')!.value).toBe(3)
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype)
    }
  })

  it('where code generation from strings is disallowed, every row comes from the loop and is the same', () => {
    const script = `
      const { toRow, toRows } = require(${JSON.stringify(join(ROOT, 'index.js'))})
      const { BSON } = require('bson')
      const out = []
      for (let i = 0; i < 50; i++) {
        const d = Buffer.from(BSON.serialize({ a: i, b: { c: 'x' + i }, ['k' + (i % 3)]: 1n, __proto__x: null }))
        out.push(toRow(d), toRow(d, { rowFormat: 'powersync' }))
      }
      out.push(...toRows(out.map((r) => Buffer.from(BSON.serialize({ r: String(r.a) })))))
      console.log(JSON.stringify(out, (k, v) => (typeof v === 'bigint' ? v + 'n' : v)))`
    const run = (flags: string[]) => execFileSync(process.execPath, [...flags, '-e', script], { cwd: ROOT, encoding: 'utf8' })
    const compiled = run([])
    const loop = run(['--disallow-code-generation-from-strings'])
    expect(loop).toBe(compiled)
    expect(JSON.parse(loop).length).toBe(200)
  })

  it('JavaScript that runs mid-call (an accessor on an element, a patched method) gets rows of its own', () => {
    const docs = [ser({ a: 1 }), ser({ a: 2 })]
    const list: any[] = [docs[0]]
    Object.defineProperty(list, 1, {
      get() {
        // re-enters while the outer call reads its arguments
        expect(toRow(ser({ inner: true }))).toStrictEqual({ inner: true })
        return docs[1]
      },
    })
    expect(toRows(list)).toStrictEqual([{ a: 1 }, { a: 2 }])
    const slice = String.prototype.slice
    let inner: any
    String.prototype.slice = function (this: string, ...args: any[]) {
      String.prototype.slice = slice
      inner = toRow(ser({ z: 'inner' }))
      return slice.apply(this, args as any)
    }
    try {
      expect(toRow(ser({ s: 'outer', t: 'text' }))).toStrictEqual({ s: 'outer', t: 'text' })
      expect(inner).toStrictEqual({ z: 'inner' })
    } finally {
      String.prototype.slice = slice
    }
  })
})

describe('rows: the general format against its reference', () => {
  it('toRow and toRows give the rows js-bson values would, on generated documents', () => {
    // a reference: js-bson's values, mapped by the type map (the nested text aside)
    const g = new Gen(20261207, { badStringRate: 0 })
    let compared = 0
    for (let i = 0; i < 2000; i++) {
      const d = g.root()
      let row: any
      try {
        row = toRow(d)
      } catch {
        continue
      }
      for (const e of elements(d)) {
        const one = single(e)
        const v = toRow(one).x
        let ref: any
        try {
          ref = BSON.deserialize(one, { promoteValues: false, promoteLongs: false, bsonRegExp: true }).x
        } catch {
          continue // a regex option js-bson refuses
        }
        switch (e.type) {
          case 0x01: expect(Object.is(v, ref.valueOf())).toBe(true); break
          case 0x02: expect(v).toBe(ref); break
          case 0x08: expect(v).toBe(ref); break
          case 0x10: expect(v).toBe(ref.valueOf()); break
          case 0x12: expect(v).toBe(BigInt(ref.toString())); break
          case 0x11: expect(v).toBe(BigInt(ref.toString())); break
          case 0x07: expect(v).toBe(ref.toHexString()); break
          case 0x0a: case 0x06: expect(v).toBeNull(); break
          case 0x0e: expect(v).toBe(ref.valueOf()); break
          default: break
        }
      }
      expect(isDeepStrictEqual(toRows([d])[0], row)).toBe(true)
      compared++
    }
    expect(compared).toBeGreaterThan(1000)
  })
})
