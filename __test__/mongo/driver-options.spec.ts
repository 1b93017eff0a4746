/**
 * find() / aggregate() / watch() read the driver's resolved BSON options (client → db →
 * collection → call) and the js-bson major of the driver itself: their JSON equals
 * JSON.stringify of what the same driver returns, with the `mongodb` 6.x driver (js-bson 6, the
 * `mongodb6` npm alias) and 7.x (js-bson 7), and with non-default bsonOptions. Runs against the
 * in-repo test server, or a real replica set when MONGODB_URI is set.
 */
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as M7 from 'mongodb'
import { useMongo } from '../support/mongo'

const require = createRequire(import.meta.url)
const M6 = require('mongodb6') as typeof M7
const b2j = require('../..')

/** The first read of a cursor or change stream: where its argument errors arrive (they are not thrown). */
const firstRead = (c: any): Promise<unknown> => (typeof c.toArray === 'function' ? c.toArray() : c.next())

const mongo = useMongo()
const dbName = mongo.dbName('drv')
const DRIVERS = [
  ['mongodb 6', M6],
  ['mongodb 7', M7],
] as const
const clients: M7.MongoClient[] = []
let watched = 0

function docs(M: typeof M7, n: number, offset = 0) {
  const out: any[] = []
  for (let k = 0; k < n; k++) {
    const i = k + offset
    out.push({
      _id: i,
      small: M.Long.fromNumber(i * 1000),
      big: M.Long.fromString(String(9007199254740993n + BigInt(i))),
      neg: M.Long.fromString('-9223372036854775808'),
      i32: new M.Int32(i),
      d: new M.Double(i / 3),
      bin: new M.Binary(Buffer.from([i & 255, 1, 2])),
      uuid: new M.UUID('0e7e8a4c-3f1b-4b4a-9d3b-6c0a5f1e2d3c'),
      re: new M.BSONRegExp('a+b', 'xi'),
      sym: new M.BSONSymbol('s'),
      cws: new M.Code('f()', { $ref: 'c.d', $id: M.Long.fromString('9007199254740999'), z: 1 }),
      ref: { $ref: 'x', $id: i },
      nested: { arr: [M.Long.fromString('-9007199254740995'), { b: new M.Binary(Buffer.from('hi'), 0) }] },
    })
  }
  return out
}

beforeAll(async () => {
  const c = new M7.MongoClient(mongo.uri)
  await c.connect()
  await c.db(dbName).collection('d').insertMany(docs(M7, 40))
  await c.close()
})

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {})
})

async function connect(M: typeof M7, options: object = {}): Promise<M7.MongoClient> {
  const c = new M.MongoClient(mongo.uri, options)
  await c.connect()
  clients.push(c)
  return c
}

/** Where the non-default bsonOptions are set: on the client, the db or the collection. */
const LEVELS: [string, object, object, object][] = [
  ['defaults', {}, {}, {}],
  ['client promoteLongs: false', { promoteLongs: false }, {}, {}],
  ['db promoteValues: false', {}, { promoteValues: false }, {}],
  ['collection promoteBuffers + bsonRegExp', {}, {}, { promoteBuffers: true, bsonRegExp: true }],
  ['client promoteBuffers, collection promoteBuffers: false', { promoteBuffers: true }, {}, { promoteBuffers: false }],
  ['client enableUtf8Validation: false, db promoteLongs: false', { enableUtf8Validation: false }, { promoteLongs: false }, {}],
]

