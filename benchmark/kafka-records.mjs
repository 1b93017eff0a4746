// The Kafka sink's records of change events, made two ways side by side in one process, on the
// change-stream workloads (benchmark/workloads.mjs, quick sizes, the benchmark seed) framed as
// raw `getMore` replies of 1,000 events:
//
//   strings: the batch as event objects with each event's JSON as a string (`watch({ whole })`),
//            then the record the sink made of it before it had bytes: the key, the value and the
//            three headers each a `Buffer.from` of a string (the former `toMessage`);
//   records: the batch as Kafka records (`EventFormat.RecordEvent`): key, value and headers as
//            views of one Buffer the native pass wrote, then the record (`toMessage` today).
//
//   node benchmark/kafka-records.mjs [ROUNDS=11] [WL=cs_insert_1k,cs_insert_10k,cs_update_1k]
//
// Each round runs both ways over every batch in alternating order; a way's time is its process
// CPU time (process.cpuUsage) per event; the table gives each way's median and the median of the
// rounds' ratios records / strings (below 1: records take less CPU).
import { createRequire } from 'node:module'
import { loadWorkload } from './workloads.mjs'

const require = createRequire(import.meta.url)
const native = require('../lib/native')
const { resolveOptions } = require('../lib/options')
const { BSON } = require('bson')

const ROUNDS = Number(process.env.ROUNDS || 11)
const WL = (process.env.WL || 'cs_insert_1k,cs_insert_10k,cs_update_1k').split(',')
const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1]
const o = resolveOptions({})
const F = native.EventFormat
const topic = 't'
const topicOf = () => topic

/** A raw `getMore` reply's `cursor` document holding `events` (each its own BSON, spliced in). */
function cursorOf(events) {
  const parts = []
  events.forEach((e, i) => parts.push(Buffer.from([0x03]), Buffer.from(`${i}\0`), e))
  const arr = Buffer.concat([Buffer.alloc(4), ...parts, Buffer.from([0])])
  arr.writeInt32LE(arr.length, 0)
  const head = BSON.serialize({ id: 0n, ns: 'shop.orders' })
  const doc = Buffer.concat([Buffer.alloc(4), head.subarray(4, head.length - 1), Buffer.from([0x04]), Buffer.from('nextBatch\0'), arr, Buffer.from([0])])
  doc.writeInt32LE(doc.length, 0)
  return doc
}

/** The record lib/kafka made of an event object before the native pass made its bytes. */
function fromStrings(ev) {
  const headers = new Map()
  headers.set(Buffer.from('operationType'), Buffer.from(String(ev.operationType)))
  if (ev.ns) headers.set(Buffer.from('ns'), Buffer.from(ev.ns.coll === undefined ? String(ev.ns.db) : `${ev.ns.db}.${ev.ns.coll}`))
  if (ev.clusterTime) headers.set(Buffer.from('clusterTime'), Buffer.from(`${ev.clusterTime.t}.${ev.clusterTime.i}`))
  return { topic: topicOf(ev.ns), key: ev.documentKey === undefined ? undefined : Buffer.from(ev.documentKey), value: Buffer.from(ev.json), headers }
}

const ways = {
  strings: (c) => native.transcodeChangeBatch(c, F.Whole, o).events.map(fromStrings),
  records: (c) => native.transcodeChangeBatch(c, F.RecordEvent, o).events.map((ev) => ({ topic: topicOf(ev.ns), key: ev.key, value: ev.value, headers: ev.headers })),
}

function run(way, cursors) {
  const t0 = process.cpuUsage()
  let bytes = 0
  for (const c of cursors) for (const m of ways[way](c)) bytes += m.value.length + (m.key ? m.key.length : 0)
  const t = process.cpuUsage(t0)
  return { us: t.user + t.system, bytes }
}

console.log(`\n### Kafka records per change event: client CPU µs (Node ${process.version}, ${ROUNDS} rounds, medians)\n`)
console.log('| workload | events | strings µs | records µs | records / strings (per round) |')
console.log('| --- | ---: | ---: | ---: | ---: |')
for (const name of WL) {
  const { docs } = loadWorkload(name, { quick: true })
  const cursors = []
  for (let i = 0; i < docs.length; i += 1000) cursors.push(cursorOf(docs.slice(i, i + 1000)))
  // the same bytes both ways
  const a = cursors.flatMap((c) => ways.strings(c))
  const b = cursors.flatMap((c) => ways.records(c))
  for (let i = 0; i < a.length; i++) {
    if (!a[i].value.equals(b[i].value) || !a[i].key.equals(b[i].key) || [...a[i].headers.values()].join() !== [...b[i].headers.values()].join()) throw new Error(`${name}: record ${i} differs`)
  }
  const us = { strings: [], records: [] }
  const ratios = []
  for (let r = 0; r < ROUNDS + 1; r++) {
    const order = r % 2 ? ['records', 'strings'] : ['strings', 'records']
    const got = {}
    for (const w of order) got[w] = run(w, cursors).us / docs.length
    if (r === 0) continue // warm-up
    us.strings.push(got.strings)
    us.records.push(got.records)
    ratios.push(got.records / got.strings)
  }
  console.log(`| ${name} | ${docs.length} | ${median(us.strings).toFixed(2)} | ${median(us.records).toFixed(2)} | ${median(ratios).toFixed(2)}x |`)
}
