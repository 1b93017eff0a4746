/**
 * watch(): change streams on raw replies. Runs against the in-repo test server, or unchanged
 * against a real replica set when MONGODB_URI is set (fault-injection tests are then skipped).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Binary, Decimal128, Double, Int32, Long, MaxKey, MinKey, MongoClient, ObjectId, Timestamp, UUID } from 'mongodb'
import type { Collection, Db } from 'mongodb'
import { MONGODB_URI, take, useMongo } from '../support/mongo'
import { gc } from '../support/gc'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { isResumableError, ChangeStreamInvalidatedError } = require('../../lib/mongo/change-stream')

const URI = MONGODB_URI
const mongo = useMongo()
let client: MongoClient
let db: Db
let counter = 0
const dbName = mongo.dbName('cs')

function fresh(): Collection {
  counter += 1
  return db.collection(`cs${counter}`)
}

/** Current cluster time (every event written after this has clusterTime >= it). */
async function now(): Promise<Timestamp> {
  const s = client.startSession()
  try {
    await db.command({ ping: 1 }, { session: s })
    return s.operationTime as Timestamp
  } finally {
    await s.endSession()
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Commands seen by the driver (works on the test server and on a real server). */
function monitor(c: MongoClient) {
  const started: any[] = []
  const succeeded: any[] = []
  c.on('commandStarted', (e: any) => started.push({ name: e.commandName, command: e.command }))
  c.on('commandSucceeded', (e: any) => succeeded.push({ name: e.commandName, reply: e.reply }))
  return { started, succeeded }
}

function killedIds(mon: ReturnType<typeof monitor>): string[] {
  return mon.succeeded
    .filter((e) => e.name === 'killCursors')
    .flatMap((e) => (e.reply.cursorsKilled || []).map((x: any) => String(x)))
}

beforeAll(async () => {
  client = new MongoClient(mongo.uri, { monitorCommands: true })
  await client.connect()
  db = client.db(dbName)
})

afterAll(async () => {
  await client?.close()
})

function variedDocs(n: number, offset = 0) {
  const out: any[] = []
  for (let k = 0; k < n; k++) {
    const i = k + offset
    out.push({
      i,
      s: `text ${i} ünïcödé \u2028 "q" \\ 🎉`,
      i32: new Int32(i),
      dbl: new Double(i + 0.25),
      whole: new Double(3),
      neg0: -0,
      long: Long.fromString('9007199254740993'),
      dec: Decimal128.fromString('1.10'),
      date: new Date(1_700_000_000_000 + i),
      oid: new ObjectId('64b7f0c2a1b2c3d4e5f60718'),
      bin: new Binary(Buffer.from([1, 2, 3, i & 255])),
      uuid: new UUID('0e7e8a4c-3f1b-4b4a-9d3b-6c0a5f1e2d3c'),
      re: /ab+c/i,
      ts: new Timestamp({ t: 42, i: 7 }),
      minmax: [new MinKey(), new MaxKey()],
      nested: { a: [1, { b: null, c: true }], big: 1e21, tiny: 5e-324 },
      nul: null,
    })
  }
  return out
}

async function writeMix(coll: Collection) {
  await coll.insertMany(variedDocs(20))
  await coll.updateOne({ i: 1 }, { $set: { s: 'changed', 'nested.a': [2] }, $unset: { nul: '' } })
  await coll.updateOne({ i: 2 }, { $inc: { i32: 5 }, $push: { minmax: 'x' } } as any)
  await coll.replaceOne({ i: 3 }, { i: 3, replaced: true, when: new Date(0) })
  await coll.deleteOne({ i: 4 })
  await coll.insertOne({ i: 100, long: Long.fromNumber(5), d: new Double(-1.5) })
  return 25
}

async function driverEvents(target: any, n: number, pipeline: any[], options: any): Promise<any[]> {
  const ds = target.watch(pipeline, { maxAwaitTimeMS: 100, ...options })
  const out: any[] = []
  try {
    for await (const ev of ds) {
      out.push(ev)
      if (out.length === n) break
    }
  } finally {
    await ds.close()
  }
  return out
}

describe('watch(): equivalence with the driver', () => {
  it('whole mode: json === JSON.stringify(driver event), event for event', async () => {
    const coll = fresh()
    const T0 = await now()
    const n = await writeMix(coll)
    const theirs = await driverEvents(coll, n, [], { startAtOperationTime: T0 })
    const cs = b2j.watch(coll, [], { whole: true, startAtOperationTime: T0, maxAwaitTimeMS: 100, batchSize: 7 })
    const ours = await take(cs, n)
    await cs.close()
    expect(ours.length).toBe(n)
    expect(theirs.length).toBe(n)
    const types = new Set<string>()
    for (let k = 0; k < n; k++) {
      expect(ours[k].json).toBe(JSON.stringify(theirs[k]))
      expect(ours[k].resumeToken).toEqual(theirs[k]._id)
      types.add(ours[k].operationType)
    }
    expect([...types].sort()).toEqual(['delete', 'insert', 'replace', 'update'])
  })

  it('extracted fields match the driver event fields', async () => {
    const coll = fresh()
    const T0 = await now()
    const n = await writeMix(coll)
    const theirs = await driverEvents(coll, n, [], { startAtOperationTime: T0, fullDocument: 'updateLookup' })
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, maxAwaitTimeMS: 100, fullDocument: 'updateLookup' })
    const ours = await take(cs, n)
    await cs.close()
    for (let k = 0; k < n; k++) {
      const o = ours[k]
      const t = theirs[k]
      expect(o.json).toBeUndefined()
      expect(o.operationType).toBe(t.operationType)
      expect(o.ns).toEqual(t.ns)
      expect(o.clusterTime).toEqual({ t: t.clusterTime.t, i: t.clusterTime.i })
      expect(o.wallTime?.getTime()).toBe(t.wallTime?.getTime())
      expect(o.documentKey).toBe(JSON.stringify(t.documentKey))
      if ('fullDocument' in t) expect(o.fullDocument).toBe(t.fullDocument === null ? null : JSON.stringify(t.fullDocument))
      else expect(o.fullDocument ?? undefined).toBeUndefined()
      if (t.updateDescription) expect(o.updateDescription).toBe(JSON.stringify(t.updateDescription))
    }
  })

  it('database-level and cluster-level streams match the driver', async () => {
    const c1 = fresh()
    const c2 = fresh()
    const T0 = await now()
    await c1.insertMany(variedDocs(3))
    await c2.insertMany(variedDocs(3, 10))
    await c1.deleteOne({ i: 0 })
    const match = [{ $match: { 'ns.db': dbName, 'ns.coll': { $in: [c1.collectionName, c2.collectionName] } } }]
    for (const target of [db, client]) {
      const theirs = await driverEvents(target, 7, match, { startAtOperationTime: T0 })
      const cs = b2j.watch(target, match, { whole: true, startAtOperationTime: T0, maxAwaitTimeMS: 100 })
      const ours = await take(cs, 7)
      await cs.close()
      expect(ours.map((e) => e.json)).toEqual(theirs.map((e) => JSON.stringify(e)))
    }
  })
})

