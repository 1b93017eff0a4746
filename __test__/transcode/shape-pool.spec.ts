/**
 * Compiled shapes (projection, redaction) take bounded memory however many distinct ones a
 * program uses, even in a loop that never yields (lib/shape.js: a pool of Shapers recompiled in
 * place, keyed by content): a count of the Shapers made, and the RSS of a child process over
 * 200,000 calls with distinct projections. A Shaper in use by a call is never recompiled under
 * it, even when JavaScript that runs mid-call compiles hundreds of other shapes.
 */
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const ROOT = path.join(__dirname, '..', '..')
const b2j = require(ROOT)
const native = require(path.join(ROOT, 'lib/native'))
const { POOL_MAX } = require(path.join(ROOT, 'lib/shape'))

const doc = BSON.serialize({ _id: 1, a: 1, ssn: 'S-1', s: 'x' })

describe('compiled shapes: bounded, and never changed under a call', () => {
  it(`200,000 distinct projections make at most ${POOL_MAX} Shapers; each call gets its own projection`, () => {
    const made = native.createShaper
    let n = 0
    native.createShaper = (...a: unknown[]) => {
      n++
      return made(...a)
    }
    try {
      for (let i = 0; i < 200_000; i++) {
        const out = b2j.toJSON(doc, { projection: { [`f${i % 5000}x${i}`]: 1, a: 1 } })
        if (out !== '{"_id":1,"a":1}') throw new Error(`call ${i}: ${out}`)
      }
    } finally {
      native.createShaper = made
    }
    expect(n).toBeLessThanOrEqual(POOL_MAX)
  })

  it('RSS grows by at most 40 MB over 200,000 toJSON calls with distinct projections in a loop that never yields', () => {
    // A child with --expose-gc, measured after a full GC. The young generation is capped
    // (--max-semi-space-size=1): V8 grows it with the allocation rate up to a fixed size,
    // whatever the loop's length, and that would be counted as growth. The control loop
    // builds the same projections without transcoding.
    const script = `
      const b2j = require(${JSON.stringify(ROOT)})
      const { BSON } = require('bson')
      const doc = BSON.serialize({ _id: 1, a: 1, s: 'x' })
      const mb = (x) => Math.round(x / 1e5) / 10
      const N = 200000
      let sink = 0
      gc()
      const r0 = process.memoryUsage().rss
      for (let i = 0; i < N; i++) sink += Object.keys({ ['c' + i]: 1, a: 1 }).length
      gc()
      const r1 = process.memoryUsage().rss
      for (let i = 0; i < N; i++) sink += b2j.toJSON(doc, { projection: { ['f' + i]: 1, a: 1 } }).length
      gc()
      const r2 = process.memoryUsage().rss
      console.log(JSON.stringify({ control: mb(r1 - r0), growth: mb(r2 - r1), sink }))
    `
    const r = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=1', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 })
    expect(r.stderr).toBe('')
    const m = JSON.parse(r.stdout)
    console.log(`RSS: control loop +${m.control} MB, 200,000 distinct projections +${m.growth} MB`)
    expect(m.growth).toBeLessThanOrEqual(40)
  })

  it("a Shaper in use is not recompiled when JavaScript run mid-call compiles others: redaction never fails open", () => {
    const other = BSON.serialize({ a: 1 })
    // The batch reads each element; this one's getter runs POOL_MAX + 50 calls with distinct
    // projections, which would recycle every Shaper not in use.
    const docs: Uint8Array[] = [doc, doc, doc, doc, doc]
    Object.defineProperty(docs, 2, {
      get() {
        for (let i = 0; i < POOL_MAX + 50; i++) b2j.toJSON(other, { projection: { [`mid${i}`]: 1 } })
        return doc
      },
    })
    const out = b2j.toJSONList(docs, { redact: { paths: ['ssn'] } }).map((s: string) => JSON.parse(s))
    expect(out).toHaveLength(5)
    for (const d of out) expect(d).toEqual({ _id: 1, a: 1, ssn: null, s: 'x' })
  })
})
