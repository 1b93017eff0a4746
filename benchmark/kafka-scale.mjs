// Scaling a change stream into Kafka out over processes: what K streams cost against one.
//
// The source (the in-repo test server, in its own process, or MONGODB_URI) holds N pre-written
// inserts with integer _ids in one collection. Each case catches up on all of them with K
// processes running `require('bson2json/kafka')` (one stream id, checkpoint and transactional id
// each; no coordination), and reports: wall time until every process has its share, events/s in
// total, the client CPU per delivered event (all K processes), and, for the in-repo server, the
// server's CPU per delivered event (read from /proc).
//
//   split      K streams of one collection, each `$match {"documentKey._id": {$mod: [K, k]}}`:
//              every stream reads every event on the server and keeps 1/K of them
//   (K = 1 is the single stream the others are compared with)
//
// Then the consumer side: a group of 2 read_committed consumers on a 2-partition topic written
// by one stream, each taking a share, with every key's events in order on one partition.
//
//   KAFKA_BROKERS=127.0.0.1:9092 node benchmark/kafka-scale.mjs [--events 20000] [--splits 1,2,4]
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { seedOrders } from './cdc-source.mjs'

const require = createRequire(import.meta.url)
const SELF = fileURLToPath(import.meta.url)
const { MongoClient, Timestamp } = require('mongodb')
const kafka = require('../kafka')

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    splits: { type: 'string', default: '1,2,4' },
    child: { type: 'string' },
  },
})
const brokers = (process.env.KAFKA_BROKERS || '').split(',')
if (!process.env.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS=HOST:PORT is required (bash scripts/kafka.sh start)')

if (values.child !== undefined) {
  // One process of a case: stream its share into Kafka, print { events, cpu } and exit.
  const c = JSON.parse(values.child)
  const client = await MongoClient.connect(c.uri)
  const run = kafka.changeStreamToKafka({
    source: client.db(c.db).collection('orders'),
    brokers,
    topic: c.topic,
    checkpointTopic: c.checkpointTopic,
    id: c.id,
    pipeline: c.pipeline,
    partitions: c.partitions,
    startAtOperationTime: new Timestamp({ t: c.t, i: c.i }),
    batchSize: 1000,
  })
  const c0 = process.cpuUsage()
  await new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (run.stats.events >= c.expect) {
        clearInterval(timer)
        resolve()
      }
    }, 5)
    run.done.catch(reject)
  })
  await run.stop()
  const u = process.cpuUsage(c0)
  process.stdout.write(JSON.stringify({ events: run.stats.events, cpu: (u.user + u.system) / 1e6 }) + '\n')
  await client.close()
  process.exit(0)
}

const N = Number(values.events)
const splits = values.splits.split(',').map(Number)
const tag = `${process.pid}`
const db = `b2j_kscale_${tag}`
const { uri, serverProc, client, coll, startAt } = await seedOrders({ db, n: N })
/** The server process's CPU seconds so far (in-repo server only). */
function serverCpu() {
  if (serverProc === null) return NaN
  const f = readFileSync(`/proc/${serverProc.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) / 100 // utime + stime, in clock ticks of 1/100 s
}

function child(spec) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [SELF, '--child', JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env })
    let out = ''
    p.stdout.on('data', (d) => (out += d))
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`child exited ${code}`))))
  })
}

let round = 0
async function runCase(k) {
  round++
  const base = { uri, db, t: startAt.high, i: startAt.low }
  const specs = []
  for (let part = 0; part < k; part++) {
    const expect = Math.floor((N - part + k - 1) / k) // ids part, part + k, ... below N
    specs.push({
      ...base,
      topic: `ks-${tag}-${round}`,
      checkpointTopic: `ks-${tag}-${round}-ck`,
      id: `ks-${tag}-${round}-${part}`,
      pipeline: k === 1 ? [] : [{ $match: { 'documentKey._id': { $mod: [k, part] } } }],
      expect,
    })
  }
  const cpu0 = serverCpu()
  const t0 = process.hrtime.bigint()
  const results = await Promise.all(specs.map(child))
  const wall = Number(process.hrtime.bigint() - t0) / 1e9
  const server = serverCpu() - cpu0
  const events = results.reduce((n, r) => n + r.events, 0)
  if (events !== N) throw new Error(`case ${k}: ${events} events delivered, expected ${N}`)
  const clientCpu = results.reduce((n, r) => n + r.cpu, 0)
  return { k, wall, eventsPerSec: Math.round(N / wall), clientUs: (clientCpu / N) * 1e6, serverUs: (server / N) * 1e6 }
}

const say = (m) => process.stderr.write(`kafka-scale: ${m}\n`)
say(`warm-up (${N} events)`)
await runCase(1)
const rows = []
for (const k of splits) {
  say(`${k} stream(s)`)
  rows.push(await runCase(k))
}

// Consumers: one stream into a 2-partition topic, read by a group of 2 consumers (the client's
// default isolation is read_committed).
say('consumer group')
round++
const topic = `ks-${tag}-group`
await child({ uri, db, t: startAt.high, i: startAt.low, topic, checkpointTopic: `${topic}-ck`, id: `${topic}-p`, pipeline: [], partitions: 2, expect: N })
const { Consumer, stringDeserializers } = require('@platformatic/kafka')
const seen = [new Map(), new Map()]
let total = 0
let orderOk = true
const partitionOf = new Map()
const consumers = [0, 1].map((n) => new Consumer({ clientId: `ks-c${n}`, groupId: `${topic}-g`, bootstrapBrokers: brokers, deserializers: stringDeserializers }))
const streams = await Promise.all(consumers.map((c) => c.consume({ topics: [topic], mode: 'earliest' })))
await new Promise((resolve) => {
  streams.forEach((stream, n) => {
    stream.on('data', (m) => {
      const key = m.key
      const id = JSON.parse(m.value).documentKey._id
      const last = seen[n].get(key)
      if (last !== undefined && last >= id) orderOk = false
      seen[n].set(key, id)
      if (partitionOf.has(key) && partitionOf.get(key) !== m.partition) orderOk = false
      partitionOf.set(key, m.partition)
      if (++total >= N) resolve()
    })
  })
})
await Promise.all(streams.map((st) => st.close()))
await Promise.all(consumers.map((c) => c.close()))
const shares = seen.map((m) => m.size)

console.log(`events: ${N}; source: ${serverProc ? 'in-repo test server (own process)' : 'MONGODB_URI'}; node ${process.version}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
console.log('| streams (processes) | wall s | events/s, total | client CPU µs/event (all processes) | server CPU µs/event |')
console.log('| ---: | ---: | ---: | ---: | ---: |')
for (const r of rows) {
  console.log(`| ${r.k} | ${r.wall.toFixed(2)} | ${r.eventsPerSec} | ${r.clientUs.toFixed(1)} | ${Number.isNaN(r.serverUs) ? 'n/a' : r.serverUs.toFixed(1)} |`)
}
console.log(`consumer group of 2 on a 2-partition topic: ${shares[0]} + ${shares[1]} keys, ${total} events read_committed, per-key order on one partition: ${orderOk ? 'yes' : 'NO'}`)
await coll.db.dropDatabase().catch(() => {})
await client.close()
if (serverProc) serverProc.kill('SIGTERM')
