/**
 * Split events (`$changeStreamSplitLargeEvent`) reassembled at the BSON level by
 * `transcodeChangeFragmentsPacked` (lib/native `transcodeChangeFragments`), differentially against js-bson: random large events are split
 * into fragments (serialized with `BSON.serialize`), carried through `transcodeChangeBatch`
 * (`rawFragments`) across several batches, merged, and compared with a js-bson merge of the
 * `BSON.deserialize`d fragments, and with the unsplit event through `transcodeChangeBatch`.
 */
import { describe, expect, it } from 'vitest'
import { BSON, EJSON, Long, ObjectId, Timestamp } from 'bson'
import { mulberry32 } from '../support/gen'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const native = require('../../lib/native')

const COMPAT = 0
const RELAXED = 1
const MAX_DEPTH = 100
const MAX_OUT = 1 << 28

/** lib/native's change-batch calls with these options, as event objects (`json` when `whole`). */
const opts = (flags: number) => ({ packed: native.packOptions(flags, MAX_DEPTH), maxOutputBytes: MAX_OUT })
const format = (whole: boolean) => (whole ? native.EventFormat.Whole : native.EventFormat.Parts)
const batch = (c: Uint8Array, whole: boolean, flags: number, raw = false) => native.transcodeChangeBatch(c, format(whole), opts(flags), raw)
const fragments = (f: unknown, whole: boolean, flags: number) => native.transcodeChangeFragments(f, format(whole), opts(flags))

type Rng = () => number

function value(r: Rng, depth: number): unknown {
  const k = Math.floor(r() * (depth > 3 ? 7 : 9))
  switch (k) {
    case 0:
      return Math.floor(r() * 2 ** 31) - 2 ** 30
    case 1:
      return (r() - 0.5) * 1e6 + 0.25
    case 2:
      return 'é☃𝄞"\\\n'.slice(0, Math.floor(r() * 8)) + 'x'.repeat(Math.floor(r() * 2000))
    case 3:
      return r() < 0.5
    case 4:
      return null
    case 5:
      return new Date(Math.floor(r() * 2e12))
    case 6:
      return new ObjectId(Buffer.from(Array.from({ length: 12 }, () => Math.floor(r() * 256))))
    case 7:
      return Array.from({ length: Math.floor(r() * 5) }, () => value(r, depth + 1))
    default:
      return doc(r, depth + 1, Math.floor(r() * 6))
  }
}

function doc(r: Rng, depth: number, n: number): Record<string, unknown> {
  const d: Record<string, unknown> = {}
  for (let i = 0; i < n; i++) d[`f${i}_${Math.floor(r() * 100)}`] = value(r, depth)
  return d
}

/** A large change event's fields after `_id`, in the server's order. */
function eventFields(r: Rng, i: number): [string, unknown][] {
  const fields: [string, unknown][] = [
    ['operationType', r() < 0.5 ? 'update' : 'replace'],
    ['clusterTime', new Timestamp({ t: 1700000000 + i, i: 1 })],
    ['wallTime', new Date(1700000000000 + i)],
    ['ns', { db: 'd', coll: 'c' }],
    ['documentKey', { _id: i }],
    ['fullDocument', doc(r, 0, 4 + Math.floor(r() * 20))],
  ]
  if (r() < 0.5) fields.push(['fullDocumentBeforeChange', doc(r, 0, 4 + Math.floor(r() * 10))])
  if (r() < 0.5) fields.push(['updateDescription', { updatedFields: doc(r, 1, 3), removedFields: ['x'], truncatedArrays: [] }])
  return fields
}

/** The fragments of an event: each `{_id, splitEvent, ...some fields}`, the fields in order. */
function split(r: Rng, i: number, fields: [string, unknown][]): Record<string, unknown>[] {
  const n = 1 + Math.floor(r() * Math.min(4, fields.length))
  const cuts = new Set<number>()
  while (cuts.size < n - 1) cuts.add(1 + Math.floor(r() * (fields.length - 1)))
  const bounds = [0, ...[...cuts].sort((a, b) => a - b), fields.length]
  const frags = []
  for (let f = 0; f < n; f++) {
    const frag: Record<string, unknown> = { _id: { _data: `T${i}-${f}` }, splitEvent: { fragment: f + 1, of: n } }
    for (const [k, v] of fields.slice(bounds[f], bounds[f + 1])) frag[k] = v
    frags.push(frag)
  }
  return frags
}

function cursor(events: object[]): Uint8Array {
  return BSON.serialize({ id: Long.fromNumber(0), ns: 'd.c', nextBatch: events })
}

