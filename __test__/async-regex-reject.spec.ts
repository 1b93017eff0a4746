/**
 * A `compat` regex that V8 refuses, in a batch transcoded on the libuv pool: the Promise
 * rejects with a TranscodeError (BSON_INVALID_REGEX). It used to escape as an uncaught
 * exception that ended the process (the CLI's `dump --threads 2` of such a file too).
 */
import { describe, it, expect } from 'vitest'
import { createRequire } from 'node:module'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const b2j = require('../index.js')

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
