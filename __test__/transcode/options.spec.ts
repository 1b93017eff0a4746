/**
 * `compat` with js-bson's deserialize options and both js-bson majors, against the oracle
 * `JSON.stringify(BSON.deserialize(buf, opts))` of js-bson 6 (`bson6`, an npm alias) and 7 (`bson`):
 * for every option set and version, `toJSON(buf, { ...opts, bsonVersion })` is the oracle's text
 * and throws exactly where the oracle throws.
 *
 * BSON2JSON_SEED=<n> varies the seed; BSON2JSON_OPTION_DOCS=<n> the generated documents per
 * configuration (default 7,000: 16 configurations, 112,000 documents), BSON2JSON_OPTION_MUTANTS the
 * byte mutants per configuration (default 600).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testCount } from '../support/scale'
import * as BSON7 from 'bson'
import { Gen, hex, mulberry32, mutate } from '../support/gen'

const require = createRequire(import.meta.url)
const BSON6 = require('bson6') as typeof BSON7
const { toJSON, toJSONBuffer, toJSONList, toJSONArray, toNDJSON, toJSONListAsync, isTranscodeError, createTranscodeStream } = require('../../index.js')

const SEED = Number(process.env.BSON2JSON_SEED ?? 20261123) >>> 0
const DOCS = testCount('BSON2JSON_OPTION_DOCS', 7_000)
const MUTANTS = testCount('BSON2JSON_OPTION_MUTANTS', 600)

const VERSIONS = [
  [6, BSON6],
  [7, BSON7],
] as const

/** js-bson deserialize option sets (js-bson's own names), each run with both majors. */
const OPTION_SETS: Record<string, any>[] = [
  {},
  { promoteLongs: false },
  { promoteValues: false },
  { promoteBuffers: true },
  { promoteBuffers: true, promoteValues: false },
  { bsonRegExp: true },
  { validation: { utf8: false } },
  { promoteLongs: false, promoteBuffers: true, bsonRegExp: true, validation: { utf8: false } },
]

type Outcome = { ok: true; out: string } | { ok: false; err: any }

function oracle(B: typeof BSON7, buf: Uint8Array, opts: object): Outcome {
  try {
    return { ok: true, out: JSON.stringify(B.deserialize(buf, opts)) }
  } catch (err) {
    return { ok: false, err }
  }
}
function ours(buf: Uint8Array, opts: object): Outcome {
  try {
    return { ok: true, out: toJSON(buf, opts) }
  } catch (err) {
    return { ok: false, err }
  }
}

type Stats = { compared: number; bothOk: number; bothThrow: number; fails: string[]; failCount: number }
const newStats = (): Stats => ({ compared: 0, bothOk: 0, bothThrow: 0, fails: [], failCount: 0 })

function compare(B: typeof BSON7, buf: Uint8Array, jsOpts: object, ourOpts: object, st: Stats) {
  st.compared++
  const o = oracle(B, buf, jsOpts)
  const u = ours(buf, ourOpts)
  let problem: string | null = null
  if (o.ok && u.ok) {
    if (o.out !== u.out) problem = `expected ${o.out}\n   actual   ${u.out}`
    else st.bothOk++
  } else if (!o.ok && !u.ok) {
    st.bothThrow++
    if (!isTranscodeError(u.err) && !(u.err instanceof SyntaxError)) problem = `our error is not a TranscodeError: ${u.err}`
  } else if (o.ok) problem = `js-bson OK ${o.out}\n   ours threw ${(u as any).err} code=${(u as any).err?.code}`
  else problem = `js-bson threw ${(o as any).err}\n   ours OK ${(u as any).out}`
  if (problem) {
    st.failCount++
    if (st.fails.length < 5) st.fails.push(`hex ${hex(buf)} opts ${JSON.stringify(ourOpts)}\n   ${problem}`)
  }
}