describe('watch(): resume', () => {
  it.skipIf(!!URI)('delivers >= 10,000 events exactly once, in order, under random faults', async () => {
    const coll = fresh()
    const T0 = await now()
    const total = 10_000
    const writer = (async () => {
      for (let k = 0; k < total; k += 500) {
        await coll.insertMany(Array.from({ length: 500 }, (_, j) => ({ i: k + j, pad: 'x'.repeat(k % 7) })))
        if (k % 2500 === 0) await sleep(5)
      }
    })()
    mongo.server!.setFaultRate(0.3, 20260422)
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 97, maxAwaitTimeMS: 20, prefetch: 3 })
    const seen: number[] = []
    try {
      for await (const ev of cs) {
        seen.push(JSON.parse(ev.fullDocument).i)
        if (seen.length === total) break
      }
    } finally {
      mongo.server!.setFaultRate(0)
      await writer
    }
    expect(seen.length).toBe(total)
    for (let k = 0; k < total; k++) if (seen[k] !== k) throw new Error(`event ${k} is i=${seen[k]}`)
    const kinds = new Set(mongo.server!.faults.history.filter((h) => h.random).map((h) => h.kind))
    for (const kind of ['closeSocket', 'resumableError', 'cursorNotFound', 'emptyBatch', 'delay']) expect(kinds.has(kind as any)).toBe(true)
    expect(cs.resumeCount).toBeGreaterThan(5)
    await sleep(20)
    expect(mongo.server!.openCursors().filter((c) => c.ns === `${dbName}.${coll.collectionName}`)).toEqual([])
  })

  it.skipIf(!!URI)('whole mode under faults equals the fault-free driver stream', async () => {
    const coll = fresh()
    const T0 = await now()
    const n = await writeMix(coll)
    const theirs = await driverEvents(coll, n, [], { startAtOperationTime: T0 })
    mongo.server!.setFaultRate(0.5, 99)
    const cs = b2j.watch(coll, [], { whole: true, startAtOperationTime: T0, batchSize: 2, maxAwaitTimeMS: 20 })
    const ours = await take(cs, n).finally(() => mongo.server!.setFaultRate(0))
    await cs.close()
    expect(ours.map((e) => e.json)).toEqual(theirs.map((e) => JSON.stringify(e)))
  })

  it('continues exactly after a persisted event token (resumeAfter)', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany(Array.from({ length: 10 }, (_, i) => ({ i })))
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 3, maxAwaitTimeMS: 50 })
    const first = await take(cs, 4)
    expect(first.map((e) => JSON.parse(e.documentKey) && JSON.parse(e.fullDocument).i)).toEqual([0, 1, 2, 3])
    const saved = JSON.stringify(cs.resumeToken) // what an application persists
    expect(cs.resumeToken).toEqual(first[3].resumeToken)
    await cs.close()
    await coll.insertMany(Array.from({ length: 5 }, (_, i) => ({ i: 10 + i })))
    const cs2 = b2j.watch(coll, [], { resumeAfter: JSON.parse(saved), maxAwaitTimeMS: 50 })
    const rest = await take(cs2, 11)
    await cs2.close()
    expect(rest.map((e) => JSON.parse(e.fullDocument).i)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
  })

  it('batches(): a batch checkpoint resumes exactly after the batch', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany(Array.from({ length: 30 }, (_, i) => ({ i })))
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 8, maxAwaitTimeMS: 50 })
    const got: number[] = []
    let token: any
    for await (const b of cs.batches()) {
      for (const e of b.events) got.push(JSON.parse(e.fullDocument).i)
      token = b.resumeToken
      expect(cs.resumeToken).toEqual(token)
      if (got.length >= 8) break
    }
    expect(cs.closed).toBe(true)
    const cs2 = b2j.watch(coll, [], { resumeAfter: token, maxAwaitTimeMS: 50 })
    const rest = await take(cs2, 30 - got.length)
    await cs2.close()
    expect([...got, ...rest.map((e) => JSON.parse(e.fullDocument).i)]).toEqual(Array.from({ length: 30 }, (_, i) => i))
  })

  it('an idle stream advances resumeToken from postBatchResumeToken', async () => {
    const coll = fresh()
    await coll.insertOne({ i: 0 })
    const cs = b2j.watch(coll, [], { maxAwaitTimeMS: 30 })
    const batches = cs.batches()
    const b1 = await batches.next()
    expect(b1.value.events).toEqual([])
    expect(b1.value.resumeToken).toBeTruthy()
    await coll.insertOne({ i: 1 })
    let ev: any
    for (;;) {
      const b = (await batches.next()).value
      if (b.events.length) {
        ev = b.events[0]
        break
      }
    }
    expect(JSON.parse(ev.fullDocument).i).toBe(1)
    await batches.return(undefined)
  })

  it.skipIf(!!URI)('resumes after a getMore error with resumeAfter the cached postBatchResumeToken, on the same session', async () => {
    const coll = fresh()
    const cs = b2j.watch(coll, [], { maxAwaitTimeMS: 30 })
    // The first getMore fails; the initial aggregate's PBRT is cached, so the resume uses resumeAfter.
    mongo.server!.injectFault({ command: 'getMore', kind: 'resumableError', changeStreamOnly: true, ns: `${dbName}.${coll.collectionName}` })
    const p = take(cs, 1)
    await sleep(50)
    await coll.insertOne({ i: 1 })
    const [ev] = await p
    await cs.close()
    expect(JSON.parse(ev.fullDocument).i).toBe(1)
    const aggs = mongo.server!.commandLog.filter((e) => e.name === 'aggregate' && e.command.aggregate === coll.collectionName)
    expect(aggs.length).toBe(2)
    expect(aggs[1].command.pipeline[0].$changeStream.resumeAfter).toBeTruthy()
    expect(aggs[1].command.pipeline[0].$changeStream.startAtOperationTime).toBeUndefined()
    expect(new Set(aggs.map((a) => a.connectionId)).size).toBeGreaterThan(0)
    expect(aggs[0].command.lsid).toEqual(aggs[1].command.lsid) // same session
  })

  it.skipIf(!!URI)('startAfter is kept on resume until the first event', async () => {
    const coll = fresh()
    await coll.insertOne({ i: 0 })
    const probe = b2j.watch(coll, [], { maxAwaitTimeMS: 30 })
    const [b] = await (async () => {
      for await (const x of probe.batches()) return [x]
      return []
    })()
    const token = b.resumeToken
    mongo.server!.injectFault({ command: 'getMore', kind: 'closeSocket', changeStreamOnly: true, ns: `${dbName}.${coll.collectionName}` })
    const cs = b2j.watch(coll, [], { startAfter: token, maxAwaitTimeMS: 30 })
    const p = take(cs, 1)
    await sleep(80)
    await coll.insertOne({ i: 1 })
    const [ev] = await p
    await cs.close()
    expect(JSON.parse(ev.fullDocument).i).toBe(1)
    const aggs = mongo.server!.commandLog.filter((e) => e.name === 'aggregate' && e.command.aggregate === coll.collectionName).slice(-2)
    expect(aggs[1].command.pipeline[0].$changeStream.startAfter).toBeTruthy()
    expect(aggs[1].command.pipeline[0].$changeStream.resumeAfter).toBeUndefined()
  })
})

