/**
 * find() / aggregate() / watch() under abuse (issue 48): an aborted or timed-out cursor ends every
 * consumer with an error (never like a success); arguments a request can carry never throw inside
 * a request handler; the default 500 body says nothing of the server; every server reply is
 * awaited for at most `timeoutMS`, a drip-fed one too. Runs against the in-repo test server (its
 * fault injection), or against MONGODB_URI where a case needs no injected fault.
 * docs/reliability.md ("Abuse cases") lists each case and the test here that shows it.
 */
import http from 'node:http'
import { spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import type { AddressInfo } from 'node:net'
import { Writable, pipeline } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MongoClient } from 'mongodb'
import type { Collection } from 'mongodb'
import { startTestServer } from '../../tools/test-server'
import type { TestServer } from '../../tools/test-server'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const b2j = require('../..')

const URI = process.env.MONGODB_URI
let server: TestServer | undefined
let client: MongoClient
let coll: Collection
const N = 10
const dbName = `b2j_abuse_${process.pid}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

beforeAll(async () => {
  if (!URI) server = await startTestServer({ port: 0 })
  client = new MongoClient(URI ?? server!.uri)
  await client.connect()
  coll = client.db(dbName).collection('docs')
  await coll.deleteMany({})
  await coll.insertMany(Array.from({ length: N }, (_, i) => ({ _id: i as any, n: i })))
})

afterAll(async () => {
  await client?.db(dbName).dropDatabase().catch(() => {})
  await client?.close()
  await server?.close()
})

/** A signal aborted once `after` documents went through `seen()`. */
function abortAfter(after: number) {
  const ac = new AbortController()
  let n = 0
  return {
    signal: ac.signal,
    seen() {
      if (++n === after) ac.abort()
    },
  }
}

/** An HTTP server whose handler is `handle`; resolves its base URL and a close function. */
async function serve(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const s = http.createServer(handle)
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  return { base: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => s.close(() => r())) }
}

/** GET: the status, the body and whether it ended cleanly or was cut. */
function get(url: string): Promise<{ status: number; body: string; ended: 'complete' | 'cut' }> {
  return new Promise((resolve) => {
    let body = ''
    let status = 0
    const req = http.get(url, (res) => {
      status = res.statusCode ?? 0
      res.setEncoding('utf8')
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve({ status, body, ended: 'complete' }))
      res.on('error', () => resolve({ status, body, ended: 'cut' }))
      res.on('aborted', () => resolve({ status, body, ended: 'cut' }))
    })
    req.on('error', () => resolve({ status, body, ended: 'cut' }))
  })
}

describe('an aborted signal ends find() and aggregate() with an error, never like a success', () => {
  const make = {
    find: (signal: AbortSignal, o: object = {}) => b2j.find(coll, {}, { sort: { _id: 1 }, batchSize: 2, signal, ...o }),
    aggregate: (signal: AbortSignal, o: object = {}) => b2j.aggregate(coll, [{ $sort: { _id: 1 } }], { batchSize: 2, signal, ...o }),
  }
  for (const [name, open] of Object.entries(make)) {
    it(`${name}: for await rejects with the signal's reason after 2 of ${N}`, async () => {
      const a = abortAfter(2)
      const got: string[] = []
      const err = await (async () => {
        for await (const s of open(a.signal)) {
          got.push(s)
          a.seen()
        }
      })().then(
        () => null,
        (e) => e,
      )
      expect(err, `ended normally after ${got.length} documents`).not.toBeNull()
      expect(err.name).toBe('AbortError')
      expect(got.length).toBeLessThan(N)
    })

    it(`${name}: batches(), ndjson() and toArray() reject; an already aborted signal rejects the first call`, async () => {
      for (const method of ['batches', 'ndjson'] as const) {
        const a = abortAfter(1)
        await expect(
          (async () => {
            for await (const _b of open(a.signal)[method]()) a.seen()
          })(),
          method,
        ).rejects.toMatchObject({ name: 'AbortError' })
      }
      const ac = new AbortController()
      ac.abort()
      await expect(open(ac.signal).toArray()).rejects.toMatchObject({ name: 'AbortError' })
      const reason = new Error('the caller gave up')
      const ac2 = new AbortController()
      ac2.abort(reason)
      await expect(open(ac2.signal).toArray()).rejects.toBe(reason)
    })

    it(`${name}: stream.pipeline reports the abort`, async () => {
      const a = abortAfter(1)
      const sink = new Writable({
        write(_c, _e, cb) {
          a.seen()
          cb()
        },
      })
      const err = await new Promise<any>((resolve) => pipeline(open(a.signal).stream(), sink, (e) => resolve(e ?? null)))
      expect(err, 'pipeline reported no error').not.toBeNull()
      expect(err.name).toBe('AbortError')
    })

    it(`${name}: pipe(res, { format: 'array' }) after the headers: the response is cut, never a complete array`, async () => {
      const web = await serve((_req, res) => {
        const a = abortAfter(2)
        const s = open(a.signal)
        res.on('pipe', () => {})
        const orig = res.write.bind(res)
        ;(res as any).write = (...args: any[]) => {
          a.seen()
          return (orig as any)(...args)
        }
        s.pipe(res, { format: 'array' })
      })
      try {
        const r = await get(web.base)
        expect(r.status).toBe(200)
        expect(r.ended, `body: ${r.body}`).toBe('cut')
      } finally {
        await web.close()
      }
    })

    it(`${name}: pipe(res) aborted before the headers: a 5xx`, async () => {
      const web = await serve((_req, res) => {
        const ac = new AbortController()
        ac.abort()
        open(ac.signal).pipe(res)
      })
      try {
        const r = await get(web.base)
        expect(r.status).toBeGreaterThanOrEqual(500)
        expect(r.ended).toBe('complete')
      } finally {
        await web.close()
      }
    })
  }

  it('close() (the caller stopping) still ends the iteration normally', async () => {
    const c = make.find(new AbortController().signal)
    const got: string[] = []
    for await (const s of c) {
      got.push(s)
      if (got.length === 2) await c.close()
    }
    expect(got).toHaveLength(2)
  })
})

