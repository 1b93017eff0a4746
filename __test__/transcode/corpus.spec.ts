/**
 * The BSON corpus (spec/bson-corpus/tests/*.json) through bson2json.
 *
 * - valid: canonical_bson (+ degenerate_bson) in compat equals the js-bson oracle
 *   JSON.stringify(BSON.deserialize(buf)) (throw parity included); in canonical it equals canonical_extjson;
 *   in relaxed it equals relaxed_extjson where the case has one.
 * - decodeErrors: a TranscodeError (isTranscodeError, string code, numeric offset) in every dialect.
 * - every strict prefix (length 0..len-1) of every valid canonical_bson throws a coded error, and js-bson throws.
 *
 * EJSON comparison (normJSON below): the corpus text has arbitrary whitespace and uses escapes such as
 * "\u00e9" where we print raw UTF-8. We tokenize the JSON text, drop insignificant whitespace, re-serialise each
 * string token with JSON.stringify(JSON.parse(token)) (so equivalent escapes compare equal), and keep every
 * number token VERBATIM (source text) -- "1.0" and "1" are different, "1E+18" and "1e+18" are different,
 * since Extended JSON is about exact textual number forms. Key order is compared as written (the corpus lists
 * keys in BSON order, which is what a transcoder emits).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const { toJSON, isTranscodeError } = require('../../index.js')

const DIR = path.join(__dirname, '..', '..', 'spec', 'bson-corpus', 'tests')
const DIALECTS = ['compat', 'relaxed', 'canonical'] as const

/** Tokenizing normaliser, see the header comment. Throws on text that is not JSON-token shaped. */
export function normJSON(text: string): string {
  const out: string[] = []
  const re = /\s+|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}[\]:,]/y
  let i = 0
  while (i < text.length) {
    re.lastIndex = i
    const m = re.exec(text)
    if (!m) throw new Error(`normJSON: bad token at ${i}: ${text.slice(i, i + 20)}`)
    const t = m[0]
    i = re.lastIndex
    if (/^\s/.test(t)) continue
    out.push(t[0] === '"' ? JSON.stringify(JSON.parse(t)) : t)
  }
  return out.join('')
}

function oracle(buf: Uint8Array): string {
  try {
    return JSON.stringify(BSON.deserialize(buf))
  } catch (e) {
    return `THROW ${(e as Error).name}`
  }
}
function ours(buf: Uint8Array, dialect: string): string {
  try {
    return toJSON(buf, { dialect })
  } catch (e: any) {
    return `THROW ${e.name === 'SyntaxError' ? 'SyntaxError' : 'BSONError'} ${e.code}`
  }
}
/** compat: js-bson throws BSONError or SyntaxError; we compare throw-vs-not only, plus the text when OK. */
function sameOutcome(a: string, b: string): boolean {
  if (a.startsWith('THROW') && b.startsWith('THROW')) return true
  return a === b
}

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()

type Case = { description: string; canonical_bson: string; degenerate_bson?: string; canonical_extjson: string; relaxed_extjson?: string; lossy?: boolean }

const totals = { valid: 0, decodeErrors: 0, prefixes: 0 }

