/**
 * Differential test of the `compat` dialect against the oracle
 * `JSON.stringify(BSON.deserialize(buf))` (js-bson 7, default options).
 *
 * BSON2JSON_SEED=<n> varies the seed (default fixed). BSON2JSON_DOCS=<n> changes the count (and caps
 * the 20,000 documents of the utf8 'replace' test).
 */
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { testCount } from '../support/scale'
import { BSON, Double } from 'bson'
import { Gen, bstr, doc, el, hex, i32, mulberry32, mutate } from '../support/gen'
import type { Elem } from '../support/gen'

const require = createRequire(import.meta.url)
const { toJSON, isTranscodeError } = require('../../index.js')

const SEED = Number(process.env.BSON2JSON_SEED ?? 20261122) >>> 0
const DOCS = testCount('BSON2JSON_DOCS', 100_000)
// BSON2JSON_NO_SCOPE_DBREF=1: exploration only, skips DBRef-shaped code-w-scope scopes (known mismatch, see
// the 'code-w-scope scope is not DBRef-promoted' test below) to look for other mismatches.
const GEN_OPTS = { scopeDbref: !process.env.BSON2JSON_NO_SCOPE_DBREF }
const MUTANTS = testCount('BSON2JSON_MUTANTS', 20_000)

type Outcome = { ok: true; out: string } | { ok: false; err: unknown }

function oracle(buf: Uint8Array): Outcome {
  try {
    return { ok: true, out: JSON.stringify(BSON.deserialize(buf)) }
  } catch (err) {
    return { ok: false, err }
  }
}
function ours(buf: Uint8Array): Outcome {
  try {
    return { ok: true, out: toJSON(buf) }
  } catch (err) {
    return { ok: false, err }
  }
}

type Stats = { compared: number; bothThrow: number; bothOk: number; failures: string[]; failCount: number; badErrors: number }

function compare(buf: Uint8Array, st: Stats) {
  st.compared++
  const o = oracle(buf)
  const u = ours(buf)
  let problem: string | null = null
  if (o.ok && u.ok) {
    if (o.out !== u.out) problem = `expected ${o.out}\n   actual   ${u.out}`
    else {
      try {
        JSON.parse(u.out)
        st.bothOk++
      } catch {
        problem = `JSON.parse rejected output ${u.out}`
      }
    }
  } else if (!o.ok && !u.ok) {
    st.bothThrow++
    if (!isTranscodeError(u.err) && !(u.err instanceof SyntaxError)) {
      st.badErrors++
      problem = `our error is neither a TranscodeError nor SyntaxError: ${String(u.err)}`
    }
  } else if (o.ok) {
    problem = `js-bson OK ${o.out}\n   ours threw ${String((u as any).err)} code=${(u as any).err?.code}`
  } else {
    problem = `js-bson threw ${String((o as any).err)}\n   ours OK ${(u as any).out}`
  }
  if (problem) {
    st.failCount++
    if (st.failures.length < 5) st.failures.push(`hex ${hex(buf)}\n   ${problem}`)
  }
}

function newStats(): Stats {
  return { compared: 0, bothThrow: 0, bothOk: 0, failures: [], failCount: 0, badErrors: 0 }
}

function report(name: string, st: Stats) {
  console.log(
    `[compat ${name}] seed=${SEED} compared=${st.compared} bothOk=${st.bothOk} bothThrow=${st.bothThrow} mismatches=${st.failCount}`,
  )
  if (st.failures.length) console.log(`[compat ${name}] first failures:\n` + st.failures.join('\n'))
}

describe('compat dialect vs js-bson (generated)', () => {
  const corpus: Uint8Array[] = []

  it(`${DOCS} generated documents are byte-identical / throw-identical`, () => {
    const g = new Gen(SEED, GEN_OPTS)
    const st = newStats()
    const featCount = new Map<string, number>()
    const t0 = Date.now()
    for (let i = 0; i < DOCS; i++) {
      const buf = g.root()
      for (const f of g.feat) featCount.set(f, (featCount.get(f) ?? 0) + 1)
      if (i % 5 === 0) corpus.push(buf)
      compare(buf, st)
    }
    report('generated', st)
    const feats = [...featCount.entries()].sort().map(([k, v]) => `${k}=${((100 * v) / DOCS).toFixed(1)}%`)
    console.log(`[compat generated] feature frequency per doc: ${feats.join(' ')} (${Date.now() - t0} ms)`)
    expect(st.compared).toBe(DOCS)
    // the generator must actually produce successes and throws
    expect(st.bothOk).toBeGreaterThan(DOCS / 2)
    expect(st.failures, st.failures.join('\n')).toEqual([])
  }, 600_000) // CPU-bound: CI runs it beside other lanes on 2 cores

  it(`${MUTANTS} byte mutants keep throw parity and identical outputs`, () => {
    const r = mulberry32(SEED ^ 0x9e3779b9)
    const st = newStats()
    if (corpus.length === 0) {
      const g = new Gen(SEED, GEN_OPTS)
      for (let i = 0; i < 2000; i++) corpus.push(g.root())
    }
    for (let i = 0; i < MUTANTS; i++) {
      compare(mutate(r, corpus[r.int(corpus.length)]), st)
    }
    report('mutants', st)
    expect(st.compared).toBe(MUTANTS)
    expect(st.bothThrow).toBeGreaterThan(0)
    expect(st.failures, st.failures.join('\n')).toEqual([])
  })
})