describe('compat with js-bson options, js-bson 6 and 7 (generated documents and mutants)', () => {
  let total = 0
  OPTION_SETS.forEach((opts, si) => {
    for (const [version, B] of VERSIONS) {
      it(`bsonVersion ${version} ${JSON.stringify(opts)}: ${DOCS} documents + ${MUTANTS} mutants`, () => {
        const ourOpts = { ...opts, bsonVersion: version }
        // invalid UTF-8 more often where it is replaced instead of thrown
        const lenient = (opts as any).validation?.utf8 === false
        const g = new Gen(SEED + si * 7919 + version, { badStringRate: lenient ? 0.05 : 0.002 })
        const st = newStats()
        const keep: Uint8Array[] = []
        for (let i = 0; i < DOCS; i++) {
          const buf = g.root()
          if (i % 8 === 0) keep.push(buf)
          compare(B, buf, opts, ourOpts, st)
        }
        const r = mulberry32(SEED ^ (si * 131 + version))
        const mt = newStats()
        for (let i = 0; i < MUTANTS; i++) compare(B, mutate(r, keep[r.int(keep.length)]), opts, ourOpts, mt)
        total += st.compared + mt.compared
        console.log(
          `[options v${version} ${JSON.stringify(opts)}] docs=${st.compared} bothOk=${st.bothOk} bothThrow=${st.bothThrow} mismatches=${st.failCount}; mutants=${mt.compared} bothThrow=${mt.bothThrow} mismatches=${mt.failCount}`,
        )
        expect(st.bothOk).toBeGreaterThan(DOCS / 3)
        expect(st.fails, st.fails.join('\n')).toEqual([])
        expect(mt.fails, mt.fails.join('\n')).toEqual([])
      })
    }
  })
  it('covered at least 100,000 generated documents across the matrix (at the default sizes)', () => {
    console.log(`[options] generated documents and mutants compared: ${total}`)
    if (DOCS >= 7_000) expect(total).toBeGreaterThanOrEqual(100_000)
  })
})

describe('compat with js-bson options: the BSON corpus', () => {
  const DIR = path.join(__dirname, '..', '..', 'spec', 'bson-corpus', 'tests')
  const cases: Buffer[] = []
  for (const f of readdirSync(DIR).filter((f) => f.endsWith('.json'))) {
    const j = JSON.parse(readFileSync(path.join(DIR, f), 'utf8'))
    for (const v of j.valid ?? []) {
      cases.push(Buffer.from(v.canonical_bson, 'hex'))
      if (v.degenerate_bson) cases.push(Buffer.from(v.degenerate_bson, 'hex'))
    }
    for (const d of j.decodeErrors ?? []) cases.push(Buffer.from(d.bson, 'hex'))
  }
  it(`every valid and decodeErrors case, every option set, both majors (${cases.length} cases)`, () => {
    const st = newStats()
    for (const opts of OPTION_SETS) {
      for (const [version, B] of VERSIONS) {
        for (const buf of cases) compare(B, buf, opts, { ...opts, bsonVersion: version }, st)
      }
    }
    console.log(`[options corpus] compared=${st.compared} bothOk=${st.bothOk} bothThrow=${st.bothThrow} mismatches=${st.failCount}`)
    expect(cases.length).toBeGreaterThan(800)
    expect(st.fails, st.fails.join('\n')).toEqual([])
  })
})

