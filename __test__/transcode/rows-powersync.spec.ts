/**
 * Differential test of `toRow(doc, { rowFormat: 'powersync', dateRenderMode })` against
 * PowerSync's own converter, `bufferToSqlite(bytes, dateRenderMode)` from
 * @powersync/service-module-mongodb 0.21.1 (fetched and checksummed into tmp/ by
 * scripts/powersync-oracle.mjs): every value and its type (`bigint` vs number, a plain
 * `Uint8Array`, `null`), the keys in the same order, the nested JSON text byte for byte, and a
 * throw (here a TranscodeError with a code) exactly where PowerSync throws.
 *
 * Documents: BSON2JSON_DOCS (default 100,000) generated ones (__test__/support/gen.ts: every
 * type at the top level and nested, dates inside and outside years 0-9999 and past
 * JavaScript's range, integral and non-integral doubles, -0, NaN, ±Infinity, int64 extremes,
 * decimal128 specials and random bits, every binary subtype, regexes, code with scope,
 * DBPointer, symbols, min/max keys, non-ASCII, escape-heavy and ill-formed strings and keys),
 * nesting up to and past PowerSync's limit of 20, and the public real-world datasets of the
 * benchmarks (scripts/realworld-data.sh); each in the three date modes. BSON2JSON_SEED varies
 * the seed. Two seeded faults (a boolean as a number, a nested date in another mode) must be
 * caught by the same comparison.
 */
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'
import { testCount } from '../support/scale'
import { BSON } from 'bson'
import { Gen, bstr, doc, el, i32, i64 } from '../support/gen'
import type { Elem } from '../support/gen'

const require = createRequire(import.meta.url)
const { toRow, toRows, isTranscodeError } = require('../../index.js')

const ROOT = join(__dirname, '../..')
const SEED = Number(process.env.BSON2JSON_SEED ?? 20261204) >>> 0
const DOCS = testCount('BSON2JSON_DOCS', 100_000)
const MODES = [0, 1, 2] as const

type Converter = (bytes: Buffer, mode: number) => Record<string, unknown>
let bufferToSqlite: Converter

beforeAll(async () => {
  const { powersyncOracle } = await import(pathToFileURL(join(ROOT, 'scripts/powersync-oracle.mjs')).href)
  ;({ bufferToSqlite } = await import(pathToFileURL(powersyncOracle()).href))
}, 300_000)

type Outcome = { ok: true; row: Record<string, unknown> } | { ok: false; err: unknown }

const PROTO = Buffer.from('__proto__')
const PROTO_STANDIN = Buffer.from('__proto_\u0001')

/**
 * The bytes PowerSync is given: a top-level `__proto__` key renamed to a stand-in of the same
 * length (PowerSync assigns `row[key] = value`, so `__proto__` would set the row's prototype
 * or be dropped; bson2json makes it an own property, as JSON.parse does: docs/rows.md), and
 * whether one was renamed.
 */
function forOracle(bytes: Buffer): [Buffer, boolean] {
  let renamed = false
  const out = Buffer.from(bytes)
  let at = 4
  const end = out.readInt32LE(0) - 1
  try {
    while (at < end) {
      const type = out[at]
      const keyEnd = out.indexOf(0, at + 1)
      if (keyEnd - at - 1 === PROTO.length && out.subarray(at + 1, keyEnd).equals(PROTO)) {
        PROTO_STANDIN.copy(out, at + 1)
        renamed = true
      }
      at = keyEnd + 1 + valueLength(out, type, keyEnd + 1)
    }
  } catch {
    // not a document whose elements frame (a generated key holds a NUL): both converters throw
    return [Buffer.from(bytes), false]
  }
  return [out, renamed]
}

function valueLength(b: Buffer, type: number, at: number): number {
  switch (type) {
    case 0x01: case 0x09: case 0x11: case 0x12: return 8
    case 0x02: case 0x0d: case 0x0e: return 4 + b.readInt32LE(at)
    case 0x03: case 0x04: case 0x0f: return b.readInt32LE(at)
    case 0x05: return 5 + b.readInt32LE(at)
    case 0x06: case 0x0a: case 0x7f: case 0xff: return 0
    case 0x07: return 12
    case 0x08: return 1
    case 0x0b: { const p = b.indexOf(0, at); return b.indexOf(0, p + 1) + 1 - at }
    case 0x0c: return 4 + b.readInt32LE(at) + 12
    case 0x10: return 4
    case 0x13: return 16
    default: throw new Error(`type ${type}`)
  }
}

function oracle(bytes: Buffer, mode: number): Outcome {
  const [input, renamed] = forOracle(bytes)
  try {
    const row = bufferToSqlite(input, mode)
    if (!renamed) return { ok: true, row }
    // the stand-in's value under `__proto__`, in its place
    const back: Record<string, unknown> = {}
    for (const k of Object.keys(row)) {
      if (k === '__proto_\u0001') Object.defineProperty(back, '__proto__', { value: row[k], enumerable: true, writable: true, configurable: true })
      else back[k] = row[k]
    }
    return { ok: true, row: back }
  } catch (err) {
    return { ok: false, err }
  }
}

