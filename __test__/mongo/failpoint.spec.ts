/**
 * Resume and error handling proven against a server this project did not write: the faults are
 * injected by the server itself through the `failCommand` fail point (`configureFailPoint`, a test
 * command: SecantusDB with `--enable-test-commands`, mongod with `enableTestCommands=1`).
 *
 * Runs when MONGODB_URI names such a server. Skips otherwise, unless B2J_REQUIRE_FAILCOMMAND=1
 * (set by .ci/run), which turns a missing server or fail point into a failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MongoClient } from 'mongodb'
import type { Collection, Db, Timestamp } from 'mongodb'
import { MONGODB_URI, take } from '../support/mongo'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ChangeStreamInvalidatedError } = require('../../lib/mongo/change-stream')

const URI = MONGODB_URI
const REQUIRED = process.env.B2J_REQUIRE_FAILCOMMAND === '1'
const APP = `b2j-failpoint-${process.pid}`
const dbName = `b2j_fp_${process.pid}_${Date.now() % 100000}`

let admin: MongoClient | undefined // sets the fail points (its own commands are never failed)
let client: MongoClient // the client under test: the fail points match its appName only
let db: Db
let available = false
let counter = 0

beforeAll(async () => {
  if (!URI) {
    if (REQUIRED) throw new Error('B2J_REQUIRE_FAILCOMMAND=1 but MONGODB_URI is not set')
    return
  }
  admin = new MongoClient(URI)
  await admin.connect()
  try {
    await admin.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' })
    available = true
  } catch (e) {
    if (REQUIRED) throw new Error(`B2J_REQUIRE_FAILCOMMAND=1 but the server has no failCommand fail point: ${String(e)}`)
  }
  client = new MongoClient(URI, { appName: APP, monitorCommands: true })
  await client.connect()
  db = client.db(dbName)
})

afterAll(async () => {
  if (admin && available) await admin.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' }).catch(() => {})
  if (client) {
    await db.dropDatabase().catch(() => {})
    await client.close()
  }
  await admin?.close()
})

function fresh(): Collection {
  counter += 1
  return db.collection(`fp${counter}`)
}

/** Fails the next `times` matching commands of the client under test. */
async function failCommand(commands: string[], data: Record<string, unknown>, times = 1) {
  await admin!.db('admin').command({
    configureFailPoint: 'failCommand',
    mode: { times },
    data: { failCommands: commands, appName: APP, ...data },
  })
}

async function off() {
  await admin!.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' })
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

function commands(c: MongoClient) {
  const started: string[] = []
  const on = (e: any) => started.push(e.commandName)
  c.on('commandStarted', on)
  return { started, stop: () => c.off('commandStarted', on) }
}

const RESUMABLE: [string, Record<string, unknown>][] = [
  ['a resumable error (HostUnreachable, ResumableChangeStreamError label)', { errorCode: 6, errorLabels: ['ResumableChangeStreamError'] }],
  ['a closed connection', { closeConnection: true }],
  ['CursorNotFound', { errorCode: 43 }],
]

describe.skipIf(!URI)('failCommand faults from the server (MONGODB_URI)', () => {
  for (const [what, data] of RESUMABLE) {
    it(`watch() resumes after ${what} on getMore, exactly once and in order`, async () => {
      if (!available) return
      const coll = fresh()
      const T0 = await now()
      await coll.insertMany(Array.from({ length: 30 }, (_, i) => ({ i })))
      const mon = commands(client)
      const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 4, maxAwaitTimeMS: 50, prefetch: 1 })
      try {
        const first = await take(cs, 5)
        await failCommand(['getMore'], data, 2)
        const rest = await take(cs, 25)
        expect([...first, ...rest].map((e) => JSON.parse(e.fullDocument).i)).toEqual(Array.from({ length: 30 }, (_, i) => i))
        expect(cs.resumeCount).toBe(2)
        // every resume is a new aggregate with resumeAfter the cached token
        expect(mon.started.filter((n) => n === 'aggregate').length).toBe(3)
      } finally {
        mon.stop()
        await off()
        await cs.close()
      }
    })
  }

  it('watch(): 200 events exactly once through repeated faults of all three kinds', async () => {
    if (!available) return
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany(Array.from({ length: 200 }, (_, i) => ({ i })))
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 7, maxAwaitTimeMS: 50 })
    const seen: number[] = []
    try {
      for (let round = 0; seen.length < 200; round++) {
        const [, data] = RESUMABLE[round % RESUMABLE.length]
        await failCommand(['getMore'], data)
        for (const e of await take(cs, Math.min(13, 200 - seen.length))) seen.push(JSON.parse(e.fullDocument).i)
      }
    } finally {
      await off()
      await cs.close()
    }
    expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => i))
    expect(cs.resumeCount).toBeGreaterThanOrEqual(10)
  })

  it('a non-resumable getMore error ends watch() with that error', async () => {
    if (!available) return
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany([{ i: 0 }, { i: 1 }, { i: 2 }])
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 1, maxAwaitTimeMS: 50, prefetch: 0 })
    try {
      expect((await take(cs, 1)).length).toBe(1)
      await failCommand(['getMore'], { errorCode: 280 }) // ChangeStreamFatalError, no resumable label
      await expect(take(cs, 2)).rejects.toMatchObject({ code: 280 })
      expect(cs.closed).toBe(true)
      expect(cs.resumeCount).toBe(0)
    } finally {
      await off()
      await cs.close()
    }
  })

  it('an error on the initial aggregate is not resumed', async () => {
    if (!available) return
    const coll = fresh()
    await failCommand(['aggregate'], { errorCode: 6, errorLabels: ['ResumableChangeStreamError'] })
    const cs = b2j.watch(coll, [], { maxAwaitTimeMS: 50 })
    try {
      await expect(cs.next()).rejects.toMatchObject({ code: 6 })
      expect(cs.resumeCount).toBe(0)
    } finally {
      await off()
      await cs.close()
    }
  })

  it('invalidate: the event is delivered, then ChangeStreamInvalidatedError', async () => {
    if (!available) return
    const coll = fresh()
    const T0 = await now()
    await coll.insertMany([{ i: 0 }, { i: 1 }])
    await coll.drop()
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, maxAwaitTimeMS: 50 })
    const ops: string[] = []
    let error: any
    try {
      for (;;) {
        const r = await cs.next()
        if (r.done) break
        ops.push(r.value.operationType)
      }
    } catch (e) {
      error = e
    }
    expect(ops).toEqual(['insert', 'insert', 'drop', 'invalidate'])
    expect(error).toBeInstanceOf(ChangeStreamInvalidatedError)
    expect(cs.closed).toBe(true)
  })

  it('find(): a getMore error rejects the cursor with the server error and closes it', async () => {
    if (!available) return
    const coll = fresh()
    await coll.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i })))
    const cur = b2j.find(coll, {}, { sort: { _id: 1 }, batchSize: 5 })
    await failCommand(['getMore'], { errorCode: 50 }) // MaxTimeMSExpired
    const got: number[] = []
    await expect(
      (async () => {
        for await (const s of cur) got.push(JSON.parse(s)._id)
      })(),
    ).rejects.toMatchObject({ code: 50 })
    await off()
    expect(got).toEqual([0, 1, 2, 3, 4])
    expect(cur.closed).toBe(true)
  })
})
