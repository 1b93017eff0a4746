// Helper of benchmark/kafka-connectors.sh: the writer, the pre-fill, the warm-up and the
// read_committed counter, shared by every pipeline so that each one is measured the same way.
//
//   node benchmark/kafka-connectors.mjs write   --uri U --db D (--coll C | --colls C1,C2,...) --n N --rate R [--start S] [--writers K] [--per P]
//   node benchmark/kafka-connectors.mjs setname --uri U   (the replica set's name, from hello)
//   node benchmark/kafka-connectors.mjs clustertime --uri U   (the cluster time now: SECONDS.INCREMENT)
//   node benchmark/kafka-connectors.mjs prefill --uri U --db D --coll C --n N
//   node benchmark/kafka-connectors.mjs warm    --uri U --db D --coll C --brokers B --topic T [--timeout S]
//   node benchmark/kafka-connectors.mjs wait    --brokers B (--topic T | --topics T1,T2,...) --n N [--timeout S] [--settle S] [--pid P --ticks HZ]
//   node benchmark/kafka-connectors.mjs workload --uri U --db D [--colls c,d]   (the format comparison's writes)
//   node benchmark/kafka-connectors.mjs prefill-fixture --uri U --db D --colls s1,s2   (its snapshot's documents)
//   node benchmark/kafka-connectors.mjs dump    --brokers B --topic T --until ID [--timeout S]  (JSON lines: key, value)
//   node benchmark/kafka-connectors.mjs compare --format mongo-kafka|debezium A.jsonl B.jsonl
//
// Documents: `_id` "k00000042k" (the k...k marker is what the counter looks for in a record's
// value, whatever the pipeline's format: bson2json's event JSON, the MongoDB connector's JSON
// string, Debezium's envelope whose `after` is a JSON string inside JSON), ~1 KB each.
// `write` inserts ids start..start+n-1 at a steady rate (insertMany every 10 ms) and prints
// {"t0":ms,"t1":ms}. `warm` inserts `warm-<i>` documents once a second until one is read back from
// the topic (the pipeline is streaming and the topic exists). `wait` reads the topic
// read_committed (lib/kafka/sink.js readCommitted, incrementally) until ids 0..n-1 have all been seen
// (then --settle seconds more, to catch late duplicates) or --timeout, and prints
// {"records","distinct","missing","duplicated","tFirst","tAll","tLast"}.
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'

const require = createRequire(import.meta.url)
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    uri: { type: 'string' },
    db: { type: 'string' },
    coll: { type: 'string' },
    n: { type: 'string', default: '0' },
    rate: { type: 'string', default: '1000' },
    start: { type: 'string', default: '0' },
    brokers: { type: 'string' },
    topic: { type: 'string' },
    timeout: { type: 'string', default: '120' },
    settle: { type: 'string', default: '0' },
    colls: { type: 'string', default: 'c' },
    writers: { type: 'string', default: '1' },
    per: { type: 'string', default: '0' },
    topics: { type: 'string' },
    pid: { type: 'string' },
    ticks: { type: 'string', default: '100' },
    until: { type: 'string' },
    format: { type: 'string' },
  },
})
const cmd = positionals[0]
const N = Number(values.n)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const id = (i) => `k${String(i).padStart(8, '0')}k`
const doc = (i) => ({ _id: id(i), customer: `c${i % 977}`, note: 'x'.repeat(900), total: i * 1.25, status: 'open', at: new Date() })

async function collection() {
  const { MongoClient } = require('mongodb')
  const client = await MongoClient.connect(values.uri)
  return { client, coll: client.db(values.db).collection(values.coll) }
}

async function reader(topic, raw = false) {
  const { Consumer } = require('@platformatic/kafka')
  const { readCommitted } = require('../kafka')
  const consumer = new Consumer({ clientId: `kc-${process.pid}`, groupId: `kc-${process.pid}`, bootstrapBrokers: values.brokers.split(',') })
  let from
  return {
    consumer,
    // Reads what was committed since the last call; false while the topic does not exist.
    async next(onValue) {
      try {
        from = await readCommitted(consumer, topic, (_p, _o, r) => (raw ? onValue(r) : onValue(r.value ? r.value.toString('latin1') : '')), from)
        return true
      } catch (e) {
        if (/not found|unknown topic|UNKNOWN_TOPIC|does not host/i.test(String(e && e.message))) return false
        throw e
      }
    },
  }
}