describe('watch(): errors and invalidation', () => {
  it.skipIf(!!URI)('a non-resumable getMore error ends the stream with that error', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany([{ i: 0 }, { i: 1 }])
    mongo.server!.injectFault({ command: 'getMore', kind: 'nonResumableError', changeStreamOnly: true, ns: `${dbName}.${coll.collectionName}` })
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 0, maxAwaitTimeMS: 30 })
    await expect(take(cs, 2)).rejects.toMatchObject({ code: 280 })
    expect(cs.closed).toBe(true)
    expect(mongo.server!.openCursors().filter((c) => c.ns.endsWith(coll.collectionName))).toEqual([])
  })

  it.skipIf(!!URI)('an aggregate error is not resumed', async () => {
    const coll = fresh()
    mongo.server!.injectFault({ command: 'aggregate', kind: 'resumableError', changeStreamOnly: true, ns: `${dbName}.${coll.collectionName}` })
    const cs = b2j.watch(coll, [], { maxAwaitTimeMS: 30 })
    await expect(cs.next()).rejects.toMatchObject({ code: 6 })
  })

  it('invalidate: delivered first, then the stream ends with ChangeStreamInvalidatedError', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany([{ i: 0 }, { i: 1 }])
    await coll.drop()
    const cs = b2j.watch(coll, [], { whole: true, startAtOperationTime: T0, maxAwaitTimeMS: 50 })
    const ops: string[] = []
    let error: any
    try {
      for await (const ev of cs) ops.push(ev.operationType)
    } catch (e) {
      error = e
    }
    expect(ops).toEqual(['insert', 'insert', 'drop', 'invalidate'])
    expect(error).toBeInstanceOf(ChangeStreamInvalidatedError)
    expect(error.event.operationType).toBe('invalidate')
    expect(cs.resumeToken).toEqual(error.event.resumeToken)
  })

  it('an event without _id (removed by the pipeline) is an error and closes the stream', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertOne({ i: 0 })
    const cs = b2j.watch(coll, [{ $project: { _id: 0 } }], { startAtOperationTime: T0, maxAwaitTimeMS: 50 })
    // The server refuses this itself (ChangeStreamFatalError, 280); bson2json also checks every event.
    await expect(take(cs, 1)).rejects.toThrow(/_id/)
    expect(cs.closed).toBe(true)
  })

  it('isResumableError follows the spec', () => {
    const net = Object.assign(new Error('x'), { name: 'MongoNetworkError' })
    expect(isResumableError(net, 21)).toBe(true)
    expect(isResumableError({ name: 'MongoServerError', code: 43 }, 21)).toBe(true)
    expect(isResumableError({ name: 'MongoServerError', code: 6, errorLabels: ['ResumableChangeStreamError'] }, 21)).toBe(true)
    expect(isResumableError({ name: 'MongoServerError', code: 6, errorLabels: [] }, 21)).toBe(false)
    expect(isResumableError({ name: 'MongoServerError', code: 6, errorLabels: [] }, 8)).toBe(true)
    expect(isResumableError({ name: 'MongoServerError', code: 280, errorLabels: [] }, 8)).toBe(false)
    expect(isResumableError(new TypeError('bug'), 21)).toBe(false)
  })
})

