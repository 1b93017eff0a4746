// The initial snapshot of change capture against an export of the same collection, side by side
// in one process, alternating:
//   snapshot:  changeStreamToKafka({ snapshot: true, snapshotParallel: P }): the collection into a
//              Kafka topic in `_id` order, P `_id` ranges at once, one transaction per round of
//              ready batches of 1,000 with its checkpoint (exactly once); once per P of --parallel
//   export:    find(collection).stream() (bson2json's raw cursor, NDJSON) into a file
// Reported: documents per second (from the start; for the snapshot also of the copy alone, from
// its first progress report after the fence, the checkpoint read, the position and the ranges)
// and CPU per document: the client's (this process), and from /proc the in-repo test server's
// (its own process; with MONGODB_URI, the process SOURCE_PID names, e.g. SecantusDB's
// tmp/secantus/secantusd.pid) and the broker's (the pid in KAFKA_DIR/kafka.pid, as
// scripts/kafka.sh writes it; KAFKA_DIR defaults to <repo>/tmp/kafka).
//
//   KAFKA_BROKERS=127.0.0.1:9092 node benchmark/kafka-snapshot.mjs [--docs 20000] [--rounds 3] [--parallel 1,2,4]
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { loadavg } from 'node:os'
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

const kafkaPidFile = path.join(process.env.KAFKA_DIR || path.join(ROOT, 'tmp', 'kafka'), 'kafka.pid')
const sourcePid = serverProc ? serverProc.pid : process.env.SOURCE_PID ? Number(process.env.SOURCE_PID) : null
const brokerPid = existsSync(kafkaPidFile) ? Number(readFileSync(kafkaPidFile, 'utf8').trim()) : null
/** CPU seconds (user + system) of process `pid` so far, from /proc; null when unknown. */
function procCpu(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) / 100
  } catch {
    return null
  }
}
/** `measure` plus the server's and the broker's CPU over the same span. */
async function measureAll(fn) {
  const s0 = sourcePid ? procCpu(sourcePid) : null
  const b0 = brokerPid ? procCpu(brokerPid) : null
  const m = await measure(fn)
  const s1 = sourcePid ? procCpu(sourcePid) : null
  const b1 = brokerPid ? procCpu(brokerPid) : null
  return { ...m, server: s0 === null || s1 === null ? null : s1 - s0, broker: b0 === null || b1 === null ? null : b1 - b0 }
}

let round = 0
let copyStart = 0
let copyEnd = 0
async function viaSnapshot(snapshotParallel) {
  round++
  const id = `ks-${tag}-${round}`
  const run = kafka.changeStreamToKafka({ source: coll, brokers, topic: id, checkpointTopic: `${id}-ck`, id, snapshot: true, snapshotParallel, onProgress: (st) => {
    if (copyStart === 0 && st.snapshot) copyStart = performance.now()
  } })
  copyStart = 0
  await new Promise((resolve, reject) => {
    const t = setInterval(() => {
      if (run.stats.snapshot && run.stats.snapshot.done) {
        copyEnd = performance.now()
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

const loadNow = () => loadavg().map((x) => x.toFixed(2)).join(', ')
const loadBefore = loadNow()
const say = (m) => process.stderr.write(`kafka snapshot bench: ${m}\n`)
say('warm-up')
for (const p of PARALLEL) await viaSnapshot(p)
await viaExport()
const res = { export: [] }
for (const p of PARALLEL) res[`snapshot${p}`] = []
for (let r = 0; r < Number(values.rounds); r++) {
  say(`round ${r + 1}`)
  for (const p of PARALLEL) {
    const m = await measureAll(() => viaSnapshot(p))
    res[`snapshot${p}`].push({ ...m, copy: (copyEnd - copyStart) / 1000 })
  }
  res.export.push(await measureAll(viaExport))
}
rmSync(out, { force: true })
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const us = (xs) => (xs.some((x) => x === null || x === undefined) ? '–' : ((med(xs) / N) * 1e6).toFixed(1))
const row = (name) => ({
  docsPerSec: Math.round(N / med(res[name].map((x) => x.wall))),
  copyPerSec: res[name][0].copy === undefined ? '–' : Math.round(N / med(res[name].map((x) => x.copy))),
  start: res[name][0].copy === undefined ? '' : med(res[name].map((x) => x.wall - x.copy)).toFixed(2),
  cpu: (med(res[name].map((x) => x.cpu)) / N) * 1e6,
  server: us(res[name].map((x) => x.server)),
  broker: us(res[name].map((x) => x.broker)),
})
const e = row('export')
console.log(`documents: ${N} (~200 B orders), rounds: ${values.rounds} (medians), node ${process.version}; source ${serverProc ? 'in-repo test server (own process)' : 'MONGODB_URI'}; load average before: ${loadBefore}, after: ${loadNow()}`)
console.log('| path | documents/s | s before the copy | documents/s of the copy alone | client CPU µs/document | server CPU µs/document | broker CPU µs/document |')
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const p of PARALLEL) {
  const s = row(`snapshot${p}`)
  console.log(`| cdc snapshot into Kafka, snapshotParallel ${p} (exactly once, batches of 1,000) | ${s.docsPerSec} | ${s.start} | ${s.copyPerSec} | ${s.cpu.toFixed(1)} | ${s.server} | ${s.broker} |`)
}
console.log(`| export: find().stream() into a file | ${e.docsPerSec} | | | ${e.cpu.toFixed(1)} | ${e.server} | |`)
for (const p of PARALLEL) {
  const s = row(`snapshot${p}`)
  console.log(`ratios snapshot (${p})/export: throughput ${(s.docsPerSec / e.docsPerSec).toFixed(2)}x, CPU per document ${(s.cpu / e.cpu).toFixed(2)}x`)
}
await coll.db.dropDatabase().catch(() => {})
await client.close()
if (serverProc) serverProc.kill('SIGTERM')
