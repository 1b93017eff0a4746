/**
 * A `compat` regex that V8 refuses, in a batch transcoded on the libuv pool: the Promise
 * rejects with a TranscodeError (BSON_INVALID_REGEX). It used to escape as an uncaught
 * exception that ended the process (the CLI's `dump --threads 2` of such a file too).
 */
import { describe, it, expect } from 'vitest'
import { createRequire } from 'node:module'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const b2j = require('../../index.js')

describe('a regex V8 refuses in a batch: its offset', () => {
  // A concatenated batch reports every error at its byte in the input, an array of documents
  // at its byte in the document: the pattern's first byte, as for a single document.
  const docs = [{ a: 1 }, { b: 'xx' }, { c: new BSON.BSONRegExp('(', '') }].map((d) => BSON.serialize(d))
  const inDoc = 7 // 4 (length) + 1 (type) + 'c\0'
  const start = docs[0].length + docs[1].length
  const catches = async (f: () => unknown) => {
    try {
      await f()
    } catch (e) {
      return e as any
    }
    return null
  }

  it('concatenated: in the input, on every path', async () => {
    expect((await catches(() => b2j.toJSON(docs[2]))).offset).toBe(inDoc)
    const buf = Buffer.concat(docs)
    for (const [name, f] of [
      ['toNDJSON', () => b2j.toNDJSON(buf)],
      ['toNDJSON threads 2', () => b2j.toNDJSON(buf, { threads: 2 })],
      ['toJSONList', () => b2j.toJSONList(buf)],
      ['toNDJSONAsync', () => b2j.toNDJSONAsync(buf)],
      ['toNDJSONAsync threads 2', () => b2j.toNDJSONAsync(buf, { threads: 2 })],
    ] as const) {
      const e = await catches(f)
      expect(e?.code, name).toBe('BSON_INVALID_REGEX')
      expect([e.index, e.offset], name).toEqual([2, start + inDoc])
    }
  })

  it('an array of documents: in the document', async () => {
    for (const [name, f] of [
      ['toNDJSON', () => b2j.toNDJSON(docs)],
      ['toNDJSONAsync', () => b2j.toNDJSONAsync(docs)],
    ] as const) {
      const e = await catches(f)
      expect([e?.code, e?.index, e?.offset], name).toEqual(['BSON_INVALID_REGEX', 2, inDoc])
    }
  })
})

describe('*Async with a regex V8 refuses', () => {
  it('rejects with BSON_INVALID_REGEX, and the next call works', async () => {
    const bad = BSON.serialize({ r: new BSON.BSONRegExp('(', '') })
    const ok = BSON.serialize({ a: 1 })
    for (const call of ['toNDJSONAsync', 'toJSONListAsync', 'toJSONArrayAsync']) {
      const e: any = await b2j[call](Buffer.concat([ok, bad]), { threads: 1 }).then(
        () => null,
        (x: any) => x,
      )
      expect(e, call).not.toBeNull()
      expect(b2j.isTranscodeError(e)).toBe(true)
      expect(e.code).toBe('BSON_INVALID_REGEX')
      expect(e.index).toBe(1)
    }
    expect((await b2j.toNDJSONAsync(ok)).toString()).toBe('{"a":1}\n')
    // relaxed has no RegExp check
    expect((await b2j.toNDJSONAsync(bad, { dialect: 'relaxed' })).toString()).toBe('{"r":{"$regularExpression":{"pattern":"(","options":""}}}\n')
  })
})
