/**
 * The batch calls on an array of documents (`toNDJSON`, `toJSONList`, `toJSONArray`) pass the
 * native addon a views table built in JavaScript (lib/native `transcodeViews`, binding
 * `transcodeBatchViews`) instead of the array itself. Compared here with the plain twin, the
 * binding's `transcodeBatch` given the same array, over documents laid out in every way a
 * caller's buffers can be (one shared buffer, one buffer each, pooled Buffers, more distinct
 * buffers than the wrapper searches, offsets, resizable buffers, shared memory); the binding's
 * bounds checks of the table are tested directly.
 */
import { createRequire } from 'node:module'
import { afterEach, describe, expect, it } from 'vitest'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const b2j = require('../../index.js')
const { packOptions } = require('../../lib/native')
const { loadBackend } = require('../../lib/native/load')
const backend = loadBackend()
const binding = backend.binding
const native = backend.name === 'native'

const DEFAULTS = [packOptions(0, 1000), 2 ** 32 - 1] as const
const L = { Array: 0, NdjsonBuffer: 1, List: 2, NdjsonString: 3 }

/** Small documents of varied shape and size (ASCII and not, numbers, nesting). */
function makeDocs(n: number): Buffer[] {
  const docs: Buffer[] = []
  for (let i = 0; i < n; i++) {
    const o: any = { _id: i, s: 'x'.repeat(i % 50), t: i % 3 === 0 ? 'héllo ✓ 😀' : 'plain' }
    if (i % 4 === 1) o.nested = { a: [i, i * 1.5, -i], b: { c: null, d: true } }
    if (i % 5 === 2) o.big = 'y'.repeat(300 + i)
    docs.push(Buffer.from(BSON.serialize(o)))
  }
  return docs
}

/** `docs` as views in one ArrayBuffer, each at an odd offset with a gap before it. */
function inOneBuffer(docs: Uint8Array[]): Uint8Array[] {
  const total = docs.reduce((n, d) => n + d.length + 3, 1)
  const ab = new ArrayBuffer(total)
  const out: Uint8Array[] = []
  let at = 1
  for (const d of docs) {
    at += 3
    const v = new Uint8Array(ab, at, d.length)
    v.set(d)
    out.push(v)
    at += d.length
  }
  return out
}

/** `docs` spread round-robin over `k` ArrayBuffers (so neighbours never share one). */
function roundRobin(docs: Uint8Array[], k: number): Uint8Array[] {
  const sizes = Array.from({ length: k }, () => 0)
  docs.forEach((d, i) => (sizes[i % k] += d.length))
  const abs = sizes.map((s) => new ArrayBuffer(s))
  const at = Array.from({ length: k }, () => 0)
  return docs.map((d, i) => {
    const v = new Uint8Array(abs[i % k], at[i % k], d.length)
    v.set(d)
    at[i % k] += d.length
    return v
  })
}

const own = (d: Uint8Array) => new Uint8Array(d)
const resizable = (d: Uint8Array) => {
  const ab = new (ArrayBuffer as any)(d.length + 8, { maxByteLength: 1024 * 1024 })
  const v = new Uint8Array(ab, 8)
  v.set(d)
  return v
}

const layouts: [string, (docs: any, o?: any) => unknown, number][] = [
  ['toNDJSON', (d, o) => b2j.toNDJSON(d, o).toString(), L.NdjsonBuffer],
  ['toJSONArray', (d, o) => b2j.toJSONArray(d, o), L.Array],
  ['toJSONList', (d, o) => JSON.stringify(b2j.toJSONList(d, o)), L.List],
]

/** The plain twin: the binding's element-by-element `transcodeBatch` on the same array. */
function plain(docs: unknown[], layout: number): unknown {
  const r: any = binding.transcodeBatch(docs, layout, ...DEFAULTS, 1)
  if (layout === L.NdjsonBuffer) return r.toString()
  if (layout === L.List) return JSON.stringify(r)
  return r
}

/** Counts the views calls, and how many of them transcoded (did not return `undefined`). */
let calls = { views: 0, taken: 0 }
const realViews = binding.transcodeBatchViews
function spyViews() {
  calls = { views: 0, taken: 0 }
  binding.transcodeBatchViews = function (...args: any[]) {
    calls.views++
    const r = realViews.apply(this, args)
    if (r !== undefined) calls.taken++
    return r
  }
}
afterEach(() => {
  binding.transcodeBatchViews = realViews
})

