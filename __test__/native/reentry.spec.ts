/**
 * Re-entry: JavaScript that runs in the middle of a native call (a getter, a `Proxy`, a
 * `valueOf`, a replaced global `RegExp`, a setter on `Object.prototype`/`Array.prototype`)
 * and takes the input's memory away (detach by transfer, `resize()` to 0, GC), plus views on
 * a `SharedArrayBuffer` another thread writes. Every export × every route, many rounds each
 * with GC pressure. What users get is documented in docs/api.md ("Inputs that change during a
 * call"): either the correct output, or the output for the input as it stood after the last
 * JavaScript ran (a detached or shrunk buffer reads as empty: `BSON_TRUNCATED` at offset 0),
 * or a TypeError naming the argument. Never a crash, never output built from freed memory.
 *
 * The same file runs under AddressSanitizer (scripts/asan.sh --reentry), where a read of
 * freed memory aborts the process instead of passing silently.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { BSON } from 'bson'
import { Worker } from 'node:worker_threads'
import { gc } from '../support/gc'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const binding = require('../../lib/native/load').loadBackend().binding
// eslint-disable-next-line @typescript-eslint/no-require-imports
const native = require('../../lib/native')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveOptions } = require('../../lib/options')

const ROUNDS = Number(process.env.REENTRY_ROUNDS || 12)

/** A fresh copy of `bytes` in its own (optionally resizable) ArrayBuffer. */
function own(bytes: Uint8Array, resizable = false): Uint8Array {
  const ab = resizable
    ? new (ArrayBuffer as any)(bytes.length, { maxByteLength: bytes.length * 2 })
    : new ArrayBuffer(bytes.length)
  const v = new Uint8Array(ab)
  v.set(bytes)
  return v
}

let takingAway = false
/**
 * Takes the memory of `v` away: transfer (detach) or resize to 0, then GC and reuse the heap.
 * A buffer already detached is left alone (from Node 21, `transfer()` of a detached buffer
 * throws), and so is a call made from inside one: Node 22's `structuredClone` assigns to the
 * arrays and objects it builds, which runs the tests' hostile prototype setters again.
 */
function takeAway(v: Uint8Array): void {
  const ab: any = v.buffer
  if (takingAway || ab.detached === true || (!ab.resizable && ab.byteLength === 0)) return
  takingAway = true
  try {
    if (ab.resizable) ab.resize(0)
    else if (typeof ab.transfer === 'function' && Math.random() < 0.5) ab.transfer()
    else structuredClone(ab, { transfer: [ab] })
  } finally {
    takingAway = false
  }
  gc()
  const junk = []
  for (let i = 0; i < 8; i++) junk.push(new Uint8Array(64 * 1024).fill(0x41))
}

function isExpectedError(e: any): boolean {
  return e instanceof TypeError || e instanceof RangeError || b2j.isTranscodeError(e)
}

const big = 'n'.repeat(300_000)
let serial = 0
/**
 * Fresh documents with regexes never seen before (the addon remembers the patterns V8 has
 * accepted and does not ask the global RegExp again), so every round reaches the RegExp.
 */
function refresh(): void {
  serial++
  const A = BSON.serialize({ a: 1, r: new RegExp(`x${serial}`), s: 'é'.repeat(50_000) })
  const B = BSON.serialize({ b: 2, r: new RegExp(`y${serial}`, 'g'), s: 'z'.repeat(70_000) })
  const C = BSON.serialize({ c: 3, r: new RegExp(`w${serial}`) })
  const r = BSON.serialize({
    firstBatch: [BSON.deserialize(A), BSON.deserialize(B)],
    id: BSON.Long.fromNumber(42),
    ns: 'db.' + big,
    postBatchResumeToken: { _data: 'tok' },
  })
  const j = (d: Uint8Array) => JSON.stringify(BSON.deserialize(d))
  docA = A
  docB = B
  docC = C
  reply = r
  jsonA = j(A)
  jsonB = j(B)
  jsonC = j(C)
}
let docA: Uint8Array, docB: Uint8Array, docC: Uint8Array, reply: Uint8Array
let jsonA: string, jsonB: string, jsonC: string
refresh()
const OriginalRegExp = globalThis.RegExp
afterEach(() => {
  globalThis.RegExp = OriginalRegExp
})

