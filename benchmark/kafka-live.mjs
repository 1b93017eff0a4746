// A change stream into Kafka while the source is being written: what the commit interval buys.
//
// A writer process inserts ~1 KB orders at a fixed rate (--rate per second, in insertMany batches
// every 10 ms) into the source (the in-repo test server in its own process, or MONGODB_URI). This
// process runs `changeStreamToKafka` from the writer's start, once per case and alternating:
//   per batch:  commitIntervalMS 0, one Kafka transaction per server batch (bson2json before 0.2)
//   interval:   the default commitIntervalMS (100): a transaction spans the batches of 100 ms
// Each case runs for --seconds; reported: events/s delivered, transactions, client CPU per event
// (this process only: the writer and the server run elsewhere), and the lag at the end (how far
// behind the writer's last insert the last committed event is).
//
//   KAFKA_BROKERS=127.0.0.1:9092 node benchmark/kafka-live.mjs [--rate 3000] [--seconds 10] [--rounds 2]
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { seedOrders } from './cdc-source.mjs'

const require = createRequire(import.meta.url)
const SELF = fileURLToPath(import.meta.url)

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '3000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    writer: { type: 'string' },
    db: { type: 'string' },
  },
})

if (values.writer) {
  // The writer process: --writer URI --db DB; inserts at --rate until killed.
  const { MongoClient } = require('mongodb')
  const client = await MongoClient.connect(values.writer)
  const coll = client.db(values.db).collection('live')
  const rate = Number(values.rate)
  const per = Math.max(1, Math.round(rate / 100))
  let n = 0
  const t0 = Date.now()
  for (;;) {
    const docs = []
    for (let j = 0; j < per; j++, n++) docs.push({ _id: `${process.pid}-${n}`, customer: `c${n % 977}`, note: 'x'.repeat(900), total: n * 1.25, at: new Date() })
    await coll.insertMany(docs)
    const ahead = t0 + (n / rate) * 1000 - Date.now()
    if (ahead > 0) await new Promise((r) => setTimeout(r, ahead))
  }
}

const kafka = require('../kafka')
const brokers = (process.env.KAFKA_BROKERS || '').split(',')
if (!process.env.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS=HOST:PORT is required (bash scripts/kafka.sh start)')
const SECONDS = Number(values.seconds)
const tag = `${process.pid}`
const db = `b2j_klive_${tag}`
const { uri, serverProc, client } = await seedOrders({ db, n: 0 })
const coll = client.db(db).collection('live')

let round = 0
async function runCase(commitIntervalMS) {
  round++
  const id = `kl-${tag}-${round}`
  const run = kafka.changeStreamToKafka({ source: coll, brokers, topic: id, checkpointTopic: `${id}-ck`, id, commitIntervalMS, maxAwaitTimeMS: 100 })
  while (run.stats.transactions === 0) await new Promise((r) => setTimeout(r, 20))
  const writer = spawn(process.execPath, [SELF, '--writer', uri, '--db', db, '--rate', values.rate], { stdio: 'inherit' })
  const c0 = process.cpuUsage()
  const e0 = run.stats.events
  const x0 = run.stats.transactions
  const t0 = Date.now()
  await new Promise((r) => setTimeout(r, SECONDS * 1000))
  writer.kill('SIGKILL')
  const wall = (Date.now() - t0) / 1000
  const events = run.stats.events - e0
  const c = process.cpuUsage(c0)
  const transactions = run.stats.transactions - x0
  // Lag: the wall clock now against the cluster time of the last committed event.
  const ct = run.stats.clusterTime
  const lag = ct ? Math.max(0, Date.now() / 1000 - ct.t) : NaN
  await run.stop()
  return { events, wall, cpu: (c.user + c.system) / 1e6, transactions, lag }
}

const say = (m) => process.stderr.write(`kafka live bench: ${m}\n`)
const cases = { 'per batch': 0, interval: 100 }
const res = Object.fromEntries(Object.keys(cases).map((k) => [k, []]))
say('warm-up')
await runCase(100)
for (let r = 0; r < Number(values.rounds); r++) {
  for (const [name, ms] of Object.entries(cases)) {
    say(`round ${r + 1}: ${name}`)
    res[name].push(await runCase(ms))
  }
}
console.log(`writer: ${values.rate} inserts/s of ~1 KB for ${SECONDS} s per case, ${values.rounds} rounds (medians), node ${process.version}; source ${serverProc ? 'in-repo test server (own process)' : 'MONGODB_URI'}`)
console.log('| commit | events/s delivered | transactions/s | client CPU µs/event | lag at the end (s) |')
console.log('| --- | ---: | ---: | ---: | ---: |')
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const name of Object.keys(cases)) {
  const rs = res[name]
  const eps = med(rs.map((x) => x.events / x.wall))
  const tps = med(rs.map((x) => x.transactions / x.wall))
  const cpu = med(rs.map((x) => (x.cpu / Math.max(1, x.events)) * 1e6))
  const lag = med(rs.map((x) => x.lag))
  console.log(`| ${name === 'interval' ? 'commitIntervalMS 100 (default)' : 'one transaction per server batch'} | ${Math.round(eps)} | ${tps.toFixed(1)} | ${cpu.toFixed(1)} | ${lag.toFixed(1)} |`)
}
await client.db(db).dropDatabase().catch(() => {})
await client.close()
if (serverProc) serverProc.kill('SIGTERM')