describe.runIf(native)('batches of an array: the views table', () => {
  const docs = makeDocs(40)
  const expected = docs.map((d) => JSON.stringify(BSON.deserialize(d)))
  const arrangements: [string, Uint8Array[]][] = [
    ['one Buffer each (pooled: neighbours share a slab)', docs],
    ['views in one ArrayBuffer at offsets', inOneBuffer(docs)],
    ['an ArrayBuffer each', docs.map(own)],
    ['2 buffers alternating', roundRobin(docs, 2)],
    ['7 buffers round-robin (more than the wrapper searches)', roundRobin(docs, 7)],
    ['resizable ArrayBuffers', docs.map(resizable)],
    ['Buffer.concat subarrays', (() => {
      const cat = Buffer.concat(docs)
      let at = 0
      return docs.map((d) => cat.subarray(at, (at += d.length)))
    })()],
  ]

  it('every arrangement: the same output as the plain twin and as per-document toJSON, through the views call', () => {
    for (const [name, arr] of arrangements) {
      for (const [fname, f, layout] of layouts) {
        spyViews()
        const got = f(arr)
        expect(calls, `${name} ${fname}`).toEqual({ views: 1, taken: 1 })
        expect(got, `${name} ${fname}`).toBe(plain(arr, layout))
      }
      expect(b2j.toNDJSON(arr).toString()).toBe(expected.join('\n') + '\n')
      expect(b2j.toJSONList(arr)).toEqual(expected)
      // a prefix, and a batch below the views minimum, still agree
      expect(b2j.toJSONList(arr.slice(0, 5))).toEqual(expected.slice(0, 5))
      expect(b2j.toJSONList(arr.slice(0, 2))).toEqual(expected.slice(0, 2))
    }
  })

  it('options: dialects, threads and a projection go through the views call too', () => {
    const arr = roundRobin(docs, 3)
    for (const o of [{ dialect: 'canonical' }, { dialect: 'relaxed' }, { threads: 2 }, { projection: { s: 1, 'nested.b': 1 } }]) {
      spyViews()
      const got = b2j.toJSONList(arr, o)
      expect(calls.taken, JSON.stringify(o)).toBe(1)
      const { threads, ...one } = o as any
      expect(got).toEqual(arr.map((d) => b2j.toJSON(d, threads === undefined ? one : undefined)))
    }
  })

  it('an error keeps its document index and offset', () => {
    const arr = inOneBuffer(docs.slice(0, 10))
    // document 6 truncated inside: its length prefix says more than it holds
    arr[6] = arr[6].subarray(0, arr[6].length - 2)
    let a: any
    let p: any
    try {
      b2j.toNDJSON(arr)
    } catch (e) {
      a = e
    }
    try {
      binding.transcodeBatch(arr, L.NdjsonBuffer, ...DEFAULTS, 1)
    } catch (e) {
      p = e
    }
    expect(a).toBeDefined()
    expect([a.code, a.index, a.offset, a.message]).toEqual([p.code, p.index, p.offset, p.message])
    expect(a.index).toBe(6)
  })

  it('elements the table cannot describe: the plain path, with its errors, each element read once', () => {
    const base = docs.slice(0, 6)
    const sab = new SharedArrayBuffer(base[3].length)
    new Uint8Array(sab).set(base[3])
    const cases: [string, unknown, string | RegExp][] = [
      ['a SharedArrayBuffer view', new Uint8Array(sab), expected[3]],
      ['a Uint8ClampedArray', new Uint8ClampedArray(base[3]), /docs\[3\] must be a Uint8Array or Buffer/],
      ['a DataView', new DataView(own(base[3]).buffer), /docs\[3\] must be a Uint8Array or Buffer/],
      ['an object posing as one', { buffer: base[3].buffer, byteOffset: base[3].byteOffset, byteLength: base[3].byteLength, [Symbol.toStringTag]: 'Uint8Array' }, /docs\[3\] must be a Uint8Array or Buffer/],
      ['null', null, /docs\[3\] must be a Uint8Array or Buffer/],
      ['an empty Uint8Array', new Uint8Array(0), 'BSON_TRUNCATED'],
    ]
    for (const [name, el, want] of cases) {
      const arr: any[] = base.slice()
      let reads = 0
      Object.defineProperty(arr, 3, { get: () => (reads++, el) })
      let out: unknown
      let err: any
      try {
        out = b2j.toJSONList(arr)
      } catch (e) {
        err = e
      }
      expect(reads, name).toBe(1)
      if (typeof want === 'string' && want !== 'BSON_TRUNCATED') expect(out, name).toEqual([...expected.slice(0, 3), want, ...expected.slice(4, 6)])
      else if (want === 'BSON_TRUNCATED') expect([err?.code, err?.index], name).toEqual(['BSON_TRUNCATED', 3])
      else expect(() => {
        throw err
      }, name).toThrow(want as RegExp)
    }
    // A hole reads as undefined.
    const holey: any[] = base.slice()
    delete holey[2]
    expect(() => b2j.toNDJSON(holey)).toThrow(/docs\[2\] must be a Uint8Array or Buffer/)
  })

  it('an own or inherited buffer/byteOffset/byteLength changes nothing (the intrinsic getters are read)', () => {
    const arr = inOneBuffer(docs.slice(0, 8))
    const liar = arr[4] as any
    Object.defineProperty(liar, 'byteOffset', { value: 0 })
    Object.defineProperty(liar, 'byteLength', { value: 5 })
    Object.defineProperty(liar, 'buffer', { value: new ArrayBuffer(5) })
    class Sub extends Uint8Array {
      get byteLength() {
        return 1
      }
    }
    const sub = new Sub(docs[5])
    arr[5] = sub
    spyViews()
    expect(b2j.toJSONList(arr)).toEqual(expected.slice(0, 8))
    expect(calls.taken).toBe(1)
  })
})