describe('compat with js-bson options: named cases', () => {
  const fromHex = (h: string) => Buffer.from(h, 'hex')
  // int64 2^53 + 1, from the issue
  const big = fromHex('10000000126100010000000000200000')
  // {a: Code('x', {$id: 1, $ref: 'c'})}
  const cws = fromHex('2c0000000f6100240000000200000078001a0000001024696400010000000224726566000200000063000000')
  it('js-bson 6 prints a Long low first, js-bson 7 high first', () => {
    expect(toJSON(big, { bsonVersion: 6 })).toBe('{"a":{"low":1,"high":2097152,"unsigned":false}}')
    expect(toJSON(big, { bsonVersion: 7 })).toBe('{"a":{"high":2097152,"low":1,"unsigned":false}}')
    expect(toJSON(big)).toBe(toJSON(big, { bsonVersion: 7 }))
  })
  it('js-bson 6 promotes a DBRef-shaped code-with-scope scope, 7 does not', () => {
    expect(toJSON(cws, { bsonVersion: 6 })).toBe(JSON.stringify(BSON6.deserialize(cws)))
    expect(toJSON(cws, { bsonVersion: 6 })).toBe('{"a":{"code":"x","scope":{"$ref":"c","$id":1}}}')
    expect(toJSON(cws, { bsonVersion: 7 })).toBe('{"a":{"code":"x","scope":{"$id":1,"$ref":"c"}}}')
  })
  it('promoteLongs: false makes every int64 a Long, even 0; int32 and doubles stay numbers', () => {
    const buf = BSON7.serialize({ z: BSON7.Long.fromNumber(0), n: BSON7.Long.fromNumber(-42), i: 7, d: 1.5 })
    for (const [version, B] of VERSIONS) {
      for (const opts of [{ promoteLongs: false }, { promoteValues: false }]) {
        expect(toJSON(buf, { ...opts, bsonVersion: version })).toBe(JSON.stringify(B.deserialize(buf, opts)))
      }
    }
    expect(toJSON(buf, { promoteLongs: false })).toBe(
      '{"z":{"high":0,"low":0,"unsigned":false},"n":{"high":-1,"low":-42,"unsigned":false},"i":7,"d":1.5}',
    )
  })
  it('promoteBuffers: every binary (UUID and subtype 2 payload too) as Buffer JSON, unless promoteValues: false', () => {
    const buf = BSON7.serialize({ u: new BSON7.UUID('0102030405060708090a0b0c0d0e0f10'), o: new BSON7.Binary(Buffer.from([9, 8]), 2), e: new BSON7.Binary(Buffer.alloc(0)) })
    expect(toJSON(buf, { promoteBuffers: true })).toBe(
      '{"u":{"type":"Buffer","data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},"o":{"type":"Buffer","data":[9,8]},"e":{"type":"Buffer","data":[]}}',
    )
    expect(toJSON(buf, { promoteBuffers: true, promoteValues: false })).toBe(toJSON(buf))
  })
  it('bsonRegExp: {pattern, options} with sorted options; options outside imxlsu throw BSON_INVALID_REGEX; V8 is not asked', () => {
    const rx = (p: string, f: string) => {
      const b = Buffer.concat([Buffer.alloc(4), Buffer.from([0x0b, 0x72, 0]), Buffer.from(`${p}\0${f}\0`, 'latin1'), Buffer.from([0])])
      b.writeInt32LE(b.length)
      return b
    }
    expect(toJSON(rx('a"b', 'xsmi'), { bsonRegExp: true })).toBe('{"r":{"pattern":"a\\"b","options":"imsx"}}')
    expect(toJSON(rx('(', 'm'), { bsonRegExp: true })).toBe('{"r":{"pattern":"(","options":"m"}}')
    expect(() => toJSON(rx('(', 'm'))).toThrow()
    let e: any
    try {
      toJSON(rx('a', 'mg'), { bsonRegExp: true })
    } catch (x) {
      e = x
    }
    expect(isTranscodeError(e)).toBe(true)
    expect(e.code).toBe('BSON_INVALID_REGEX')
    expect(e.offset).toBe(10) // the 'g'
    expect(() => BSON7.deserialize(rx('a', 'mg'), { bsonRegExp: true })).toThrow(/option \[g\]/)
  })
  it("validation: { utf8: false } is utf8: 'replace'; a contradiction is a TypeError", () => {
    const bad = fromHex('1000000002730004000000eda0800000')
    expect(toJSON(bad, { validation: { utf8: false } })).toBe(toJSON(bad, { utf8: 'replace' }))
    expect(() => toJSON(bad, { validation: { utf8: true } })).toThrow(/UTF-8/)
    expect(() => toJSON(bad, { validation: { utf8: true }, utf8: 'replace' })).toThrow(TypeError)
  })
  it('the batch calls, async calls and the stream apply the same options as toJSON', async () => {
    const g = new Gen(SEED ^ 0x5bd1e995, { badStringRate: 0 })
    const sets = [{ bsonVersion: 6, promoteLongs: false }, { bsonVersion: 6, promoteBuffers: true, bsonRegExp: true }, { bsonVersion: 7, bsonRegExp: true, promoteBuffers: true }]
    const docs: Buffer[] = []
    while (docs.length < 300) {
      const b = Buffer.from(g.root())
      try {
        for (const o of sets) toJSON(b, o)
        docs.push(b)
      } catch {}
    }
    for (const opts of sets) {
      const one = docs.map((d) => toJSON(d, opts))
      expect(docs.map((d) => toJSONBuffer(d, opts).toString())).toEqual(one)
      expect(toJSONList(docs, opts)).toEqual(one)
      expect(toJSONList(docs, { ...opts, threads: 2 })).toEqual(one)
      expect(toJSONArray(Buffer.concat(docs), opts)).toBe(`[${one.join(',')}]`)
      expect(toNDJSON(docs, opts).toString()).toBe(one.map((s) => s + '\n').join(''))
      expect(await toJSONListAsync(docs, opts)).toEqual(one)
      const s = createTranscodeStream(opts)
      const chunks: Buffer[] = []
      s.on('data', (c: Buffer) => chunks.push(c))
      const done = new Promise((res, rej) => (s.on('end', res), s.on('error', rej)))
      s.end(Buffer.concat(docs))
      await done
      expect(Buffer.concat(chunks).toString()).toBe(one.map((x) => x + '\n').join(''))
    }
  })
})

