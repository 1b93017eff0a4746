/**
 * maxOutputBytes bounds the whole output of a batch call, the closing `]` of a JSON array too
 * (issue 48: `toJSONArray` went 1 byte over): a cap one byte below the output's length is
 * `BSON_OUTPUT_TOO_LARGE`, a cap of exactly its length passes, on every batch call and thread count.
 */
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')

const docs = [1, 2, 3].map((i) => BSON.serialize({ _id: i, s: 'abc' }))
const concatenated = Buffer.concat(docs)

describe('maxOutputBytes counts every byte of the output', () => {
  const calls: [string, (o: object) => Uint8Array | string | string[] | Promise<unknown>][] = [
    ['toJSONArray', (o) => b2j.toJSONArray(docs, o)],
    ['toJSONArray, concatenated', (o) => b2j.toJSONArray(concatenated, o)],
    ['toJSONArray, 2 threads', (o) => b2j.toJSONArray(docs, { ...o, threads: 2 })],
    ['toJSONArrayAsync', (o) => b2j.toJSONArrayAsync(docs, o)],
    ['toNDJSON', (o) => b2j.toNDJSON(docs, o)],
    ['toNDJSONAsync', (o) => b2j.toNDJSONAsync(docs, o)],
  ]
  for (const [name, call] of calls) {
    it(name, async () => {
      const full = await call({})
      const len = Buffer.byteLength(typeof full === 'string' ? full : Buffer.from(full as Uint8Array))
      await expect((async () => call({ maxOutputBytes: len - 1 }))()).rejects.toMatchObject({ code: 'BSON_OUTPUT_TOO_LARGE' })
      const exact = await call({ maxOutputBytes: len })
      expect(Buffer.from(exact as Uint8Array).equals(Buffer.from(full as Uint8Array))).toBe(true)
    })
  }
})