/** A document in a resizable ArrayBuffer at byte 2^32 + 8 (`null` where one cannot be that large). */
function past4GiB(d: Uint8Array): Uint8Array | null {
  try {
    const ab = new (ArrayBuffer as any)(16, { maxByteLength: 2 ** 32 + 8192 })
    ab.resize(2 ** 32 + 8192)
    const v = new Uint8Array(ab, 2 ** 32 + 8, d.length)
    v.set(d)
    return v
  } catch {
    return null
  }
}

describe.runIf(native && past4GiB(new Uint8Array(1)) !== null)('a view past 4 GiB', () => {
  it('does not fit the table: the elements go to the plain path', () => {
    const docs = makeDocs(6)
    const arr: Uint8Array[] = docs.slice()
    arr[4] = past4GiB(docs[4])!
    // the same at the table's start, with every row's offset past 2^32
    const all = docs.map((d) => past4GiB(d)!)
    for (const a of [arr, all]) {
      spyViews()
      expect(b2j.toJSONList(a)).toEqual(docs.map((d) => JSON.stringify(BSON.deserialize(d))))
      expect(calls.taken).toBe(0)
    }
  })
})

describe.runIf(native)('the views table once the wrapper is optimized', () => {
  // Thousands of batches of plain Buffers first: V8 has then optimized `transcodeViews` for
  // them (its getters inlined behind a check of the element's map), and the elements below,
  // met for the first time, must still be read through the intrinsic getters.
  const docs = makeDocs(16)
  const expected = docs.map((d) => JSON.stringify(BSON.deserialize(d)))
  const warm = () => {
    const cat = Buffer.concat(docs)
    let at = 0
    const arr = docs.map((d) => cat.subarray(at, (at += d.length)))
    for (let i = 0; i < 3000; i++) b2j.toJSONList(arr)
    return arr
  }

  it('an own property, a subclass getter or a patched prototype on a hot path changes nothing', () => {
    const arr = warm()
    const liar = arr[3] as any
    Object.defineProperty(liar, 'byteOffset', { value: 0 })
    Object.defineProperty(liar, 'byteLength', { value: docs[0].length })
    class Sub extends Buffer {
      get byteOffset() {
        return 0
      }
    }
    const sub = arr[6]
    Object.setPrototypeOf(sub, Sub.prototype)
    spyViews()
    expect(b2j.toJSONList(arr)).toEqual(expected)
    const saved = Object.getOwnPropertyDescriptor(Uint8Array.prototype, 'byteLength')
    Object.defineProperty(Uint8Array.prototype, 'byteLength', { get: () => 5, configurable: true })
    try {
      expect(b2j.toJSONList(arr)).toEqual(expected)
    } finally {
      if (saved) Object.defineProperty(Uint8Array.prototype, 'byteLength', saved)
      else delete (Uint8Array.prototype as any).byteLength
    }
    expect(calls.taken).toBe(2)
  })

  it('a detached element on a hot path takes the plain path', () => {
    const arr = warm()
    const gone = new Uint8Array(docs[2])
    structuredClone(gone.buffer, { transfer: [gone.buffer] })
    arr[2] = gone
    spyViews()
    expect(() => b2j.toJSONList(arr)).toThrow(/document 2, byte 0/)
    expect(calls.taken).toBe(0)
  })
})