describe('compat: named regressions (minimal repros)', () => {
  const cases: [string, string][] = [
    // js-bson 7.3.4 never DBRef-promotes the scope document of a code-w-scope itself (deserializer.ts: the
    // CODE_W_SCOPE frame ends in `new Code(functionString, holdingDocument)` with no toPotentialDbRef), although
    // documents nested inside the scope are promoted. compat-semantics.md section 4 says the opposite.
    // {c: Code('x', {$id: 1, $ref: 'c'})} -> js-bson {"c":{"code":"x","scope":{"$id":1,"$ref":"c"}}}
    ['code-w-scope scope is not DBRef-promoted (key order kept)', '2c0000000f6300240000000200000078001a0000001024696400010000000224726566000200000063000000'],
    // {c: Code('x', {$ref: 'a.b', $id: 1})} -> js-bson {"c":{"code":"x","scope":{"$ref":"a.b","$id":1}}}
    ['code-w-scope scope is not DBRef-promoted (dotted $ref kept)', '2e0000000f6300260000000200000078001c00000002247265660004000000612e62001024696400010000000000'],
    // but a DBRef-shaped document nested inside a scope IS promoted: {c: Code('x', {d: {$id: 1, $ref: 'a.b'}})}
    ['DBRef nested inside a code-w-scope scope is promoted', ''],
  ]
  for (const [name, h] of cases) {
    it(name, () => {
      let buf: Buffer
      if (h) buf = Buffer.from(h, 'hex')
      else {
        // built here to keep the hex honest
        const inner = Buffer.from('1c0000001024696400010000000224726566000400000061 2e6200 00'.replace(/ /g, ''), 'hex')
        const scope = Buffer.concat([Buffer.from([0, 0, 0, 0, 0x03, 0x64, 0x00]), inner, Buffer.from([0])])
        scope.writeInt32LE(scope.length)
        const code = Buffer.from('0200000078 00'.replace(/ /g, ''), 'hex')
        const cws = Buffer.concat([Buffer.alloc(4), code, scope])
        cws.writeInt32LE(cws.length)
        buf = Buffer.concat([Buffer.alloc(4), Buffer.from([0x0f, 0x63, 0x00]), cws, Buffer.from([0])])
        buf.writeInt32LE(buf.length)
      }
      const expected = JSON.stringify(BSON.deserialize(buf))
      expect(toJSON(buf), `hex ${buf.toString('hex')}`).toBe(expected)
    })
  }
})

