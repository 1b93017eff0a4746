/**
 * The library's streams fail like Node streams: `pipe(res)` on a cursor answers 500 before the
 * headers and cuts the response after; every Readable the package returns propagates errors
 * through `stream.pipeline` and `for await`; the read-ahead stops while the consumer's buffer is
 * full; find() takes the driver's sort forms and rejects what the driver would send wrongly.
 * Runs against the in-repo test server, or MONGODB_URI (faults through failCommand).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough, Writable, pipeline } from 'node:stream'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BSON, MongoClient } from 'mongodb'
import type { Collection, Db } from 'mongodb'
import { startSource } from '../support/source'
import type { Source } from '../support/source'
import { CUT_BODY } from '../support/http'
const require = createRequire(import.meta.url)
const b2j = require('../..')

/** The first read of a cursor or change stream: where its argument errors arrive (they are not thrown). */
const firstRead = (c: any): Promise<unknown> => (typeof c.toArray === 'function' ? c.toArray() : c.next())
const { formatSort: driverFormatSort } = require('mongodb/lib/sort.js')

let src: Source
let client: MongoClient
let db: Db
let coll: Collection
const N = 600
const dbName = `b2j_pipe_${process.pid}_${Date.now() % 100000}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function monitor() {
  const started: { name: string; command: any }[] = []
  const a = (e: any) => started.push({ name: e.commandName, command: e.command })
  client.on('commandStarted', a)
  return {
    started,
    count: (name: string) => started.filter((e) => e.name === name).length,
    stop: () => client.off('commandStarted', a),
  }
}

async function serve(handler: http.RequestListener) {
  const web = http.createServer(handler)
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r))
  const base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`
  return { base, close: () => new Promise((r) => web.close(r)) }
}

beforeAll(async () => {
  src = await startSource('pipe')
  client = new MongoClient(src.clientUri, { monitorCommands: true })
  await client.connect()
  db = client.db(dbName)
  coll = db.collection('docs')
  const pad = 'p'.repeat(200)
  await coll.insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, n: i % 7, a: i % 3, b: i, pad })))
})

afterAll(async () => {
  await src?.off().catch(() => {})
  if (!src?.server) await db?.dropDatabase().catch(() => {})
  await client?.close()
  await src?.close()
})