describe.runIf(native)('transcodeBatchViews: the table is checked against the buffers as they stand', () => {
  const [d0, d1] = makeDocs(2)
  const ab = new ArrayBuffer(d0.length + d1.length + 4)
  new Uint8Array(ab, 4, d0.length).set(d0)
  new Uint8Array(ab, 4 + d0.length, d1.length).set(d1)
  const ok = [0, 4, d0.length, 0, 4 + d0.length, d1.length]
  const call = (buffers: unknown[], table: unknown, count = 2) =>
    binding.transcodeBatchViews(buffers, table, count, L.NdjsonBuffer, ...DEFAULTS, 1)
  const bad = (i: number, x: number) => {
    const t = ok.slice()
    t[i] = x
    return new Uint32Array(t)
  }
  const want = [d0, d1].map((d) => JSON.stringify(BSON.deserialize(d)) + '\n').join('')

  it('a valid table transcodes', () => {
    expect(call([ab], new Uint32Array(ok)).toString()).toBe(want)
    // the table may be longer than 3 × count
    expect(call([ab], new Uint32Array([...ok, 9, 9, 9])).toString()).toBe(want)
    expect(call([ab], new Uint32Array(ok), 1).toString()).toBe(want.slice(0, want.indexOf('\n') + 1))
    // buffers past the ones the table names are looked up and unused
    expect(call([ab, new ArrayBuffer(3)], new Uint32Array(ok)).toString()).toBe(want)
  })

  it('anything else returns undefined, transcoding nothing', () => {
    const size = ab.byteLength
    const detached = ab.slice(0)
    structuredClone(detached, { transfer: [detached] })
    const cases: [string, unknown[], unknown, number?][] = [
      ['range past the end', [ab], bad(5, d1.length + 1)],
      ['offset past the end', [ab], bad(4, size + 1)],
      ['offset + length past 2^32', [ab], bad(4, 2 ** 32 - 1)],
      ['a length of 2^32 - 1', [ab], bad(5, 2 ** 32 - 1)],
      ['empty range', [ab], bad(2, 0)],
      ['buffer index out of range', [ab], bad(3, 1)],
      ['a buffer index of 2^32 - 1', [ab], bad(0, 2 ** 32 - 1)],
      ['a hole in the buffers', Object.assign([ab], { 2: ab }), new Uint32Array(ok)],
      ['a SharedArrayBuffer', [new SharedArrayBuffer(size)], new Uint32Array(ok)],
      ['a Uint8Array instead of its buffer', [new Uint8Array(ab)], new Uint32Array(ok)],
      ['a detached buffer', [detached], new Uint32Array(ok)],
      ['a Float64Array table', [ab], new Float64Array(ok)],
      ['an Int32Array table', [ab], new Int32Array(ok)],
      ['a table too short for count', [ab], new Uint32Array(ok), 3],
      ['a plain array table', [ab], ok],
    ]
    for (const [name, buffers, table, count] of cases) {
      let r: unknown
      try {
        r = call(buffers, table, count ?? 2)
      } catch (e) {
        r = e
      }
      expect(r, name).toBeUndefined()
    }
  })

  it('a document that fails stands only if every later row is a document', () => {
    // document 0 cut short inside (its length prefix says more than the range holds)
    const cut = bad(2, d0.length - 1)
    let err: any
    try {
      call([ab], cut)
    } catch (e) {
      err = e
    }
    expect([err?.code, err?.index]).toEqual(['BSON_TRUNCATED', 0])
    // the same with row 1 past its buffer: declined, so the wrapper's plain path reports
    const both = cut.slice()
    both[5] = d1.length + 1
    expect(call([ab], both)).toBeUndefined()
    const gone = both.slice()
    gone[5] = d1.length
    gone[3] = 1
    expect(call([ab], gone)).toBeUndefined()
  })

  it('a shrunk resizable buffer is checked as it stands', () => {
    const rab = new (ArrayBuffer as any)(ab.byteLength, { maxByteLength: ab.byteLength })
    new Uint8Array(rab).set(new Uint8Array(ab))
    expect(call([rab], new Uint32Array(ok)).toString()).toBe(want)
    rab.resize(ab.byteLength - 1)
    expect(call([rab], new Uint32Array(ok))).toBeUndefined()
  })
})
