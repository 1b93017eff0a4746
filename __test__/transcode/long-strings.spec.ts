/**
 * Long outputs: JSON that could exceed V8's largest regular heap object (128 KiB) is handed over
 * as a rope of parts of at most 65,504 UTF-8 bytes cut between characters, list texts are cut at
 * document boundaries into texts of at most 64 KiB, and texts over 8 MiB of UTF-8 stay flat.
 * Every size around those limits, with ASCII, two-byte and astral (surrogate pair) characters at
 * both parities, must give the same strings as the baseline.
 */
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const { toJSON, toJSONList, toJSONArray, toJSONListAsync, cursorBatch } = require('../../index.js')

const baseline = (b: Uint8Array) => JSON.stringify(BSON.deserialize(b))

/** A document whose JSON is exactly `units` UTF-16 code units long: `{"s":"<fill>"}`. */
function docOfLength(units: number, fill: string): Buffer {
  const body = units - '{"s":""}'.length
  let s = fill.repeat(Math.ceil(body / fill.length)).slice(0, body)
  // never end on half a surrogate pair: pad with ASCII instead
  if (/[\uD800-\uDBFF]$/.test(s)) s = s.slice(0, -1) + 'x'
  const b = Buffer.from(BSON.serialize({ s }))
  expect(baseline(b).length).toBe(units)
  return b
}

const PART = 32 * 1024
const FILLS = {
  ascii: 'abcdefghij',
  twoByte: 'aé€',
  astral: 'x😀', // a pair starts at every odd index: some part boundary cuts one
  astralEven: '😀',
}

describe('long outputs', () => {
  it('toJSON equals the baseline at every size around the flat/rope limits', () => {
    const sizes = [
      PART - 1, PART, PART + 1,
      2 * PART - 40, 2 * PART - 33, 2 * PART - 32, 2 * PART, 2 * PART + 1, // 128 KiB two-byte
      4 * PART - 40, 4 * PART - 32, 4 * PART, 4 * PART + 1, // 128 KiB one-byte
      5 * PART + 7, 17 * PART + 3,
      // UTF-8 part size 65,504 bytes; ASCII flat up to 131,008
      32_750, 32_751, 32_752, 32_753, 65_503, 65_504, 65_505, 131_007, 131_008, 131_009,
    ]
    for (const [name, fill] of Object.entries(FILLS)) {
      for (const n of sizes) {
        const b = docOfLength(n, fill)
        const got = toJSON(b)
        if (got !== baseline(b)) throw new Error(`${name} ${n}: differs from the baseline`)
      }
    }
  })

  it('a document with mixed content (objects, numbers, escapes, non-ASCII) over 128 KiB', () => {
    const items = Array.from({ length: 3000 }, (_, i) => ({
      i,
      name: ['José', 'Σοφία', '山田 太郎', 'plain', 'tab\there "q" \\ 😀'][i % 5],
      v: i * 1.25,
      d: new Date(1700000000000 + i),
    }))
    const b = BSON.serialize({ items })
    expect(baseline(b).length).toBeGreaterThan(4 * PART)
    expect(toJSON(b)).toBe(baseline(b))
    // relaxed writes integral doubles as `1.0` where EJSON.stringify writes `1`: equal once parsed
    const ejson = BSON.EJSON.stringify(BSON.deserialize(b, { promoteValues: false }), { relaxed: true })
    expect(JSON.parse(toJSON(b, { dialect: 'relaxed' }))).toEqual(JSON.parse(ejson))
  })

  it('toJSONList / toJSONListAsync / cursorBatch: many small documents and a few huge ones, split at document boundaries', async () => {
    const docs: Buffer[] = []
    for (let i = 0; i < 900; i++) {
      const fill = Object.values(FILLS)[i % 4]
      docs.push(Buffer.from(BSON.serialize({ i, s: fill.repeat(i % 97) })))
      if (i === 300) docs.push(docOfLength(5 * PART + 1, FILLS.astral)) // larger than one text
      if (i === 600) docs.push(docOfLength(2 * PART, FILLS.ascii))
    }
    const want = docs.map(baseline)
    expect(want.join('').length).toBeGreaterThan(8 * PART)
    expect(toJSONList(docs)).toEqual(want)
    expect(toJSONList(Buffer.concat(docs))).toEqual(want)
    expect(await toJSONListAsync(docs)).toEqual(want)
    const cursor = BSON.serialize({ firstBatch: docs.map((d) => BSON.deserialize(d)), id: 0n, ns: 'db.c' })
    expect(cursorBatch({ cursor }).docs).toEqual(want)
    // only small documents (the joined layout)
    const small = docs.filter((d) => d.length < 1000)
    expect(toJSONList(small)).toEqual(small.map(baseline))
  })

  it('toJSONArray: one multi-megabyte string', () => {
    const docs = Array.from({ length: 2000 }, (_, i) =>
      Buffer.from(BSON.serialize({ i, s: (i % 3 ? 'Ølaf ' : 'plain ').repeat(200), e: i % 7 ? '' : '😀' })),
    )
    const got = toJSONArray(docs)
    expect(got.length).toBeGreaterThan(2_000_000)
    expect(got).toBe(`[${docs.map(baseline).join(',')}]`)
  })

  it('texts just under 8 MiB of UTF-8 (a rope of ~130 parts) and over it (kept flat) equal the baseline', () => {
    for (const units of [4_150_000, 8_500_000]) {
      const b = docOfLength(units, FILLS.twoByte) // 2 UTF-8 bytes per unit on average
      expect(toJSON(b)).toBe(baseline(b))
    }
  })

  it('in worker threads, each with its own join function, before and after others exit', async () => {
    const { Worker } = await import('node:worker_threads')
    const entry = require.resolve('../../index.js')
    const code = `const { parentPort } = require('worker_threads')
      const { BSON } = require(${JSON.stringify(require.resolve('bson'))})
      const { toJSON } = require(${JSON.stringify(entry)})
      const b = BSON.serialize({ s: 'é😀'.repeat(100000) })
      parentPort.postMessage(toJSON(b) === JSON.stringify(BSON.deserialize(b)) ? 'ok' : 'differs')`
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const w = new Worker(code, { eval: true })
        w.on('message', (m) => {
          resolve(m)
          void w.terminate()
        })
        w.on('error', reject)
      })
    expect(await Promise.all([run(), run(), run()])).toEqual(['ok', 'ok', 'ok'])
    expect(await run()).toBe('ok')
    const b = docOfLength(3 * PART + 5, FILLS.astral)
    expect(toJSON(b)).toBe(baseline(b))
  })
})
