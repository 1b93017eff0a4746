/**
 * Differential test of `projection` and `redact` (issue 32). The reference is written here from
 * MongoDB's documented projection rules (a `find` projection: inclusion or exclusion, dotted
 * paths through embedded documents and arrays of documents; an inclusion path through an array
 * keeps the matching fields of each embedded document and drops every other element, an
 * exclusion path removes the field from each embedded document and keeps every other element;
 * arrays nested in such an array are followed the same way, as `find` does;
 * a path through a scalar drops the field under inclusion and keeps it under exclusion; `_id`
 * kept unless `_id: 0`) and applied to js-bson's deserialized document:
 *
 * - `compat`: `toJSON(buf, { projection, redact })` === `JSON.stringify(reference(BSON.deserialize(buf)))`;
 * - `relaxed` / `canonical`: the reference applied to the whole document's Extended JSON read as
 *   plain JSON (a BSON value is an object with `$` keys) equals the projected output, parsed
 *   (EJSON.parse → EJSON.stringify is not a faithful round trip: undefined, DBPointer and
 *   out-of-range dates change, so it cannot be the oracle);
 * - redaction with HMAC-SHA256: each redacted value is node:crypto's `createHmac('sha256', key)`
 *   over the value's canonical bytes (type byte + value bytes), read from the input by a small
 *   walker here.
 *
 * Generated documents have unique keys (with duplicate keys the projection applies to each
 * element before js-bson keeps the last one; see docs/projection.md) and every BSON type as leaves.
 * BSON2JSON_SEED=<n> varies the seed; BSON2JSON_PROJECTION_DOCS=<n> the count (default 100,000).
 */
import { createHmac } from 'node:crypto'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { testCount } from '../support/scale'
import { BSON } from 'bson'
import { Gen, bstr, doc, el, i64, utf8 } from '../support/gen'
import type { Elem, Rng } from '../support/gen'

const require = createRequire(import.meta.url)
const { toJSON, toNDJSON, toJSONList } = require('../../index.js')

const SEED = Number(process.env.BSON2JSON_SEED ?? 20261127) >>> 0
const DOCS = testCount('BSON2JSON_PROJECTION_DOCS', 100_000)
const EJSON_EVERY = 5 // relaxed and canonical on every 5th document

const KEYS = ['a', 'b', 'c', 'd', 'x', 'name', '_id']

class DocGen {
  g: Gen
  r: Rng
  constructor(seed: number) {
    // maxDepth 0: the leaves never nest; nesting is built here with projection-friendly keys.
    this.g = new Gen(seed, { maxDepth: 0, badStringRate: 0, scopeDbref: false })
    this.r = this.g.r
  }
  keys(n: number): string[] {
    const pool = [...KEYS]
    const out: string[] = []
    for (let i = 0; i < n && pool.length > 0; i++) out.push(pool.splice(this.r.int(pool.length), 1)[0])
    return out
  }
  value(key: number[], depth: number): Elem {
    const x = this.r.next()
    if (depth < 4 && x < 0.22) return el(0x03, key, this.document(depth + 1))
    if (depth < 4 && x < 0.4) return el(0x04, key, this.array(depth + 1))
    return this.g.valueElem0(key, 0)
  }
  document(depth: number): number[] {
    return doc(this.keys(this.r.int(depth === 0 ? 7 : 5)).map((k) => this.value(utf8(k), depth)))
  }
  array(depth: number): number[] {
    const n = this.r.int(5)
    const elems: Elem[] = []
    for (let i = 0; i < n; i++) {
      const x = this.r.next()
      const k = utf8(String(i))
      if (x < 0.5 && depth < 5) elems.push(el(0x03, k, this.document(depth + 1)))
      else if (x < 0.6 && depth < 5) elems.push(el(0x04, k, this.array(depth + 1)))
      else elems.push(this.g.valueElem0(k, 0))
    }
    return doc(elems)
  }
  root(): Uint8Array {
    return Uint8Array.from(this.document(0))
  }
  /** 1-3 paths of 1-3 components, none a prefix of another. */
  paths(max = 3): string[] {
    const out: string[] = []
    const n = 1 + this.r.int(max)
    for (let tries = 0; out.length < n && tries < 20; tries++) {
      const len = 1 + this.r.int(3)
      const p: string[] = []
      for (let i = 0; i < len; i++) p.push(this.r.pick(KEYS.filter((k) => k !== '_id' || i > 0)))
      const s = p.join('.')
      if (out.some((o) => o === s || o.startsWith(s + '.') || s.startsWith(o + '.'))) continue
      out.push(s)
    }
    return out
  }
  projection(): Record<string, number | boolean> {
    const inclusion = this.r.chance(0.5)
    const spec: Record<string, number | boolean> = {}
    for (const p of this.paths()) spec[p] = inclusion ? this.r.pick([1, true, 5, -1]) : this.r.pick([0, false])
    const id = this.r.next()
    if (id < 0.2) spec._id = this.r.pick([0, false])
    else if (id < 0.3 && inclusion) spec._id = 1
    return spec
  }
}

