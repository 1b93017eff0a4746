// The record formats' own cost per event, side by side in one process (no server, no broker):
// the same change events, transcoded once by the binding into each format's dialect as
// lib/mongo/change-stream.js does, then written as each format's Kafka records
// (lib/kafka/records.js). bson2json's records reuse the binding's text; mongo-kafka and debezium
// walk the canonical Extended JSON in JavaScript (lib/kafka/java-json.js): the figure says what a
// native writer of those formats would save.
//
//   node benchmark/kafka-formats.mjs [--events 20000] [--rounds 7]
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'

const require = createRequire(import.meta.url)
const { BSON, Long, Decimal128, ObjectId, Timestamp } = require('bson')
const native = require('../lib/native')
const { resolveOptions } = require('../lib/options')
const { formatOf } = require('../lib/kafka/records')
const { router } = require('../lib/kafka/scope')

const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } } })
const N = Number(values.events)
const ROUNDS = Number(values.rounds)

// A getMore reply of N insert events of ~1 KB documents (the shape of benchmark/kafka-connectors.mjs's).
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
// the replies' cursor documents (1,000 events each), as the raw getMore replies hold them
const cursors = []
for (let i = 0; i < N; i += 1000) cursors.push(BSON.serialize({ id: Long.ZERO, ns: 'shop.orders', nextBatch: events.slice(i, i + 1000), postBatchResumeToken: { _data: '82' } }))

function transcoded(dialect) {
  const o = resolveOptions(dialect === undefined ? {} : { dialect })
  return cursors.flatMap((c) => native.transcodeChangeBatch(c, true, o).events)
}

const formats = ['bson2json', 'mongo-kafka', 'debezium']
const opts = { topic: 't', id: 'bench' }
opts.topicOf = router(opts)
const input = Object.fromEntries(formats.map((f) => [f, transcoded(formatOf(f).dialect)]))
const times = Object.fromEntries(formats.map((f) => [f, []]))
let sink = 0
for (let r = 0; r < ROUNDS; r++) {
  for (const f of r % 2 === 0 ? formats : [...formats].reverse()) {
    const fmt = formatOf(f)
    const out = []
    const t0 = process.hrtime.bigint()
    for (const ev of input[f]) fmt.records(opts, ev, out)
    times[f].push(Number(process.hrtime.bigint() - t0) / 1e3 / N)
    sink += out.length
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1]
const base = median(times.bson2json)
console.log(`${N} insert events of ~1 KB, ${ROUNDS} rounds alternating, medians; Node ${process.version}`)
console.log('| format | µs per event (records written) | ratio to bson2json |')
console.log('| --- | ---: | ---: |')
for (const f of formats) console.log(`| ${f} | ${median(times[f]).toFixed(2)} | ${(median(times[f]) / base).toFixed(2)}x |`)
if (sink === 0) console.log('(nothing written)')