describe('cursor.pipe(res) on an HTTP response', () => {
  it('a filter the server rejects: 500 with a short JSON body, and the server keeps serving', async () => {
    const web = await serve((req, res) => {
      const q = new URL(req.url!, 'http://x').searchParams.get('q') ?? '{}'
      b2j.find(coll, JSON.parse(q)).pipe(res)
    })
    try {
      const bad = await fetch(`${web.base}/?q=${encodeURIComponent('{"$bogus":1}')}`)
      expect(bad.status).toBe(500)
      expect(bad.headers.get('content-type')).toBe('application/json')
      const body = await bad.json()
      expect(Object.keys(body)).toEqual(['error', 'code'])
      expect(body.error).toBe('query failed') // the server's message stays on the server (onError gets it)
      expect(typeof body.code).toBe('number')
      expect(JSON.stringify(body)).not.toMatch(/\n\s+at /) // no stack
      const good = await fetch(`${web.base}/?q=${encodeURIComponent('{"n":3}')}`)
      expect(good.status).toBe(200)
      const lines = (await good.text()).trim().split('\n')
      expect(lines.length).toBe((await coll.countDocuments({ n: 3 })))
    } finally {
      await web.close()
    }
  })

  it('onError(err, res) answers instead of the 500', async () => {
    const seen: any[] = []
    const web = await serve((req, res) => {
      b2j.find(coll, { $bogus: 1 }).pipe(res, {
        onError(err: any, r: http.ServerResponse) {
          seen.push({ err, same: r === res, headersSent: r.headersSent })
          r.writeHead(418, { 'content-type': 'text/plain' }).end('teapot')
        },
      })
    })
    try {
      const r = await fetch(web.base)
      expect(r.status).toBe(418)
      expect(await r.text()).toBe('teapot')
      expect(seen).toHaveLength(1)
      expect(seen[0].same).toBe(true)
      expect(seen[0].headersSent).toBe(false)
      expect(seen[0].err.message).toMatch(/\$bogus/)
    } finally {
      await web.close()
    }
  })

  it('a getMore failing after the headers were sent cuts the connection (no complete-looking body) and calls onError', async () => {
    const seen: any[] = []
    let cursor: any
    const web = await serve((req, res) => {
      cursor = b2j.find(coll, {}, { sort: { _id: 1 }, batchSize: 50 })
      cursor.pipe(res, { onError: (err: any, r: any) => seen.push({ err, headersSent: r.headersSent }) })
    })
    try {
      await src.failGetMore({ code: 96, ns: `${dbName}.docs` })
      const r = await fetch(web.base)
      expect(r.status).toBe(200) // the first batch went out with the headers
      await expect(r.text()).rejects.toThrow(CUT_BODY)
      for (let k = 0; k < 100 && seen.length === 0; k++) await sleep(10)
      expect(seen).toHaveLength(1)
      expect(seen[0].headersSent).toBe(true)
      expect(seen[0].err.code).toBe(96)
      expect(cursor.closed).toBe(true)
    } finally {
      await src.off()
      await web.close()
    }
  })

  it('the same without onError: the connection is cut, nothing unhandled, the next request is answered', async () => {
    const web = await serve((req, res) => {
      b2j.find(coll, {}, { sort: { _id: 1 }, batchSize: 50 }).pipe(res)
    })
    try {
      await src.failGetMore({ closeConnection: true, ns: `${dbName}.docs` })
      const r = await fetch(web.base)
      await expect(r.text()).rejects.toThrow(CUT_BODY)
      const again = await fetch(web.base)
      expect((await again.text()).trim().split('\n')).toHaveLength(N)
    } finally {
      await src.off()
      await web.close()
    }
  })

  it('a client that goes away mid-response: the cursor is closed (killCursors) and nothing throws', async () => {
    let cursor: any
    const web = await serve((req, res) => {
      cursor = b2j.find(coll, {}, { batchSize: 10 })
      cursor.pipe(res)
    })
    const mon = monitor()
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(web.base, (res) => {
          res.once('data', () => {
            req.destroy()
            resolve()
          })
        })
        req.on('error', () => {})
        setTimeout(() => reject(new Error('no data')), 5000)
      })
      for (let k = 0; k < 200 && !cursor.closed; k++) await sleep(10)
      expect(cursor.closed).toBe(true)
      await cursor.close()
      expect(mon.count('killCursors')).toBe(1)
      if (src.server) expect(await src.openCursors(`${dbName}.docs`)).toBe(0)
    } finally {
      mon.stop()
      await web.close()
    }
  })
  it('a response already destroyed when pipe() is called: nothing is sent, the cursor is closed', async () => {
    const mon = monitor()
    let cursor: any
    const piped = new Promise<void>((resolve) => {
      void serve((req, res) => {
        res.destroy()
        setTimeout(() => {
          cursor = b2j.find(coll, {}, { batchSize: 10 })
          cursor.pipe(res)
          resolve()
        }, 20)
      }).then((web) => {
        http.get(web.base).on('error', () => {})
        void piped.then(() => sleep(200)).then(() => web.close())
      })
    })
    await piped
    for (let k = 0; k < 100 && !cursor.closed; k++) await sleep(10)
    expect(cursor.closed).toBe(true)
    expect(mon.count('find')).toBe(0)
    mon.stop()
  })
})