// ---- the reference ---------------------------------------------------------------------------

type Trie = { leaf: boolean; kids: Map<string, Trie> }
function trie(paths: string[]): Trie {
  const root: Trie = { leaf: false, kids: new Map() }
  for (const p of paths) {
    let n = root
    for (const c of p.split('.')) {
      if (!n.kids.has(c)) n.kids.set(c, { leaf: false, kids: new Map() })
      n = n.kids.get(c)!
    }
    n.leaf = true
  }
  return root
}

/** An embedded document as js-bson returns it (a plain object; BSON values are class instances). */
function isJsDoc(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype
}

/** An embedded document in Extended JSON parsed as plain JSON (BSON values have `$` keys). */
function isEjsonDoc(v: unknown): v is Record<string, unknown> {
  return isJsDoc(v) && !Object.keys(v).some((k) => k.startsWith('$'))
}

const MISSING = Symbol('missing')

function refProject(obj: Record<string, unknown>, spec: Record<string, number | boolean>, isDoc = isJsDoc): Record<string, unknown> {
  const entries = Object.entries(spec)
  if (entries.length === 0) return obj
  const nonId = entries.filter(([k]) => k !== '_id')
  const inclusion = nonId.length > 0 ? Boolean(nonId[0][1]) : Boolean(spec._id)
  const dropId = inclusion && spec._id !== undefined && !spec._id
  const paths = entries.filter(([k, v]) => k !== '_id' || Boolean(v) === inclusion).map(([k]) => k)
  const root = trie(paths)
  const value = (v: unknown, n: Trie): unknown => {
    if (isDoc(v)) return docOf(v, n, false)
    // Arrays in arrays are followed the same way (find's rule; aggregation's $project does not).
    if (Array.isArray(v)) return v.map((e) => (isDoc(e) || Array.isArray(e) ? value(e, n) : inclusion ? MISSING : e)).filter((e) => e !== MISSING)
    return inclusion ? MISSING : v
  }
  const docOf = (o: Record<string, unknown>, n: Trie, top: boolean): Record<string, unknown> => {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(o)) {
      const c = n.kids.get(k)
      if (c === undefined) {
        if (!inclusion || (top && k === '_id' && !dropId)) out[k] = o[k]
      } else if (c.leaf) {
        if (inclusion) out[k] = o[k]
      } else {
        const v = value(o[k], c)
        if (v !== MISSING) out[k] = v
      }
    }
    return out
  }
  return docOf(obj, root, true)
}

/** Redaction on a js-bson document: `replace(path, value, rawAt)` gives the new value. */
function refRedact(obj: Record<string, unknown>, paths: string[], replace: () => unknown, isDoc = isJsDoc): Record<string, unknown> {
  const value = (v: unknown, n: Trie): unknown => {
    if (isDoc(v)) return docOf(v, n)
    if (Array.isArray(v)) return v.map((e) => value(e, n))
    return v
  }
  const docOf = (o: Record<string, unknown>, n: Trie): Record<string, unknown> => {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(o)) {
      const c = n.kids.get(k)
      out[k] = c === undefined ? o[k] : c.leaf ? replace() : value(o[k], c)
    }
    return out
  }
  return docOf(obj, trie(paths))
}

// ---- a raw walker, for the canonical bytes HMAC covers ---------------------------------------