/** Replaces the global RegExp with one that takes `victim()` away, for the duration of `f`. */
function withHostileRegExp<T>(victim: () => Uint8Array | undefined, f: () => T): T {
  let fired = 0
  globalThis.RegExp = function (p: string, fl: string) {
    const v = victim()
    if (v && v.byteLength) takeAway(v)
    fired++
    return new OriginalRegExp(p, fl)
  } as any
  try {
    return f()
  } finally {
    globalThis.RegExp = OriginalRegExp
    void fired
  }
}

type Sync = (docs: any, o?: any) => any
const syncBatches: [string, Sync, (out: any) => string][] = [
  ['toJSONList', b2j.toJSONList, (o) => JSON.stringify(o.map((s: string) => JSON.parse(s)))],
  ['toJSONArray', b2j.toJSONArray, (o) => JSON.stringify(JSON.parse(o))],
  ['toNDJSON', b2j.toNDJSON, (o) => JSON.stringify(o.toString().trimEnd().split('\n').map((l: string) => JSON.parse(l)))],
]
const asyncBatches: [string, (docs: any, o?: any) => Promise<any>, (out: any) => string][] = [
  ['toJSONListAsync', b2j.toJSONListAsync, (o) => JSON.stringify(o.map((s: string) => JSON.parse(s)))],
  ['toJSONArrayAsync', b2j.toJSONArrayAsync, (o) => JSON.stringify(JSON.parse(o))],
  ['toNDJSONAsync', b2j.toNDJSONAsync, (o) => JSON.stringify(o.toString().trimEnd().split('\n').map((l: string) => JSON.parse(l)))],
]
const canon = (...j: string[]) => JSON.stringify(j.map((x) => JSON.parse(x)))

describe('the issue reproductions', () => {
  it('cursorBatch: a global RegExp that detaches the input does not crash, and ns is intact', () => {
    for (let i = 0; i < ROUNDS * 5; i++) {
      refresh()
      let v: Uint8Array | undefined = own(reply, i % 2 === 1)
      const r = withHostileRegExp(() => v, () => b2j.cursorBatch({ cursor: v }))
      expect(r.ns).toBe('db.' + big)
      expect(r.id).toBe(42n)
      expect(Buffer.from(r.postBatchResumeToken).equals(Buffer.from(BSON.serialize({ _data: 'tok' })))).toBe(true)
      expect(r.docs).toEqual([jsonA, jsonB])
      v = undefined
    }
  })

  it('batches: a getter on a later element that detaches an earlier one', () => {
    for (const [name, f, norm] of syncBatches) {
      for (let i = 0; i < ROUNDS; i++) {
        refresh()
        const first = own(docA, i % 2 === 1)
        const arr: any[] = [first, own(docB), null]
        Object.defineProperty(arr, 2, {
          get() {
            takeAway(first)
            return own(docC)
          },
        })
        // docs[0] is empty once every element has been read: BSON_TRUNCATED at its offset 0.
        let err: any
        try {
          f(arr)
        } catch (e) {
          err = e
        }
        expect(err, name).toBeDefined()
        expect(b2j.isTranscodeError(err), String(err)).toBe(true)
        expect([err.code, err.offset, err.index]).toEqual(['BSON_TRUNCATED', 0, 0])
        // The element that was read last is used as it was returned.
        const ok: any[] = [own(docA), own(docB), null]
        Object.defineProperty(ok, 2, { get: () => own(docC) })
        expect(norm(f(ok))).toBe(canon(jsonA, jsonB, jsonC))
      }
    }
  })
})

