/**
 * The change events `watch()` gets (the binding's packed form, `transcodeChangeBatchPacked`,
 * built into objects by lib/native) against the binding's reference path, which sets every
 * property through Node-API (`transcodeChangeBatch`): the same objects, field for field and in
 * the same key order, the same errors, on random events that reach every operation of the
 * packed form (every field, present or not, of the expected type or not, in any order; odd
 * token shapes; split fragments; strings that are not ASCII or not UTF-8; strings long enough
 * to be values of their own; batches whose strings fill several texts).
 */
import { describe, expect, it } from 'vitest'
import { BSON, Long, Timestamp } from 'bson'
import { mulberry32 } from '../support/gen'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const native = require('../../lib/native')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const binding = require('../../lib/native/load').loadBackend().binding
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveOptions } = require('../../lib/options')

type Rng = () => number

/** A comparable form that keeps key order, prototypes, bytes and dates. */
function canon(v: unknown): unknown {
  if (typeof v === 'bigint') return ['bigint', String(v)]
  if (v === null || typeof v !== 'object') return v
  if (v instanceof Date) return ['date', String(v.getTime())]
  if (v instanceof Uint8Array) return [Object.getPrototypeOf(v).constructor.name, Buffer.from(v).toString('hex')]
  if (Array.isArray(v)) return ['array', v.map(canon)]
  return [Object.getPrototypeOf(v) === Object.prototype ? 'object' : 'other', Object.entries(v).map(([k, x]) => [k, canon(x)])]
}

function outcome(f: () => unknown): unknown {
  try {
    return canon(f())
  } catch (e: any) {
    return { name: e.name, message: e.message, code: e.code, offset: e.offset, index: e.index }
  }
}

const text = (r: Rng, n: number) => 'aé☃𝄞"\\\n\u0001z'.slice(0, Math.floor(r() * 10)) + 'x'.repeat(n)