describe('user input never throws inside a handler: argument errors take the error path of server errors', () => {
  const hostile: [string, unknown][] = [
    ['[1,2]', [1, 2]],
    ['5', 5],
    ['null', null],
    ['"str"', 'str'],
  ]
  const calls: [string, (v: any) => any][] = [
    ['find(coll, filter)', (v) => b2j.find(coll, v)],
    ['find(coll, {}, options)', (v) => b2j.find(coll, {}, v)],
    ['find(coll, {}, { sort: { n: v } })', (v) => b2j.find(coll, {}, { sort: { n: v } })],
    ['aggregate(coll, pipeline)', (v) => b2j.aggregate(coll, v)],
    ['aggregate(coll, [stage])', (v) => b2j.aggregate(coll, [v])],
    ['watch(coll, pipeline)', (v) => b2j.watch(coll, v)],
    ['watch(coll, [], options)', (v) => b2j.watch(coll, [], v)],
    ['find(not a collection)', (v) => b2j.find(v, {})],
  ]
  for (const [name, call] of calls) {
    it(`${name}: no throw; for await and stream() fail with a coded TypeError`, async () => {
      for (const [text, v] of hostile) {
        let c: any
        expect(() => (c = call(v)), `${name} with ${text}`).not.toThrow()
        const err = await (async () => {
          for await (const _x of c) {
            /* nothing */
          }
        })().then(
          () => null,
          (e) => e,
        )
        expect(err, `${name} with ${text}: iteration ended normally`).toBeInstanceOf(Error)
        expect(['ERR_INVALID_ARG_TYPE', 'ERR_OUT_OF_RANGE', 'ERR_INVALID_ARG_VALUE']).toContain(err.code)
        const s = call(v).stream()
        const streamErr = await new Promise((resolve) => {
          s.on('error', resolve)
          s.on('end', () => resolve(null))
          s.resume()
        })
        expect(streamErr, `${name} with ${text}: stream`).toBeInstanceOf(Error)
      }
    })
  }

  it("pipe(res) with hostile input: a 500 with the generic body, the server stays up", async () => {
    const web = await serve((req, res) => {
      const q = new URL(req.url!, 'http://x').searchParams.get('q')!
      b2j.find(coll, JSON.parse(q)).pipe(res)
    })
    try {
      for (const [text] of hostile) {
        const r = await get(`${web.base}/?q=${encodeURIComponent(text)}`)
        expect(r.status, text).toBe(500)
        expect(JSON.parse(r.body), text).toEqual({ error: 'query failed', code: 'ERR_INVALID_ARG_TYPE' })
      }
      const ok = await get(`${web.base}/?q=${encodeURIComponent('{"n":3}')}`)
      expect(ok.status).toBe(200)
      expect(ok.body).toBe('{"_id":3,"n":3}\n')
    } finally {
      await web.close()
    }
  })
})

