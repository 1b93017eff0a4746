/**
 * Runs every README example marked `<!-- runnable: NAME -->` as written (only the URI replaced),
 * against the in-repo test server or MONGODB_URI, and checks what it prints or serves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MongoClient } from 'mongodb'
import type { Collection } from 'mongodb'
import { startSource } from '../support/source'
import type { Source } from '../support/source'
import { readmeExamples, runExample, seedOrders } from '../support/readme-examples'
import { CUT_BODY } from '../support/http'
let src: Source
let client: MongoClient
let orders: Collection
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

beforeAll(async () => {
  src = await startSource('readme')
  client = new MongoClient(src.uri)
  await client.connect()
  orders = await seedOrders(client)
})

afterAll(async () => {
  await client?.close()
  await src?.close()
})

describe('README examples, run as written', () => {
  it('the README marks the find, watch and HTTP examples runnable', () => {
    expect([...readmeExamples().keys()].sort()).toEqual(['find', 'http', 'http-pipeline', 'watch'])
  })

  it('find: prints the driver documents as JSON, in the sort order', async () => {
    const ex = runExample('find', src.clientUri)
    expect(await ex.exited()).toBe(0)
    expect(ex.stderr()).toBe('')
    const theirs = (await orders.find({ status: 'open' }, { sort: { total: -1 }, limit: 10 }).toArray()).map((d) => JSON.stringify(d))
    expect(ex.stdout().trimEnd().split('\n')).toEqual(theirs)
  })

  it('watch: prints each change with its documentKey and fullDocument JSON', async () => {
    const ex = runExample('watch', src.clientUri)
    try {
      // The stream starts when the example's aggregate runs: write until an event shows up.
      let k = 0
      for (; k < 80 && !/insert/.test(ex.stdout()); k++) {
        expect(ex.alive(), ex.stderr()).toBe(true)
        await orders.insertOne({ _id: 100_000 + k + Math.floor(Math.random() * 1e6) * 100, status: 'new', total: k })
        await sleep(250)
      }
      for (let w = 0; w < 40 && !ex.stdout().includes('\n'); w++) await sleep(50)
      const line = ex.stdout().split('\n').find((l) => l.startsWith('insert '))!
      expect(line).toBeDefined()
      const id = Number(/"_id":(\d+)/.exec(line)![1])
      const doc = await orders.findOne({ _id: id as any })
      expect(line).toBe(`insert {"_id":${id}} ${JSON.stringify(doc)}`)
      expect(ex.stderr()).toBe('')
    } finally {
      await ex.kill()
      await orders.deleteMany({ status: 'new' })
    }
  })

  it('http: NDJSON of the query, 400 for a malformed one, 500 {"error","code"} for one the server rejects', async () => {
    const ex = runExample('http', src.clientUri)
    try {
      const base = `http://127.0.0.1:${await ex.port()}`
      const q = (s: string) => `${base}/?q=${encodeURIComponent(s)}`
      const theirs = (await orders.find({ status: 'closed' }, { sort: { _id: 1 } }).toArray()).map((d) => JSON.stringify(d))
      const ok = await fetch(q('{"status":"closed"}'))
      expect(ok.status).toBe(200)
      expect(ok.headers.get('content-type')).toBe('application/x-ndjson')
      expect(await ok.text()).toBe(theirs.join('\n') + '\n')
      const dated = await fetch(q('{"at":{"$lt":{"$date":"2023-11-14T22:13:25Z"}}}'))
      const before = await orders.countDocuments({ at: { $lt: new Date('2023-11-14T22:13:25Z') } })
      expect(before).toBe(5)
      expect((await dated.text()).trimEnd().split('\n')).toHaveLength(before)
      expect((await fetch(q('{status:'))).status).toBe(400)
      const bad = await fetch(q('{"$bogus":1}'))
      expect(bad.status).toBe(500)
      const body = await bad.json()
      expect(body.error).toBe('query failed')
      expect(typeof body.code).toBe('number')
      expect(ex.alive()).toBe(true)
      expect(ex.stderr()).toBe('')
    } finally {
      await ex.kill()
    }
  })

  it('http-pipeline: a JSON array equal to the driver documents; a failure mid-response is logged and cuts the response', async () => {
    const ex = runExample('http-pipeline', src.clientUri)
    try {
      const base = `http://127.0.0.1:${await ex.port()}`
      const theirs = (await orders.find({ status: 'open' }, { sort: { _id: 1 } }).toArray()).map((d) => JSON.stringify(d))
      const r = await fetch(base)
      expect(r.headers.get('content-type')).toBe('application/json')
      expect(await r.text()).toBe(`[${theirs.join(',')}]`)
      await src.failGetMore({ code: 96, ns: 'shop.orders' })
      const cut = await fetch(base)
      await expect(cut.text()).rejects.toThrow(CUT_BODY)
      for (let w = 0; w < 40 && ex.stderr() === ''; w++) await sleep(50)
      expect(ex.stderr()).toMatch(/^\/: .+\n$/)
      expect(ex.alive()).toBe(true)
    } finally {
      await src.off()
      await ex.kill()
    }
  })
})
