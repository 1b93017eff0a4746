/**
 * The properties of every TranscodeError (`code`, `offset`, `index` in batches, `detail`), and
 * resume tokens that are not `{ _data }` crossing from the binding as BSON bytes.
 */
import { describe, expect, it } from 'vitest'
import { BSON, EJSON, Int32, Long } from 'bson'
import { Readable } from 'node:stream'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const native = require('../../lib/native')
/** lib/native's change batch (event objects, `json` when `whole`) with flags 0, maxDepth 100. */
const changeBatch = (c: Uint8Array, whole: boolean) =>
  native.transcodeChangeBatch(c, whole ? native.EventFormat.Whole : native.EventFormat.Parts, { packed: native.packOptions(0, 100), maxOutputBytes: 1 << 28 })

const good = BSON.serialize({ a: 1, s: 'x' })
/** `good` with its string's terminator broken. */
const bad = Buffer.from(good)
bad[bad.length - 2] = 1

function caught(f: () => unknown): any {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error('expected a throw')
}

function expectProps(e: any, index?: number) {
  expect(e.name).toBe('TranscodeError')
  expect(e.code).toMatch(/^BSON_/)
  expect(typeof e.offset).toBe('number')
  expect(typeof e.detail).toBe('string')
  expect(e.detail.length).toBeGreaterThan(0)
  expect(e.message.startsWith(`${e.code}: ${e.detail}`)).toBe(true)
  expect(e.detail).not.toMatch(/at byte \d+$/)
  if (index === undefined) expect(e.index).toBeUndefined()
  else expect(e.index).toBe(index)
}

describe('TranscodeError properties', () => {
  it('sync, batch, async, cursor, change batch, projection, stream', async () => {
    expectProps(caught(() => b2j.toJSON(bad)))
    expectProps(caught(() => b2j.toJSONList([good, good, bad])), 2)
    expectProps(caught(() => b2j.toJSONArray(Buffer.concat([good, bad]))), 1)
    expectProps(await b2j.toJSONListAsync([good, bad]).catch((e: unknown) => e), 1)
    const cursor = (docs: Uint8Array[]) => {
      const c = BSON.serialize({ id: Long.fromNumber(0), ns: 'd.c', nextBatch: docs.map((d) => BSON.deserialize(d)) })
      return c
    }
    // a cursor with a broken document: built by hand (js-bson would not serialize one)
    const c = Buffer.from(cursor([good]))
    const at = c.indexOf(good)
    bad.copy(c, at)
    expectProps(caught(() => b2j.cursorBatch(c)), 0)
    const e = caught(() => changeBatch(c, true))
    expectProps(e, 0)
    expect(e.message).toMatch(/\(event 0\)$/)
    expectProps(caught(() => b2j.toJSON(good.subarray(0, good.length - 1), { projection: { a: 1 } })))
    const s = b2j.createTranscodeStream()
    const err: any = await new Promise((resolve) => {
      s.on('error', resolve)
      s.resume()
      Readable.from([Buffer.concat([good, good, bad])]).pipe(s)
    })
    expectProps(err, 2)
    // the byte within the document too: the offset less the two documents before it
    const inDoc = err.offset - 2 * good.length
    expect(err.message).toBe(`${err.code}: ${err.detail} (document 2, byte ${inDoc} of the document, byte offset ${err.offset} in the stream)`)
  })
})

describe('resume tokens', () => {
  const event = (id: object) => ({ _id: id, operationType: 'insert', clusterTime: new BSON.Timestamp({ t: 1, i: 2 }), documentKey: { _id: 1 } })
  const batch = (ids: object[], pbrt: object) =>
    BSON.serialize({ id: Long.fromNumber(0), ns: 'd.c', nextBatch: ids.map(event), postBatchResumeToken: pbrt })

  it('{_data} as an object, any other shape as a copy of its BSON', () => {
    const other = { k: new Int32(5), d: 1.5 }
    const input = batch([{ _data: 'AA' }, other], { x: 'y' })
    const b = changeBatch(input, false)
    expect(b.events[0].resumeToken).toEqual({ _data: 'AA' })
    const t = b.events[1].resumeToken
    expect(t).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(t)).toEqual(Buffer.from(BSON.serialize(other)))
    expect(t.buffer).not.toBe(input.buffer)
    expect(b.events[1].resumeTokenEJSON).toBeUndefined()
    expect(BSON.deserialize(b.postBatchResumeToken)).toEqual({ x: 'y' })
    expect(b.postBatchResumeTokenEJSON).toBeUndefined()
  })

  it('the change stream decodes them once; resumeTokenEJSON stays canonical EJSON', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ChangeStream } = require('../../lib/mongo/change-stream')
    const other = { k: new Int32(5), d: new BSON.Double(1.5), l: Long.fromNumber(7) }
    const b = changeBatch(batch([other], { _data: 'BB' }), false)
    const pushed: any[] = []
    const fake = Object.assign(Object.create(ChangeStream.prototype), {
      _position: undefined,
      _received: 0,
      _split: false,
      _pending: [],
      _checkpoint: null,
      _queue: [],
      _push: (x: unknown) => pushed.push(x),
    })
    expect(fake._acceptBatch(b)).toBe(null)
    const ev = pushed[0].events[0]
    expect(ev.resumeTokenEJSON).toBe(EJSON.stringify(other, { relaxed: false }))
    expect(BSON.serialize(ev.resumeToken)).toEqual(BSON.serialize(other))
    expect(fake._position).toEqual({ _data: 'BB' })
  })
})
