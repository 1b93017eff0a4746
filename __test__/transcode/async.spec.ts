// The libuv-pool and worker-thread paths: inputs copied before the Promise returns, deep input
// off the main thread, many concurrent tasks.
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const { toJSON, toJSONList, cursorBatch, toJSONAsync, toJSONListAsync, toNDJSONAsync } = require('../../index.js')

/** `{a:{a:{…}}}` nested `depth` levels, built iteratively (8 bytes per level). */
function nested(depth: number): Buffer {
  const total = 5 + (depth - 1) * 8
  const b = Buffer.alloc(total) // zero-filled: the terminators at the end are already there
  for (let level = 0; level < depth; level++) {
    const start = level * 7
    b.writeInt32LE(total - level * 8, start)
    if (level < depth - 1) {
      b[start + 4] = 0x03
      b[start + 5] = 0x61 // 'a'
      b[start + 6] = 0x00
    }
  }
  return b
}

describe('lists of small documents (one joined string cut into slices)', () => {
  it('toJSONList, toJSONListAsync and cursorBatch equal per-document toJSON, with non-ASCII and astral characters', async () => {
    const texts = ['a', 'é', '☆', '😀x', '', 'plain ascii text', '\u0001"\\', 'ü😀ü']
    const docs = Array.from({ length: 300 }, (_, i) => BSON.serialize({ i, t: texts[i % texts.length].repeat(i % 4) }))
    const want = docs.map((d) => toJSON(d))
    expect(toJSONList(docs)).toEqual(want)
    expect(toJSONList(Buffer.concat(docs))).toEqual(want)
    expect(await toJSONListAsync(docs)).toEqual(want)
    const cursor = BSON.serialize({ firstBatch: docs.map((d) => BSON.deserialize(d)), id: 0n, ns: 'db.c' })
    expect(cursorBatch({ cursor }).docs).toEqual(want)
    expect(toJSONList([])).toEqual([])
  })
})

describe('async and worker paths', () => {
  it('copies the input: mutating the Buffer right after the call does not change the result', async () => {
    const docs = Array.from({ length: 200 }, (_, i) => BSON.serialize({ i, s: 'x'.repeat(i), n: [i, i * 2] }))
    const expected = docs.map((d) => toJSON(d))
    const pending = toJSONListAsync(docs)
    const one = Buffer.from(docs[7])
    const single = toJSONAsync(one)
    for (const d of docs) d.fill(0xff)
    one.fill(0)
    expect(await pending).toEqual(expected)
    expect(await single).toBe(expected[7])
  })

  it('many concurrent tasks (more than the pool has threads) all resolve correctly, in order', async () => {
    const docs = Array.from({ length: 50 }, (_, i) => BSON.serialize({ i, t: 'é'.repeat(i % 7) }))
    const concat = Buffer.concat(docs)
    const want = docs.map((d) => toJSON(d) + '\n').join('')
    const results = await Promise.all(Array.from({ length: 64 }, (_, k) => toNDJSONAsync(concat, { threads: 1 + (k % 2) })))
    for (const r of results) expect(Buffer.from(r).toString()).toBe(want)
  })

  it('2x10^6 levels on the libuv pool: BSON_TOO_DEEP by default, OK with a higher maxDepth', async () => {
    const deep = nested(2_000_000)
    await expect(toJSONAsync(deep)).rejects.toMatchObject({ code: 'BSON_TOO_DEEP' })
    const out = await toJSONAsync(deep, { maxDepth: 3_000_000 })
    expect(out.length).toBe(2 + 6 * (2_000_000 - 1))
    expect(out.startsWith('{"a":{"a":')).toBe(true)
  })

  it('2x10^6 levels in a worker thread (small stack): no crash, same answers', async () => {
    const src = `
      const { parentPort } = require('node:worker_threads')
      const { toJSON } = require(${JSON.stringify(require.resolve('../../index.js'))})
      const depth = 2000000, total = 5 + (depth - 1) * 8, b = Buffer.alloc(total)
      for (let l = 0; l < depth; l++) { const s = l * 7; b.writeInt32LE(total - l * 8, s); if (l < depth - 1) { b[s + 4] = 3; b[s + 5] = 0x61 } }
      let code = null
      try { toJSON(b) } catch (e) { code = e.code }
      const len = toJSON(b, { maxDepth: 3000000 }).length
      parentPort.postMessage({ code, len })`
    const w = new Worker(src, { eval: true, resourceLimits: { stackSizeMb: 1 } })
    const msg = await new Promise<{ code: string; len: number }>((resolve, reject) => {
      w.once('message', resolve)
      w.once('error', reject)
    })
    await w.terminate()
    expect(msg.code).toBe('BSON_TOO_DEEP')
    expect(msg.len).toBe(2 + 6 * (2_000_000 - 1))
  })
})