describe('no leaks: the default 500 body is generic; the full error goes to onError', () => {
  it('a server error: {"error":"query failed","code":<the server\'s code>}, no message text', async () => {
    const web = await serve((_req, res) => b2j.find(coll, { $bogus: 'SSN-SECRET-999' }).pipe(res))
    try {
      const r = await get(web.base)
      expect(r.status).toBe(500)
      const body = JSON.parse(r.body)
      expect(body.error).toBe('query failed')
      expect(typeof body.code).toBe('number')
      expect(r.body).not.toMatch(/bogus|SSN/)
    } finally {
      await web.close()
    }
  })

  it.skipIf(!!URI)('a server message that quotes the filter (not authorized … filter: { ssn: … }) and an unreachable server: neither reaches the client', async () => {
    server!.injectFault({ command: 'find', kind: 'error', code: 13, errmsg: 'not authorized on app to execute command { find: "docs", filter: { ssn: "SSN-SECRET-999" } }' })
    const down = new MongoClient('mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300')
    const logged: Error[] = []
    const web = await serve((req, res) => {
      const c = req.url === '/down' ? down.db('app').collection('docs') : coll
      const opts = req.url === '/logged' ? { onError: (e: Error, r: http.ServerResponse) => (logged.push(e), r.writeHead(503).end()) } : {}
      b2j.find(c, { ssn: 'SSN-SECRET-999' }).pipe(res, opts)
    })
    try {
      const r = await get(web.base)
      expect(r.status).toBe(500)
      expect(JSON.parse(r.body)).toEqual({ error: 'query failed', code: 13 })
      const d = await get(`${web.base}/down`)
      expect(d.status).toBe(500)
      expect(JSON.parse(d.body)).toEqual({ error: 'query failed', code: null })
      server!.injectFault({ command: 'find', kind: 'error', code: 13, errmsg: 'not authorized … filter: { ssn: "SSN-SECRET-999" }' })
      const l = await get(`${web.base}/logged`)
      expect(l.status).toBe(503)
      expect(logged).toHaveLength(1)
      expect(logged[0].message).toMatch(/SSN-SECRET-999/) // the full error, on the server side only
    } finally {
      await web.close()
      await down.close()
    }
  })
})

describe("bounded time: the driver's zero-length-message spin is guarded", () => {
  it.each(['mongodb', 'mongodb6'])('%s: a reply header with messageLength 0 fails the command (ours and then the driver\'s own) instead of spinning forever', async (driver) => {
    // In a child process: without the guard the driver loops synchronously and never returns.
    const root = resolve(__dirname, '../..')
    const script = `
const { startTestServer } = require(${JSON.stringify(join(root, 'tools/test-server'))})
const { MongoClient } = require(${JSON.stringify(join(root, 'node_modules', driver))})
const b2j = require(${JSON.stringify(root)})
;(async () => {
  const s = await startTestServer({ port: 0 })
  const c = new MongoClient(s.uri)
  await c.connect()
  const coll = c.db('a').collection('b')
  await coll.insertOne({ _id: 1, x: 1 })
  s.injectFault({ command: 'find', kind: 'lengthLie', length: 0 })
  const ours = await b2j.find(coll, {}).toArray().then(() => 'no error', (e) => e.name)
  s.injectFault({ command: 'find', kind: 'lengthLie', length: 0 })
  const theirs = await coll.find({}).toArray().then(() => 'no error', (e) => e.name)
  const after = await b2j.find(coll, {}).toArray()
  console.log(JSON.stringify({ ours, theirs, after }))
  await c.close()
  await s.close()
})()`
    const r = spawnSync(process.execPath, ['-e', script], { timeout: 20_000, encoding: 'utf8' })
    expect(r.signal, `the child spun until killed: ${r.stderr}`).toBeNull()
    const got = JSON.parse(r.stdout.trim().split('\n').pop()!)
    expect(got.ours).not.toBe('no error')
    expect(got.theirs).not.toBe('no error')
    expect(got.after).toEqual(['{"_id":1,"x":1}'])
  }, 30_000)
})

