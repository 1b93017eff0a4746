/**
 * find() / aggregate() / watch() under abuse (issue 48): an aborted or timed-out cursor ends every
 * consumer with an error (never like a success); arguments a request can carry never throw inside
 * a request handler; the default 500 body says nothing of the server; every server reply is
 * awaited for at most `timeoutMS`, a drip-fed one too. Runs against the in-repo test server (its
 * fault injection), or against MONGODB_URI where a case needs no injected fault.
 * docs/reliability.md ("Abuse cases") lists each case and the test here that shows it.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough, Writable, pipeline } from 'node:stream'
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
