/**
 * Differential test against MongoDB's own bsondump: `bson2json --dialect canonical` vs bsondump's
 * default output (canonical Extended JSON, one document per line) on the demo dump of
 * scripts/sample-dump.mjs, on a dump of every valid BSON-corpus case, and on a probe of doubles
 * across magnitudes. docs/bsondump.md lists every difference and the specification's rule for it.
 *
 * Oracles (each skipped when absent, unless B2J_REQUIRE_EXTJSON_ORACLE=1):
 *   - bsondump itself: $BSONDUMP, or tmp/mongo-tools/bin/bsondump (bash scripts/mongo-tools.sh);
 *   - extjson-oracle: $EXTJSON_ORACLE, or tmp/extjson-oracle (scripts/extjson-oracle, built by
 *     .ci/run): the Go driver's bson.MarshalExtJSON(doc, true, false), the call bsondump makes.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BSON } from 'bson'

const root = resolve(__dirname, '../..')
const REQUIRED = process.env.B2J_REQUIRE_EXTJSON_ORACLE === '1'
const bsondump = process.env.BSONDUMP ?? join(root, 'tmp/mongo-tools/bin/bsondump')
const oracle = process.env.EXTJSON_ORACLE ?? join(root, 'tmp/extjson-oracle')
const oracles: [string, (file: string) => string][] = []
if (existsSync(bsondump)) oracles.push(['bsondump', (f) => execFileSync(bsondump, ['--quiet', f], { maxBuffer: 1 << 28 }).toString()])
if (existsSync(oracle)) oracles.push(['extjson-oracle', (f) => execFileSync(oracle, { input: readFileSync(f), maxBuffer: 1 << 28 }).toString()])

let dir: string
const files: Record<string, string> = {}

function canonical(file: string): string {
  return execFileSync(process.execPath, [join(root, 'bin/bson2json.js'), '-q', '--dialect', 'canonical', file], { maxBuffer: 1 << 28 }).toString()
}

/** Same tree, except `$numberDouble` texts that spell the same double (collected in `out`). */
function doubleSpellings(a: unknown, b: unknown, out: [string, string][]): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return Object.is(a, b)
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a as object)
  const kb = Object.keys(b as object)
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false
  if (ka.length === 1 && ka[0] === '$numberDouble') {
    const sa = (a as any).$numberDouble
    const sb = (b as any).$numberDouble
    if (sa === sb) return true
    if (typeof sa !== 'string' || typeof sb !== 'string' || !Object.is(Number(sa), Number(sb))) return false
    out.push([sa, sb])
    return true
  }
  return ka.every((k) => doubleSpellings((a as any)[k], (b as any)[k], out))
}

/** Compares line by line; returns the double spellings that differ (anything else fails). */
function compare(theirs: string, ours: string): [string, string][] {
  const t = theirs.split('\n')
  const o = ours.split('\n')
  expect(o.length).toBe(t.length)
  const spellings: [string, string][] = []
  for (let i = 0; i < t.length; i++) {
    if (t[i] === o[i]) continue
    const found: [string, string][] = []
    if (!doubleSpellings(JSON.parse(t[i]), JSON.parse(o[i]), found) || found.length === 0) {
      throw new Error(`line ${i + 1} differs beyond the spelling of a double:\n  theirs ${t[i]}\n  ours   ${o[i]}`)
    }
    spellings.push(...found)
  }
  return spellings
}

/** Decimal exponent of a finite non-zero double's leading digit. */
function exponent(text: string): number {
  return Number(Number(text).toExponential().split('e')[1])
}

/**
 * The two spellings docs/bsondump.md documents (e: decimal exponent of the leading digit):
 *   bson2json: fixed notation for -7 < e < 16, else `d[.ddd]E±x` with the shortest exponent;
 *   bsondump (Go's strconv.FormatFloat(x, 'G', -1, 64), `.0` added to integers): fixed notation
 *   for -4 <= e < 6, else `d[.ddd]E±xx` with at least two exponent digits.
 */
function oursIsDocumentedForm(ours: string): boolean {
  const e = exponent(ours)
  if (e > -7 && e < 16) return /^-?\d+\.\d+$/.test(ours)
  return /^-?\d(\.\d+)?E[+-][1-9]\d*$/.test(ours)
}

function theirsIsDocumentedForm(theirs: string): boolean {
  const e = exponent(theirs)
  if (e >= -4 && e < 6) return /^-?\d+\.\d+$/.test(theirs)
  return /^-?\d(\.\d+)?E[+-]\d{2,}$/.test(theirs)
}

beforeAll(() => {
  if (oracles.length === 0) {
    if (REQUIRED) throw new Error('B2J_REQUIRE_EXTJSON_ORACLE=1 but neither bsondump nor extjson-oracle is built')
    return
  }
  dir = mkdtempSync(join(tmpdir(), 'b2j-bsondump-'))
  files.sample = join(dir, 'sample.bson')
  execFileSync(process.execPath, [join(root, 'scripts/sample-dump.mjs'), '--docs', '3000', '--out', files.sample], { stdio: 'ignore' })
  const corpus: Buffer[] = []
  const testsDir = join(root, 'spec/bson-corpus/tests')
  for (const f of readdirSync(testsDir).filter((n) => n.endsWith('.json')).sort()) {
    const t = JSON.parse(readFileSync(join(testsDir, f), 'utf8'))
    for (const v of t.valid ?? []) {
      corpus.push(Buffer.from(v.canonical_bson, 'hex'))
      if (v.degenerate_bson) corpus.push(Buffer.from(v.degenerate_bson, 'hex'))
    }
  }
  files.corpus = join(dir, 'corpus.bson')
  writeFileSync(files.corpus, Buffer.concat(corpus))
  const doubles: number[] = [5e-324, 1.7976931348623157e308, 2 ** 53, 0.1, 123456, 1234567]
  for (let e = -12; e <= 24; e++) for (const m of [1, 1.5, 7.556285709142685, 9.999]) doubles.push(m * 10 ** e, -m * 10 ** e)
  files.doubles = join(dir, 'doubles.bson')
  writeFileSync(files.doubles, Buffer.concat(doubles.map((d) => BSON.serialize({ d: new BSON.Double(d) }))))
})

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe.skipIf(oracles.length === 0 && !REQUIRED)('canonical output vs bsondump', () => {
  for (const [name, run] of oracles) {
    it(`${name}: every valid BSON-corpus case (canonical and degenerate BSON) is byte-identical`, () => {
      const theirs = run(files.corpus)
      expect(theirs.split('\n').length).toBeGreaterThan(700)
      expect(canonical(files.corpus)).toBe(theirs)
    })

    it(`${name}: the demo dump differs only in how some doubles are spelled`, () => {
      const spellings = compare(run(files.sample), canonical(files.sample))
      for (const [theirs, ours] of spellings) {
        expect(oursIsDocumentedForm(ours)).toBe(true)
        expect(theirsIsDocumentedForm(theirs)).toBe(true)
      }
    })

    it(`${name}: doubles across magnitudes: the same values, spelled as docs/bsondump.md says`, () => {
      const spellings = compare(run(files.doubles), canonical(files.doubles))
      expect(spellings.length).toBeGreaterThan(50)
      for (const [theirs, ours] of spellings) {
        expect(oursIsDocumentedForm(ours)).toBe(true)
        expect(theirsIsDocumentedForm(theirs)).toBe(true)
      }
    })
  }
})