describe('cursor.pipe() on other writables', () => {
  it('an error destroys the destination with that error; onError gets it; no listener needed', async () => {
    await src.failGetMore({ code: 96, ns: `${dbName}.docs` })
    const dest = new PassThrough()
    dest.resume()
    const seen: any[] = []
    b2j.find(coll, {}, { batchSize: 50 }).pipe(dest, { onError: (err: any, d: any) => seen.push({ err, same: d === dest }) })
    await new Promise((r) => dest.once('close', r))
    expect(dest.destroyed).toBe(true)
    expect((dest as any).errored?.code).toBe(96)
    expect(seen).toHaveLength(1)
    expect(seen[0].same).toBe(true)
    expect(seen[0].err.code).toBe(96)
    await src.off()
  })

  it('end: false leaves the destination open on success and destroys it on error', async () => {
    const out: Buffer[] = []
    const dest = new PassThrough()
    dest.on('data', (c) => out.push(c))
    const done = new Promise((r) => dest.once('unpipe', r))
    b2j.find(coll, { _id: { $lt: 3 } }, { sort: { _id: 1 } }).pipe(dest, { end: false })
    await done
    expect(dest.writableEnded).toBe(false)
    dest.end('tail\n')
    await new Promise((r) => dest.once('end', r))
    expect(Buffer.concat(out).toString().split('\n').slice(-2)).toEqual(['tail', ''])

    await src.failGetMore({ code: 96, ns: `${dbName}.docs` })
    const dest2 = new PassThrough()
    dest2.resume()
    b2j.find(coll, {}, { batchSize: 50 }).pipe(dest2, { end: false })
    await new Promise((r) => dest2.once('close', r))
    expect((dest2 as any).errored?.code).toBe(96)
    await src.off()
  })

  it('a destination destroyed first closes the cursor; onError gets the premature close', async () => {
    const mon = monitor()
    const seen: any[] = []
    const cursor = b2j.find(coll, {}, { batchSize: 10 })
    const dest = new Writable({
      write(_c, _e, cb) {
        dest.destroy()
        cb()
      },
    })
    cursor.pipe(dest, { onError: (err: any) => seen.push(err) })
    for (let k = 0; k < 200 && !cursor.closed; k++) await sleep(10)
    expect(cursor.closed).toBe(true)
    await cursor.close()
    // pipeline's callback may come after the cursor closed (Node 26 calls it a turn later)
    for (let k = 0; k < 200 && seen.length === 0; k++) await sleep(10)
    expect(seen.map((e) => e.code)).toEqual(['ERR_STREAM_PREMATURE_CLOSE'])
    expect(mon.count('killCursors')).toBe(1)
    mon.stop()
  })

  it('an onError that throws: the response is destroyed and a process warning says so', async () => {
    const warnings: any[] = []
    const onWarning = (w: any) => warnings.push(w)
    process.on('warning', onWarning)
    const web = await serve((req, res) => {
      b2j.find(coll, { $bogus: 1 }).pipe(res, {
        onError() {
          throw new Error('logger down')
        },
      })
    })
    try {
      await expect(fetch(web.base)).rejects.toThrow()
      for (let k = 0; k < 50 && warnings.length === 0; k++) await sleep(10)
      expect(warnings.map((w) => [w.code, w.message])).toEqual([['BSON2JSON_ON_ERROR', 'bson2json: pipe() onError threw: logger down']])
    } finally {
      process.off('warning', onWarning)
      await web.close()
    }
  })

  it('a wrong destination or onError is a TypeError', () => {
    expect(() => b2j.find(coll).pipe(null)).toThrow(/pipe\(\) destination must be a writable stream, got null/)
    expect(() => b2j.find(coll).pipe(new PassThrough(), { onError: 'log' })).toThrow(/options\.onError must be a function, got 'log'/)
  })
})

