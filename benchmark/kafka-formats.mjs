// The record formats' cost per event, side by side in one process (no server, no broker): the
// same getMore replies of change events made into each format's Kafka records the way the sink
// makes them, the transcoding included:
//   bson2json:    the native pass writes the records' bytes (EventFormat.RecordEvent)
//   mongo-kafka,  the native pass writes the connector's key and value (crates/bson2json-core/
//   debezium:     src/kafka/, EventFormat.RecordMongoKafka / RecordDebezium), lib/kafka/records.js
//                 makes the records (and Debezium's tombstones)
//   … (JS twin):  the events transcoded to canonical Extended JSON, then written in JavaScript
//                 (lib/kafka/records-plain.js, the writers the sink used before the native ones)
// Each round runs every way over every reply in alternating order; a way's time is this process's
// CPU time per event (process.cpuUsage: on a shared machine, the time the process was not
// running does not count); the table gives each way's median over the rounds and its ratio to
// bson2json's.
//
//   node benchmark/kafka-formats.mjs [--events 20000] [--rounds 7] [--out FILE]
// --out writes the report into FILE too (benchmark/results/kafka-formats-nodeNN.md), with the
// command, the time and the machine's load average.
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'

const require = createRequire(import.meta.url)
const { BSON, Long, Decimal128, ObjectId, Timestamp } = require('bson')
const native = require('../lib/native')
const { resolveOptions } = require('../lib/options')
const { formatOf } = require('../lib/kafka/records')
const { PLAIN } = require('../lib/kafka/records-plain')
const { router } = require('../lib/kafka/scope')
const { version } = require('../package.json')

const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' }, out: { type: 'string' } } })
const N = Number(values.events)
const ROUNDS = Number(values.rounds)

// N insert events of ~1 KB documents (the shape of benchmark/kafka-connectors.mjs's), in getMore
// replies of 1,000 events
const events = []
for (let i = 0; i < N; i++) {
  const _id = `k${String(i).padStart(8, '0')}k`
  events.push({
    _id: { _data: `8263${i.toString(16).padStart(28, '0')}` },
    operationType: 'insert',
    clusterTime: new Timestamp({ t: 1700000000, i }),
    wallTime: new Date(1700000000000 + i),
    fullDocument: { _id, customer: `c${i % 977}`, note: 'x'.repeat(900), total: i * 1.25, qty: i % 7, big: Long.fromNumber(i * 1000), d: Decimal128.fromString('1.10'), o: new ObjectId(), status: 'open', at: new Date(1700000000000) },
    ns: { db: 'shop', coll: 'orders' },
    documentKey: { _id },
  })
}
const cursors = []
for (let i = 0; i < N; i += 1000) cursors.push(BSON.serialize({ id: Long.ZERO, ns: 'shop.orders', nextBatch: events.slice(i, i + 1000), postBatchResumeToken: { _data: '82' } }))

const F = native.EventFormat
const opts = { topic: 't', id: 'bench', topicPrefix: 'p' }
opts.topicOf = router(opts)
const kafka = { name: 'p', version: `bson2json ${version}` }
const plainOpts = resolveOptions({ dialect: 'canonical' })
const nativeOpts = resolveOptions({})
const WAYS = {
  bson2json: (c, out) => {
    for (const ev of native.transcodeChangeBatch(c, F.RecordEvent, nativeOpts).events) formatOf('bson2json').records(opts, ev, out)
  },
  'mongo-kafka': (c, out) => {
    for (const ev of native.transcodeChangeBatch(c, F.RecordMongoKafka, nativeOpts, false, kafka).events) formatOf('mongo-kafka').records(opts, ev, out)
  },
  debezium: (c, out) => {
    for (const ev of native.transcodeChangeBatch(c, F.RecordDebezium, nativeOpts, false, kafka).events) formatOf('debezium').records(opts, ev, out)
  },
  'mongo-kafka (JS twin)': (c, out) => {
    for (const ev of native.transcodeChangeBatch(c, F.Whole, plainOpts).events) PLAIN['mongo-kafka'].records(opts, ev, out)
  },
  'debezium (JS twin)': (c, out) => {
    for (const ev of native.transcodeChangeBatch(c, F.Whole, plainOpts).events) PLAIN.debezium.records(opts, ev, out)
  },
}
const names = Object.keys(WAYS)
const times = Object.fromEntries(names.map((f) => [f, []]))
let sink = 0
for (let r = 0; r < ROUNDS; r++) {
  for (const f of r % 2 === 0 ? names : [...names].reverse()) {
    const out = []
    const c0 = process.cpuUsage()
    for (const c of cursors) WAYS[f](c, out)
    const c1 = process.cpuUsage(c0)
    times[f].push((c1.user + c1.system) / N)
    sink += out.length
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1]
const base = median(times.bson2json)
const os = await import('node:os')
const lines = [
  `\`node benchmark/kafka-formats.mjs --events ${N} --rounds ${ROUNDS}\` (${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; ${os.cpus().length} CPUs shared with other work)`,
  '',
  `${N} insert events of ~1 KB in replies of 1,000, ${ROUNDS} rounds alternating, medians; Node ${process.version}`,
  '',
  '| format | CPU µs per event (transcoded and made into records) | ratio to bson2json |',
  '| --- | ---: | ---: |',
  ...names.map((f) => `| ${f} | ${median(times[f]).toFixed(2)} | ${(median(times[f]) / base).toFixed(2)}x |`),
  '',
  ...['mongo-kafka', 'debezium'].map((f) => `${f}: the native writer takes ${(median(times[f]) / median(times[`${f} (JS twin)`])).toFixed(2)}x the time of its JavaScript twin.`),
]
if (sink === 0) lines.push('(nothing written)')
console.log(lines.join('\n'))
if (values.out) (await import('node:fs')).writeFileSync(values.out, `${lines.join('\n')}\n`)