describe.skipIf(!!URI)('bounded time: timeoutMS bounds the wait for each server reply', () => {
  const timedOut = async (p: Promise<unknown>) => {
    const t = Date.now()
    const err: any = await p.then(
      () => null,
      (e) => e,
    )
    return { err, ms: Date.now() - t }
  }

  it('find and aggregate: a silent server on the first command and on a getMore', async () => {
    for (const command of ['find', 'aggregate', 'getMore']) {
      server!.injectFault({ command, kind: 'silence' })
      const c = command === 'aggregate' ? b2j.aggregate(coll, [], { batchSize: 2, timeoutMS: 400 }) : b2j.find(coll, {}, { batchSize: 2, timeoutMS: 400 })
      const got: string[] = []
      const { err, ms } = await timedOut(
        (async () => {
          for await (const s of c) got.push(s)
        })(),
      )
      expect(err, command).not.toBeNull()
      expect(err.name).toBe('TimeoutError')
      expect(err.code).toBe('BSON2JSON_TIMEOUT')
      expect(ms).toBeLessThan(3000)
      expect(got, command).toHaveLength(command === 'getMore' ? 2 : 0)
      server!.clearFaults()
    }
  })

  it('a drip-fed reply (a byte every 20 ms: the socket is never idle) times out as a whole', async () => {
    server!.injectFault({ command: 'find', kind: 'drip', dripMs: 20 })
    const { err, ms } = await timedOut(b2j.find(coll, {}, { timeoutMS: 500 }).toArray())
    expect(err?.name).toBe('TimeoutError')
    expect(ms).toBeLessThan(3000)
    server!.clearFaults()
    // the same drip without timeoutMS is slow, not stuck: the reply arrives whole
    server!.injectFault({ command: 'find', kind: 'drip', dripMs: 1 })
    expect(await b2j.find(coll, { n: 1 }).toArray()).toEqual(['{"_id":1,"n":1}'])
  })

  it('watch: a silent getMore fails the stream; maxAwaitTimeMS must be below timeoutMS', async () => {
    const cs = b2j.watch(coll, [], { timeoutMS: 600 })
    const first = cs.next()
    await sleep(200)
    server!.injectFault({ command: 'getMore', kind: 'silence', changeStreamOnly: true, count: Infinity })
    const { err, ms } = await timedOut(first)
    server!.clearFaults()
    expect(err?.name).toBe('TimeoutError')
    expect(ms).toBeLessThan(4000)
    await cs.close()
    // a quiet stream (no fault) with a short timeoutMS does not time out: its getMores wait less
    const quiet = b2j.watch(coll, [], { timeoutMS: 300 })
    const next = quiet.next()
    await sleep(1500)
    await coll.insertOne({ _id: 1000 as any, n: 1000 })
    const ev: any = await next
    expect(ev.value.operationType).toBe('insert')
    await quiet.close()
    await coll.deleteOne({ _id: 1000 as any })
    await expect(b2j.watch(coll, [], { timeoutMS: 500, maxAwaitTimeMS: 500 }).next()).rejects.toMatchObject({ name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
  })

  it('pipe(res) before the headers: 500 {"error":"query failed","code":"BSON2JSON_TIMEOUT"}', async () => {
    server!.injectFault({ command: 'find', kind: 'silence' })
    const web = await serve((_req, res) => b2j.find(coll, {}, { timeoutMS: 300 }).pipe(res))
    try {
      const r = await get(web.base)
      expect(r.status).toBe(500)
      expect(JSON.parse(r.body)).toEqual({ error: 'query failed', code: 'BSON2JSON_TIMEOUT' })
    } finally {
      await web.close()
      server!.clearFaults()
    }
  })
})

describe.skipIf(!!URI)('a malformed reply is a coded error', () => {
  const replies = [{ ok: 1 }, { ok: 1, cursor: 5 }, { ok: 1, cursor: 'x' }]
  it('find, aggregate (first command and getMore) and watch: BSON_NOT_A_CURSOR, not a TypeError', async () => {
    for (const reply of replies) {
      for (const [command, open] of [
        ['find', () => b2j.find(coll, {}).toArray()],
        ['aggregate', () => b2j.aggregate(coll, []).toArray()],
        ['getMore', () => b2j.find(coll, {}, { batchSize: 2 }).toArray()],
        ['aggregate', () => b2j.watch(coll).next()],
      ] as [string, () => Promise<unknown>][]) {
        server!.injectFault({ command, kind: 'reply', reply })
        const err: any = await open().then(
          () => null,
          (e) => e,
        )
        server!.clearFaults()
        expect(err, `${command} ${JSON.stringify(reply)}`).not.toBeNull()
        expect(err.code, `${command} ${JSON.stringify(reply)}: ${err}`).toBe('BSON_NOT_A_CURSOR')
        expect(err.name).toBe('TranscodeError')
      }
    }
  })
})
