/**
 * Connection churn: leaving find()/aggregate() early and closing watch() must not destroy pooled
 * connections (the driver cancels an in-flight command by closing its socket). Counts the
 * driver's CMAP events (connectionCreated / connectionClosed) across repeated early exits and
 * compares them with the driver's own cursors and change streams doing the same.
 *
 * Runs against the in-repo test server, or against MONGODB_URI when set (SecantusDB in .ci/run).
 * Also: commands run without explicit sessions on a server that does not advertise them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MongoClient } from 'mongodb'
import { startTestServer } from '../../tools/test-server'
import { MONGODB_URI, useMongo } from '../support/mongo'
import type { TestServer } from '../../tools/test-server'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')

const URI = MONGODB_URI
const mongo = useMongo()
const dbName = mongo.dbName('conn')
const BREAKS = 20
const CLOSES = 10
const APP = `b2j-conn-${process.pid}`
const SLOW_GETMORE_MS = 100
let admin: MongoClient | undefined
let uri: string

beforeAll(async () => {
  uri = mongo.uri
  admin = new MongoClient(uri)
  await admin.db(dbName).collection('docs').insertMany(Array.from({ length: 200 }, (_, i) => ({ _id: i, s: `doc ${i}` })))
})

afterAll(async () => {
  await admin?.close()
})

/**
 * Makes every getMore of the clients under test take SLOW_GETMORE_MS, so that the prefetched
 * getMore is still in flight when the consumer leaves (the test server's `delay` fault, or the
 * server's own failCommand `blockConnection` on MONGODB_URI).
 */
async function slowGetMores<T>(body: () => Promise<T>, ms = SLOW_GETMORE_MS): Promise<T> {
  if (mongo.server) mongo.server.injectFault({ command: 'getMore', kind: 'delay', delayMs: ms, count: Infinity, ns: `${dbName}.docs` })
  else {
    await admin!.db('admin').command({
      configureFailPoint: 'failCommand',
      mode: 'alwaysOn',
      data: { failCommands: ['getMore'], blockConnection: true, blockTimeMS: ms, appName: APP },
    })
  }
  try {
    return await body()
  } finally {
    if (mongo.server) mongo.server.clearFaults()
    else await admin!.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' })
  }
}

/** Resolves once the next getMore has been sent (commandStarted). */
function getMoreSent(c: MongoClient): Promise<void> {
  return new Promise((resolve) => {
    const on = (e: any) => {
      if (e.commandName === 'getMore') {
        c.off('commandStarted', on)
        resolve()
      }
    }
    c.on('commandStarted', on)
  })
}

interface Churn {
  created: number
  closed: number
}

/** Runs `body` on a fresh client; counts the pool's connectionCreated/connectionClosed events. */
async function churn(body: (c: MongoClient) => Promise<void>, slow = false): Promise<Churn> {
  if (slow) return slowGetMores(() => churn(body))
  const c = new MongoClient(uri, { maxPoolSize: 10, appName: APP, monitorCommands: true })
  const n = { created: 0, closed: 0 }
  let open = true
  c.on('connectionCreated', () => {
    if (open) n.created++
  })
  c.on('connectionClosed', () => {
    if (open) n.closed++
  })
  try {
    await c.connect()
    await body(c)
  } finally {
    open = false
    await c.close()
  }
  return n
}

const coll = (c: MongoClient) => c.db(dbName).collection('docs')

