// JSON over HTTP, end to end: a Node `http` server answering each request with N documents of a
// collection, written four ways, under the same load, side by side in one run:
//
//   b2j-array   find(coll, {}, { limit }).pipe(res, { format: 'array' })   (bson2json, a JSON array)
//   b2j-ndjson  find(coll, {}, { limit }).pipe(res)                        (bson2json, NDJSON)
//   toArray     res.end(JSON.stringify(await coll.find({}).limit(n).toArray()))   (what users write)
//   per-doc     for await (const d of coll.find(...)) res.write(JSON.stringify(d)) with backpressure
//
// Three processes: the source (the in-repo test server, or MONGODB_URI), the HTTP server, and
// this one, the load generator (keep-alive connections, each sending its next request when the
// previous response has been read). The HTTP server's CPU (process.cpuUsage, asked for over HTTP
// before and after each measurement) is divided by the response bytes it served: server CPU per
// MB. Routes are measured in turn, ROUNDS times, and the medians reported. Before measuring, every
// route's body is parsed and compared with the others'.
//
//   node benchmark/http.mjs [--size 1k|10k] [--docs N (1k: 2000, 10k: 200)] [--seconds 3] [--rounds 3]
//                           [--connections 4] [--quick]
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const SELF = fileURLToPath(import.meta.url)

const { values } = parseArgs({
  options: {
    docs: { type: 'string' },
    size: { type: 'string', default: '1k' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '4' },
    quick: { type: 'boolean', default: false },
    server: { type: 'string' },
  },
})

const ROUTES = ['b2j-array', 'b2j-ndjson', 'toArray', 'per-doc']

