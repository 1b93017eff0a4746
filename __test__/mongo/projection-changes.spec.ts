/**
 * `projection` and `redact` on change events (issue 32), against the in-repo test server (or a
 * real replica set with MONGODB_URI): the paths apply to fullDocument, documentKey (whose `_id`
 * is never dropped), the matching keys of updateDescription.updatedFields (an updated field
 * `card` holding a document, `card.number` itself, `cards.0.number` through an array) and
 * removedFields, so a redacted value never leaks through an update.
 */
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BSON, MongoClient, Timestamp } from 'mongodb'
import type { Collection, Db } from 'mongodb'
import { take, useMongo } from '../support/mongo'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')

/** The first read of a cursor or change stream: where its argument errors arrive (they are not thrown). */
const firstRead = (c: any): Promise<unknown> => (typeof c.toArray === 'function' ? c.toArray() : c.next())

const mongo = useMongo()
let client: MongoClient
let db: Db
let counter = 0
const dbName = mongo.dbName('proj')
const KEY = Buffer.from('cdc pseudonym key')
const CARD = '4111111111111111'
const CARD2 = '5500000000000004'
const EMAIL = 'ada@example.com'

/** HMAC-SHA256 of a value's canonical bytes: its BSON type byte and value bytes. */
function pseudonym(value: unknown): string {
  const el = BSON.serialize({ v: value })
  return createHmac('sha256', KEY).update(Buffer.concat([el.subarray(4, 5), el.subarray(7, el.length - 1)])).digest('hex')
}

async function now(): Promise<Timestamp> {
  const s = client.startSession()
  try {
    await db.command({ ping: 1 }, { session: s })
    return s.operationTime as Timestamp
  } finally {
    await s.endSession()
  }
}

beforeAll(async () => {
  client = new MongoClient(mongo.uri)
  await client.connect()
  db = client.db(dbName)
})

afterAll(async () => {
  await client?.close()
})

async function writeCardEvents(coll: Collection): Promise<number> {
  await coll.insertOne({ _id: 1 as any, name: 'Ada', email: EMAIL, ssn: '078-05-1120', card: { number: CARD, exp: '12/30' }, cards: [{ number: CARD, exp: '01/29' }, 'gift'] })
  await coll.updateOne({ _id: 1 as any }, { $set: { card: { number: CARD2, exp: '11/31' } } })
  await coll.updateOne({ _id: 1 as any }, { $set: { 'card.number': CARD } })
  await coll.updateOne({ _id: 1 as any }, { $set: { 'cards.0.number': CARD2, name: 'Ada L.' } })
  await coll.updateOne({ _id: 1 as any }, { $unset: { email: '', ssn: '' } })
  await coll.deleteOne({ _id: 1 as any })
  return 6
}

const parse = (s: string | null | undefined) => (s == null ? s : JSON.parse(s))

describe('projection and redact on change events', () => {
  it('redact (HMAC) reaches fullDocument and every updated field that holds a redacted path; exclusion drops removed fields', async () => {
    const coll = db.collection(`c${++counter}`)
    const T0 = await now()
    const n = await writeCardEvents(coll)
    const options = {
      startAtOperationTime: T0,
      maxAwaitTimeMS: 100,
      projection: { ssn: 0, _id: 0 },
      redact: { paths: ['email', 'card.number', 'cards.number'], key: KEY },
    }
    for (const whole of [false, true]) {
      const cs = b2j.watch(coll, [], { ...options, whole })
      const evs = await take(cs, n)
      await cs.close()
      expect(evs.length).toBe(n)
      const texts = evs.map((e: any) => (whole ? e.json : JSON.stringify([e.fullDocument, e.documentKey, e.updateDescription])))
      for (const t of texts) {
        expect(t).not.toContain(CARD)
        expect(t).not.toContain(CARD2)
        expect(t).not.toContain(EMAIL)
        expect(t).not.toContain('078-05-1120')
      }
      const part = (e: any, k: string) => (whole ? JSON.parse(e.json)[k] : parse(e[k]))
      // insert: fullDocument without ssn and _id, values pseudonymised; documentKey keeps _id
      expect(part(evs[0], 'fullDocument')).toEqual({
        name: 'Ada',
        email: pseudonym(EMAIL),
        card: { number: pseudonym(CARD), exp: '12/30' },
        cards: [{ number: pseudonym(CARD), exp: '01/29' }, 'gift'],
      })
      expect(part(evs[0], 'documentKey')).toEqual({ _id: 1 })
      // $set card (a document holding the path), $set card.number, $set cards.0.number
      expect(part(evs[1], 'updateDescription').updatedFields).toEqual({ card: { number: pseudonym(CARD2), exp: '11/31' } })
      expect(part(evs[2], 'updateDescription').updatedFields).toEqual({ 'card.number': pseudonym(CARD) })
      expect(part(evs[3], 'updateDescription').updatedFields).toEqual({ 'cards.0.number': pseudonym(CARD2), name: 'Ada L.' })
      // $unset email, ssn: the excluded ssn leaves removedFields, the redacted email stays a name
      expect(part(evs[4], 'updateDescription').removedFields).toEqual(['email'])
      expect(part(evs[5], 'documentKey')).toEqual({ _id: 1 })
    }
  })

  it('inclusion: only the included paths of fullDocument and updatedFields, _id kept in documentKey', async () => {
    const coll = db.collection(`c${++counter}`)
    const T0 = await now()
    const n = await writeCardEvents(coll)
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, maxAwaitTimeMS: 100, projection: { name: 1, 'card.exp': 1, _id: 0 } })
    const evs = await take(cs, n)
    await cs.close()
    expect(parse(evs[0].fullDocument)).toEqual({ name: 'Ada', card: { exp: '12/30' } })
    expect(parse(evs[0].documentKey)).toEqual({ _id: 1 })
    expect(parse(evs[1].updateDescription).updatedFields).toEqual({ card: { exp: '11/31' } })
    expect(parse(evs[2].updateDescription).updatedFields).toEqual({})
    expect(parse(evs[3].updateDescription).updatedFields).toEqual({ name: 'Ada L.' })
    expect(parse(evs[4].updateDescription).removedFields).toEqual([])
  })

  it('a bad projection is a TypeError at the first read (watch() does not throw)', async () => {
    await expect(firstRead(b2j.watch(db.collection('x'), [], { projection: { a: 1, b: 0 } }))).rejects.toThrow(/'b'/)
    await expect(firstRead(b2j.watch(db.collection('x'), [], { redact: { paths: ['a'], with: 'hmac-sha256' } }))).rejects.toThrow(/redact.key/)
  })
})

