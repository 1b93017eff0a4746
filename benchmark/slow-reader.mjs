// Memory held for a slow reader of a cursor stream, in two settings:
//
//   node [--expose-gc] benchmark/slow-reader.mjs [--mb 200] [--rate 20] [--batch-size N] [--live] [--lib DIR]
//     One `pipeline(find(coll, {}).stream(), slowWritable)` in this process over ~MB megabytes of
//     ~1 KB documents; the writable accepts RATE MB/s. Prints this process's RSS before the
//     stream starts and its peak while the stream runs (sampled every 20 ms), the Buffers alive
//     then, and the getMores sent. --live (needs --expose-gc) collects garbage at every sample, so
//     the Buffer figure is what the stream holds, not what V8 has yet to collect.
//
//   node benchmark/slow-reader.mjs --http --clients 50 [--mb 200] [--seconds 15] [--batch-size 1000] [--pause-ms 1000] [--live]
//     An HTTP server process answering every request with `find(coll, {}, { batchSize }).pipe(res)`,
//     and CLIENTS concurrent clients that each read their response slowly (one chunk, then a
//     PAUSE-MS pause). Prints the HTTP server's RSS before the clients connect and its peak (VmHWM)
//     while they read, against the bound "50 MB plus one batch per client". --live: the server
//     also collects garbage every 250 ms and reports the most Buffers still alive (what the
//     responses hold, apart from V8's timing).
//
// The source is the in-repo test server in a child process (or MONGODB_URI), loaded with
// ~MB megabytes of 1 KB documents in `b2j_slow.docs` (kept between runs on MONGODB_URI).
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import http from 'node:http'
import path from 'node:path'
import { Writable, pipeline } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const SELF = fileURLToPath(import.meta.url)

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '200' },
    rate: { type: 'string', default: '20' },
    'batch-size': { type: 'string' },
    http: { type: 'boolean', default: false },
    clients: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '15' },
    'pause-ms': { type: 'string', default: '1000' },
    server: { type: 'string' },
    lib: { type: 'string' },
    live: { type: 'boolean', default: false },
  },
})
// --lib DIR: the bson2json to measure (default this checkout; e.g. an older one unpacked with
// `git archive <commit> index.js lib binding.js package.json | tar -x -C DIR`, plus the addon and node_modules).
const LIB = values.lib === undefined ? ROOT : path.resolve(values.lib)
const MB = 1024 * 1024
const batchSize = values['batch-size'] === undefined ? undefined : Number(values['batch-size'])

function status(pid = 'self') {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)[1]) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
}
const mb = (n) => (n / MB).toFixed(1)