describe('watch(): next() and its plain twin', () => {
  /** Every step of `step` until done or an error: the result, `resumeToken` after it, key order. */
  async function drive(cs: any, step: () => Promise<any>) {
    const log: any[] = []
    for (;;) {
      let r: any
      try {
        r = await step()
      } catch (e: any) {
        log.push({ error: e.code, token: cs.resumeToken, closed: cs.closed })
        return log
      }
      log.push({ keys: Object.keys(r), value: r.value, valueKeys: r.value && Object.keys(r.value), done: r.done, token: cs.resumeToken })
      if (r.done) return log
    }
  }

  it.skipIf(!!URI)('the same results, tokens and end (an error after the buffered events), batch for batch', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany(Array.from({ length: 23 }, (_, i) => ({ i, s: 'x'.repeat(i) })))
    await coll.updateOne({ i: 3 }, { $set: { s: 'y' } })
    await coll.deleteOne({ i: 4 })
    const ns = `${dbName}.${coll.collectionName}`
    const logs: any[][] = []
    for (const twin of [false, true]) {
      // aggregate 5, getMores 5, 5, 5, 3 and an empty one, then a non-resumable error; the batch
      // of 3 also reads past the update and the delete: its token is not its last event's
      mongo.server!.injectFault({ command: 'getMore', kind: 'nonResumableError', changeStreamOnly: true, ns, skip: 5 })
      const cs = b2j.watch(coll, [{ $match: { operationType: 'insert' } }], { startAtOperationTime: T0, batchSize: 5, maxAwaitTimeMS: 20 })
      logs.push(await drive(cs, twin ? () => cs._nextPlain() : () => cs.next()))
    }
    const [fast, plain] = logs
    expect(fast.filter((e) => e.value).map((e) => JSON.parse(e.value.fullDocument).i)).toEqual(Array.from({ length: 23 }, (_, i) => i))
    expect(fast[22].token).not.toEqual(fast[22].value.resumeToken)
    expect(fast[fast.length - 1]).toMatchObject({ error: 280, closed: true })
    expect(fast).toEqual(plain)
  })

  it('an event handed out is not kept by its batch (either twin), the rest of the batch still comes', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany(Array.from({ length: 6 }, (_, i) => ({ i })))
    for (const twin of [false, true]) {
      const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 6, maxAwaitTimeMS: 20, prefetch: 0 })
      const step = twin ? () => cs._nextPlain() : () => cs.next()
      // the first event starts the batch (next() waits for it in its twin); of the second,
      // read from the buffered batch, only a WeakRef is kept: the batch's other four are
      // still buffered
      const first = (await step()).value
      const ref = await (async () => new WeakRef((await step()).value))()
      await new Promise((r) => setImmediate(r))
      gc()
      expect(ref.deref()).toBeUndefined()
      const rest: any[] = [first]
      for (let k = 0; k < 4; k++) rest.push((await step()).value)
      expect(rest.map((e) => JSON.parse(e.fullDocument).i)).toEqual([0, 2, 3, 4, 5])
      await cs.close()
    }
  })
})