/** js-bson's merge of deserialized fragments: the last `_id`, then every other field in order. */
function jsMerge(raws: Uint8Array[], opts: object): Record<string, unknown> {
  const frags = raws.map((raw) => BSON.deserialize(raw, opts))
  const merged: Record<string, unknown> = { _id: frags[frags.length - 1]._id }
  for (const f of frags) for (const k of Object.keys(f)) if (k !== '_id' && k !== 'splitEvent') merged[k] = f[k]
  return merged
}

describe('split events merged at the BSON level', () => {
  for (const [name, flags] of [['compat', COMPAT], ['relaxed', RELAXED]] as const) {
    it(`random split events across batches equal js-bson's merge and the unsplit event (${name})`, () => {
      const rng = mulberry32(flags === COMPAT ? 7 : 11)
      const r = rng.next
      let merged = 0
      for (let round = 0; round < 60; round++) {
        const whole = round % 2 === 0
        // several events, their fragments spread over batches of random sizes
        const events: { fields: [string, unknown][]; frags: Record<string, unknown>[] }[] = []
        for (let i = 0; i < 3; i++) {
          const fields = eventFields(r, round * 10 + i)
          events.push({ fields, frags: split(r, round * 10 + i, fields) })
        }
        const all = events.flatMap((e) => e.frags)
        const batches: Record<string, unknown>[][] = []
        for (let at = 0; at < all.length; ) {
          const n = 1 + Math.floor(r() * 3)
          batches.push(all.slice(at, at + n))
          at += n
        }
        const got: any[] = []
        let pending: Uint8Array[] = []
        for (const b of batches) {
          for (const ev of batch(cursor(b), whole, flags, true).events) {
            expect(ev.raw).toBeInstanceOf(Uint8Array)
            expect(Object.keys(ev).sort()).toEqual(['raw', 'resumeToken', 'splitEvent'])
            pending.push(ev.raw)
            if (ev.splitEvent.fragment === ev.splitEvent.of) {
              got.push({ ev: fragments(pending, whole, flags), raws: pending })
              pending = []
            }
          }
        }
        expect(pending).toEqual([])
        expect(got.length).toBe(events.length)
        for (let i = 0; i < events.length; i++) {
          const { ev, raws } = got[i]
          const { fields, frags } = events[i]
          // the same object transcodeChangeBatch gives for the unsplit event
          const unsplit = Object.fromEntries([['_id', frags[frags.length - 1]._id], ...fields])
          const one = batch(cursor([unsplit]), whole, flags, true).events[0]
          expect(ev).toEqual(one)
          expect(Object.keys(ev)).toEqual(Object.keys(one))
          // against js-bson's merge of the deserialized fragments
          if (flags === COMPAT) {
            const js = jsMerge(raws, {})
            if (whole) expect(ev.json).toBe(JSON.stringify(js))
            else expect(ev.fullDocument).toBe(JSON.stringify(js.fullDocument))
          } else {
            const js = jsMerge(raws, { promoteValues: false })
            const same = (text: string, v: unknown) =>
              expect(JSON.stringify(EJSON.parse(text, { relaxed: true }))).toBe(JSON.stringify(EJSON.parse(EJSON.stringify(v, { relaxed: false }), { relaxed: true })))
            if (whole) same(ev.json, js)
            else same(ev.fullDocument, js.fullDocument)
          }
          expect(ev.resumeToken).toEqual(frags[frags.length - 1]._id)
          merged++
        }
      }
      expect(merged).toBe(180)
    })
  }

  it('an event without splitEvent is unchanged by rawFragments; a broken fragment throws a TranscodeError', () => {
    const plain = { _id: { _data: 'A' }, operationType: 'insert', documentKey: { _id: 1 }, fullDocument: { a: 1 } }
    const a = batch(cursor([plain]), false, COMPAT, true).events[0]
    const b = batch(cursor([plain]), false, COMPAT).events[0]
    expect(a).toEqual(b)
    const frag = BSON.serialize({ _id: { _data: 'A' }, splitEvent: { fragment: 1, of: 1 }, a: 1 })
    let e: any
    try {
      fragments([frag, frag.subarray(0, frag.length - 1)], false, COMPAT)
    } catch (x) {
      e = x
    }
    expect(e.name).toBe('TranscodeError')
    expect(e.index).toBe(1)
    expect(typeof e.detail).toBe('string')
    expect(() => fragments('x', false, COMPAT)).toThrow(TypeError)
  })
})