type Raw = { key: string; type: number; vs: number; ve: number }
function rawElems(buf: Uint8Array, at: number): Raw[] {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  const end = at + dv.getInt32(at, true) - 1
  const out: Raw[] = []
  let p = at + 4
  while (p < end) {
    const type = buf[p]
    let k = p + 1
    while (buf[k] !== 0) k++
    const key = Buffer.from(buf.subarray(p + 1, k)).toString('utf8')
    const vs = k + 1
    let len: number
    switch (type) {
      case 0x01: case 0x09: case 0x11: case 0x12: len = 8; break
      case 0x02: case 0x0d: case 0x0e: len = 4 + dv.getInt32(vs, true); break
      case 0x03: case 0x04: case 0x0f: len = dv.getInt32(vs, true); break
      case 0x05: len = 5 + dv.getInt32(vs, true); break
      case 0x06: case 0x0a: case 0x7f: case 0xff: len = 0; break
      case 0x07: len = 12; break
      case 0x08: len = 1; break
      case 0x0b: { let q = vs; while (buf[q] !== 0) q++; q++; while (buf[q] !== 0) q++; len = q + 1 - vs; break }
      case 0x0c: len = 4 + dv.getInt32(vs, true) + 12; break
      case 0x10: len = 4; break
      case 0x13: len = 16; break
      default: throw new Error(`type ${type}`)
    }
    out.push({ key, type, vs, ve: vs + len })
    p = vs + len
  }
  return out
}

/** Expected redaction with HMAC: the js-bson document with each redacted value's hex HMAC. */
function refHmac(obj: Record<string, unknown>, buf: Uint8Array, paths: string[], key: Buffer): Record<string, unknown> {
  const mac = (r: Raw) => createHmac('sha256', key).update(Buffer.concat([Buffer.from([r.type]), buf.subarray(r.vs, r.ve)])).digest('hex')
  const docOf = (o: Record<string, unknown>, at: number, n: Trie): Record<string, unknown> => {
    const raws = new Map(rawElems(buf, at).map((r) => [r.key, r]))
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(o)) {
      const c = n.kids.get(k)
      const r = raws.get(k)!
      if (c === undefined) out[k] = o[k]
      else if (c.leaf) out[k] = mac(r)
      else if (r.type === 0x03) out[k] = docOf(o[k] as Record<string, unknown>, r.vs, c)
      else if (r.type === 0x04) out[k] = arrayOf(o[k] as unknown[], r.vs, c)
      else out[k] = o[k]
    }
    return out
  }
  const arrayOf = (a: unknown[], at: number, n: Trie): unknown[] => {
    const items = rawElems(buf, at)
    return a.map((e, i) =>
      items[i].type === 0x03 ? docOf(e as Record<string, unknown>, items[i].vs, n) : items[i].type === 0x04 ? arrayOf(e as unknown[], items[i].vs, n) : e,
    )
  }
  return docOf(obj, 0, trie(paths))
}

function jsbson(buf: Uint8Array): Record<string, unknown> | undefined {
  try {
    return BSON.deserialize(buf)
  } catch {
    return undefined // js-bson rejects it (a regex V8 refuses, ...): not a projection case
  }
}