describe('every Readable propagates errors through pipeline and for await', () => {
  const sink = () =>
    new Writable({
      write(_c, _e, cb) {
        cb()
      },
      objectMode: true,
    })
  const viaPipeline = (r: any) => new Promise<any>((resolve) => pipeline(r, sink(), (err) => resolve(err)))
  const viaForAwait = async (r: any) => {
    try {
      for await (const _ of r) void _
    } catch (e) {
      return e
    }
    return null
  }

  it('cursor.stream(): a failed find and a failed getMore', async () => {
    expect(await viaPipeline(b2j.find(coll, { $bogus: 1 }).stream())).toMatchObject({ message: expect.stringMatching(/\$bogus/) })
    expect(await viaForAwait(b2j.find(coll, { $bogus: 1 }).stream({ format: 'array' }))).toMatchObject({ message: expect.stringMatching(/\$bogus/) })
    await src.failGetMore({ code: 96, ns: `${dbName}.docs` })
    expect(await viaPipeline(b2j.find(coll, {}, { batchSize: 100 }).stream())).toMatchObject({ code: 96 })
    await src.failGetMore({ code: 96, ns: `${dbName}.docs` })
    expect(await viaForAwait(b2j.find(coll, {}, { batchSize: 100 }).stream())).toMatchObject({ code: 96 })
    await src.off()
  })

  it('changeStream.stream(): a failed aggregate and a non-resumable getMore error', async () => {
    expect(await viaPipeline(b2j.watch(coll, [{ $bogusStage: {} }]).stream())).toBeInstanceOf(Error)
    expect(await viaForAwait(b2j.watch(coll, [{ $bogusStage: {} }]).stream())).toBeInstanceOf(Error)
    await src.failGetMore({ code: 280 })
    expect(await viaPipeline(b2j.watch(coll, [], { maxAwaitTimeMS: 50 }).stream())).toMatchObject({ code: 280 })
    await src.failGetMore({ code: 280 })
    expect(await viaForAwait(b2j.watch(coll, [], { maxAwaitTimeMS: 50 }).stream())).toMatchObject({ code: 280 })
    await src.off()
  })

  it('createTranscodeStream(): corrupt input', async () => {
    const good = BSON.serialize({ a: 1 })
    const bad = Buffer.from(good)
    bad[4] = 0x77 // an element type BSON does not define
    const feed = () => {
      const p = new PassThrough()
      p.end(Buffer.concat([good, bad]))
      return p
    }
    const e1 = await new Promise<any>((resolve) => pipeline(feed(), b2j.createTranscodeStream(), sink(), (err) => resolve(err)))
    expect(e1).toMatchObject({ code: 'BSON_UNKNOWN_TYPE' })
    expect(await viaForAwait(feed().pipe(b2j.createTranscodeStream()))).toMatchObject({ code: 'BSON_UNKNOWN_TYPE' })
  })
})