describe('projection and redact in find/aggregate, the stream and the async calls', () => {
  const docs = [
    { _id: 1, a: { b: 1, c: 2 }, arr: [{ b: 3, c: 4 }, 5, [{ b: 6 }]], s: 'x' },
    { _id: 2, a: 7, arr: [], s: 'y', t: true },
  ]
  const strings = async (it: AsyncIterable<string>) => {
    const out: string[] = []
    for await (const s of it) out.push(s)
    return out
  }

  it('find: the server projection (projection) and the client one (clientProjection) compose; aggregate takes clientProjection', async () => {
    const coll = db.collection(`c${++counter}`)
    await coll.insertMany(docs as any[])
    const got = await strings(b2j.find(coll, {}, { sort: { _id: 1 }, projection: { t: 0 }, clientProjection: { 'arr.c': 0, 'a.b': 0 }, redact: { paths: ['s'] } }))
    expect(got.map((s) => JSON.parse(s))).toEqual([
      { _id: 1, a: { c: 2 }, arr: [{ b: 3 }, 5, [{ b: 6 }]], s: null },
      { _id: 2, a: 7, arr: [], s: null },
    ])
    const agg = await strings(b2j.aggregate(coll, [{ $sort: { _id: 1 } }], { clientProjection: { 'arr.b': 1, _id: 0 } }))
    expect(agg.map((s) => JSON.parse(s))).toEqual([{ arr: [{ b: 3 }, [{ b: 6 }]] }, { arr: [] }])
    await expect(firstRead(b2j.aggregate(coll, [], { projection: { a: 1 } }))).rejects.toThrow(/clientProjection/)
    await expect(firstRead(b2j.find(coll, {}, { clientProjection: { a: 1, b: 0 } }))).rejects.toThrow(/options.clientProjection: 'b'/)
  })

  it('createTranscodeStream, toNDJSONAsync and toJSONListAsync shape every document as toJSON does', async () => {
    const { Readable } = await import('node:stream')
    const bufs = docs.map((d) => BSON.serialize(d))
    const all = Buffer.concat([...bufs, ...bufs, ...bufs])
    const options = { projection: { 'arr.b': 0, t: 0 }, redact: { paths: ['a.c'], key: Buffer.from('k') } }
    const want = [...bufs, ...bufs, ...bufs].map((d) => b2j.toJSON(d, options) + '\n').join('')
    for (const concurrency of [1, 2]) {
      const chunks: Buffer[] = []
      const pieces = Array.from({ length: Math.ceil(all.length / 7) }, (_, i) => all.subarray(i * 7, i * 7 + 7))
      await new Promise<void>((resolve, reject) =>
        Readable.from(pieces)
          .pipe(b2j.createTranscodeStream({ ...options, concurrency, batchBytes: 64 }))
          .on('data', (c: Buffer) => chunks.push(c))
          .on('end', resolve)
          .on('error', reject),
      )
      expect(Buffer.concat(chunks).toString()).toBe(want)
    }
    expect((await b2j.toNDJSONAsync(all, options)).toString()).toBe(want)
    expect((await b2j.toNDJSONAsync(all, { ...options, threads: 2 })).toString()).toBe(want)
    expect(await b2j.toJSONListAsync([...bufs], options)).toEqual(bufs.map((d) => b2j.toJSON(d, options)))
    expect(b2j.toJSONArray(all, options)).toBe(`[${want.trimEnd().split('\n').join(',')}]`)
    expect(b2j.toJSONBuffer(bufs[0], options).toString()).toBe(b2j.toJSON(bufs[0], options))
  })
})

describe('projection and redact in the snapshot (the copy cdc --snapshot makes)', () => {
  it('each record gets what a change event gets: fullDocument shaped, documentKey keeps _id', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { snapshot } = require('../../lib/mongo/snapshot')
    const coll = db.collection(`c${++counter}`)
    await coll.insertMany([
      { _id: 1 as any, email: EMAIL, ssn: '1', card: { number: CARD, exp: '1' } },
      { _id: 2 as any, email: 'b@example.com', ssn: '2', card: 'none' },
    ])
    const cur = snapshot(coll, { projection: { ssn: 0, _id: 0 }, redact: { paths: ['email', 'card.number'], key: KEY } })
    const events: any[] = []
    for await (const b of cur.batches()) events.push(...b.events)
    expect(events.map((e) => [parse(e.documentKey), parse(e.fullDocument)])).toEqual([
      [{ _id: 1 }, { email: pseudonym(EMAIL), card: { number: pseudonym(CARD), exp: '1' } }],
      [{ _id: 2 }, { email: pseudonym('b@example.com'), card: 'none' }],
    ])
  })
})
