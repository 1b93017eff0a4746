/**
 * Random argument shapes thrown at every export (a seeded generator, so a failure is
 * reproducible from the printed seed): nothing crashes, and the only errors are TypeError,
 * RangeError and TranscodeError, thrown synchronously by the sync exports; the `*Async` ones
 * throw TypeError / RangeError synchronously and reject with a TranscodeError.
 */
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')

const SEED = Number(process.env.PROP_SEED || 0x5eed_b2)
const CASES = Number(process.env.PROP_CASES || 1500)

function rng(seed: number) {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 2 ** 32
  }
}

const good = BSON.serialize({ a: 1, r: /x/i, s: 'é' })
const cursor = BSON.serialize({ firstBatch: [{ a: 1 }], id: 0n, ns: 'd.c' })

function value(r: () => number, depth = 0): any {
  const pick = Math.floor(r() * 24)
  switch (pick) {
    case 0: return undefined
    case 1: return null
    case 2: return 'str'
    case 3: return [1, 2, 3]
    case 4: return -1
    case 5: return 1e9
    case 6: return NaN
    case 7: return 2n ** 70n
    case 8: return Symbol('s')
    case 9: return () => 1
    case 10: return Buffer.from(good)
    case 11: return good.subarray(0, Math.floor(r() * good.length))
    case 12: return new Uint16Array(4)
    case 13: return new DataView(new ArrayBuffer(8))
    case 14: return new ArrayBuffer(good.length)
    case 15: return Buffer.from(cursor)
    case 16: return { cursor: depth < 2 ? value(r, depth + 1) : cursor }
    case 17: return depth < 2 ? [value(r, depth + 1), value(r, depth + 1)] : [good]
    case 18: return new Proxy([good], {})
    case 19: return { valueOf: () => 3, [Symbol.toPrimitive]: () => 3 }
    case 20: return Object.create(null)
    case 21: {
      const v = new Uint8Array(new SharedArrayBuffer(good.length))
      v.set(good)
      return v
    }
    case 22: return true
    default: return { a: 1 }
  }
}

function options(r: () => number): any {
  const keys = ['dialect', 'utf8', 'maxDepth', 'maxOutputBytes', 'threads', 'nope', 'promoteLongs', 'bsonVersion', 'rowFormat', 'dateRenderMode']
  const vals = [undefined, null, 'relaxed', 'canonical', 'compat', 'replace', 'strict', -1, 0, 1, 1e9, 2.5, NaN, '5', true, false, 6, 7, {}, 'powersync', 'general', 2]
  if (r() < 0.2) return value(r)
  const o: any = {}
  for (const k of keys) if (r() < 0.3) o[k] = vals[Math.floor(r() * vals.length)]
  return o
}

function allowed(e: any): boolean {
  return e instanceof TypeError || e instanceof RangeError || b2j.isTranscodeError(e)
}

const sync = ['toJSON', 'toJSONBuffer', 'toJSONList', 'toJSONArray', 'toNDJSON', 'cursorBatch', 'toRow', 'toRows']
const async = ['toJSONAsync', 'toJSONListAsync', 'toJSONArrayAsync', 'toNDJSONAsync', 'toRowsAsync']

describe('random arguments to every export', () => {
  it(`only TypeError / RangeError / TranscodeError (seed ${SEED})`, async () => {
    const r = rng(SEED)
    const seen = new Set<string>()
    for (let i = 0; i < CASES; i++) {
      const input = value(r)
      const o = r() < 0.5 ? undefined : options(r)
      for (const name of sync) {
        try {
          b2j[name](input, o)
          seen.add('ok')
        } catch (e: any) {
          if (!allowed(e)) throw new Error(`case ${i} ${name}: ${e && e.constructor && e.constructor.name}: ${e && e.message}`)
          seen.add(e.constructor.name + (e.code ? ':' + e.code : ''))
        }
      }
      for (const name of async) {
        // A wrong argument throws synchronously (TypeError / RangeError); bad BSON rejects.
        let p: any
        try {
          p = b2j[name](input, o)
        } catch (e: any) {
          if (!(e instanceof TypeError || e instanceof RangeError)) throw new Error(`case ${i} ${name} threw synchronously: ${e && e.constructor && e.constructor.name}: ${e && e.message}`)
          seen.add(`sync ${e.constructor.name}`)
          continue
        }
        expect(p).toBeInstanceOf(Promise)
        try {
          await p
        } catch (e: any) {
          if (!b2j.isTranscodeError(e)) throw new Error(`case ${i} ${name} rejected with ${e && e.constructor && e.constructor.name}: ${e && e.message}`)
        }
      }
      try {
        b2j.createTranscodeStream(o).destroy()
      } catch (e: any) {
        if (!allowed(e)) throw new Error(`case ${i} createTranscodeStream: ${e && e.message}`)
      }
    }
    // The generator reaches successes and each kind of error.
    expect(seen.has('ok')).toBe(true)
    expect(seen.has('TypeError')).toBe(true)
    expect(seen.has('RangeError')).toBe(true)
    expect([...seen].some((k) => k.startsWith('Error:BSON_'))).toBe(true)
    expect(seen.has('sync TypeError') && seen.has('sync RangeError')).toBe(true)
  })
})