describe('no connection churn on early exit', () => {
  it(`find(): ${BREAKS} early breaks (a prefetched getMore in flight) open no more connections than the driver's cursor`, async () => {
    const ours = await churn(async (c) => {
      for (let k = 0; k < BREAKS; k++) {
        const sent = getMoreSent(c)
        // eslint-disable-next-line no-unreachable-loop
        for await (const s of b2j.find(coll(c), {}, { sort: { _id: 1 }, batchSize: 10 })) {
          expect(JSON.parse(s)._id).toBe(0)
          await sent // the prefetched getMore is on the wire
          break
        }
      }
    }, true)
    const theirs = await churn(async (c) => {
      for (let k = 0; k < BREAKS; k++) {
        // eslint-disable-next-line no-unreachable-loop
        for await (const d of coll(c).find({}, { sort: { _id: 1 }, batchSize: 10 })) {
          expect(d._id).toBe(0)
          break
        }
      }
    }, true)
    console.log(`find early breaks x${BREAKS} (${URI ? 'MONGODB_URI' : 'test server'}): bson2json ${JSON.stringify(ours)}, driver ${JSON.stringify(theirs)}`)
    expect(ours.closed).toBe(0)
    expect(ours.created).toBeLessThanOrEqual(theirs.created)
  })

  it(`aggregate(): ${BREAKS} early breaks open no more connections than the driver's cursor`, async () => {
    const ours = await churn(async (c) => {
      for (let k = 0; k < BREAKS; k++) {
        const sent = getMoreSent(c)
        const cur = b2j.aggregate(coll(c), [{ $sort: { _id: 1 } }], { batchSize: 10 })
        // eslint-disable-next-line no-unreachable-loop
        for await (const docs of cur.batches()) {
          expect(docs.length).toBe(10)
          await sent
          break
        }
      }
    }, true)
    const theirs = await churn(async (c) => {
      for (let k = 0; k < BREAKS; k++) {
        // eslint-disable-next-line no-unreachable-loop
        for await (const d of coll(c).aggregate([{ $sort: { _id: 1 } }], { batchSize: 10 })) {
          expect(d._id).toBe(0)
          break
        }
      }
    }, true)
    console.log(`aggregate early breaks x${BREAKS} (${URI ? 'MONGODB_URI' : 'test server'}): bson2json ${JSON.stringify(ours)}, driver ${JSON.stringify(theirs)}`)
    expect(ours.closed).toBe(0)
    expect(ours.created).toBeLessThanOrEqual(theirs.created)
  })

  it(`watch(): ${CLOSES} closes of an idle stream (an awaitData getMore in flight) open no more connections than the driver's`, async () => {
    const ours = await churn(async (c) => {
      for (let k = 0; k < CLOSES; k++) {
        const sent = getMoreSent(c)
        const cs = b2j.watch(coll(c), [], { maxAwaitTimeMS: 100 })
        const first = await cs.batches().next() // the aggregate's empty batch
        expect(first.value.events).toEqual([])
        await sent // the pump's awaitData getMore is on the wire
        await cs.close()
        expect(cs.closed).toBe(true)
      }
    })
    const theirs = await churn(async (c) => {
      for (let k = 0; k < CLOSES; k++) {
        const cs = coll(c).watch([], { maxAwaitTimeMS: 100 })
        expect(await cs.tryNext()).toBe(null)
        const sent = getMoreSent(c)
        const pending = cs.tryNext().catch(() => null) // a getMore in flight, as ours has
        await sent
        await cs.close()
        await pending
      }
    })
    console.log(`watch closes x${CLOSES} (${URI ? 'MONGODB_URI' : 'test server'}): bson2json ${JSON.stringify(ours)}, driver ${JSON.stringify(theirs)}`)
    expect(ours.closed).toBe(0)
    expect(ours.created).toBeLessThanOrEqual(theirs.created)
  })

  it('close() waits for a stuck getMore at most maxAwaitTimeMS + 2 s, then cancels it', async () => {
    let waited = 0
    await slowGetMores(
      () =>
        churn(async (c) => {
          const sent = getMoreSent(c)
          const cs = b2j.watch(coll(c), [], { maxAwaitTimeMS: 100 })
          await cs.batches().next()
          await sent // this getMore takes 6 s on the server
          const t = Date.now()
          await cs.close()
          waited = Date.now() - t
        }),
      6000,
    )
    expect(waited).toBeGreaterThanOrEqual(2000)
    expect(waited).toBeLessThan(4000)
  })

  it("the caller's AbortSignal still cancels an in-flight getMore at once", async () => {
    await churn(async (c) => {
      const ac = new AbortController()
      const cs = b2j.watch(coll(c), [], { maxAwaitTimeMS: 5000, signal: ac.signal })
      const it = cs.batches()
      await it.next()
      const p = it.next()
      setTimeout(() => ac.abort(), 50)
      const t = Date.now()
      await expect(p).rejects.toMatchObject({ name: 'AbortError' })
      await cs.close()
      expect(Date.now() - t).toBeLessThan(2000)
    })
  })
})

describe.skipIf(!!URI)('servers without sessions', () => {
  let plain: TestServer
  let c: MongoClient
  beforeAll(async () => {
    plain = await startTestServer({ port: 0, sessions: false })
    c = new MongoClient(plain.uri, { monitorCommands: true })
    await c.connect()
    await c.db('nosess').collection('docs').insertMany(Array.from({ length: 25 }, (_, i) => ({ _id: i })))
  })
  afterAll(async () => {
    await c?.close()
    await plain?.close()
  })

  it('find(), aggregate() and watch() work without lsid, as the driver does', async () => {
    const lsids: unknown[] = []
    const on = (e: any) => {
      if (['find', 'aggregate', 'getMore', 'killCursors'].includes(e.commandName)) lsids.push(e.command.lsid)
    }
    c.on('commandStarted', on)
    try {
      const docs = c.db('nosess').collection('docs')
      expect((await b2j.find(docs, {}, { sort: { _id: 1 }, batchSize: 4 }).toArray()).map((s: string) => JSON.parse(s)._id)).toEqual(Array.from({ length: 25 }, (_, i) => i))
      const agg = await b2j.aggregate(docs, [{ $match: { _id: { $lt: 7 } } }], { batchSize: 2 }).toArray()
      expect(agg.length).toBe(7)
      const cs = b2j.watch(docs, [], { maxAwaitTimeMS: 30 })
      const p = cs.next()
      await new Promise((r) => setTimeout(r, 50))
      await docs.insertOne({ _id: 100 })
      expect(JSON.parse((await p).value.fullDocument)._id).toBe(100)
      await cs.close()
    } finally {
      c.off('commandStarted', on)
    }
    expect(lsids.length).toBeGreaterThan(5)
    expect(lsids.every((x) => x === undefined)).toBe(true)
  })

  it('a session passed by the caller is a clear error there', async () => {
    const s = c.startSession()
    try {
      await expect(b2j.find(c.db('nosess').collection('docs'), {}, { session: s }).toArray()).rejects.toThrow(/does not support sessions/)
    } finally {
      await s.endSession()
    }
  })
})