describe('watch(): split events', () => {
  it.skipIf(!!URI)('reassembles $changeStreamSplitLargeEvent fragments (also across batches and resumes)', async () => {
    const coll = fresh()
    const before = mongo.server!.splitThresholdBytes
    mongo.server!.splitThresholdBytes = 3000
    try {
      const T0 = await now()
      const big = (c: string) => c.repeat(1000)
      await coll.insertOne({ i: 0, a: big('a'), b: big('b') })
      await coll.updateOne({ i: 0 }, { $set: { a: big('A'), b: big('B') } })
      await coll.insertOne({ i: 1, small: true })
      // Expected: the driver's fragments, merged as the spec says.
      const opts = { startAtOperationTime: T0, fullDocument: 'whenAvailable', fullDocumentBeforeChange: 'whenAvailable' }
      const frags = await driverEvents(coll, 5, [{ $changeStreamSplitLargeEvent: {} }], opts)
      expect(frags.some((f) => f.splitEvent)).toBe(true)
      const expected: any[] = []
      let acc: any[] = []
      for (const f of frags) {
        if (!f.splitEvent) {
          expected.push(f)
          continue
        }
        acc.push(f)
        if (f.splitEvent.fragment === f.splitEvent.of) {
          const merged: any = { _id: f._id }
          for (const p of acc) for (const [k, v] of Object.entries(p)) if (k !== '_id' && k !== 'splitEvent') merged[k] = v
          expected.push(merged)
          acc = []
        }
      }
      expect(expected.length).toBe(3)
      for (const [batchSize, faultRate] of [[100, 0], [1, 0.4]]) {
        mongo.server!.setFaultRate(faultRate, 5)
        const cs = b2j.watch(coll, [], { ...opts, whole: true, splitLargeEvents: true, batchSize, maxAwaitTimeMS: 20 })
        const ours = await take(cs, 3).finally(() => mongo.server!.setFaultRate(0))
        await cs.close()
        expect(ours.map((e) => e.json)).toEqual(expected.map((e) => JSON.stringify(e)))
        expect(ours.map((e) => e.resumeToken)).toEqual(expected.map((e) => e._id))
        expect(ours.every((e) => e.splitEvent === undefined)).toBe(true)
      }
      // non-whole mode: extracted fields merged
      const cs = b2j.watch(coll, [], { ...opts, splitLargeEvents: true, batchSize: 1, maxAwaitTimeMS: 20 })
      const ev = await take(cs, 3)
      await cs.close()
      expect(ev.map((e) => e.operationType)).toEqual(['insert', 'update', 'insert'])
      expect(JSON.parse(ev[1].updateDescription).updatedFields.b).toBe(big('B'))
      expect(JSON.parse(ev[1].fullDocument).a).toBe(big('A'))
      expect(JSON.parse(ev[1].fullDocumentBeforeChange).a).toBe(big('a'))
      expect(ev[1].resumeToken).toEqual(expected[1]._id)
    } finally {
      mongo.server!.splitThresholdBytes = before
    }
  })
})