describe('compat: targeted passes', () => {
  it("utf8: 'replace' on documents with frequent invalid UTF-8 equals js-bson {validation: {utf8: false}}", () => {
    const g = new Gen(SEED ^ 0x2545f491, { badStringRate: 0.08, ...GEN_OPTS })
    const N = Math.min(20_000, DOCS)
    const fails: string[] = []
    let bothOk = 0
    let bothThrow = 0
    for (let i = 0; i < N; i++) {
      const buf = g.root()
      let o: string | null = null
      let u: string | null = null
      try {
        o = JSON.stringify(BSON.deserialize(buf, { validation: { utf8: false } }))
      } catch {}
      try {
        u = toJSON(buf, { utf8: 'replace' })
      } catch {}
      if (o === null && u === null) bothThrow++
      else if (o === u) bothOk++
      else if (fails.length < 5) fails.push(`hex ${hex(buf)}\n   expected ${o}\n   actual   ${u}`)
    }
    console.log(`[compat utf8 replace] docs=${N} bothOk=${bothOk} bothThrow=${bothThrow} mismatches=${N - bothOk - bothThrow}`)
    expect(fails, fails.join('\n')).toEqual([])
  })

  it('doubles: 300,000 values (random bits, short decimals, every power of ten and its neighbours) print as V8 does', () => {
    const r = mulberry32(SEED ^ 0x2f6b9c1d)
    const values: number[] = []
    const f = new Float64Array(1)
    const u = new Uint32Array(f.buffer)
    for (let i = 0; i < 100_000; i++) {
      u[0] = r.next() * 2 ** 32
      u[1] = r.next() * 2 ** 32
      values.push(f[0]) // any bits: subnormals, NaN payloads, ±Infinity, ±0
      values.push(Math.round(r.next() * 10 ** r.int(12)) / 10 ** r.int(8)) // decimals, 1-17 digits
      values.push((r.next() - 0.5) * 10 ** (r.int(60) - 30))
    }
    for (let e = -324; e <= 308; e++) {
      const p = Number(`1e${e}`)
      values.push(p, -p, p * (1 + Number.EPSILON), p * (1 - Number.EPSILON / 2), 1.5 * p, (10 - 8 * Number.EPSILON) * p)
    }
    const fails: string[] = []
    for (let i = 0; i < values.length; i += 1000) {
      const chunk = values.slice(i, i + 1000)
      const d = BSON.serialize({ v: chunk.map((x) => new Double(x)) })
      const want = JSON.stringify(BSON.deserialize(d))
      const got = toJSON(d)
      if (got !== want) {
        const w = JSON.parse(want).v
        const g = JSON.parse(got).v
        const k = w.findIndex((x: unknown, j: number) => JSON.stringify(x) !== JSON.stringify(g[j]))
        if (fails.length < 5) fails.push(`value ${chunk[k]}: want ${JSON.stringify(w[k])} got ${JSON.stringify(g[k])}`)
      }
    }
    expect(values.length).toBeGreaterThan(300_000)
    expect(fails, fails.join('\n')).toEqual([])
  })

  it('long strings and keys over every character class (SWAR / Latin-1 / UTF-16 hand-off boundaries)', () => {
    const r = mulberry32(SEED ^ 0x68e31da4)
    const classes: string[][] = [
      ['a', 'b', 'Z', '0', ' ', '~'],
      ['\u00e9', '\u00ff', '\u0080', '\u00a0', 'a'],
      ['\u0100', '\u2606', '\u4e2d', '\u2028', '\uffff', 'a'],
      ['\ud83d\ude00', '\u{10ffff}', 'a', '\u00e9'],
      ['"', '\\', '\n', '\u0000', '\u001f', '\u007f', '/', 'a'],
    ]
    const fails: string[] = []
    let n = 0
    for (let len = 0; len < 300; len++) {
      for (let rep = 0; rep < 8; rep++) {
        const mix = classes.filter(() => r.chance(0.5))
        const pool = mix.length ? mix.flat() : classes[0]
        let s = ''
        for (let i = 0; i < len; i++) s += r.chance(0.9) ? 'x' : pool[r.int(pool.length)]
        if (rep & 1) s = [...s].map(() => pool[r.int(pool.length)]).join('')
        const key = s.split('\u0000').join('')
        const d = BSON.serialize({ [key || 'k']: s, a: [s, s.slice(1)], n: 1 })
        n++
        const o = JSON.stringify(BSON.deserialize(d))
        let u: string
        try {
          u = toJSON(d)
        } catch (e) {
          u = `THROW ${e}`
        }
        if (o !== u && fails.length < 5) fails.push(`len ${len} hex ${hex(d)}\n   expected ${o}\n   actual   ${u}`)
        const ub = require('../../index.js').toJSONBuffer(d)
        if (!ub.equals(Buffer.from(o)) && fails.length < 5) fails.push(`toJSONBuffer len ${len} hex ${hex(d)}`)
      }
    }
    console.log(`[compat long strings] docs=${n}`)
    expect(fails, fails.join('\n')).toEqual([])
  })
})

describe('compat: wide documents', () => {
  it('many keys with duplicates, index keys and undefined (dedupe/ordering at scale)', () => {
    const r = mulberry32(SEED ^ 0x1b873593)
    const fails: string[] = []
    let n = 0
    for (const width of [8, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 1000, 3000]) {
      for (let rep = 0; rep < 6; rep++) {
        const pool = Math.max(2, Math.floor(width * [0.3, 0.9, 2][rep % 3]))
        const elems: Elem[] = []
        const dbref = rep >= 3
        if (dbref) elems.push(el(0x02, '$ref', bstr('db.c')), el(0x10, '$id', i32(1)))
        for (let i = 0; i < width; i++) {
          const k = r.chance(0.2) ? String(r.int(pool)) : r.chance(0.05) ? '__proto__' : `k${r.int(pool)}`
          const t = r.int(10)
          if (t === 0) elems.push(el(0x06, k, []))
          else if (t === 1) elems.push(el(0x02, k, bstr('v' + i)))
          else elems.push(el(0x10, k, i32(i)))
        }
        const buf = Uint8Array.from(doc(elems))
        n++
        const o = JSON.stringify(BSON.deserialize(buf))
        let u: string
        try {
          u = toJSON(buf)
        } catch (e) {
          u = `THROW ${e}`
        }
        if (o !== u && fails.length < 3) fails.push(`width ${width} rep ${rep} hex ${hex(buf)}\n   expected ${o}\n   actual   ${u}`)
      }
    }
    console.log(`[compat wide] docs=${n}`)
    expect(fails, fails.join('\n')).toEqual([])
  })
})
