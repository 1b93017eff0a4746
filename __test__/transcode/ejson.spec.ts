/**
 * relaxed / canonical dialects (Extended JSON spec, NOT js-bson's EJSON.stringify output).
 *
 * 1. On the full generator (deprecated types, duplicates, bad UTF-8 ...): every output is valid JSON, every
 *    failure is a coded TranscodeError.
 * 2. Round trip oracle on EjsonGen documents (see the exclusion list on EjsonGen in gen.ts, each with its
 *    reason): BSON.serialize(EJSON.parse(canonical, {relaxed: false})) gives back the exact input bytes.
 * 3. relaxed and canonical describe the same values: EJSON.parse(relaxed) and EJSON.parse(canonical) (both with
 *    relaxed: true) print the same under JSON.stringify.
 */
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { BSON, Decimal128, EJSON } from 'bson'
import { EjsonGen, Gen, hex } from '../support/gen'

const require = createRequire(import.meta.url)
const { toJSON, isTranscodeError } = require('../../index.js')

const SEED = Number(process.env.BSON2JSON_SEED ?? 20261122) >>> 0
const N_ANY = Number(process.env.BSON2JSON_EJSON_ANY ?? 20_000)
const N_RT = Number(process.env.BSON2JSON_EJSON_RT ?? 30_000)

describe('relaxed/canonical', () => {
  it(`${N_ANY} generated documents: valid JSON or a coded error`, () => {
    const g = new Gen(SEED ^ 0x5bd1e995)
    const fails: string[] = []
    let ok = 0
    let errs = 0
    for (let i = 0; i < N_ANY; i++) {
      const buf = g.root()
      for (const dialect of ['relaxed', 'canonical']) {
        for (const utf8 of ['strict', 'replace']) {
          try {
            const out = toJSON(buf, { dialect, utf8 })
            JSON.parse(out)
            ok++
          } catch (e: any) {
            if (isTranscodeError(e)) errs++
            else if (fails.length < 5) fails.push(`${dialect}/${utf8} hex ${hex(buf)}: ${String(e)}`)
          }
        }
      }
    }
    console.log(`[ejson any] docs=${N_ANY} outputs=${ok} codedErrors=${errs}`)
    expect(fails, fails.join('\n')).toEqual([])
  })

  it(`${N_RT} round-trip documents: canonical -> EJSON.parse -> BSON.serialize is byte-exact`, () => {
    const g = new EjsonGen(SEED, (s) => [...Decimal128.fromString(s).bytes])
    const fails: string[] = []
    let n = 0
    // sanity: the oracle must be discriminating -- the RELAXED text (which loses int32/int64/double types) must
    // fail the same byte-exact round trip for some documents (integral doubles, small int64s: ~16%)
    let relaxedNotExact = 0
    for (let i = 0; i < N_RT; i++) {
      const buf = g.root()
      n++
      let problem: string | null = null
      try {
        const canon = toJSON(buf, { dialect: 'canonical' })
        JSON.parse(canon)
        const back = Buffer.from(BSON.serialize(EJSON.parse(canon, { relaxed: false })))
        if (!back.equals(Buffer.from(buf))) problem = `canonical ${canon}\n   reserialized ${back.toString('hex')}`
        else {
          const relaxed = toJSON(buf, { dialect: 'relaxed' })
          if (!Buffer.from(BSON.serialize(EJSON.parse(relaxed, { relaxed: false }))).equals(Buffer.from(buf))) relaxedNotExact++
          const a = JSON.stringify(EJSON.parse(relaxed, { relaxed: true }))
          const b = JSON.stringify(EJSON.parse(canon, { relaxed: true }))
          if (a !== b) problem = `relaxed ${relaxed}\n   vs canonical ${canon}`
        }
      } catch (e) {
        problem = `threw ${String(e)}`
      }
      if (problem && fails.length < 5) fails.push(`hex ${hex(buf)}\n   ${problem}`)
    }
    console.log(`[ejson round trip] docs=${n} failures=${fails.length} relaxedNotExact=${relaxedNotExact}`)
    expect(relaxedNotExact).toBeGreaterThan(N_RT / 20)
    expect(fails, fails.join('\n')).toEqual([])
  })
})