for (const [driver, M] of DRIVERS) {
  describe(`${driver}: find / aggregate equal JSON.stringify of the driver's documents`, () => {
    for (const [name, co, dbo, collo] of LEVELS) {
      it(name, async () => {
        const c = await connect(M, co)
        const coll = c.db(dbName, dbo).collection('d', collo)
        const theirs = (await coll.find({}, { sort: { _id: 1 } }).toArray()).map((d) => JSON.stringify(d))
        const ours: string[] = []
        for await (const json of b2j.find(coll, {}, { sort: { _id: 1 }, batchSize: 7 })) ours.push(json)
        expect(ours.length).toBe(40)
        expect(ours).toEqual(theirs)
        const pipeline = [{ $match: { _id: { $lt: 10 } } }, { $sort: { _id: 1 } }]
        const theirAgg = (await coll.aggregate(pipeline).toArray()).map((d) => JSON.stringify(d))
        const ourAgg: string[] = []
        for await (const json of b2j.aggregate(coll, pipeline)) ourAgg.push(json)
        expect(ourAgg).toEqual(theirAgg)
      })
    }
    it('call options override the driver (promoteLongs on the call, as the driver takes it on find)', async () => {
      const c = await connect(M, { promoteLongs: false })
      const coll = c.db(dbName).collection('d')
      const theirs = (await coll.find({}, { sort: { _id: 1 }, promoteLongs: true }).toArray()).map((d) => JSON.stringify(d))
      const ours: string[] = []
      for await (const json of b2j.find(coll, {}, { sort: { _id: 1 }, promoteLongs: true })) ours.push(json)
      expect(ours).toEqual(theirs)
    })
    it('options bson2json cannot honour are an error at the first read', async () => {
      const c = await connect(M, { useBigInt64: true })
      const coll = c.db(dbName).collection('d')
      await expect(firstRead(b2j.find(coll, {}))).rejects.toThrow(/useBigInt64 is not supported/)
      await expect(firstRead(b2j.aggregate(coll, []))).rejects.toThrow(TypeError)
      await expect(firstRead(b2j.watch(coll))).rejects.toThrow(/useBigInt64/)
      const r = (await connect(M)).db(dbName).collection('d', { raw: true })
      await expect(firstRead(b2j.find(r, {}))).rejects.toThrow(/raw is not supported/)
      // ... unless the call says what to do instead
      await expect(firstRead(b2j.find(coll, {}, { dialect: 'relaxed' }))).resolves.toBeInstanceOf(Array)
    })
    it('unknown option names are TypeErrors', async () => {
      const coll = (await connect(M)).db(dbName).collection('d')
      await expect(firstRead(b2j.find(coll, {}, { sortt: { _id: 1 } }))).rejects.toThrow(/unknown option 'sortt' \(did you mean 'sort'\?\)/)
      await expect(firstRead(b2j.aggregate(coll, [], { dialekt: 'relaxed' }))).rejects.toThrow(/unknown option 'dialekt' \(did you mean 'dialect'\?\)/)
      await expect(firstRead(b2j.watch(coll, [], { fullDocumnet: 'updateLookup' }))).rejects.toThrow(/unknown option 'fullDocumnet' \(did you mean 'fullDocument'\?\)/)
    })
  })

  describe(`${driver}: watch equals JSON.stringify of the driver's events`, () => {
    for (const [name, co, dbo, collo] of LEVELS.slice(0, 4)) {
      it(name, async () => {
        const c = await connect(M, co)
        const coll = c.db(dbName, dbo).collection(`w${++watched}`, collo)
        const s = c.startSession()
        await c.db(dbName).command({ ping: 1 }, { session: s })
        const T0 = s.operationTime
        await s.endSession()
        const writer = await connect(M7)
        const wcoll = writer.db(dbName).collection(coll.collectionName)
        await wcoll.insertMany(docs(M7, 6, 100))
        await wcoll.updateOne({ _id: 101 }, { $set: { big: M7.Long.fromString('-9007199254740999'), b: new M7.Binary(Buffer.from([7])) } })
        const n = 7
        const ds = coll.watch([], { maxAwaitTimeMS: 100, startAtOperationTime: T0 })
        const theirs: any[] = []
        for await (const ev of ds) {
          theirs.push(ev)
          if (theirs.length === n) break
        }
        await ds.close()
        const cs = b2j.watch(coll, [], { whole: true, startAtOperationTime: T0, maxAwaitTimeMS: 100 })
        const ours: any[] = []
        while (ours.length < n) {
          const r = await cs.next()
          if (r.done) break
          ours.push(r.value)
        }
        await cs.close()
        expect(ours.map((e) => e.json)).toEqual(theirs.map((e) => JSON.stringify(e)))
      })
    }
  })
}