// The options need the native addon; the JavaScript fallback refuses them (last test).
describe('projection and redaction, differential against a reference from MongoDB rules', () => {
  it(`compat: ${DOCS} generated documents and projections (relaxed and canonical on every ${EJSON_EVERY}th)`, () => {
    const g = new DocGen(SEED)
    let compared = 0
    let ejsonCompared = 0
    let nonEmptyArrays = 0
    for (let i = 0; i < DOCS; i++) {
      const buf = g.root()
      const spec = g.projection()
      const redact = g.r.chance(0.3) ? g.paths(2) : undefined
      const obj = jsbson(buf)
      if (obj === undefined) continue
      let ref = refProject(obj, spec)
      if (redact !== undefined) ref = refRedact(ref, redact, () => null)
      const options = redact === undefined ? { projection: spec } : { projection: spec, redact: { paths: redact } }
      const got = toJSON(buf, options)
      const want = JSON.stringify(ref)
      if (got !== want) {
        expect({ doc: Buffer.from(buf).toString('hex'), options, got }).toEqual({ doc: Buffer.from(buf).toString('hex'), options, got: want })
      }
      if (/\[\{/.test(want)) nonEmptyArrays++
      compared++
      if (i % EJSON_EVERY === 0) {
        for (const dialect of ['relaxed', 'canonical'] as const) {
          let full: string
          try {
            full = toJSON(buf, { dialect })
          } catch {
            continue // Extended JSON rejects what compat accepts (a regex that is not UTF-8)
          }
          // The reference on the whole document's Extended JSON read as plain JSON: a value is
          // an object with a `$` key ({"$numberInt": "1"}), a document one without.
          let eref = refProject(JSON.parse(full), spec, isEjsonDoc)
          if (redact !== undefined) eref = refRedact(eref, redact, () => null, isEjsonDoc)
          const got = JSON.parse(toJSON(buf, { ...options, dialect }))
          if (JSON.stringify(got) !== JSON.stringify(eref)) expect({ dialect, options, got }).toEqual({ dialect, options, got: eref })
        }
        ejsonCompared++
      }
    }
    expect(compared).toBeGreaterThan(DOCS * 0.9)
    expect(ejsonCompared).toBeGreaterThan(DOCS / EJSON_EVERY / 2)
    expect(nonEmptyArrays).toBeGreaterThan(DOCS / 20) // arrays of documents are exercised
  }, 600_000) // CPU-bound: CI runs it beside other lanes on 2 cores

  it('batch calls project every document the same as toJSON', () => {
    const g = new DocGen(SEED + 1)
    for (let n = 0; n < 200; n++) {
      const docs = Array.from({ length: 1 + g.r.int(8) }, () => g.root()).filter((d) => jsbson(d) !== undefined)
      const projection = g.projection()
      const one = docs.map((d) => toJSON(d, { projection }))
      expect(toJSONList(docs, { projection })).toEqual(one)
      expect(toNDJSON(Buffer.concat(docs), { projection }).toString()).toBe(one.map((s) => s + '\n').join(''))
      const cursor = doc([el(0x12, 'id', i64(0n)), el(0x02, 'ns', bstr('d.c')), el(0x04, 'firstBatch', doc(docs.map((d, i) => el(0x03, String(i), [...d]))))])
      expect(toJSONList({ cursor: Uint8Array.from(cursor) }, { projection })).toEqual(one)
    }
    // a batch large enough to be split over threads (256 KiB of BSON per thread)
    const big: Uint8Array[] = []
    for (let bytes = 0; bytes < 1 << 20; ) {
      const d = g.root()
      if (jsbson(d) === undefined) continue
      big.push(d)
      bytes += d.length
    }
    for (let n = 0; n < 3; n++) {
      const projection = g.projection()
      const one = big.map((d) => toJSON(d, { projection }) + '\n').join('')
      expect(toNDJSON(big, { projection, threads: 2 }).toString()).toBe(one)
      expect(toNDJSON(Buffer.concat(big), { projection, threads: 2 }).toString()).toBe(one)
    }
  })

  it('redaction with HMAC-SHA256 equals createHmac over the type byte and the value bytes', () => {
    const g = new DocGen(SEED + 2)
    const key = Buffer.from('a key of any length')
    let redacted = 0
    for (let i = 0; i < 20_000; i++) {
      const buf = g.root()
      const paths = g.paths(3)
      const obj = jsbson(buf)
      if (obj === undefined) continue
      const want = JSON.stringify(refHmac(obj, buf, paths, key))
      const got = toJSON(buf, { redact: { paths, with: 'hmac-sha256', key } })
      if (got !== want) expect({ doc: Buffer.from(buf).toString('hex'), paths, got }).toEqual({ doc: Buffer.from(buf).toString('hex'), paths, got: want })
      if (/"[0-9a-f]{64}"/.test(got)) redacted++
    }
    expect(redacted).toBeGreaterThan(4000)
  })

  it('the spec is checked: operators, mixed modes, collisions, bad redact options', () => {
    const d = BSON.serialize({ a: 1 })
    expect(() => toJSON(d, { projection: { a: { $slice: 1 } } })).toThrow(/projection\['a'\].*\$slice/)
    expect(() => toJSON(d, { projection: { a: { $elemMatch: { b: 1 } } } })).toThrow(TypeError)
    expect(() => toJSON(d, { projection: { a: { $meta: 'textScore' } } })).toThrow(TypeError)
    expect(() => toJSON(d, { projection: { a: 'x' } })).toThrow(/expressions are not supported/)
    expect(() => toJSON(d, { projection: { a: 1, b: 0 } })).toThrow(/'b'.*exclusion in an inclusion/)
    expect(() => toJSON(d, { projection: { a: 1, 'a.b': 1 } })).toThrow(/'a.b'.*collision/)
    expect(() => toJSON(d, { projection: { 'a.$': 1 } })).toThrow(TypeError)
    expect(() => toJSON(d, { projection: [1] })).toThrow(TypeError)
    expect(() => toJSON(d, { redact: { paths: [] } })).toThrow(/redact.paths/)
    expect(() => toJSON(d, { redact: { paths: ['a'], with: 'hmac-sha256' } })).toThrow(/redact.key/)
    expect(() => toJSON(d, { redact: { paths: ['a'], with: 'md5' } })).toThrow(/redact.with/)
    expect(() => toJSON(d, { redact: { paths: ['a'], salt: 1 } })).toThrow(/redact.salt/)
    expect(toJSON(d, { projection: { a: 1, _id: 0 } })).toBe('{"a":1}')
    expect(toJSON(d, { projection: {} })).toBe('{"a":1}')
  })
})

describe('a fault in a shaped document is reported where it is in the input', () => {
  const api = require('../../index.js')
  const good = Buffer.from(BSON.serialize({ a: 'fine', b: 'fine' }))
  // `a` and `z` come before the fault, so the shaped document's offsets differ from the input's
  const bad = Buffer.from(BSON.serialize({ a: 'okokokok', z: 1, b: 'xx\u00e9yy', c: { d: 'x\u00e9' } }))
  const at = bad.indexOf(0xc3)
  bad[at] = 0xff
  const cat = Buffer.concat([good, bad])
  const shapes = [{ projection: { a: 0 } }, { projection: { b: 1 } }, { redact: { paths: ['a', 'z'] } }, { projection: { z: 0 }, redact: { paths: ['a'], with: 'hmac-sha256', key: Buffer.from('k') } }]
  const where = (f: () => unknown) => {
    try {
      f()
    } catch (e: any) {
      return { code: e.code, index: e.index, offset: e.offset }
    }
    return 'no error'
  }
  const whereAsync = (p: Promise<unknown>) => p.then(() => 'no error', (e: any) => ({ code: e.code, index: e.index, offset: e.offset }))
  const sync: Record<string, (o: object) => unknown> = {
    toJSON: (o) => api.toJSON(bad, o),
    toJSONBuffer: (o) => api.toJSONBuffer(bad, o),
    toJSONList: (o) => api.toJSONList([good, bad], o),
    'toNDJSON, concatenated': (o) => api.toNDJSON(cat, o),
    'toNDJSON, 2 threads': (o) => api.toNDJSON(cat, { ...o, threads: 2 }),
    'toJSONArray, array, 2 threads': (o) => api.toJSONArray([good, bad], { ...o, threads: 2 }),
  }

  it('the same code, index and offset as without the shape, in every call', async () => {
    expect(where(() => api.toJSON(bad))).toEqual({ code: 'BSON_INVALID_UTF8', index: undefined, offset: at })
    for (const [name, f] of Object.entries(sync)) {
      const plain = where(() => f({}))
      expect(plain, name).not.toBe('no error')
      for (const o of shapes) expect(where(() => f(o)), `${name} ${JSON.stringify(o)}`).toEqual(plain)
    }
    const plainAsync = await whereAsync(api.toNDJSONAsync(cat))
    expect(plainAsync).toEqual({ code: 'BSON_INVALID_UTF8', index: 1, offset: good.length + at })
    for (const o of shapes) {
      expect(await whereAsync(api.toNDJSONAsync(cat, o)), JSON.stringify(o)).toEqual(plainAsync)
      expect(await whereAsync(api.toJSONAsync(bad, o)), JSON.stringify(o)).toEqual(await whereAsync(api.toJSONAsync(bad)))
      const streamed = await new Promise((resolve) => {
        const s = api.createTranscodeStream(o)
        s.on('data', () => {})
        s.on('error', (e: any) => resolve({ code: e.code, index: e.index, offset: e.offset }))
        s.end(cat)
      })
      expect(streamed, `stream ${JSON.stringify(o)}`).toEqual(plainAsync)
    }
  })
})