if (values.server !== undefined) {
  // The HTTP server process: the README's pattern.
  const { MongoClient } = require('mongodb')
  const { find } = require(LIB)
  const { uri } = JSON.parse(values.server)
  const client = await MongoClient.connect(uri)
  const coll = client.db('b2j_slow').collection('docs')
  let served = 0
  const open = new Set()
  const server = http.createServer((req, res) => {
    if (req.url === '/status' || req.url === '/status?gc') {
      if (req.url === '/status?gc') global.gc()
      // Where the bytes of the open responses are: the cursor streams' Readables, the responses'
      // own buffers, their sockets' write buffers.
      let readable = 0
      let response = 0
      let socket = 0
      for (const r of open) {
        response += r.writableLength ?? 0
        socket += r.socket?.writableLength ?? 0
      }
      for (const s of streams) readable += s.readableLength
      res.end(JSON.stringify({ served, ...status(), buffers: process.memoryUsage().arrayBuffers, readable, response, socket, open: open.size }))
      return
    }
    served++
    open.add(res)
    res.on('close', () => open.delete(res))
    const cursor = find(coll, {}, batchSize === undefined ? {} : { batchSize })
    const stream = cursor.stream.bind(cursor)
    cursor.stream = (o) => {
      const s = stream(o)
      streams.add(s)
      s.on('close', () => streams.delete(s))
      return s
    }
    cursor.pipe(res)
  })
  const streams = new Set()
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`))
} else {
  await main()
}

async function main() {
  const { MongoClient } = require('mongodb')
  let serverProc = null
  let uri = process.env.MONGODB_URI
  if (!uri) {
    serverProc = spawn(process.execPath, [path.join(ROOT, 'tools/test-server/cli.js'), '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] })
    uri = await new Promise((resolve) => serverProc.stdout.once('data', (d) => resolve(String(d).split('\n')[0].trim())))
  }
  const client = await MongoClient.connect(uri, { monitorCommands: true })
  const coll = client.db('b2j_slow').collection('docs')
  const want = Math.round(Number(values.mb) * 1000)
  if ((await coll.estimatedDocumentCount()) !== want) {
    await coll.drop().catch(() => {})
    const pad = 'x'.repeat(900)
    for (let i = 0; i < want; i += 2000) {
      const docs = []
      for (let j = i; j < Math.min(want, i + 2000); j++) docs.push({ _id: j, n: j, at: new Date(1_700_000_000_000 + j), pad })
      await coll.insertMany(docs)
    }
  }
  const docBytes = 1000 // ~1 KB of BSON each (900-byte pad + fields)
  console.log(`source: ${want} documents of ~1 KB (~${Math.round((want * docBytes) / 1e6)} MB) in b2j_slow.docs`)
  try {
    if (values.http) await httpRun(uri)
    else await oneStream(client, coll)
  } finally {
    await client.close()
    serverProc?.kill()
  }
}

async function oneStream(client, coll) {
  const b2j = require(LIB)
  if (values.live && typeof global.gc !== 'function') throw new Error('--live needs node --expose-gc')
  let getMores = 0
  client.on('commandStarted', (e) => {
    if (e.commandName === 'getMore') getMores++
  })
  // Warm up the driver and the addon, then take the baseline.
  await b2j.find(coll, {}, { limit: 2000 }).toArray()
  global.gc?.()
  await new Promise((r) => setTimeout(r, 200))
  const before = status().rss
  let peak = before
  let atPeak = process.memoryUsage()
  let maxBuffers = 0
  const timer = setInterval(() => {
    if (values.live) global.gc()
    const r = status().rss
    const m = process.memoryUsage()
    maxBuffers = Math.max(maxBuffers, m.arrayBuffers)
    if (r > peak) {
      peak = r
      atPeak = m
    }
  }, 20)
  const rate = Number(values.rate) * MB
  let bytes = 0
  const slow = new Writable({
    write(chunk, _enc, cb) {
      bytes += chunk.length
      setTimeout(cb, (chunk.length / rate) * 1000)
    },
  })
  const t0 = Date.now()
  await new Promise((resolve, reject) => {
    const opts = batchSize === undefined ? {} : { batchSize }
    pipeline(b2j.find(coll, {}, opts).stream(), slow, (err) => (err ? reject(err) : resolve()))
  })
  clearInterval(timer)
  const s = (Date.now() - t0) / 1000
  console.log(
    `${LIB === ROOT ? '' : `[${LIB}] `}${values.live ? '[--live] ' : ''}pipeline(find(coll, {}${batchSize === undefined ? '' : `, { batchSize: ${batchSize} }`}).stream(), slowWritable at ${values.rate} MB/s): ` +
      `${mb(bytes)} MB of NDJSON in ${s.toFixed(1)} s, ${getMores} getMores; RSS before ${mb(before)} MB, peak ${mb(peak)} MB (+${mb(peak - before)} MB; ` +
      `at the peak: heap ${mb(atPeak.heapUsed)} MB, Buffers ${mb(atPeak.arrayBuffers)} MB; most Buffers at any time ${mb(maxBuffers)} MB)`,
  )
}

async function httpRun(uri) {
  const proc = spawn(process.execPath, [...(values.live ? ['--expose-gc'] : []), SELF, '--server', JSON.stringify({ uri }), '--lib', LIB, ...(batchSize === undefined ? [] : ['--batch-size', String(batchSize)])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const port = Number(await new Promise((resolve) => proc.stdout.once('data', (d) => resolve(String(d).trim()))))
  const base = `http://127.0.0.1:${port}`
  const get = (p) =>
    new Promise((resolve, reject) => {
      http.get(base + p, (res) => {
        let t = ''
        res.on('data', (c) => (t += c))
        res.on('end', () => resolve(t))
      }).on('error', reject)
    })
  await get('/status')
  const before = status(proc.pid).rss
  const n = Number(values.clients)
  const reqs = []
  const got = Array.from({ length: n }, () => 0)
  let peak = before
  const timer = setInterval(() => {
    peak = Math.max(peak, status(proc.pid).rss)
  }, 20)
  // --live: every 250 ms the server collects garbage and reports the Buffers still alive.
  let liveBuffers = 0
  let where = null
  let sampling = false
  const liveTimer = values.live
    ? setInterval(() => {
        if (sampling) return
        sampling = true
        get('/status?gc').then((t) => {
          const st = JSON.parse(t)
          if (st.buffers > liveBuffers) {
            liveBuffers = st.buffers
            where = st
          }
          sampling = false
        })
      }, 250)
    : null
  for (let i = 0; i < n; i++) {
    const req = http.get(base + '/', (res) => {
      res.on('data', (c) => {
        got[i] += c.length
        res.pause()
        setTimeout(() => res.resume(), Number(values['pause-ms']))
      })
      res.on('error', () => {})
    })
    req.on('error', () => {})
    reqs.push(req)
  }
  await new Promise((r) => setTimeout(r, Number(values.seconds) * 1000))
  clearInterval(timer)
  if (liveTimer) clearInterval(liveTimer)
  const hwm = status(proc.pid).hwm
  for (const r of reqs) r.destroy()
  await new Promise((r) => setTimeout(r, 1500))
  const after = status(proc.pid).rss
  const read = got.reduce((a, b) => a + b, 0)
  const bs = batchSize === undefined ? 'default batchSize' : `batchSize ${batchSize} (~${mb(batchSize * 1000)} MB per batch of BSON)`
  console.log(
    `HTTP server, ${n} slow clients, ${bs}, ${values.seconds} s: clients read ${mb(read)} MB in all; ` +
      `server RSS before ${mb(before)} MB, peak ${mb(Math.max(peak, hwm))} MB (+${mb(Math.max(peak, hwm) - before)} MB, ${mb((Math.max(peak, hwm) - before) / n)} MB per client); after the clients left ${mb(after)} MB` +
      (values.live
        ? `; most Buffers alive after a collection: ${mb(liveBuffers)} MB (${mb(liveBuffers / n)} MB per client; then in the cursor Readables ${mb(where.readable)} MB, ` +
          `the responses ${mb(where.response)} MB, their sockets ${mb(where.socket)} MB)`
        : ''),
  )
  proc.kill()
}
