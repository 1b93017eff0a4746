/**
 * The change events `watch()` gets: the binding's packed form (`transcodeChangeBatchPacked`),
 * decoded by lib/native/events.js (generated from crates/bson2json-core/src/mongo/layout.rs),
 * against an oracle written here from the events' own bytes (each element read in place, each
 * document transcoded alone with `toJSON`'s path): the same objects, field for field and in the
 * same key order, and the same errors, on random events that reach every operation of the
 * layout (every field, present or not, of the expected type or not, in any order; odd token
 * shapes; split fragments; strings that are not ASCII or not UTF-8; strings long enough to be
 * values of their own; batches whose strings fill several texts). The Kafka records the
 * binding makes are held to what lib/kafka made of these event objects before it had them
 * (its former `toMessage`, kept below as the plain twin). crates/bson2json-core/tests/
 * packed_events.rs holds the packer to its reference writer in Rust.
 */
import { describe, expect, it } from 'vitest'
import { BSON, Long, Timestamp } from 'bson'
import { mulberry32 } from '../support/gen'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const native = require('../../lib/native')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const binding = require('../../lib/native/load').loadBackend().binding
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ChangeOp, OPERAND_WORDS } = require('../../lib/native/events')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveOptions } = require('../../lib/options')

const F = native.EventFormat
type Rng = () => number

/** A comparable form that keeps key order, prototypes, bytes, maps and dates. */
function canon(v: unknown): unknown {
  if (typeof v === 'bigint') return ['bigint', String(v)]
  if (v === null || typeof v !== 'object') return v
  if (v instanceof Date) return ['date', String(v.getTime())]
  if (v instanceof Uint8Array) return [Object.getPrototypeOf(v).constructor.name, Buffer.from(v).toString('hex')]
  if (v instanceof Map) return ['map', [...v].map(([k, x]) => [canon(k), canon(x)])]
  if (Array.isArray(v)) return ['array', v.map(canon)]
  return [Object.getPrototypeOf(v) === Object.prototype ? 'object' : 'other', Object.entries(v).map(([k, x]) => [k, canon(x)])]
}

