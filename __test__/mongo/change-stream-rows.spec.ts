/**
 * watch({ rows: true }): each event's documentKey, fullDocument and fullDocumentBeforeChange as
 * rows (docs/rows.md), made in the same native pass as the event: the same rows `toRow` makes of
 * those documents (their raw BSON, read by the driver with `raw: true`), in both formats, and the
 * rest of the event as without `rows`. Against the in-repo test server, or MONGODB_URI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BSON, Binary, Decimal128, Double, Int32, Long, MongoClient, ObjectId, Timestamp } from 'mongodb'
import type { Collection, Db } from 'mongodb'
import { clusterTimeNow, take, useMongo } from '../support/mongo'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')

const mongo = useMongo()
let client: MongoClient
let db: Db
let counter = 0

beforeAll(async () => {
  client = new MongoClient(mongo.uri)
  await client.connect()
  db = client.db(mongo.dbName('csrows'))
})

afterAll(async () => {
  await client?.close()
})

function fresh(): Collection {
  counter += 1
  return db.collection(`rows${counter}`)
}

function doc(i: number) {
  return {
    _id: new ObjectId(`64b7f0c2a1b2c3d4e5f6${String(i).padStart(4, '0')}`),
    i,
    s: `text ${i} ünïcödé "q"`,
    i32: new Int32(i),
    dbl: new Double(i + 0.25),
    whole: new Double(3),
    long: Long.fromString('9007199254740993'),
    dec: Decimal128.fromString('1.10'),
    date: new Date(1_700_000_000_000 + i),
    bin: new Binary(Buffer.from([1, 2, 3, i & 255])),
    ts: new Timestamp({ t: 42, i: 7 }),
    t: true,
    nested: { a: [1, { b: null, c: true }], d: new Date(0) },
    nul: null,
  }
}

describe('watch({ rows: true })', () => {
  for (const [label, extra] of [
    ['general format', {}],
    ["rowFormat 'powersync'", { rowFormat: 'powersync', dateRenderMode: 1 }],
  ] as const) {
    it(`fullDocument and documentKey as the rows toRow makes (${label})`, async () => {
      const coll = fresh()
      const warm = { _id: new ObjectId(), warm: 1 }
      await coll.insertOne(warm)
      const at = await clusterTimeNow(client, db)
      const docs = Array.from({ length: 12 }, (_, i) => doc(i))
      // the warm-up insert may be the first event (its clusterTime can equal `at`)
      const inserted = [warm, ...docs]
      await coll.insertMany(docs)
      await coll.updateOne({ i: 1 }, { $set: { s: 'changed' } })
      await coll.deleteOne({ i: 2 })
      const cs = b2j.watch(coll, [], { rows: true, fullDocument: 'updateLookup', startAtOperationTime: at, maxAwaitTimeMS: 50, ...extra })
      const plain = b2j.watch(coll, [], { fullDocument: 'updateLookup', startAtOperationTime: at, maxAwaitTimeMS: 50 })
      try {
        const n = 14
        let [events, plainEvents] = await Promise.all([take(cs, n), take(plain, n)])
        if (events[0].fullDocument?.warm !== undefined) {
          ;[events, plainEvents] = [[...events.slice(1), ...(await take(cs, 1))], [...plainEvents.slice(1), ...(await take(plain, 1))]]
        }
        expect(events.length).toBe(14)
        const raw = await coll.find({}, { raw: true }).toArray()
        const byId = new Map(raw.map((r: any) => [BSON.deserialize(r)._id.toHexString(), r]))
        const rowOf = (bson: Uint8Array) => b2j.toRow(bson, extra)
        for (let k = 0; k < events.length; k++) {
          const ev = events[k]
          const pe = plainEvents[k]
          // the rest of the event as without rows
          expect([ev.operationType, ev.ns, ev.clusterTime, ev.resumeToken]).toEqual([pe.operationType, pe.ns, pe.clusterTime, pe.resumeToken])
          const id = JSON.parse(pe.documentKey)._id.$oid ?? JSON.parse(pe.documentKey)._id
          expect(ev.documentKey).toStrictEqual(rowOf(BSON.serialize({ _id: new ObjectId(id) })))
          if (ev.operationType === 'delete') {
            expect(ev.fullDocument).toBeUndefined()
            continue
          }
          // an insert's document as inserted; an update's as looked up (the collection's now)
          const want = ev.operationType === 'insert' ? BSON.serialize(inserted.find((d) => d._id.toHexString() === String(id))!) : (byId.get(String(id)) as Uint8Array)
          expect(ev.fullDocument).toStrictEqual(rowOf(want))
        }
        // a few values by type, as docs/rows.md's type map says
        const first = events[0].fullDocument
        expect(typeof first.long).toBe('bigint')
        expect(first.bin).toStrictEqual(new Uint8Array([1, 2, 3, 0]))
        expect(typeof first.nested).toBe('string')
      } finally {
        await cs.close()
        await plain.close()
      }
    })
  }

  it('options: rows is a boolean, goes without whole, and carries rowFormat / dateRenderMode', async () => {
    const coll = fresh()
    const fails = async (options: any, re: RegExp) => {
      const cs = b2j.watch(coll, [], options)
      await expect(cs.next()).rejects.toThrow(re)
      await cs.close()
    }
    await fails({ rows: 1 }, /options.rows must be a boolean/)
    await fails({ rows: true, whole: true }, /rows and options.whole/)
    await fails({ rowFormat: 'powersync' }, /apply with rows: true/)
    await fails({ rows: true, rowFormat: 'powersync', dialect: 'relaxed' }, /dialect does not apply/)
    await fails({ rows: true, dateRenderMode: 1 }, /applies to rowFormat 'powersync' only/)
  })
})