if (cmd === 'write') {
  // --colls a,b,...: each insertMany into the next collection in turn; --writers K: K of them
  // in flight at once (the ids taken in order from one counter); --rate 0: as fast as the
  // source takes them (insertMany of --per documents, default 500, without pause)
  const { client } = await collection()
  const colls = (values.coll ? [values.coll] : values.colls.split(',')).map((c) => client.db(values.db).collection(c))
  const rate = Number(values.rate)
  const start = Number(values.start)
  const per = Number(values.per) || (rate > 0 ? Math.max(1, Math.round(rate / 100)) : 500)
  const t0 = Date.now()
  let n = 0
  let turn = 0
  const writer = async () => {
    while (n < N) {
      const docs = []
      for (let j = 0; j < per && n < N; j++, n++) docs.push(doc(start + n))
      await colls[turn++ % colls.length].insertMany(docs, { ordered: true })
      const ahead = rate > 0 ? t0 + (n / rate) * 1000 - Date.now() : 0
      if (ahead > 0) await sleep(ahead)
    }
  }
  await Promise.all(Array.from({ length: Number(values.writers) || 1 }, writer))
  console.log(JSON.stringify({ t0, t1: Date.now() }))
  await client.close()
} else if (cmd === 'setname') {
  const { client } = await collection()
  console.log((await client.db('admin').command({ hello: 1 })).setName || '')
  await client.close()
} else if (cmd === 'clustertime') {
  // the cluster time now, SECONDS.INCREMENT (a pipeline started there sees what is written next)
  const { client } = await collection()
  const s = client.startSession()
  await client.db('admin').command({ ping: 1 }, { session: s })
  const t = s.operationTime
  console.log(`${t.high}.${t.low}`)
  await s.endSession()
  await client.close()
} else if (cmd === 'prefill') {
  const { client, coll } = await collection()
  for (let i = 0; i < N; i += 1000) {
    const docs = []
    for (let j = i; j < Math.min(N, i + 1000); j++) docs.push(doc(j))
    await coll.insertMany(docs)
  }
  console.log(JSON.stringify({ n: await coll.countDocuments({}) }))
  await client.close()
} else if (cmd === 'warm') {
  const { client, coll } = await collection()
  const r = await reader(values.topic)
  const deadline = Date.now() + Number(values.timeout) * 1000
  let seen = false
  for (let i = 0; !seen; i++) {
    if (Date.now() > deadline) {
      console.error(`kafka-connectors.mjs: nothing read back from ${values.topic} in ${values.timeout} s`)
      process.exit(1)
    }
    await coll.insertOne({ _id: `warm-${process.pid}-${i}`, note: "warm-up" })
    for (let k = 0; k < 4 && !seen; k++) {
      await sleep(250)
      await r.next((v) => {
        if (v.includes('warm-')) seen = true
      })
    }
  }
  await r.consumer.close()
  await client.close()
} else if (cmd === 'wait') {
  // --topics a,b,...: the ids may be spread over several topics (a database-wide pipeline)
  const readers = await Promise.all((values.topics || values.topic).split(',').map((t) => reader(t)))
  const r = { next: async (f) => { for (const x of readers) await x.next(f) }, consumer: { close: () => Promise.all(readers.map((x) => x.consumer.close())) } }
  const counts = new Uint32Array(N)
  let records = 0
  let distinct = 0
  let tFirst = null
  let tAll = null
  let tLast = null
  // --pid: the pipeline's CPU seconds (/proc/PID/stat utime + stime) when the first event is read
  // back and when the last one is, and how many were read by the first
  const cpuNow = () => {
    if (!values.pid) return null
    const fs = require('node:fs')
    try {
      const f = fs.readFileSync(`/proc/${values.pid}/stat`, 'utf8').split(') ')[1].split(' ')
      return (Number(f[11]) + Number(f[12])) / Number(values.ticks)
    } catch {
      return null
    }
  }
  let cpuFirst = null
  let cpuAll = null
  let distinctFirst = 0
  const re = /k(\d{8})k/
  const deadline = Date.now() + Number(values.timeout) * 1000
  for (;;) {
    let got = 0
    await r.next((v) => {
      const m = re.exec(v)
      if (!m) return
      const i = Number(m[1])
      if (i >= N) return
      got++
      records++
      if (counts[i]++ === 0) distinct++
    })
    const now = Date.now()
    if (got > 0) {
      if (tFirst === null) {
        tFirst = now
        cpuFirst = cpuNow()
        distinctFirst = distinct
      }
      tLast = now
    }
    if (distinct === N && tAll === null) {
      tAll = now
      cpuAll = cpuNow()
    }
    if (tAll !== null && now - tAll >= Number(values.settle) * 1000) break
    if (now > deadline) break
    await sleep(got > 0 ? 100 : 300)
  }
  let duplicated = 0
  for (const c of counts) if (c > 1) duplicated += c - 1
  console.log(JSON.stringify({ records, distinct, missing: N - distinct, duplicated, tFirst, tAll, tLast, distinctFirst, cpuFirst, cpuAll }))
  await r.consumer.close()
} else if (cmd === 'workload') {
  // The writes of __test__/support/fixtures/kafka-connectors.json on each collection (inserts of every
  // BSON type a consumer meets, updates, a replace, a delete), ending with an insert of
  // {_id: "end"}: the fixture keeps what the connectors wrote for them.
  const { client } = await collection()
  const fs = await import('node:fs')
  const { EJSON } = require('bson')
  const fixture = JSON.parse(fs.readFileSync(new URL('../__test__/support/fixtures/kafka-connectors.json', import.meta.url), 'utf8'))
  const writes = EJSON.parse(JSON.stringify(fixture.writes), { relaxed: false })
  const db = client.db(values.db)
  for (const name of values.colls.split(',')) {
    const c = db.collection(name)
    for (const w of writes) {
      if (w.insert) await c.insertOne(w.insert)
      else if (w.update) await c.updateOne(w.update, w.with)
      else if (w.replace) await c.replaceOne(w.replace, w.with)
      else await c.deleteOne(w.delete)
    }
  }
  await client.close()
} else if (cmd === 'prefill-fixture') {
  // The snapshot of the format comparison: the fixture's inserted documents (every BSON type a
  // document holds) written into each collection before the pipelines start.
  const { client } = await collection()
  const fs = await import('node:fs')
  const { EJSON } = require('bson')
  const fixture = JSON.parse(fs.readFileSync(new URL('../__test__/support/fixtures/kafka-connectors.json', import.meta.url), 'utf8'))
  const docs = EJSON.parse(JSON.stringify(fixture.writes), { relaxed: false }).filter((w) => w.insert && w.insert._id !== 'end').map((w) => w.insert)
  for (const name of values.colls.split(',')) await client.db(values.db).collection(name).insertMany(docs)
  await client.close()
} else if (cmd === 'dump') {
  // The topic's records (key and value as text, null for none) up to the one whose key holds
  // the --until marker, as JSON lines.
  const r = await reader(values.topic, true)
  const out = []
  const deadline = Date.now() + Number(values.timeout) * 1000
  let done = false
  while (!done && Date.now() < deadline) {
    await r.next((rec) => {
      const key = rec.key ? rec.key.toString('utf8') : null
      out.push({ key, value: rec.value ? rec.value.toString('utf8') : null })
      if (key !== null && key.includes(values.until)) done = true
    })
    if (!done) await sleep(300)
  }
  await r.consumer.close()
  for (const x of out) console.log(JSON.stringify(x))
  if (!done) {
    console.error(`kafka-connectors.mjs: ${values.topic}: no record with ${values.until} within ${values.timeout} s (${out.length} records)`)
    process.exit(1)
  }
} else if (cmd === 'compare') {
  // The connector's records (A) against cdc's (B) from the first record of the workload on
  // (the warm-up documents before it are left out), key and value, in order. For Debezium the
  // fields that name the connector run or its wall clock are set aside (docs/kafka.md).
  const fs = await import('node:fs')
  const load = (f) => {
    const recs = fs.readFileSync(f, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const first = recs.findIndex((x) => x.key !== null && !x.key.includes('warm-'))
    return first < 0 ? [] : recs.slice(first)
  }
  const [a, b] = [load(positionals[1]), load(positionals[2])]
  const norm = (x) => {
    if (values.format !== 'debezium' || x.value === null) return x.value
    const v = JSON.parse(x.value)
    delete v.ts_ms
    delete v.ts_us
    delete v.ts_ns
    if (v.source) {
      delete v.source.name
      delete v.source.version
      if (v.op === 'r') {
        // a snapshot record's times are those of the position the pipeline's copy began at, and
        // "last" marks the last record of the whole snapshot, in whichever topic (counted apart)
        for (const k of ['ts_ms', 'ts_us', 'ts_ns', 'ord']) delete v.source[k]
        if (v.source.snapshot === 'last') v.source.snapshot = 'true'
      }
    }
    return JSON.stringify(v)
  }
  // An update's `after` is the document MongoDB looks up when the pipeline reads the event
  // (fullDocument: updateLookup, Debezium's default capture mode): a pipeline that reads it after
  // a later delete gets null. That is when each one read, not its format: counted apart.
  const lookedUpLater = (x, y) => {
    if (values.format !== 'debezium' || x.value === null || y.value === null) return false
    const [v, w] = [JSON.parse(x.value), JSON.parse(y.value)]
    if (v.op !== 'u' || w.op !== 'u' || (v.after !== null && w.after !== null)) return false
    v.after = w.after = null
    return norm({ value: JSON.stringify(v) }) === norm({ value: JSON.stringify(w) })
  }
  const diffs = []
  let lookupTiming = 0
  for (let k = 0; k < Math.max(a.length, b.length); k++) {
    const x = a[k]
    const y = b[k]
    if (x && y && x.key === y.key && norm(x) === norm(y)) continue
    if (x && y && x.key === y.key && lookedUpLater(x, y)) lookupTiming++
    else diffs.push({ at: k, connector: x, cdc: y })
  }
  const lastMarked = (recs) => recs.filter((x) => x.value !== null && x.value.includes('"snapshot":"last"')).length
  console.log(JSON.stringify({ format: values.format, connector: a.length, cdc: b.length, identical: a.length - diffs.length - lookupTiming, lookupTiming, markedLast: { connector: lastMarked(a), cdc: lastMarked(b) }, diffs: diffs.slice(0, 5) }))
  process.exit(diffs.length === 0 && a.length > 0 ? 0 : 1)
} else {
  console.error('usage: node benchmark/kafka-connectors.mjs write|setname|prefill|warm|wait|workload|dump|compare ...')
  process.exit(2)
}