describe('every export × every route', () => {
  it('toJSON / toJSONBuffer: a global RegExp that detaches or shrinks the input', () => {
    for (let i = 0; i < ROUNDS; i++) {
      refresh()
      for (const f of [b2j.toJSON, (b: any, o?: any) => b2j.toJSONBuffer(b, o).toString()]) {
        const v = own(docA, i % 2 === 1)
        expect(withHostileRegExp(() => v, () => f(v))).toBe(jsonA)
        const w = own(docA)
        expect(withHostileRegExp(() => w, () => f(w, { dialect: 'compat', maxDepth: 50 }))).toBe(jsonA)
      }
    }
  })

  it('toJSONBuffer: results from the shared slab stay intact when a RegExp calls back in or takes the slab away', () => {
    for (let i = 0; i < ROUNDS; i++) {
      // small documents (their JSON comes from the slab) with regexes the addon has not seen,
      // so each call reaches the global RegExp after transcoding and before its copy
      serial++
      const small = (k: string) => BSON.serialize({ [k]: serial, r: new RegExp(`${k}${serial}`) })
      const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(small)
      const text = (x: Uint8Array) => JSON.stringify(BSON.deserialize(x))
      const earlier = b2j.toJSONBuffer(own(b))
      // a call back in while the outer one is in the addon: each result keeps its own bytes
      let inner: Buffer | undefined
      let calledBack = false
      globalThis.RegExp = function (p: string, fl: string) {
        if (!calledBack) {
          calledBack = true
          inner = b2j.toJSONBuffer(own(c))
        }
        return new OriginalRegExp(p, fl)
      } as any
      let outer: Buffer
      try {
        outer = b2j.toJSONBuffer(own(a))
      } finally {
        globalThis.RegExp = OriginalRegExp
      }
      expect(inner).toBeDefined()
      expect(outer.toString()).toBe(text(a))
      expect(inner!.toString()).toBe(text(c))
      expect(earlier.toString()).toBe(text(b))
      // the native addon pools (the WASI build stages its output instead)
      const pooled = b2j.backend === 'native'
      if (pooled) expect(outer.buffer).toBe(earlier.buffer)
      // the slab transferred mid-call through an earlier result's ArrayBuffer: no write into
      // it, the result is a Buffer of its own, and the next calls share a new slab
      const held = b2j.toJSONBuffer(own(b))
      serial++
      const e = small('e')
      expect(withHostileRegExp(() => held, () => b2j.toJSONBuffer(own(e)).toString())).toBe(text(e))
      const next = [b2j.toJSONBuffer(own(d)), b2j.toJSONBuffer(own(b))]
      expect(next.map(String)).toEqual([text(d), text(b)])
      if (pooled) {
        expect(next[0].buffer).toBe(next[1].buffer)
        expect(next[0].buffer).not.toBe(held.buffer)
      }
    }
  })

  it('options: getters and valueOf/Symbol.toPrimitive that detach the input', () => {
    for (let i = 0; i < ROUNDS; i++) {
      refresh()
      const v = own(docC)
      const getters = {
        get dialect() {
          takeAway(v)
          return 'relaxed'
        },
      }
      // Options are read before the input: the input is already detached, so empty.
      expect(() => b2j.toJSON(v, getters)).toThrow(expect.objectContaining({ code: 'BSON_TRUNCATED', offset: 0 }))
      const w = own(docC)
      const prim = { valueOf: () => (takeAway(w), 5), [Symbol.toPrimitive]: () => (takeAway(w), 5) }
      for (const o of [{ maxDepth: prim }, { maxOutputBytes: prim }, { threads: prim }]) {
        expect(() => b2j.toJSONArray([w], o)).toThrow(RangeError)
      }
      const x = own(docC)
      const opt = {
        get threads() {
          takeAway(x)
          return 1
        },
      }
      expect(() => b2j.toNDJSON([x], opt)).toThrow(expect.objectContaining({ code: 'BSON_TRUNCATED', index: 0 }))
    }
  })

  it('sync batches: Proxy arrays, element getters, a getter on { cursor }, a hostile RegExp', () => {
    for (const [name, f, norm] of syncBatches) {
      for (let i = 0; i < ROUNDS; i++) {
        refresh()
        const a = own(docA)
        const b = own(docB)
        const proxy = new Proxy([a, b], {
          get(t: any, k) {
            if (k === '1') takeAway(a)
            return t[k]
          },
        })
        // A Proxy is not an array to the addon: a TypeError naming docs.
        expect(() => f(proxy), name).toThrow(TypeError)
        // Concatenated input, detached by the RegExp after the walk.
        const cat = own(Buffer.concat([docA, docB]))
        expect(norm(withHostileRegExp(() => cat, () => f(cat)))).toBe(canon(jsonA, jsonB))
        // A list whose every element is detached by the RegExp after the walk.
        const list = [own(docA), own(docB)]
        let k = 0
        expect(norm(withHostileRegExp(() => list[k++ % 2], () => f(list)))).toBe(canon(jsonA, jsonB))
        // { cursor } with a getter that returns a view, then detaches it on a second read.
        const c = own(reply)
        let reads = 0
        const r = {
          get cursor() {
            if (reads++ > 0) takeAway(c)
            return c
          },
        }
        expect(norm(withHostileRegExp(() => c, () => f(r)))).toBe(canon(jsonA, jsonB))
        expect(reads).toBe(1)
        // A getter that detaches an earlier element, with threads > 1.
        const first = own(docA)
        const arr: any[] = [first, null]
        Object.defineProperty(arr, 1, { get: () => (takeAway(first), own(docB)) })
        expect(() => f(arr, { threads: 2 })).toThrow(expect.objectContaining({ code: 'BSON_TRUNCATED', index: 0 }))
      }
    }
  })

  it('async exports: element getters, Proxy arrays, hostile RegExp, detaching after the call', async () => {
    for (const [name, f, norm] of asyncBatches) {
      for (let i = 0; i < ROUNDS / 2; i++) {
        refresh()
        const first = own(docA)
        const arr: any[] = [first, own(docB), null]
        Object.defineProperty(arr, 2, { get: () => (takeAway(first), own(docC)) })
        await expect(f(arr), name).rejects.toMatchObject({ code: 'BSON_TRUNCATED', offset: 0, index: 0 })
        expect(() => f(new Proxy([own(docA)], {})), name).toThrow(TypeError) // a wrong argument: synchronous
        // Inputs are copied: detaching them once the call returned changes nothing.
        const list = [own(docA), own(docB)]
        const p = withHostileRegExp(() => list[0], () => f(list))
        takeAway(list[1])
        expect(norm(await p)).toBe(canon(jsonA, jsonB))
        const c = own(reply)
        const q = f({ cursor: c })
        takeAway(c)
        expect(norm(await q)).toBe(canon(jsonA, jsonB))
      }
    }
    for (let i = 0; i < ROUNDS / 2; i++) {
      refresh()
      const v = own(docA)
      const p = withHostileRegExp(() => v, () => b2j.toJSONAsync(v))
      expect(await p).toBe(jsonA)
    }
  })

  it('cursorBatch and the change-stream batch: setters on Object.prototype / Array.prototype', () => {
    const keys = ['id', 'ns', 'postBatchResumeToken', 'count', 'docs', 'events', 'operationType', 'json', 'resumeToken']
    for (let i = 0; i < ROUNDS; i++) {
      refresh()
      let victim: Uint8Array | undefined
      let seenNs: unknown
      for (const k of keys) {
        Object.defineProperty(Object.prototype, k, {
          configurable: true,
          set(x) {
            if (k === 'ns' && typeof x === 'string') seenNs = x
            if (victim && victim.byteLength) takeAway(victim)
            Object.defineProperty(this, k, { value: x, writable: true, enumerable: true, configurable: true })
          },
        })
      }
      Object.defineProperty(Array.prototype, 0, {
        configurable: true,
        set(x) {
          if (victim && victim.byteLength) takeAway(victim)
          Object.defineProperty(this, 0, { value: x, writable: true, enumerable: true, configurable: true })
        },
      })
      try {
        victim = own(reply)
        const r = b2j.cursorBatch(victim)
        // The result object is filled by assignment (the setter sees the value).
        expect(seenNs).toBe('db.' + big)
        expect(r.ns).toBe('db.' + big)
        expect(r.docs).toEqual([jsonA, jsonB])
        {
          const ev = BSON.serialize({
            _id: { _data: 'x'.repeat(1000) },
            operationType: 'insert',
            ns: { db: 'd', coll: 'c' },
            documentKey: { _id: 1 },
            fullDocument: BSON.deserialize(docA),
          })
          const cs = BSON.serialize({ nextBatch: [BSON.deserialize(ev), BSON.deserialize(ev)], id: 0n, ns: 'd.' + big })
          // the packed path watch() takes (its input borrowed, not copied), without and with a
          // redaction (shaped in the same call; this one changes nothing)
          const F = native.EventFormat
          const plain = { packed: native.packOptions(0, 1000), maxOutputBytes: 1 << 28 }
          const shaped = { ...resolveOptions({ redact: { paths: ['no.such.path'] } }), ...plain }
          const routes = [
            (c: Uint8Array, whole: boolean) => native.transcodeChangeBatch(c, whole ? F.Whole : F.Parts, plain),
            (c: Uint8Array, whole: boolean) => native.transcodeChangeBatch(c, whole ? F.Whole : F.Parts, shaped),
          ]
          for (const [route, whole] of routes.flatMap((f) => [false, true].map((w) => [f, w] as const))) {
            victim = own(cs)
            const out = withHostileRegExp(() => victim, () => route(victim!, whole))
            expect(out.ns).toBe('d.' + big)
            expect(out.events).toHaveLength(2)
            for (const e of out.events) {
              expect(e.operationType).toBe('insert')
              if (whole) expect(JSON.parse(e.json).fullDocument).toEqual(JSON.parse(jsonA))
              else expect(e.fullDocument).toBe(jsonA)
            }
          }
        }
      } finally {
        for (const k of keys) delete (Object.prototype as any)[k]
        delete (Array.prototype as any)[0]
      }
    }
  })

  it('cursorBatch rejects what is not a cursor document with BSON_NOT_A_CURSOR', () => {
    const whole = BSON.serialize({ cursor: BSON.deserialize(reply), ok: 1 })
    for (const bad of [
      whole,
      BSON.serialize({ firstBatch: [] }),
      BSON.serialize({ id: 0n }),
      BSON.serialize({ id: 0n, firstBatch: {} }),
      BSON.serialize({}),
    ]) {
      for (const f of [() => b2j.cursorBatch(bad), () => b2j.cursorBatch({ cursor: bad }), () => b2j.toJSONList({ cursor: bad })]) {
        expect(f).toThrow(expect.objectContaining({ name: 'TranscodeError', code: 'BSON_NOT_A_CURSOR', offset: 0 }))
      }
    }
    return expect(b2j.toNDJSONAsync({ cursor: whole })).rejects.toMatchObject({ code: 'BSON_NOT_A_CURSOR' })
  })

  it('views on a SharedArrayBuffer another thread writes: a snapshot, never a crash', async () => {
    const sab = new SharedArrayBuffer(docA.length + docB.length)
    const v = new Uint8Array(sab)
    v.set(docA)
    v.set(docB, docA.length)
    const stop = new Int32Array(new SharedArrayBuffer(4))
    const worker = new Worker(
      `const { workerData: [sab, stop, n] } = require('node:worker_threads'); const v = new Uint8Array(sab);
       let x = 0; while (Atomics.load(stop, 0) === 0) { const i = 4 + (x * 7919) % (v.length - 8); if (i < n - 1 || i > n + 3) v[i] = x & 0xff; x++ }`,
      { eval: true, workerData: [sab, stop, docA.length] },
    )
    try {
      const a = v.subarray(0, docA.length)
      for (let i = 0; i < ROUNDS * 5; i++) {
        refresh()
        for (const f of [
          () => JSON.parse(b2j.toJSON(a, { utf8: 'replace' })),
          () => JSON.parse(b2j.toJSONArray([a, a])),
          () => b2j.toNDJSON(v, { dialect: 'relaxed' }),
        ]) {
          try {
            f()
          } catch (e) {
            if (!isExpectedError(e)) throw e
          }
        }
        try {
          await b2j.toJSONListAsync([a])
        } catch (e) {
          if (!isExpectedError(e)) throw e
        }
      }
    } finally {
      Atomics.store(stop, 0, 1)
      await worker.terminate()
    }
  })

  it('the transcode stream: chunks detached after write', async () => {
    for (let i = 0; i < ROUNDS / 4; i++) {
      refresh()
      const s = b2j.createTranscodeStream()
      const out: Buffer[] = []
      s.on('data', (c: Buffer) => out.push(c))
      const done = new Promise<void>((res, rej) => {
        s.on('end', res)
        s.on('error', rej)
      })
      const chunks = [own(docA), own(docB)]
      for (const c of chunks) {
        s.write(c)
        takeAway(c)
      }
      s.end()
      try {
        await done
        const lines = Buffer.concat(out).toString().trimEnd().split('\n').filter(Boolean)
        for (const l of lines) JSON.parse(l)
      } catch (e) {
        if (!isExpectedError(e)) throw e
      }
    }
  })
})