describe('bson corpus', () => {
  for (const file of files) {
    const spec = JSON.parse(readFileSync(path.join(DIR, file), 'utf8'))
    const valid: Case[] = spec.valid ?? []
    const decodeErrors: { description: string; bson: string }[] = spec.decodeErrors ?? []
    // decimal128-6/7 only have parseErrors (EJSON/string parsing), which do not apply to a BSON->JSON transcoder
    if (!valid.length && !decodeErrors.length) continue
    describe(file, () => {
      if (valid.length) {
        it('valid: compat equals js-bson', () => {
          const fails: string[] = []
          for (const c of valid) {
            for (const h of [c.canonical_bson, c.degenerate_bson].filter(Boolean) as string[]) {
              const buf = Buffer.from(h, 'hex')
              const o = oracle(buf)
              const u = ours(buf, 'compat')
              if (!sameOutcome(o, u)) fails.push(`${c.description} ${h}\n  expected ${o}\n  actual   ${u}`)
              else if (!u.startsWith('THROW')) JSON.parse(u)
            }
            totals.valid++
          }
          expect(fails, fails.join('\n')).toEqual([])
        })
        it('valid: canonical equals canonical_extjson', () => {
          const fails: string[] = []
          for (const c of valid) {
            for (const h of [c.canonical_bson, c.degenerate_bson].filter(Boolean) as string[]) {
              const u = ours(Buffer.from(h, 'hex'), 'canonical')
              const want = normJSON(c.canonical_extjson)
              let got = u
              try {
                JSON.parse(u)
                got = normJSON(u)
              } catch {
                /* keep raw text for the report */
              }
              if (got !== want) fails.push(`${c.description} ${h}\n  expected ${want}\n  actual   ${got}`)
            }
          }
          expect(fails, fails.join('\n')).toEqual([])
        })
        it('valid: relaxed equals relaxed_extjson (where present)', () => {
          const fails: string[] = []
          for (const c of valid) {
            if (c.relaxed_extjson === undefined) continue
            for (const h of [c.canonical_bson, c.degenerate_bson].filter(Boolean) as string[]) {
              const u = ours(Buffer.from(h, 'hex'), 'relaxed')
              const want = normJSON(c.relaxed_extjson)
              let got = u
              try {
                JSON.parse(u)
                got = normJSON(u)
              } catch {
                /* keep raw */
              }
              if (got !== want) fails.push(`${c.description} ${h}\n  expected ${want}\n  actual   ${got}`)
            }
          }
          expect(fails, fails.join('\n')).toEqual([])
        })
        it('every strict prefix of canonical_bson throws a coded error (and js-bson throws)', () => {
          const fails: string[] = []
          for (const c of valid) {
            const full = Buffer.from(c.canonical_bson, 'hex')
            for (let n = 0; n < full.length; n++) {
              const buf = full.subarray(0, n)
              totals.prefixes++
              let jsThrew = false
              try {
                BSON.deserialize(buf)
              } catch {
                jsThrew = true
              }
              if (!jsThrew) fails.push(`${c.description} prefix ${n}: js-bson did NOT throw (${buf.toString('hex')})`)
              for (const dialect of DIALECTS) {
                try {
                  const out = toJSON(buf, { dialect })
                  fails.push(`${c.description} prefix ${n} ${dialect}: no throw, got ${out}`)
                } catch (e: any) {
                  if (!isTranscodeError(e) || typeof e.code !== 'string' || typeof e.offset !== 'number')
                    fails.push(`${c.description} prefix ${n} ${dialect}: uncoded error ${e}`)
                }
              }
            }
          }
          expect(fails.slice(0, 20), fails.slice(0, 20).join('\n')).toEqual([])
        })
      }
      if (decodeErrors.length) {
        it('decodeErrors throw a TranscodeError in every dialect (js-bson throws too)', () => {
          const fails: string[] = []
          for (const c of decodeErrors) {
            totals.decodeErrors++
            const buf = Buffer.from(c.bson, 'hex')
            let jsThrew = false
            try {
              BSON.deserialize(buf)
            } catch {
              jsThrew = true
            }
            if (!jsThrew) fails.push(`${c.description}: js-bson did not throw`)
            for (const dialect of DIALECTS) {
              try {
                const out = toJSON(buf, { dialect })
                fails.push(`${c.description} ${c.bson} ${dialect}: no throw, got ${out}`)
              } catch (e: any) {
                if (!isTranscodeError(e) || e.name !== 'TranscodeError' || typeof e.code !== 'string' || typeof e.offset !== 'number')
                  fails.push(`${c.description} ${dialect}: not a TranscodeError: ${e?.name} ${e?.code} ${e}`)
              }
            }
          }
          expect(fails, fails.join('\n')).toEqual([])
        })
      }
    })
  }
  it('counts', () => {
    console.log(`[corpus] files=${files.length} valid=${totals.valid} decodeErrors=${totals.decodeErrors} prefixes=${totals.prefixes}`)
    expect(totals.valid).toBeGreaterThanOrEqual(728)
    expect(totals.decodeErrors).toBe(75)
  })
})

describe('normJSON comparator self-test', () => {
  it('ignores whitespace and escape spelling, keeps number text and key order', () => {
    expect(normJSON('{ "a" : "\\u00e9\\/" , "b":[1, 2] }')).toBe('{"a":"é/","b":[1,2]}')
    expect(normJSON('{"d" : 1.0}')).not.toBe(normJSON('{"d":1}'))
    expect(normJSON('{"d":1E+3}')).not.toBe(normJSON('{"d":1e+3}'))
    expect(normJSON('{"a":1,"b":2}')).not.toBe(normJSON('{"b":2,"a":1}'))
    expect(() => normJSON('{"a":01x}')).toThrow()
  })
})
