// The initial snapshot of change capture against an export of the same collection, side by side
// in one process, alternating:
//   snapshot:  changeStreamToKafka({ snapshot: true, snapshotParallel: P }): the collection into a
//              Kafka topic in `_id` order, P `_id` ranges at once, one transaction per round of
//              ready batches of 1,000 with its checkpoint (exactly once); once per P of --parallel
//   export:    find(collection).stream() (bson2json's raw cursor, NDJSON) into a file
// Reported: documents per second and client CPU per document (this process; the source server
// runs in its own process: the in-repo test server, or MONGODB_URI).
//
//   KAFKA_BROKERS=127.0.0.1:9092 node benchmark/kafka-snapshot.mjs [--docs 20000] [--rounds 3] [--parallel 1,2,4]
import { createWriteStream, mkdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { measure, seedOrders } from './cdc-source.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const kafka = require('../kafka')
const { find } = require('..')

const { values } = parseArgs({ options: { docs: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' }, parallel: { type: 'string', default: '1' } } })
const N = Number(values.docs)
const PARALLEL = values.parallel.split(',').map(Number)
const brokers = (process.env.KAFKA_BROKERS || '').split(',')
if (!process.env.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS=HOST:PORT is required (bash scripts/kafka.sh start)')
const tag = `${process.pid}`
const { serverProc, client, coll } = await seedOrders({ db: `b2j_ksnap_${tag}`, n: N })
mkdirSync(path.join(ROOT, 'tmp'), { recursive: true })
const out = path.join(ROOT, 'tmp', `ksnap-${tag}.ndjson`)

let round = 0
async function viaSnapshot(snapshotParallel) {
  round++
  const id = `ks-${tag}-${round}`
  const run = kafka.changeStreamToKafka({ source: coll, brokers, topic: id, checkpointTopic: `${id}-ck`, id, snapshot: true, snapshotParallel })
  await new Promise((resolve, reject) => {
    const t = setInterval(() => {
      if (run.stats.snapshot && run.stats.snapshot.done) {
        clearInterval(t)
        resolve()
      }
    }, 5)
    run.done.catch(reject)
  })
  if (run.stats.snapshot.records !== N) throw new Error(`snapshot copied ${run.stats.snapshot.records} of ${N}`)
  await run.stop()
}

async function viaExport() {
  await pipeline(find(coll, {}, { batchSize: 1000 }).stream(), createWriteStream(out))
}

const say = (m) => process.stderr.write(`kafka snapshot bench: ${m}\n`)
say('warm-up')
for (const p of PARALLEL) await viaSnapshot(p)
await viaExport()
const res = { export: [] }
for (const p of PARALLEL) res[`snapshot${p}`] = []
for (let r = 0; r < Number(values.rounds); r++) {
  say(`round ${r + 1}`)
  for (const p of PARALLEL) res[`snapshot${p}`].push(await measure(() => viaSnapshot(p)))
  res.export.push(await measure(viaExport))
}
rmSync(out, { force: true })
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const row = (name) => ({ docsPerSec: Math.round(N / med(res[name].map((x) => x.wall))), cpu: (med(res[name].map((x) => x.cpu)) / N) * 1e6 })
const e = row('export')
console.log(`documents: ${N} (~200 B orders), rounds: ${values.rounds} (medians), node ${process.version}; source ${serverProc ? 'in-repo test server (own process)' : 'MONGODB_URI'}`)
console.log('| path | documents/s | client CPU µs/document |')
console.log('| --- | ---: | ---: |')
for (const p of PARALLEL) {
  const s = row(`snapshot${p}`)
  console.log(`| cdc snapshot into Kafka, snapshotParallel ${p} (exactly once, batches of 1,000) | ${s.docsPerSec} | ${s.cpu.toFixed(1)} |`)
}
console.log(`| export: find().stream() into a file | ${e.docsPerSec} | ${e.cpu.toFixed(1)} |`)
for (const p of PARALLEL) {
  const s = row(`snapshot${p}`)
  console.log(`ratios snapshot (${p})/export: throughput ${(s.docsPerSec / e.docsPerSec).toFixed(2)}x, CPU per document ${(s.cpu / e.cpu).toFixed(2)}x`)
}
await coll.db.dropDatabase().catch(() => {})
await client.close()
if (serverProc) serverProc.kill('SIGTERM')