afterAll(() => {
  globalThis.RegExp = OriginalRegExp
})

describe('the typed protocol', () => {
  const pack = native.packOptions
  it("the addon's BatchLayout numbers, and the addon rejects an unknown layout", () => {
    expect({ ...binding.BatchLayout }).toEqual({ Array: 0, NdjsonBuffer: 1, List: 2, NdjsonString: 3, Joined: 4 })
    refresh()
    expect(() => binding.transcodeBatch([docC], 9, pack(0, 1000), 1 << 28, 1)).toThrow()
    expect(binding.transcodeBatch([docC], binding.BatchLayout.Array, pack(0, 1000), 1 << 28, 1)).toBe(`[${jsonC}]`)
  })

  it('the single-document calls take (bson[, packed[, maxOutputBytes[, shaper]]]), nothing else', () => {
    const d = BSON.serialize({ a: 1.5, n: { m: 1 } })
    const outcome = (f: () => unknown) => {
      try {
        return f()
      } catch (e: any) {
        return `${e.name}: ${e.code}`
      }
    }
    expect(outcome(() => binding.transcode(d))).toBe('{"a":1.5,"n":{"m":1}}')
    expect(outcome(() => binding.transcode(d, pack(1, 5)))).toBe('{"a":1.5,"n":{"m":1}}')
    expect(outcome(() => binding.transcode(d, pack(1, 5), 1e6))).toBe(outcome(() => binding.transcode(d, pack(1, 5))))
    // the removed 4-argument form (flags, maxDepth, maxOutputBytes): the 4th is not a Shaper
    expect(() => binding.transcode(d, 1, 5, 1e6)).toThrow(/^bson2json: shaper must be a Shaper$/)
    expect(() => binding.transcodeBuffer(d, 1, 5, {})).toThrow(TypeError)
    expect(() => binding.transcodeInto(d, 1, 1e6, Buffer.alloc(64), 0, Object.create(binding.Shaper.prototype))).toThrow(TypeError)
  })

  it('every call decodes the one options pair (packed, maxOutputBytes) alike, and refuses a pair it cannot decode', () => {
    // nested 3 deep (the document, `n`, `m`), with a string of 40 bytes
    const d = Buffer.from(BSON.serialize({ n: { m: { s: 'x'.repeat(40) } } }))
    const events = (docs: Uint8Array[]) => BSON.serialize({ id: 0n, ns: 'd.c', nextBatch: docs.map((x) => ({ _id: { _data: 'AA' }, operationType: 'insert', fullDocument: BSON.deserialize(x) })) })
    const cursor = BSON.serialize({ id: 0n, ns: 'd.c', nextBatch: [BSON.deserialize(d)] })
    const calls: [string, (packed: number, max: number) => unknown][] = [
      ['transcode', (p, m) => binding.transcode(d, p, m)],
      ['transcodeBuffer', (p, m) => binding.transcodeBuffer(d, p, m)],
      ['transcodeInto', (p, m) => binding.transcodeInto(d, p, m, Buffer.alloc(16), 0)],
      ['transcodeBatch', (p, m) => binding.transcodeBatch([d], binding.BatchLayout.List, p, m, 1)],
      ['transcodeBatch (concatenated)', (p, m) => binding.transcodeBatch(d, binding.BatchLayout.List, p, m, 1)],
      ['transcodeBatchViews', (p, m) => binding.transcodeBatchViews([d.buffer], new Uint32Array([0, d.byteOffset, d.length]), 1, binding.BatchLayout.List, p, m, 1)],
      ['transcodeCursor', (p, m) => binding.transcodeCursor(cursor, binding.BatchLayout.List, p, m).docs],
      ['transcodeChangeBatchPacked', (p, m) => native.transcodeChangeBatch(events([d]), native.EventFormat.Parts, { packed: p, maxOutputBytes: m }).events[0].fullDocument],
      ['transcodeChangeBatchPacked (a record)', (p, m) => native.transcodeChangeBatch(events([d]), native.EventFormat.RecordFullDocument, { packed: p, maxOutputBytes: m }).events[0].value],
    ]
    const outcome = (f: () => unknown) => {
      try {
        const r = f()
        return typeof r === 'string' || Array.isArray(r) ? 'ok' : ArrayBuffer.isView(r) || typeof r === 'number' ? 'ok' : String(r)
      } catch (e: any) {
        return e.code ?? e.message
      }
    }
    const cases: [number, number, string][] = [
      [pack(0, 1000), 1 << 28, 'ok'],
      [pack(binding.OptionFlag.Relaxed, 1000), 1 << 28, 'ok'],
      // the depth and the output cap reach every call
      [pack(0, 2), 1 << 28, 'BSON_TOO_DEEP'],
      [pack(binding.OptionFlag.Canonical, 2), 1 << 28, 'BSON_TOO_DEEP'],
      [pack(0, 1000), 20, 'BSON_OUTPUT_TOO_LARGE'],
      // pairs no resolved options make: an unknown flag bit, two dialects, a fraction, out of range
      [pack(1 << 15, 1000), 1 << 28, 'InvalidArg'],
      [pack(3, 1000), 1 << 28, 'InvalidArg'],
      [pack(0, 1000) + 0.5, 1 << 28, 'InvalidArg'],
      [-1, 1 << 28, 'InvalidArg'],
      [pack(0, 2 ** 32), 1 << 28, 'InvalidArg'],
      [pack(0, 1000), 2 ** 32, 'InvalidArg'],
      [pack(0, 1000), -1, 'InvalidArg'],
      [pack(0, 1000), NaN, 'InvalidArg'],
    ]
    for (const [packed, max, want] of cases) {
      for (const [name, call] of calls) {
        expect(outcome(() => call(packed, max)), `${name}(${packed}, ${max})`).toBe(want)
      }
    }
    // the rows' calls decode the same pair (their nested values follow the rows' own limits)
    const rows: [string, (packed: number, max: number) => unknown][] = [
      ['transcodeRow', (p, m) => binding.transcodeRow(d, p, m, 0)],
      ['transcodeRows', (p, m) => binding.transcodeRows([d], p, m, 0, false)],
    ]
    for (const [packed, max, want] of cases.filter(([, , w]) => w === 'InvalidArg' || w === 'ok')) {
      for (const [name, call] of rows) {
        expect(outcome(() => call(packed, max)), `${name}(${packed}, ${max})`).toBe(want)
      }
    }
  })

  it("each option sets the addon's OptionFlag bit (lib/options.js reads the enum, copies no number)", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { resolveOptions } = require('../../lib/options')
    const F = binding.OptionFlag
    const cases: [object, number][] = [
      [{ dialect: 'relaxed' }, F.Relaxed],
      [{ dialect: 'canonical' }, F.Canonical],
      [{ utf8: 'replace' }, F.Utf8Replace],
      [{ bsonVersion: 6 }, F.Bson6],
      [{ promoteLongs: false }, F.Longs],
      [{ promoteBuffers: true }, F.Buffers],
      [{ bsonRegExp: true }, F.BsonRegExp],
      [{ promoteValues: false }, F.NoPromote],
    ]
    expect(cases.map(([o]) => resolveOptions(o).flags)).toEqual(cases.map(([, f]) => f))
    expect(new Set(cases.map(([, f]) => f)).size).toBe(Object.keys(F).length)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const src = require('node:fs').readFileSync(require.resolve('../../lib/options'), 'utf8')
    expect(src).not.toMatch(/FLAG_\w+ = \d/)
  })
})