function ours(bytes: Uint8Array, mode: number): Outcome {
  try {
    return { ok: true, row: toRow(bytes, { rowFormat: 'powersync', dateRenderMode: mode }) }
  } catch (err) {
    return { ok: false, err }
  }
}

const show = (x: unknown) =>
  JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `<${v.constructor.name} ${Buffer.from(v).toString('hex')}>` : v))

/** The first difference between two outcomes, or null: values, types, prototypes, key order. */
function difference(want: Outcome, got: Outcome): string | null {
  if (!want.ok || !got.ok) {
    if (!want.ok && !got.ok) return isTranscodeError(got.err) ? null : `threw ${String(got.err)}, not a TranscodeError`
    return want.ok ? `threw ${String((got as any).err)} where PowerSync gives ${show(want.row)}` : `gives ${show((got as any).row)} where PowerSync throws ${String(want.err)}`
  }
  const wk = Object.keys(want.row)
  const gk = Object.keys(got.row)
  if (wk.join('\u0000') !== gk.join('\u0000')) return `keys ${show(gk)}, PowerSync's ${show(wk)}`
  if (Object.getPrototypeOf(got.row) !== Object.prototype) return 'the row is not a plain object'
  for (const k of wk) {
    const w = want.row[k]
    const g = got.row[k]
    if (!isDeepStrictEqual(g, w)) return `${k}: ${show(g)} (${typeof g}), PowerSync's ${show(w)} (${typeof w})`
    if (g instanceof Uint8Array && g.buffer.byteLength !== g.byteLength) return `${k}: a view of a larger buffer`
  }
  return null
}

type Stats = { compared: number; bothThrow: number; malformed: number; failures: string[] }

/** Whether js-bson refuses `bytes` outright (its UTF-8 check off): not a well-formed document. */
function malformed(bytes: Uint8Array): boolean {
  try {
    BSON.deserialize(bytes, { validation: { utf8: false } })
    return false
  } catch {
    return true
  }
}

function compare(bytes: Uint8Array, st: Stats, label: string) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (const mode of MODES) {
    st.compared++
    const want = oracle(buf, mode)
    const got = ours(bytes, mode)
    if (!want.ok) st.bothThrow++
    // PowerSync reads keys and some lengths without checking them against the enclosing
    // document: on a malformed one (here: a generated key holding a NUL, which misframes the
    // rest) it may read on where bson2json fails with a coded error (docs/rows.md).
    if (want.ok && !got.ok && isTranscodeError(got.err) && malformed(bytes)) {
      st.malformed++
      continue
    }
    const d = difference(want, got)
    if (d !== null && st.failures.length < 10) st.failures.push(`${label} mode ${mode}: ${d}\n   bytes ${buf.toString('hex')}`)
  }
}

/** A document whose field `x` nests `levels` containers (documents or arrays by `shape`) below its own. */
function deep(levels: number, shape: (i: number) => 'doc' | 'array' | 'scope'): number[] {
  let inner: Elem = el(0x09, 'd', i64(1700000000123n))
  for (let i = levels; i >= 0; i--) {
    const s = shape(i)
    if (s === 'scope' && i > 0) {
      const code = bstr('f()')
      const scope = doc([inner])
      inner = el(0x0f, 'k', [...i32(4 + code.length + scope.length), ...code, ...scope])
    } else inner = el(s === 'array' ? 0x04 : 0x03, i === 0 ? 'x' : s === 'array' ? '0' : 'k', doc([{ ...inner, key: s === 'array' ? [0x30] : inner.key }]))
  }
  return doc([el(0x10, 'a', i32(1)), inner])
}