describe('watch(): prefetch, close, abort', () => {
  it('a slow consumer buffers at most `prefetch` batches (≤ prefetch+1 getMores ahead)', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany(Array.from({ length: 400 }, (_, i) => ({ i })))
    const mon = monitor(client)
    const prefetch = 2
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 10, maxAwaitTimeMS: 50, prefetch })
    const getMores = () => mon.started.filter((e) => e.name === 'getMore' && e.command.collection === coll.collectionName).length
    let consumed = 0
    let maxAhead = 0
    for await (const b of cs.batches()) {
      consumed++
      await sleep(30) // slow consumer
      // batches fetched = 1 (aggregate) + getMores; fetched - consumed = buffered (+1 in flight)
      const ahead = 1 + getMores() - consumed
      maxAhead = Math.max(maxAhead, ahead)
      expect(ahead).toBeLessThanOrEqual(prefetch + 1)
      expect((cs as any)._queuedBatches()).toBeLessThanOrEqual(prefetch)
      expect(b.events.length).toBeLessThanOrEqual(10)
      if (consumed === 12) break
    }
    expect(maxAhead).toBeGreaterThanOrEqual(prefetch) // it does prefetch
    client.removeAllListeners('commandStarted')
    client.removeAllListeners('commandSucceeded')
  })

  it('close() kills the server cursor and leaves none open', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany(Array.from({ length: 50 }, (_, i) => ({ i })))
    const mon = monitor(client)
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 5, maxAwaitTimeMS: 1000 })
    await take(cs, 7)
    const id = String((cs as any)._cursorId)
    await cs.close()
    expect(killedIds(mon)).toContain(id)
    if (mongo.server) expect(mongo.server.openCursors().filter((c) => c.ns.endsWith(coll.collectionName))).toEqual([])
    expect((await cs.next()).done).toBe(true)
    client.removeAllListeners('commandStarted')
    client.removeAllListeners('commandSucceeded')
  })

  it('AbortSignal ends a waiting next() promptly and kills the cursor', async () => {
    const coll = fresh()
    const mon = monitor(client)
    const ac = new AbortController()
    const cs = b2j.watch(coll, [], { maxAwaitTimeMS: 5000, signal: ac.signal })
    const p = cs.next()
    await sleep(150)
    const t = Date.now()
    ac.abort()
    await expect(p).rejects.toMatchObject({ name: 'AbortError' })
    await cs.close()
    expect(Date.now() - t).toBeLessThan(2000)
    const id = String((cs as any)._cursorId)
    expect(killedIds(mon).includes(id) || id === 'null').toBe(true)
    if (mongo.server) expect(mongo.server.openCursors().filter((c) => c.ns.endsWith(coll.collectionName))).toEqual([])
    client.removeAllListeners('commandStarted')
    client.removeAllListeners('commandSucceeded')
  })

  it('stream(): object-mode Readable with backpressure; destroy closes', async () => {
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany(Array.from({ length: 100 }, (_, i) => ({ i })))
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 10, maxAwaitTimeMS: 50 })
    const rs = cs.stream({ highWaterMark: 4 })
    const got: number[] = []
    for await (const ev of rs) {
      got.push(JSON.parse(ev.fullDocument).i)
      if (got.length === 100) break
    }
    expect(got).toEqual(Array.from({ length: 100 }, (_, i) => i))
    expect(cs.closed).toBe(true)
    await cs.close() // the close started by destroy(): it lets the in-flight getMore finish first
    if (mongo.server) expect(mongo.server.openCursors().filter((c) => c.ns.endsWith(coll.collectionName))).toEqual([])
  })
})