function outcome(f: () => unknown): unknown {
  try {
    return canon(f())
  } catch (e: any) {
    return { name: e.name, code: e.code, offset: e.offset, index: e.index }
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

/** `ev`'s BSON, now and then with an invalid UTF-8 byte in its `operationType`. */
function serialize(r: Rng, ev: Record<string, unknown>): Buffer {
  const b = Buffer.from(BSON.serialize(ev))
  if (r() < 0.05 && typeof ev.operationType === 'string' && ev.operationType.length > 2) {
    const at = b.indexOf(Buffer.from('operationType\0'))
    b[at + 14 + 4] = 0xff
  }
  return b
}

/** A cursor document holding the given events (each its own BSON, spliced in as is), and where each starts. */
function cursor(events: Uint8Array[], id = 0): { doc: Buffer; starts: number[] } {
  const parts: Buffer[] = []
  const rel: number[] = []
  let at = 4
  events.forEach((e, i) => {
    const head = Buffer.concat([Buffer.from([0x03]), Buffer.from(`${i}\0`)])
    parts.push(head, Buffer.from(e))
    rel.push(at + head.length)
    at += head.length + e.length
  })
  const arr = Buffer.concat([Buffer.alloc(4), ...parts, Buffer.from([0])])
  arr.writeInt32LE(arr.length, 0)
  const head = BSON.serialize({ id: Long.fromNumber(id), ns: 'd.c' })
  const tail = BSON.serialize({ postBatchResumeToken: { _data: 'PB' } })
  const before = Buffer.concat([Buffer.alloc(4), Buffer.from(head.subarray(4, head.length - 1)), Buffer.from([0x04]), Buffer.from('nextBatch\0')])
  const doc = Buffer.concat([before, arr, Buffer.from(tail.subarray(4, tail.length - 1)), Buffer.from([0])])
  doc.writeInt32LE(doc.length, 0)
  return { doc, starts: rel.map((x) => before.length + x) }
}

// ---- the oracle -------------------------------------------------------------------------------

interface El {
  key: string
  type: number
  start: number
  end: number
}

/** The elements of the document at `at` in `b` (keys, types, value ranges), read in place. */
function elements(b: Buffer, at = 0): El[] {
  const end = at + b.readInt32LE(at) - 1
  const out: El[] = []
  let p = at + 4
  while (p < end) {
    const type = b[p]
    const k = b.indexOf(0, p + 1)
    const key = b.toString('utf8', p + 1, k)
    const start = k + 1
    let len: number
    switch (type) {
      case 0x01:
      case 0x09:
      case 0x11:
      case 0x12:
        len = 8
        break
      case 0x02:
      case 0x0d:
      case 0x0e:
        len = 4 + b.readInt32LE(start)
        break
      case 0x03:
      case 0x04:
        len = b.readInt32LE(start)
        break
      case 0x05:
        len = 5 + b.readInt32LE(start)
        break
      case 0x07:
        len = 12
        break
      case 0x08:
        len = 1
        break
      case 0x0a:
        len = 0
        break
      case 0x0b: {
        const a = b.indexOf(0, start)
        len = b.indexOf(0, a + 1) + 1 - start
        break
      }
      case 0x10:
        len = 4
        break
      default:
        throw new Error(`element type ${type} not in the oracle`)
    }
    out.push({ key, type, start, end: start + len })
    p = start + len
  }
  return out
}

const str = (b: Buffer, e: El) => b.toString('utf8', e.start + 4, e.end - 1)

/** A document part's JSON the way `toJSON` makes it, or the error it throws (its offset moved to the cursor). */
class Oracle {
  error: any = null
  regex: any = null
  constructor(
    private o: any,
    private c: Buffer,
  ) {}

  json(index: number, start: number, end: number): string | undefined {
    try {
      return native.transcode(this.c.subarray(start, end), this.o, false)
    } catch (e: any) {
      if (/REGEX/.test(e.code)) {
        // the binding checks a batch's regexes once it is done
        this.regex ??= { name: e.name, code: e.code, index }
      } else this.error ??= { name: e.name, code: e.code, offset: start + e.offset, index }
      return undefined
    }
  }
}

/** The event object `watch()` gives for the event at `at` in the cursor `c` (its parts, or the whole event). */
function expectEvent(or: Oracle, c: Buffer, at: number, index: number, whole: boolean, raw: boolean): any {
  const els = elements(c, at)
  const fragment = raw && els.some((e) => e.key === 'splitEvent' && e.type === 0x03)
  const ev: any = {}
  for (const e of els) {
    if (fragment && e.key !== '_id' && e.key !== 'splitEvent') continue
    if (e.key === '_id' && e.type === 0x03) {
      const t = elements(c, e.start)
      ev.resumeToken = t.length === 1 && t[0].key === '_data' && t[0].type === 0x02 ? { _data: str(c, t[0]) } : Buffer.from(c.subarray(e.start, e.end))
    } else if (e.key === 'operationType' && e.type === 0x02) ev.operationType = str(c, e)
    else if (e.key === 'ns' && e.type === 0x03) {
      const ns: any = {}
      const fields = elements(c, e.start).filter((x) => x.type === 0x02)
      for (const k of ['db', 'coll']) for (const x of fields) if (x.key === k) ns[k] = str(c, x)
      ev.ns = ns
    } else if (e.key === 'clusterTime' && e.type === 0x11) ev.clusterTime = { t: c.readUInt32LE(e.start + 4), i: c.readUInt32LE(e.start) }
    else if (e.key === 'wallTime' && e.type === 0x09) ev.wallTime = new Date(Number(c.readBigInt64LE(e.start)))
    else if (e.key === 'splitEvent' && e.type === 0x03) {
      const s: any = {}
      const fields = elements(c, e.start).filter((x) => x.type === 0x10)
      for (const k of ['fragment', 'of']) for (const x of fields) if (x.key === k) s[k] = c.readInt32LE(x.start)
      ev.splitEvent = s
    } else if (e.key === 'documentKey' && e.type === 0x03) ev.documentKey = or.json(index, e.start, e.end)
    else if (!whole && ['fullDocument', 'fullDocumentBeforeChange', 'updateDescription'].includes(e.key)) ev[e.key] = e.type === 0x03 ? or.json(index, e.start, e.end) : null
  }
  if (fragment) ev.raw = Buffer.from(c.subarray(at, at + c.readInt32LE(at)))
  else if (whole) ev.json = or.json(index, at, at + c.readInt32LE(at))
  return ev
}

/** What the oracle expects of a whole batch: its events, or its first error (a regex's once the batch is read). */
function expectBatch(c: { doc: Buffer; starts: number[] }, o: any, whole: boolean, raw: boolean): unknown {
  const or = new Oracle(o, c.doc)
  const events = []
  for (let i = 0; i < c.starts.length; i++) {
    events.push(expectEvent(or, c.doc, c.starts[i], i, whole, raw))
    if (or.error) return or.error
  }
  if (or.regex) return or.regex
  return canon({ id: 0n, ns: 'd.c', postBatchResumeToken: { _data: 'PB' }, events })
}

/** A batch's outcome, its id always 0 (the oracle's). */
function got(c: { doc: Buffer }, format: number, o: any, raw: boolean): unknown {
  const r = outcome(() => native.transcodeChangeBatch(c.doc, format, o, raw))
  if (r !== null && typeof r === 'object' && 'code' in r && /REGEX/.test((r as any).code)) return { ...r, offset: undefined }
  return r
}

// ---- records: lib/kafka's former `toMessage` (the plain twin) --------------------------------

function toMessage(value: 'event' | 'fullDocument', ev: any) {
  const headers = new Map()
  headers.set(Buffer.from('operationType'), Buffer.from(String(ev.operationType)))
  if (ev.ns) headers.set(Buffer.from('ns'), Buffer.from(ev.ns.coll === undefined ? String(ev.ns.db) : `${ev.ns.db}.${ev.ns.coll}`))
  if (ev.clusterTime) headers.set(Buffer.from('clusterTime'), Buffer.from(`${ev.clusterTime.t}.${ev.clusterTime.i}`))
  let v
  if (value === 'fullDocument') v = ev.fullDocument === undefined || ev.fullDocument === null ? undefined : Buffer.from(ev.fullDocument)
  else v = Buffer.from(ev.json)
  return { key: ev.documentKey === undefined || ev.documentKey === null ? undefined : Buffer.from(ev.documentKey), value: v, headers }
}

/** The record fields and the routing fields a record carries beside them. */
const recordOf = (ev: any) => ({ key: ev.key, value: ev.value, headers: ev.headers })
const routingOf = (ev: any) => ({ resumeToken: ev.resumeToken, operationType: ev.operationType, ns: ev.ns, clusterTime: ev.clusterTime, splitEvent: ev.splitEvent, raw: ev.raw })

const OPTIONS = [resolveOptions({}), resolveOptions({ dialect: 'relaxed' }), resolveOptions({ dialect: 'canonical', maxOutputBytes: 30000 })]

describe('packed change events', () => {
  it('random batches: the oracle\u2019s events, key order and errors; records as lib/kafka made them; every operation reached', () => {
    const r = mulberry32(31).next
    const ops = new Set<number>()
    let extras = 0
    let texts = 0
    let errors = 0
    let records = 0
    for (let round = 0; round < 120; round++) {
      const n = round % 10 === 0 ? 200 : 1 + Math.floor(r() * 20)
      const evs = Array.from({ length: n }, (_, i) => serialize(r, event(r, round * 1000 + i)))
      const c = cursor(evs)
      for (const o of OPTIONS) {
        for (const raw of [false, true]) {
          const objects: Record<string, unknown> = {}
          for (const [format, whole] of [
            [F.Parts, false],
            [F.Whole, true],
          ] as const) {
            const want = expectBatch(c, o, whole, raw)
            expect(got(c, format, o, raw)).toEqual(want)
            if (!Array.isArray(want)) errors++
            else objects[format] = native.transcodeChangeBatch(c.doc, format, o, raw).events
          }
          // Kafka records: the former toMessage of the same events as objects
          for (const [format, value, from] of [
            [F.RecordEvent, 'event', F.Whole],
            [F.RecordFullDocument, 'fullDocument', F.Parts],
          ] as const) {
            const evsOf = objects[from] as any[] | undefined
            if (evsOf === undefined) continue
            const recs = native.transcodeChangeBatch(c.doc, format, o, raw).events
            expect(recs.length).toBe(evsOf.length)
            for (let i = 0; i < recs.length; i++) {
              const ev = evsOf[i]
              if (ev.raw !== undefined) expect(canon(recs[i])).toEqual(canon(ev))
              else {
                expect(canon(routingOf(recs[i]))).toEqual(canon(routingOf(ev)))
                expect(canon(recordOf(recs[i]))).toEqual(canon(toMessage(value, ev)))
                records++
              }
            }
          }
          // the operation codes, skipping operands, as the decoder reads them
          for (const format of Object.values(F) as number[]) {
            try {
              const p = binding.transcodeChangeBatchPacked(c.doc, format, o.packed, o.maxOutputBytes, raw).events
              const w = new Uint32Array(new Uint8Array(p[0]).buffer)
              for (let k = 0; k < w.length; k += 1 + OPERAND_WORDS[w[k]]) ops.add(w[k])
              if (p[1] !== null) extras += p[1].length
              texts = Math.max(texts, p.length - 3)
            } catch {
              // an error, compared above
            }
          }
        }
      }
    }
    expect([...ops].sort((a, b) => a - b)).toEqual(Object.values(ChangeOp).sort((a: any, b: any) => a - b))
    expect(extras).toBeGreaterThan(0)
    expect(texts).toBeGreaterThan(1)
    expect(errors).toBeGreaterThan(0)
    expect(records).toBeGreaterThan(1000)
  })

  it('snapshot records: the value is what lib/kafka wrote from the snapshot event (the event, or its fullDocument)', () => {
    const r = mulberry32(33).next
    for (let round = 0; round < 20; round++) {
      const evs = Array.from({ length: 1 + Math.floor(r() * 30) }, (_, i) => {
        const id = [i, text(r, 12), { a: i, b: [text(r, 3)] }][Math.floor(r() * 3)]
        return BSON.serialize({ _id: { k: id }, operationType: 'snapshot', ns: { db: text(r, 4), coll: 'c' }, documentKey: { _id: id }, fullDocument: { _id: id, s: text(r, Math.floor(r() * 400)), n: r() } })
      })
      const c = cursor(evs)
      for (const o of OPTIONS) {
        const objects = native.transcodeChangeBatch(c.doc, F.Parts, o).events
        for (const [value, format] of [
          ['event', F.RecordSnapshot],
          ['fullDocument', F.RecordFullDocument],
        ] as const) {
          const recs = native.transcodeChangeBatch(c.doc, format, o).events
          objects.forEach((ev: any, i: number) => {
            ev.json = `{"operationType":"snapshot","ns":${JSON.stringify(ev.ns)},"documentKey":${ev.documentKey},"fullDocument":${ev.fullDocument}}`
            expect(canon(recordOf(recs[i]))).toEqual(canon(toMessage(value, ev)))
            expect(canon(routingOf(recs[i]))).toEqual(canon(routingOf(ev)))
          })
        }
      }
    }
  })

  it('a last documentKey with `whole`: the same text, and the same error for a regex inside it', () => {
    const head = { _id: { _data: 'T1' }, operationType: 'insert', fullDocument: { _id: 1, r: /x/ }, ns: { db: 'd', coll: 'c' } }
    for (const key of [{ _id: 1 }, { _id: /a"b}/im }, { _id: new BSON.BSONRegExp('(', 'i') }, { _id: new BSON.BSONRegExp('a', 'i'), s: new BSON.BSONRegExp(')', '') }]) {
      const c = cursor([BSON.serialize({ ...head, documentKey: key }), BSON.serialize({ ...head, documentKey: key, x: 1 })])
      for (const o of OPTIONS) expect(got(c, F.Whole, o, false)).toEqual(expectBatch(c, o, true, false))
    }
  })

  // Debezium's envelope carries the time it was written (its top-level `ts_ms`): two calls
  // straddling a millisecond differ there and nowhere else.
  const noClock = (x: any) =>
    x !== null && typeof x === 'object' && Buffer.isBuffer(x.value)
      ? { ...x, value: x.value.toString('utf8').replace(/"ts_ms":\d+,"transaction":/, '"ts_ms":0,"transaction":') }
      : x

  it('split events: the merged fragments equal the unsplit event, in every format', () => {
    const r = mulberry32(32).next
    for (let round = 0; round < 100; round++) {
      const ev = event(r, round)
      ev._id = { _data: 'T' + round }
      delete ev.splitEvent
      const keys = Object.keys(ev).filter((k) => k !== '_id')
      const frags: Uint8Array[] = []
      const of = 1 + Math.floor(r() * 3)
      for (let f = 0; f < of; f++) {
        const frag: Record<string, unknown> = { _id: { _data: `T${round}-${f}` }, splitEvent: { fragment: f + 1, of } }
        for (const k of keys.slice(Math.floor((f * keys.length) / of), Math.floor(((f + 1) * keys.length) / of))) frag[k] = ev[k]
        frags.push(BSON.serialize(frag))
      }
      // the merge: the last fragment's _id, then every other field in order
      const merged = BSON.serialize({ _id: { _data: `T${round}-${of - 1}` }, ...Object.fromEntries(keys.map((k) => [k, ev[k]])) })
      for (const o of OPTIONS) {
        for (const format of Object.values(F) as number[]) {
          // a snapshot's records are made from documents, never from split events
          if (format === F.RecordSnapshot || format === F.RecordMongoKafkaSnapshot || format === F.RecordDebeziumSnapshot) continue
          const want = outcome(() => noClock(native.transcodeChangeBatch(cursor([merged]).doc, format, o).events[0]))
          const one = outcome(() => noClock(native.transcodeChangeFragments(frags, format, o)))
          if (want !== null && typeof want === 'object' && 'code' in want) expect(one).toMatchObject({ code: (want as any).code })
          else expect(one).toEqual(want)
        }
      }
    }
    expect(() => native.transcodeChangeFragments('x', F.Parts, OPTIONS[0])).toThrow(TypeError)
    expect(() => native.transcodeChangeBatch(cursor([]).doc, 99, OPTIONS[0])).toThrow(TypeError)
  })
})