if (values.server !== undefined) {
  // The HTTP server process.
  const { MongoClient } = require('mongodb')
  const b2j = require(ROOT)
  const { uri, db, limit } = JSON.parse(values.server)
  const client = await MongoClient.connect(uri)
  const coll = client.db(db).collection('orders')
  const server = http.createServer(async (req, res) => {
    const route = req.url.slice(1)
    try {
      if (route === 'cpu') {
        const u = process.cpuUsage()
        res.end(JSON.stringify({ cpu: (u.user + u.system) / 1e6 }))
      } else if (route === 'b2j-array') {
        b2j.find(coll, {}, { limit }).pipe(res, { format: 'array' })
      } else if (route === 'b2j-ndjson') {
        b2j.find(coll, {}, { limit }).pipe(res)
      } else if (route === 'toArray') {
        const docs = await coll.find({}).limit(limit).toArray()
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify(docs))
      } else if (route === 'per-doc') {
        res.setHeader('content-type', 'application/json')
        let first = true
        for await (const d of coll.find({}).limit(limit)) {
          if (!res.write((first ? '[' : ',') + JSON.stringify(d))) await new Promise((r) => res.once('drain', r))
          first = false
        }
        res.end(first ? '[]' : ']')
      } else {
        res.statusCode = 404
        res.end()
      }
    } catch (e) {
      res.statusCode = 500
      res.end(String(e))
    }
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`))
} else {
  const children = []
  try {
    await main(children)
  } finally {
    for (const c of children) c.kill('SIGTERM')
  }
}

async function main(children) {
  const { MongoClient } = require('mongodb')
  const { generateWorkload } = await import(path.join(ROOT, 'benchmark/workloads.mjs'))
  const N = Number(values.docs ?? (values.size === '10k' ? 200 : 2000))
  const seconds = values.quick ? 0.5 : Number(values.seconds)
  const rounds = values.quick ? 1 : Number(values.rounds)
  const connections = Number(values.connections)

  const startChild = (args) =>
    new Promise((resolve, reject) => {
      const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
      children.push(p)
      p.stdout.once('data', (d) => resolve(String(d).split('\n')[0].trim()))
      p.once('exit', (c) => reject(new Error(`${args[0]} exited ${c}`)))
    })
  const uri = process.env.MONGODB_URI || (await startChild([path.join(ROOT, 'tools/test-server/cli.js'), '--quiet']))
  const db = `b2j_http_${process.pid}`
  const client = await MongoClient.connect(uri)
  const coll = client.db(db).collection('orders')
  const { BSON } = require('bson')
  const workload = values.size === '10k' ? 'doc10k' : 'doc1k'
  const pool = generateWorkload(workload, { quick: true }) // ~2 MB of documents
  const quickOnly = pool.length >= N
  const raw = (quickOnly ? pool : generateWorkload(workload)).slice(0, N)
  if (raw.length < N) throw new Error(`--docs ${N}: the ${workload} workload has ${raw.length} documents`)
  const docs = raw.map((b) => BSON.deserialize(b, { promoteValues: false }))
  for (let i = 0; i < docs.length; i += 500) await coll.insertMany(docs.slice(i, i + 500))
  const bsonBytes = raw.reduce((n, b) => n + b.length, 0)

  const base = await startChild([SELF, '--server', JSON.stringify({ uri, db, limit: N })])
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const get = (route) =>
    new Promise((resolve, reject) => {
      http
        .get(`${base}/${route}`, { agent }, (res) => {
          const parts = []
          res.on('data', (c) => parts.push(c))
          res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(parts)) : reject(new Error(`${route}: HTTP ${res.statusCode} ${Buffer.concat(parts)}`))))
          res.on('error', reject)
        })
        .on('error', reject)
    })
  const cpu = async () => JSON.parse(String(await get('cpu'))).cpu

  // The same documents from every route (JSON texts differ only in spacing/number spelling).
  const bodies = {}
  for (const r of ROUTES) bodies[r] = await get(r)
  const parsed = (r) => (r === 'b2j-ndjson' ? String(bodies[r]).trim().split('\n').map((l) => JSON.parse(l)) : JSON.parse(String(bodies[r])))
  const ref = JSON.stringify(parsed('toArray'))
  for (const r of ROUTES) {
    if (JSON.stringify(parsed(r)) !== ref) throw new Error(`route ${r} does not return the documents toArray returns`)
  }
  if (JSON.parse(ref).length !== N) throw new Error(`expected ${N} documents`)

  async function measure(route) {
    for (let i = 0; i < connections; i++) await get(route) // warm
    const c0 = await cpu()
    const t0 = process.hrtime.bigint()
    const until = Date.now() + seconds * 1000
    let requests = 0
    let bytes = 0
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (Date.now() < until) {
          const b = await get(route)
          requests++
          bytes += b.length
        }
      }),
    )
    const wall = Number(process.hrtime.bigint() - t0) / 1e9
    const serverCpu = (await cpu()) - c0
    return { requests, bytes, wall, serverCpu }
  }
  const results = Object.fromEntries(ROUTES.map((r) => [r, []]))
  for (let k = 0; k < rounds; k++) {
    for (const r of ROUTES) {
      process.stderr.write(`http bench: round ${k + 1}/${rounds} ${r}\n`)
      results[r].push(await measure(r))
    }
  }
  const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const row = (r) => {
    const xs = results[r]
    return {
      route: r,
      rps: med(xs.map((x) => x.requests / x.wall)),
      mbps: med(xs.map((x) => x.bytes / 1e6 / x.wall)),
      cpuPerMB: med(xs.map((x) => (x.serverCpu * 1e3) / (x.bytes / 1e6))),
      bodyMB: bodies[r].length / 1e6,
    }
  }
  const rows = ROUTES.map(row)
  const a = rows[0]
  const load = (await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')
  console.log(
    `${N} ${workload} documents per response (${(bsonBytes / 1e6).toFixed(1)} MB of BSON); ${connections} keep-alive connections, ${seconds} s per route per round, ${rounds} round(s), medians; source ${process.env.MONGODB_URI ? 'MONGODB_URI' : 'in-repo test server'} (own process); node ${process.version}; load ${load}`,
  )
  console.log('| handler | requests/s | MB/s of JSON | server CPU ms per MB | vs `b2j-array` |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const r of rows) {
    console.log(`| ${r.route} | ${r.rps.toFixed(1)} | ${r.mbps.toFixed(1)} | ${r.cpuPerMB.toFixed(2)} | ${(r.cpuPerMB / a.cpuPerMB).toFixed(2)}x |`)
  }
  await client.db(db).dropDatabase().catch(() => {})
  await client.close()
  agent.destroy()
}