describe("rows: rowFormat 'powersync' is PowerSync's bufferToSqlite", () => {
  it(`${DOCS} generated documents × 3 date modes (seed ${SEED})`, () => {
    const g = new Gen(SEED)
    const st: Stats = { compared: 0, bothThrow: 0, malformed: 0, failures: [] }
    const seen = new Set<string>()
    for (let i = 0; i < DOCS; i++) {
      const d = g.root()
      for (const f of g.feat) seen.add(f)
      compare(d, st, `document ${i}`)
    }
    expect(st.failures, st.failures.join('\n')).toEqual([])
    // the generator reached every type, at the top level or nested
    for (const t of [1, 2, 3, 4, 5, 6, 7, 8, 9, 0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0x10, 0x11, 0x12, 0x13, 0x7f, 0xff]) {
      expect(seen.has(`t${t.toString(16)}`), `type 0x${t.toString(16)}`).toBe(true)
    }
    // some throw in both (dates past JavaScript's range, bad subtype-2 lengths), most do not
    expect(st.bothThrow).toBeGreaterThan(0)
    expect(st.bothThrow).toBeLessThan(st.compared / 4)
    // malformed documents where only bson2json throws: rare
    expect(st.malformed).toBeLessThan(st.compared / 1000)
  }, 1_200_000)

  it('nesting up to and past the limit of 20, with documents, arrays and code-with-scope scopes', () => {
    const st: Stats = { compared: 0, bothThrow: 0, malformed: 0, failures: [] }
    const shapes: ((i: number) => 'doc' | 'array' | 'scope')[] = [() => 'doc', () => 'array', (i) => (i % 2 ? 'doc' : 'array'), (i) => (i % 3 === 1 ? 'scope' : 'doc')]
    for (const shape of shapes) {
      for (let levels = 15; levels <= 25; levels++) compare(Uint8Array.from(deep(levels, shape)), st, `${levels} levels`)
    }
    expect(st.failures, st.failures.join('\n')).toEqual([])
    // 20 levels below the field's own container pass, 21 throw, in both
    expect(st.bothThrow).toBeGreaterThan(0)
    const ok20 = ours(Uint8Array.from(deep(20, () => 'doc')), 0)
    const bad21 = ours(Uint8Array.from(deep(21, () => 'doc')), 0)
    expect(ok20.ok).toBe(true)
    expect(bad21.ok).toBe(false)
    expect((bad21 as any).err.code).toBe('BSON_TOO_DEEP')
  })

  it('the real-world datasets of the benchmarks, and toRows on them', () => {
    const dir = join(ROOT, 'tmp/realworld')
    if (!existsSync(join(dir, 'citm_catalog.json'))) execFileSync('bash', [join(ROOT, 'scripts/realworld-data.sh')], { stdio: 'ignore' })
    const read = (f: string) => JSON.parse(readFileSync(join(dir, f), 'utf8'))
    const citm = read('citm_catalog.json')
    const sets: Record<string, any[]> = {
      twitter: read('twitter.json').statuses,
      canada: [read('canada.json')],
      citm: [citm],
      'citm-events': Object.values(citm.events),
      'citm-performances': citm.performances,
    }
    const st: Stats = { compared: 0, bothThrow: 0, malformed: 0, failures: [] }
    for (const [name, objs] of Object.entries(sets)) {
      const docs = objs.map((o) => Buffer.from(BSON.serialize(o)))
      docs.forEach((d, i) => compare(d, st, `${name} ${i}`))
      // a batch gives the same rows, in order
      for (const mode of MODES) {
        const rows = toRows(Buffer.concat(docs), { rowFormat: 'powersync', dateRenderMode: mode })
        expect(rows.length).toBe(docs.length)
        docs.forEach((d, i) => expect(isDeepStrictEqual(rows[i], bufferToSqlite(d, mode)), `${name} ${i}`).toBe(true))
      }
    }
    expect(st.failures, st.failures.join('\n')).toEqual([])
    expect([st.bothThrow, st.malformed]).toEqual([0, 0])
    expect(st.compared).toBe(3 * (100 + 1 + 1 + 184 + 243))
  }, 300_000)

  it('catches seeded faults: a boolean as a number, a nested date in another mode', () => {
    const booleans = Uint8Array.from(doc([el(0x08, 't', [1]), el(0x08, 'f', [0])]))
    const faulty = (bytes: Uint8Array, mode: number): Outcome => {
      const o = ours(bytes, mode)
      if (!o.ok) return o
      const row = { ...o.row }
      for (const k of Object.keys(row)) if (row[k] === 1n || row[k] === 0n) row[k] = Number(row[k])
      return { ok: true, row }
    }
    expect(difference(oracle(Buffer.from(booleans), 0), ours(booleans, 0))).toBeNull()
    expect(difference(oracle(Buffer.from(booleans), 0), faulty(booleans, 0))).toMatch(/^t: 1 \(number\)/)
    // a nested date rendered in mode 1 where mode 0 was asked
    const dates = Uint8Array.from(doc([el(0x03, 'o', doc([el(0x09, 'd', i64(1700000000123n))]))]))
    const wrongMode = (bytes: Uint8Array, mode: number) => ours(bytes, mode === 0 ? 1 : mode)
    expect(difference(oracle(Buffer.from(dates), 0), ours(dates, 0))).toBeNull()
    expect(difference(oracle(Buffer.from(dates), 0), wrongMode(dates, 0))).toMatch(/^o: "\{\\"d\\":\\"2023-11-14T22/)
  })

  it('a top-level __proto__ key is an own property (PowerSync would set the prototype)', () => {
    const d = Uint8Array.from(doc([el(0x03, '__proto__', doc([el(0x10, 'polluted', i32(1))])), el(0x0a, 'n', [])]))
    const o = ours(d, 0)
    expect(o.ok).toBe(true)
    const row = (o as any).row
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype)
    expect(Object.keys(row)).toEqual(['__proto__', 'n'])
    expect(row.polluted).toBeUndefined()
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')!.value).toBe('{"polluted":1}')
    // PowerSync's own row has a string for a prototype-setting assignment: ignored
    expect(Object.keys(bufferToSqlite(Buffer.from(d), 0))).toEqual(['n'])
  })
})