describe('the read-ahead follows backpressure', () => {
  /** A writable that takes the first chunk and never finishes writing it: the consumer is stuck. */
  const stuck = (objectMode = false) => new Writable({ objectMode, highWaterMark: 1, write() {} })

  it('cursor.stream(): no getMore while the Readable is full (one batch held, plus highWaterMark)', async () => {
    const mon = monitor()
    const s = b2j.find(coll, {}, { batchSize: 10 }).stream({ highWaterMark: 1 })
    pipeline(s, stuck(), () => {})
    await sleep(300)
    // the find's batch went to the writable, one getMore's batch fills the Readable: then nothing
    expect(s.readableLength).toBeGreaterThan(0)
    expect(mon.count('getMore')).toBe(1)
    await sleep(300)
    expect(mon.count('getMore')).toBe(1)
    s.destroy()
    mon.stop()
  })

  it('cursor.pipe(): no read-ahead by default, so a stuck destination holds the one batch it took', async () => {
    const mon = monitor()
    const cursor = b2j.find(coll, {}, { batchSize: 10 })
    const dest = stuck()
    cursor.pipe(dest)
    await sleep(300)
    expect(dest.writableLength).toBeGreaterThan(0) // the find's batch
    expect(mon.count('getMore')).toBe(0)
    await sleep(300)
    expect(mon.count('getMore')).toBe(0)
    dest.destroy()
    for (let k = 0; k < 100 && !cursor.closed; k++) await sleep(10)
    expect(cursor.closed).toBe(true)
    mon.stop()
  })

  it('cursor.pipe() to a destination that keeps up: every batch, in order', async () => {
    const out: Buffer[] = []
    const dest = new Writable({
      write(c, _e, cb) {
        out.push(c)
        setImmediate(cb)
      },
    })
    b2j.find(coll, {}, { batchSize: 7, sort: { _id: 1 } }).pipe(dest)
    await new Promise((r) => dest.once('finish', r))
    const ids = Buffer.concat(out).toString().trimEnd().split('\n').map((l) => JSON.parse(l)._id)
    expect(ids).toEqual(Array.from({ length: N }, (_, i) => i))
    expect(out.length).toBe(Math.ceil(N / 7))
  })

  it('cursor.stream(): with room in the Readable, batches keep coming until it is full', async () => {
    const mon = monitor()
    // ~2.3 KB per batch of 10 documents: a 12 KB Readable takes 6 batches, then stops
    const s = b2j.find(coll, {}, { batchSize: 10 }).stream({ highWaterMark: 12 * 1024 })
    pipeline(s, stuck(), () => {})
    await sleep(400)
    const n = mon.count('getMore')
    expect(n).toBeGreaterThanOrEqual(4)
    expect(n).toBeLessThanOrEqual(7)
    expect(s.readableLength).toBeGreaterThanOrEqual(12 * 1024 - 2400)
    await sleep(300)
    expect(mon.count('getMore')).toBe(n)
    s.destroy()
    mon.stop()
  })

  it('changeStream.stream(): no getMore while the Readable is full', async () => {
    const session = client.startSession()
    await db.command({ ping: 1 }, { session })
    const startAtOperationTime = session.operationTime
    await session.endSession()
    const c2 = db.collection('events')
    await c2.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i })))
    const mon = monitor()
    const cs = b2j.watch(c2, [], { startAtOperationTime, batchSize: 5, maxAwaitTimeMS: 50 })
    const s = cs.stream({ highWaterMark: 3 })
    pipeline(s, stuck(true), () => {})
    await sleep(400)
    // aggregate's batch: one event to the writable, 3 to the Readable, one left in the batch
    expect(mon.count('getMore')).toBe(0)
    await sleep(300)
    expect(mon.count('getMore')).toBe(0)
    s.destroy()
    await cs.close()
    mon.stop()
  })

  it("a waiting cursor does not keep its last raw reply alive through the driver's $clusterTime", async () => {
    // The driver keeps each reply's $clusterTime in the session and the topology; its signature
    // hash is a view into the whole reply message unless copied.
    const cursor = b2j.find(coll, {}, { batchSize: 100 })
    const s = cursor.stream({ highWaterMark: 1 })
    pipeline(s, stuck(), () => {})
    await sleep(300)
    const held = (h: any) => h?.clusterTime?.signature?.hash?.buffer
    for (const [what, holder] of [
      ['session', (cursor as any)._session],
      ['topology', (client as any).topology],
    ]) {
      const b = held(holder)
      if (b === undefined) continue // a server without signed cluster times
      expect(b.byteLength, what).toBe(20)
      expect(b.buffer.byteLength, what).toBeLessThan(10_000) // the reply was ~25 KB
    }
    s.destroy()
  })

  it('an explicit prefetch is kept, and stops while the Readable is full', async () => {
    const mon = monitor()
    const s = b2j.find(coll, {}, { batchSize: 10, prefetch: 2 }).stream({ highWaterMark: 1 })
    pipeline(s, stuck(), () => {})
    await sleep(400)
    // 1 getMore fills the Readable; at most 2 more were already asked for before it was full
    expect(mon.count('getMore')).toBeGreaterThanOrEqual(1)
    expect(mon.count('getMore')).toBeLessThanOrEqual(3)
    const n = mon.count('getMore')
    await sleep(300)
    expect(mon.count('getMore')).toBe(n)
    s.destroy()
    mon.stop()
  })
})