/** A random change event: routing fields (sometimes of another type), unknown ones, any order. */
function event(r: Rng, i: number): Record<string, unknown> {
  const big = r() < 0.05 ? 20000 + Math.floor(r() * 20000) : Math.floor(r() * 600)
  const docPart = () => (r() < 0.15 ? (r() < 0.5 ? null : 'not a document') : { _id: i, s: text(r, big), n: r() * 1e6, d: new Date(1700000000000 + i), a: [1, 'two', { three: 3 }] })
  const pick = <T,>(xs: T[]) => xs[Math.floor(r() * xs.length)]
  const fields: [string, unknown][] = [
    ['_id', pick([{ _data: text(r, 60) }, { _data: text(r, 8) }, { _data: 'T' + i, extra: 1 }, { other: Long.fromNumber(i) }, 'not a document'])],
    ['operationType', pick(['insert', 'update', 'delete', 'replace', text(r, 20), 42])],
    ['clusterTime', pick([new Timestamp({ t: 1700000000 + i, i: 1 }), new Timestamp({ t: 0xffffffff, i: 0xffffffff }), new Timestamp({ t: 0, i: 0 }), 'ts'])],
    ['wallTime', pick([new Date(1700000000000 + i), new Date(-1), new Date(0), new Date(8.64e15), new Date(-62198755200000), 17])],
    ['ns', pick([{ db: 'd', coll: 'c' }, { db: text(r, 30) }, { coll: 'c' }, {}, { db: 5, coll: 'c', x: 'y' }, { coll: 'c', db: 'd' }, 'ns'])],
    ['splitEvent', pick([{ fragment: 1, of: 2 }, { fragment: -3 }, { of: 2147483647 }, {}, { fragment: 'x', of: -2147483648 }, [1]])],
    // (a regex the engine rejects, seldom: it fails the batch)
    ['documentKey', r() < 0.003 ? { _id: new BSON.BSONRegExp('(', 'i') } : pick([{ _id: i }, { _id: text(r, 40), sk: 2 }, {}, 'key', { _id: Long.fromNumber(i * 1e6) }, { $ref: 'c', $id: i }, { b: 1, 2: 'two', 1: 'one' }, { _id: /a"b}/im }, { _id: { s: '","documentKey":{"_id":0}}\\', n: [1, '}'] } }])],
    ['fullDocument', docPart()],
    ['fullDocumentBeforeChange', docPart()],
    ['updateDescription', docPart()],
    ['unknown', text(r, 10)],
  ]
  const d: Record<string, unknown> = {}
  for (const [k, v] of fields) if (r() < (k === '_id' || k === 'operationType' ? 0.95 : k === 'splitEvent' ? 0.1 : 0.7)) d[k] = v
  // any order, now and then; else `documentKey` last now and then (as in insert and delete
  // events, where `whole` takes its text from the event's)
  if (r() < 0.3) return Object.fromEntries(Object.entries(d).sort(() => r() - 0.5))
  if (r() < 0.4 && 'documentKey' in d) {
    const { documentKey, ...rest } = d
    return { ...rest, documentKey }
  }
  return d
}

/**
 * `ev`'s BSON with an invalid UTF-8 byte in its `operationType`, now and then: natively only,
 * where the reference's strings come from V8's UTF-8 decoding (U+FFFD per maximal invalid
 * subpart, as the packed form makes them); emnapi's decoding in the WASI build replaces them
 * otherwise (`\xffpdate` becomes two U+FFFD and `te`).
 */
function serialize(r: Rng, ev: Record<string, unknown>): Uint8Array {
  const b = BSON.serialize(ev)
  if (r() < 0.05 && native.name === 'native' && typeof ev.operationType === 'string' && ev.operationType.length > 2) {
    const at = Buffer.from(b).indexOf(Buffer.from('operationType\0'))
    b[at + 14 + 4] = 0xff
  }
  return b
}

/** A cursor document holding the given events (each its own BSON, spliced in as is). */
function cursor(events: Uint8Array[], id = 0): Uint8Array {
  const parts: Buffer[] = []
  events.forEach((e, i) => parts.push(Buffer.from([0x03]), Buffer.from(`${i}\0`), Buffer.from(e)))
  const body = Buffer.concat(parts)
  const arr = Buffer.concat([Buffer.alloc(4), body, Buffer.from([0])])
  arr.writeInt32LE(arr.length, 0)
  const head = BSON.serialize({ id: Long.fromNumber(id), ns: 'd.c' })
  const tail = BSON.serialize({ postBatchResumeToken: { _data: 'PB' } })
  const doc = Buffer.concat([
    Buffer.alloc(4),
    Buffer.from(head.subarray(4, head.length - 1)),
    Buffer.from([0x04]),
    Buffer.from('nextBatch\0'),
    arr,
    Buffer.from(tail.subarray(4, tail.length - 1)),
    Buffer.from([0]),
  ])
  doc.writeInt32LE(doc.length, 0)
  return doc
}

const OPTIONS = [resolveOptions({}), resolveOptions({ dialect: 'relaxed' }), resolveOptions({ dialect: 'canonical', maxOutputBytes: 30000 })]

describe('packed change events equal the reference path', () => {
  it('random batches: the same events, key order and errors, every operation reached', () => {
    const r = mulberry32(31).next
    const ops = new Set<number>()
    let extras = 0
    let texts = 0
    for (let round = 0; round < 150; round++) {
      const n = round % 10 === 0 ? 200 : 1 + Math.floor(r() * 20)
      const evs = Array.from({ length: n }, (_, i) => serialize(r, event(r, round * 1000 + i)))
      const c = cursor(evs, round)
      for (const o of OPTIONS) {
        for (const whole of [false, true]) {
          for (const raw of [false, true]) {
            const got = outcome(() => native.transcodeChangeBatch(c, whole, o, raw))
            const want = outcome(() => binding.transcodeChangeBatch(c, whole, o.packed, o.maxOutputBytes, raw))
            expect(got).toEqual(want)
            try {
              const p = binding.transcodeChangeBatchPacked(c, whole, o.packed, o.maxOutputBytes, raw).events
              const w = new Uint32Array(new Uint8Array(p[0]).buffer)
              // the operation codes, skipping operands, as the unpacker reads them
              const operands = [0, 1, 0, 1, 0, 1, 1, 2, 2, 2, 0, 1, 1, 2, 1, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0]
              for (let k = 0; k < w.length; k += 1 + operands[w[k]]) ops.add(w[k])
              if (p[1] !== null) extras += p[1].length
              texts = Math.max(texts, p.length - 2)
            } catch {
              // an error, compared above
            }
          }
        }
      }
    }
    expect([...ops].sort((a, b) => a - b)).toEqual(Object.values(binding.ChangeOp).sort((a: any, b: any) => a - b))
    expect(extras).toBeGreaterThan(0)
    expect(texts).toBeGreaterThan(1)
  })

  it('a last documentKey with `whole`: the same text, and the same error for a regex inside it', () => {
    const head = { _id: { _data: 'T1' }, operationType: 'insert', fullDocument: { _id: 1, r: /x/ }, ns: { db: 'd', coll: 'c' } }
    for (const key of [{ _id: 1 }, { _id: /a"b}/im }, { _id: new BSON.BSONRegExp('(', 'i') }, { _id: new BSON.BSONRegExp('a', 'i'), s: new BSON.BSONRegExp(')', '') }]) {
      const c = cursor([BSON.serialize({ ...head, documentKey: key }), BSON.serialize({ ...head, documentKey: key, x: 1 })])
      for (const o of OPTIONS) {
        const got = outcome(() => native.transcodeChangeBatch(c, true, o))
        const want = outcome(() => binding.transcodeChangeBatch(c, true, o.packed, o.maxOutputBytes))
        expect(got).toEqual(want)
      }
    }
  })

  it('split events: the merged fragments equal the reference merge', () => {
    const r = mulberry32(32).next
    for (let round = 0; round < 100; round++) {
      const ev = event(r, round)
      ev._id = { _data: 'T' + round }
      const keys = Object.keys(ev).filter((k) => k !== '_id')
      const frags: Uint8Array[] = []
      const of = 1 + Math.floor(r() * 3)
      for (let f = 0; f < of; f++) {
        const frag: Record<string, unknown> = { _id: { _data: `T${round}-${f}` }, splitEvent: { fragment: f + 1, of } }
        for (const k of keys.slice(Math.floor((f * keys.length) / of), Math.floor(((f + 1) * keys.length) / of))) frag[k] = ev[k]
        frags.push(BSON.serialize(frag))
      }
      for (const o of OPTIONS) {
        for (const whole of [false, true]) {
          const got = outcome(() => native.transcodeChangeFragments(frags, whole, o))
          const want = outcome(() => binding.transcodeChangeFragments(frags, whole, o.packed, o.maxOutputBytes))
          expect(got).toEqual(want)
        }
      }
    }
    expect(() => native.transcodeChangeFragments('x', false, OPTIONS[0])).toThrow(TypeError)
  })
})