describe('watch(): a hostile pipeline, hostile options, a RegExp that runs mid-batch', () => {
  // The pipeline and the options are read by JavaScript before the first command (a getter that
  // throws propagates from watch(); a changing getter is read once); the raw replies are copied
  // before the regex check runs JavaScript. Never a crash; events equal the driver's.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startTestServer } = require('../../tools/test-server')
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { MongoClient } = require('mongodb')
  let server: any
  let client: any
  let coll: any
  let T0: any
  const N = 40
  const setup = async () => {
    if (client) return
    server = await startTestServer()
    client = await MongoClient.connect(server.uri)
    coll = client.db('reentry').collection('w')
    const s = client.startSession()
    await coll.db.command({ ping: 1 }, { session: s })
    T0 = s.operationTime
    await s.endSession()
    await coll.insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, r: new RegExp(`w${serial++}x${i}`, 'i'), s: big.slice(0, 1000 + i) })))
  }
  afterAll(async () => {
    if (client) await client.close()
    if (server) await server.close()
  })
  const drain = async (pipeline: any, options: any) => {
    const out: any[] = []
    for await (const ev of b2j.watch(coll, pipeline, { startAtOperationTime: T0, maxAwaitTimeMS: 50, batchSize: 7, ...options })) {
      out.push(ev)
      if (out.length === N) break
    }
    return out
  }

  it('getters, Proxies and valueOf in the pipeline and the options', async () => {
    await setup()
    const boom = () => {
      throw new Error('boom')
    }
    const throwingPipeline = new Proxy([{ $match: {} }], { get: (t, k) => (k === '0' ? boom() : Reflect.get(t, k)) })
    expect(() => b2j.watch(coll, throwingPipeline, { startAtOperationTime: T0 })).toThrow('boom')
    expect(() => b2j.watch(coll, [], Object.defineProperty({}, 'batchSize', { get: boom, enumerable: true }))).toThrow('boom')
    expect(() => b2j.watch(coll, [], { batchSize: { valueOf: () => (gc(), 7) } })).toThrow(/batchSize/)
    expect(() => b2j.watch(coll, [], { dialect: { toString: () => 'relaxed' } })).toThrow(/dialect/)
    expect(() => b2j.watch(coll, 'not a pipeline' as any)).toThrow(TypeError)
    let reads = 0
    const stage = {
      get $match() {
        gc()
        return reads++ === 0 ? { operationType: 'insert' } : { operationType: 'nothing' }
      },
    }
    const proxied = new Proxy([stage], {})
    const events = await drain(proxied, {})
    expect(events).toHaveLength(N)
    expect(events.map((e) => JSON.parse(e.documentKey)._id)).toEqual(Array.from({ length: N }, (_, i) => i))
  })

  it('a global RegExp that detaches the raw reply being transcoded', async () => {
    await setup()
    // The driver's raw replies, caught on their way to the change stream. Each is moved into a
    // buffer of its own: the driver's come from Node's Buffer pool, which Node 24 does not let
    // JavaScript detach (DataCloneError) and Node 22 does (detaching the whole pool).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Db } = require('mongodb')
    const command = Db.prototype.command
    let reply: Uint8Array | null = null
    Db.prototype.command = async function (...a: any[]) {
      const r = await command.apply(this, a)
      if (r && r.cursor instanceof Uint8Array) {
        r.cursor = own(r.cursor)
        reply = r.cursor
      }
      return r
    }
    let fired = 0
    let detached = 0
    globalThis.RegExp = function (p: string, f: string) {
      fired++
      if (reply && reply.byteLength) {
        takeAway(reply)
        detached++
      }
      return new OriginalRegExp(p, f)
    } as any
    let events: any[]
    try {
      events = await drain([], { whole: true })
    } finally {
      globalThis.RegExp = OriginalRegExp
      Db.prototype.command = command
    }
    expect(fired).toBeGreaterThan(0)
    expect(detached).toBeGreaterThan(0)
    expect(events).toHaveLength(N)
    for (const [i, e] of events.entries()) {
      const j = JSON.parse(e.json)
      expect(j.fullDocument._id).toBe(i)
      expect(j.fullDocument.s).toBe(big.slice(0, 1000 + i))
    }
  })
})