describe('option validation', () => {
  const buf = BSON7.serialize({ a: 1 })
  const calls: [string, (o: any) => unknown][] = [
    ['toJSON', (o) => toJSON(buf, o)],
    ['toJSONBuffer', (o) => toJSONBuffer(buf, o)],
    ['toJSONList', (o) => toJSONList([buf], o)],
    ['toJSONArray', (o) => toJSONArray([buf], o)],
    ['toNDJSON', (o) => toNDJSON([buf], o)],
    ['createTranscodeStream', (o) => createTranscodeStream(o)],
  ]
  const bad: [object, RegExp][] = [
    [{ dialekt: 'relaxed' }, /unknown option 'dialekt' \(did you mean 'dialect'\?\)/],
    [{ promoteLongs: 0 }, /options\.promoteLongs must be a boolean/],
    [{ promoteValues: 'false' }, /options\.promoteValues must be a boolean/],
    [{ promoteBuffers: 1 }, /options\.promoteBuffers must be a boolean/],
    [{ bsonRegExp: null }, /options\.bsonRegExp must be a boolean/],
    [{ bsonVersion: '7' }, /options\.bsonVersion must be 6 or 7, got '7' \(a string\)$/],
    [{ bsonVersion: 5 }, /options\.bsonVersion must be 6 or 7/],
    [{ validation: { utf8: 'no' } }, /options\.validation/],
    [{ validation: { utf8: { writeErrors: false } } }, /options\.validation/],
    [{ useBigInt64: true }, /useBigInt64 is not supported/],
    [{ raw: true }, /raw is not supported/],
    [{ fieldsAsRaw: { a: true } }, /fieldsAsRaw is not supported/],
    [{ dialect: 'relaxed', promoteLongs: false }, /promoteLongs applies to dialect 'compat' only/],
    [{ dialect: 'canonical', bsonRegExp: true }, /bsonRegExp applies to dialect 'compat' only/],
  ]
  for (const [name, call] of calls) {
    it(`${name}: unknown names and wrong types are TypeErrors naming the option`, () => {
      for (const [o, re] of bad) {
        let e: any
        try {
          call(o)
        } catch (x) {
          e = x
        }
        expect(e, `${name} ${JSON.stringify(o)}`).toBeInstanceOf(TypeError)
        expect(e.message).toMatch(re)
      }
      // js-bson's defaults for the options it cannot honour are accepted
      expect(() => call({ useBigInt64: false, raw: false, fieldsAsRaw: {}, promoteValues: true })).not.toThrow()
    })
  }
  it("createTranscodeStream suggests its own option names too ('concurency' → 'concurrency')", () => {
    expect(() => createTranscodeStream({ concurency: 2 } as any)).toThrow(/unknown option 'concurency' \(did you mean 'concurrency'\?\)/)
    expect(() => createTranscodeStream({ skipInvalid: true, dialekt: 'x' } as any)).toThrow(/did you mean 'dialect'/)
  })
  it('the async calls throw the TypeError synchronously', () => {
    expect(() => toJSONListAsync([buf], { dialekt: 'x' })).toThrow(TypeError)
  })
  it('batch-only `threads` is unknown to toJSON', () => {
    expect(() => toJSON(buf, { threads: 2 })).toThrow(/unknown option 'threads'/)
  })
  it('errors quote the value they got and name its type when it is the wrong one', () => {
    const message = (o: any) => {
      try {
        toJSON(buf, o)
      } catch (e: any) {
        return e.message
      }
      return 'no error'
    }
    expect(message({ bsonVersion: '7' })).toBe("bson2json: options.bsonVersion must be 6 or 7, got '7' (a string)")
    expect(message({ bsonVersion: 5 })).toBe('bson2json: options.bsonVersion must be 6 or 7, got 5')
    expect(message({ bsonVersion: 7n })).toBe('bson2json: options.bsonVersion must be 6 or 7, got 7n (a bigint)')
    expect(message({ dialect: 'relax' })).toBe("bson2json: options.dialect must be 'compat', 'relaxed' or 'canonical', got 'relax'")
    expect(message({ dialect: 1 })).toBe("bson2json: options.dialect must be 'compat', 'relaxed' or 'canonical', got 1 (a number)")
    expect(message({ utf8: null })).toBe("bson2json: options.utf8 must be 'strict' or 'replace', got null")
    expect(message({ promoteValues: 'false' })).toBe("bson2json: options.promoteValues must be a boolean, got 'false' (a string)")
    expect(message({ maxDepth: '10' })).toBe("bson2json: options.maxDepth must be an integer from 1 to 4294967295, got '10' (a string)")
    expect(message({ maxOutputBytes: [1] })).toBe('bson2json: options.maxOutputBytes must be an integer from 1 to 4294967295, got an array of 1')
    expect(message('relaxed')).toBe("bson2json: options must be an object, got 'relaxed' (a string)")
  })
  it('a dialect name used as an option points at `dialect`', () => {
    expect(() => toJSON(buf, { relaxed: true })).toThrow(/^bson2json: unknown option 'relaxed' \(for Extended JSON use dialect: 'relaxed'\)$/)
    expect(() => toJSON(buf, { canonical: true })).toThrow(/^bson2json: unknown option 'canonical' \(for Extended JSON use dialect: 'canonical'\)$/)
    expect(() => toJSON(buf, { compat: true })).toThrow(/^bson2json: unknown option 'compat' \(for the js-bson text use dialect: 'compat'\)$/)
  })
  it('a near-miss name suggests the closest accepted option (edit distance), of the function called', () => {
    const cases: [any, string, string | null][] = [
      [(o: any) => toJSON(buf, o), 'dialekt', 'dialect'],
      [(o: any) => toJSON(buf, o), 'Dialect', 'dialect'],
      [(o: any) => toJSON(buf, o), 'maxdepth', 'maxDepth'],
      [(o: any) => toJSON(buf, o), 'promoteLong', 'promoteLongs'],
      [(o: any) => toJSON(buf, o), 'bsonVerison', 'bsonVersion'],
      [(o: any) => toJSON(buf, o), 'utf', 'utf8'],
      [(o: any) => toJSONList([buf], o), 'thread', 'threads'],
      [(o: any) => createTranscodeStream(o), 'dialct', 'dialect'],
      [(o: any) => toJSON(buf, o), 'thread', null], // threads is a batch option: not offered to toJSON
      [(o: any) => toJSON(buf, o), 'pretty', null],
      [(o: any) => toJSON(buf, o), 'zzz', null],
    ]
    for (const [call, name, want] of cases) {
      let e: any
      try {
        call({ [name]: 1 })
      } catch (x) {
        e = x
      }
      expect(e, name).toBeInstanceOf(TypeError)
      expect(e.message, name).toBe(`bson2json: unknown option '${name}'${want === null ? '' : ` (did you mean '${want}'?)`}`)
    }
  })
})
