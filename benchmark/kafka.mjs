// Change stream → Kafka, side by side in one process, alternating:
//   bson2json: require('bson2json/kafka') changeStreamToKafka (raw batches → JSON natively, one
//              Kafka transaction per server batch with its checkpoint: exactly once)
//   driver:    the usual way: the driver's watch(), JSON.stringify of each event and its
//              documentKey, the same @platformatic/kafka producer (idempotent, not transactional:
//              at-least-once), one send per 1000 events
// Both catch up on the same N pre-written events (startAtOperationTime) into fresh topics. The
// source server runs in its own process (the in-repo test server, or MONGODB_URI), so the CPU
// figures are this client's: process.cpuUsage() per event.
//
//   KAFKA_BROKERS=127.0.0.1:9092 node benchmark/kafka.mjs [--events 20000] [--rounds 3]
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { measure, seedOrders } from './cdc-source.mjs'

const require = createRequire(import.meta.url)
const { Admin, Producer, compatibilityPartitioner } = require('@platformatic/kafka')
const kafka = require('../kafka')

const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } } })
const N = Number(values.events)
const ROUNDS = Number(values.rounds)
const brokers = (process.env.KAFKA_BROKERS || '').split(',')
if (!process.env.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS=HOST:PORT is required (bash scripts/kafka.sh start)')

const tag = `${process.pid}`
const { serverProc, client, coll, startAt } = await seedOrders({ db: `b2j_kbench_${tag}`, n: N })

let round = 0
async function viaBson2json() {
  round++
  const run = kafka.changeStreamToKafka({ source: coll, brokers, topic: `kb-a-${tag}-${round}`, checkpointTopic: `kb-a-${tag}-${round}-ck`, id: `kb-a-${tag}-${round}`, startAtOperationTime: startAt, batchSize: 1000 })
  await new Promise((resolve, reject) => {
    const t = setInterval(() => {
      if (run.stats.events >= N) {
        clearInterval(t)
        resolve()
      }
    }, 5)
    run.done.catch(reject)
  })
  await run.stop()
}

async function viaDriver() {
  round++
  const topic = `kb-b-${tag}-${round}`
  // The test broker does not auto-create topics (bson2json/kafka creates its own the same way).
  const admin = new Admin({ clientId: 'kb-admin', bootstrapBrokers: brokers })
  await admin.createTopics({ topics: [topic], partitions: 1, replicas: -1 })
  await admin.close()
  const producer = new Producer({ clientId: 'kb', bootstrapBrokers: brokers, idempotent: true, acks: -1, partitioner: compatibilityPartitioner, })
  const cs = coll.watch([], { startAtOperationTime: startAt, batchSize: 1000 })
  let sent = 0
  let buf = []
  for await (const ev of cs) {
    buf.push({ topic, key: Buffer.from(JSON.stringify(ev.documentKey)), value: Buffer.from(JSON.stringify(ev)), headers: new Map([[Buffer.from('operationType'), Buffer.from(ev.operationType)]]) })
    if (buf.length === 1000 || sent + buf.length >= N) {
      await producer.send({ messages: buf })
      sent += buf.length
      buf = []
      if (sent >= N) break
    }
  }
  await cs.close()
  await producer.close()
}

// Warm-up (topic creation paths, JIT), then alternate.
const say = (m) => process.stderr.write(`kafka bench: ${m}\n`)
say('warm-up bson2json')
await viaBson2json()
say('warm-up driver')
await viaDriver()
say('measuring')
const res = { bson2json: [], driver: [] }
for (let r = 0; r < ROUNDS; r++) {
  res.bson2json.push(await measure(viaBson2json))
  res.driver.push(await measure(viaDriver))
}
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const row = (name) => {
  const wall = med(res[name].map((x) => x.wall))
  const cpu = med(res[name].map((x) => x.cpu))
  return { name, eventsPerSec: Math.round(N / wall), cpuMicrosPerEvent: +((cpu / N) * 1e6).toFixed(1), wall: +wall.toFixed(2) }
}
const a = row('bson2json')
const b = row('driver')
console.log(`events: ${N}, rounds: ${ROUNDS} (medians), node ${process.version}; source ${serverProc ? 'in-repo test server (own process)' : 'MONGODB_URI'}`)
console.log('| pipeline | events/s | client CPU µs/event |')
console.log('| --- | ---: | ---: |')
console.log(`| bson2json/kafka (exactly once, one transaction per batch) | ${a.eventsPerSec} | ${a.cpuMicrosPerEvent} |`)
console.log(`| driver watch() + JSON.stringify + producer (at-least-once) | ${b.eventsPerSec} | ${b.cpuMicrosPerEvent} |`)
console.log(`ratios bson2json/driver: throughput ${(a.eventsPerSec / b.eventsPerSec).toFixed(2)}x, CPU per event ${(a.cpuMicrosPerEvent / b.cpuMicrosPerEvent).toFixed(2)}x`)
await coll.db.dropDatabase().catch(() => {})
await client.close()
if (serverProc) serverProc.kill('SIGTERM')
