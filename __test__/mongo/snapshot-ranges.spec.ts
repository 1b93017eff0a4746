/**
 * The snapshot cursor over `_id` ranges (change capture's `snapshotParallel`, lib/kafka/sink.js):
 * the ranges of lib/mongo/ranges.js read with `from`/`before` (and `after`, a resumed range)
 * give every document once, in `_id` order within each range. The in-repo test server, or
 * MONGODB_URI (a replica set or SecantusDB).
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { MongoClient } from 'mongodb'
import type { Collection } from 'mongodb'
import { useMongo } from '../support/mongo'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { snapshot } = require('../../lib/mongo/snapshot')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { splitRanges } = require('../../lib/mongo/ranges')

const mongo = useMongo()
const dbName = mongo.dbName('snapranges')
let client: MongoClient
let coll: Collection<any>
const N = 1000

beforeAll(async () => {
  client = new MongoClient(mongo.uri)
  await client.connect()
  coll = client.db(dbName).collection('c')
  await coll.insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, v: i })))
})

afterAll(async () => {
  await client.close()
})

async function ids(options: object): Promise<number[]> {
  const out: number[] = []
  for await (const b of snapshot(coll, { batchSize: 97, ...options }).batches()) for (const ev of b.events) out.push(JSON.parse(ev.documentKey)._id)
  return out
}

it('4 ranges read apart give every document once, in _id order within each; a range resumed after an _id goes on from there', async () => {
  const { ranges } = await splitRanges(coll, {}, 4, { budgetMs: 60_000 })
  expect(ranges).toHaveLength(4)
  const all: number[] = []
  for (const r of ranges) {
    const got = await ids({ from: r.lo, before: r.hi })
    expect(got).toEqual([...got].sort((a, b) => a - b))
    expect(got.length).toBeGreaterThan(0)
    all.push(...got)
  }
  expect(all).toEqual(Array.from({ length: N }, (_, i) => i))
  const second = ranges[1]
  const within = await ids({ from: second.lo, before: second.hi })
  const mid = within[Math.floor(within.length / 2)]
  expect(await ids({ from: second.lo, before: second.hi, after: mid })).toEqual(within.filter((id) => id > mid))
})

it('_ids of different kinds: one range', async () => {
  const mixed = client.db(dbName).collection<any>('m')
  await mixed.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 'three' }, ...Array.from({ length: 20 }, (_, i) => ({ _id: 10 + i }))])
  const split = await splitRanges(mixed, {}, 4, { budgetMs: 60_000 })
  expect(split.ranges).toEqual([{}])
  expect(split.note).toBe('_ids of different kinds')
})