describe("find(): the driver's argument forms", () => {
  const forms: [string, unknown][] = [
    ['{ n: -1 }', { n: -1 }],
    ["[['n', -1]]", [['n', -1]]],
    ["'n'", 'n'],
    ["['n', -1]", ['n', -1]],
    ["['a', 'b']", ['a', 'b']],
    ["[['a', 1], ['b', -1]]", [['a', 1], ['b', -1]]],
    ['a Map', new Map<string, any>([['a', -1], ['b', 'asc']])],
    ["{ a: 'desc', b: 'ascending' }", { a: 'desc', b: 'ascending' }],
    ["{ a: 'DESC', b: '1' }", { a: 'DESC', b: '1' }],
    ["[['a', 'descending'], ['b', 'asc']]", [['a', 'descending'], ['b', 'asc']]],
    ["['n', 'desc']", ['n', 'desc']],
    ["['n', 1]", ['n', 1]],
    ['{ s: { $meta: "textScore" } }', { s: { $meta: 'textScore' }, n: 1 }],
    ["[['s', { $meta: 'textScore' }]]", [['s', { $meta: 'textScore' }]]],
    ['{ 2: 1, a: -1 }', { 2: 1, a: -1 }],
    ['{}', {}],
    ['[]', []],
    ['an empty Map', new Map()],
    ['null', null],
    ['undefined', undefined],
  ]
  it('formatSort gives what the driver sends, for every form', () => {
    for (const [name, sort] of forms) {
      const ours = b2j.find(coll, {}, { sort })
      const theirs = driverFormatSort(sort)
      const sent = (ours as any)._cmd.sort
      expect(sent === undefined ? undefined : [...sent], name).toEqual(theirs === undefined ? undefined : [...theirs])
      expect('sort' in (ours as any)._cmd, name).toBe(theirs !== undefined)
    }
  })

  it('forms the driver rejects are TypeErrors naming options.sort, at the first read, before anything is sent', async () => {
    const mon = monitor()
    for (const sort of [{ n: 2 }, { n: 'up' }, ['n', 'x', 'y'].map((k) => [k, 'sideways']), 5, true]) {
      expect(() => driverFormatSort(sort), JSON.stringify(sort)).toThrow()
      await expect(firstRead(b2j.find(coll, {}, { sort })), JSON.stringify(sort)).rejects.toThrow(TypeError)
      await expect(firstRead(b2j.find(coll, {}, { sort })), JSON.stringify(sort)).rejects.toThrow(/options\.sort/)
    }
    await expect(firstRead(b2j.find(coll, {}, { sort: { n: 2 } }))).rejects.toThrow("bson2json: options.sort has an invalid direction for 'n': 2 (1, -1, 'asc', 'desc', 'ascending', 'descending' or { $meta })")
    mon.stop()
    expect(mon.started).toEqual([])
  })

  it('each sort form returns the driver find’s documents in its order', async () => {
    for (const [name, sort] of forms) {
      if (JSON.stringify(sort)?.includes('$meta')) continue // text search needs a text index
      const theirs = (await coll.find({ b: { $lt: 40 } }, { sort: sort as any, projection: { n: 1, a: 1, b: 1 } }).toArray()).map((d) => JSON.stringify(d))
      const ours = await b2j.find(coll, { b: { $lt: 40 } }, { sort, projection: { n: 1, a: 1, b: 1 } }).toArray()
      if (driverFormatSort(sort) === undefined) expect(new Set(ours), name).toEqual(new Set(theirs))
      else expect(ours, name).toEqual(theirs)
    }
  })

  it('a filter that is not an object, and a pipeline stage that is not one, are TypeErrors at the first read, before anything is sent', async () => {
    const mon = monitor()
    await expect(firstRead(b2j.find(coll, 'x'))).rejects.toThrow("bson2json: find() filter must be a query document (an object), got 'x' (a string)")
    await expect(firstRead(b2j.find(coll, [{ a: 1 }]))).rejects.toThrow('bson2json: find() filter must be a query document (an object), got an array of 1')
    await expect(firstRead(b2j.find(coll, 7))).rejects.toThrow("bson2json: find() filter must be a query document (an object), got 7 (a number)")
    await expect(firstRead(b2j.find(coll, null))).rejects.toThrow('got null')
    await expect(firstRead(b2j.find(coll, Buffer.from('{}')))).rejects.toThrow(TypeError)
    await expect(firstRead(b2j.find(coll, {}, 'relaxed'))).rejects.toThrow("bson2json: find() options must be an object, got 'relaxed' (a string)")
    await expect(firstRead(b2j.aggregate(coll, { $match: {} }))).rejects.toThrow('bson2json: aggregate() pipeline must be an array of stages, got an object')
    await expect(firstRead(b2j.aggregate(coll, [{ $match: {} }, '$limit']))).rejects.toThrow(
      "bson2json: aggregate() pipeline[1] must be a stage document (an object like { $match: {...} }), got '$limit' (a string)",
    )
    await expect(firstRead(b2j.aggregate(coll, [null]))).rejects.toThrow('pipeline[0] must be a stage document')
    await expect(firstRead(b2j.aggregate(coll, [[{ $match: {} }]]))).rejects.toThrow('pipeline[0] must be a stage document')
    await expect(firstRead(b2j.watch(coll, [{ $match: {} }, 5]))).rejects.toThrow('bson2json: watch() pipeline[1] must be a stage document')
    mon.stop()
    expect(mon.started).toEqual([])
  })
})
