#!/usr/bin/env node
'use strict'

// Chaos test of `bson2json cdc` (exactly once into Kafka). Writes inserts and `$inc` updates to
// a collection while faults are injected, then reads the events topic with read_committed
// isolation and checks:
//   - every write appears exactly once (identified by documentKey and the document's version v),
//   - per key, the versions appear in increasing order (one partition per key),
//   - each message key is the event's documentKey JSON, and its headers match the event,
//   - with --snapshot-docs N: the collection is pre-filled with N documents and cdc starts with
//     --snapshot, so the snapshot and its hand-off to the stream are under fire too: every
//     pre-filled document has exactly one snapshot record, no key has two, a key's snapshot record
//     comes before its events, and replaying the records per key gives the collection's final
//     state (`finalStateMismatches`).
// Faults (each one counted, per kind and per phase, in the report's `faultsByKind` / `faultsByPhase`):
//   - kill: SIGKILL of cdc (`--kills`, spread over the run), restarted after 0-300 ms; a cdc that
//     exits on its own (a failure it does not retry, or one that outlasted its retry budget) is
//     restarted too (`selfExits`, not a fault; `selfExitCauses` counts its last lines; cdc's
//     own retries are counted from its stderr as `mongoRetries` and `kafkaRestarts`);
//   - brokerRestart: `scripts/kafka.sh restart` (`--broker-restarts N`; `--broker-restart` is 1);
//   - kafkaPause: the broker process SIGSTOPped for 20-200 ms, then SIGCONTed
//     (`--kafka-pause-every S`, the mean seconds between pauses). Kafka is not cut through a proxy:
//     the broker advertises its own address in the metadata, and the client connects there
//     after the bootstrap, so a proxy in front of the bootstrap address would carry only the
//     first metadata request;
//   - mongoCut: a TCP proxy (node:net on 127.0.0.1) between cdc and MongoDB (`--cut-ms M`, the
//     mean milliseconds between cuts; cdc then connects with directConnection=true through it)
//     destroys one live connection at random, both sides;
//   - mongoBlackhole: the proxy holds every byte both ways (and new connections) for 100-1500 ms
//     (`--blackhole-every S`), then passes them on, or cuts every connection (half of the time);
//   - source: the in-repo test server's random faults (`--fault-rate`, on the change stream's
//     getMores, and with --snapshot-docs on the snapshot's find/getMore too): closed sockets,
//     resumable errors (failCommand-style), killed cursors, empty batches, delays.
// Source: the in-repo test server, or MONGODB_URI (a replica set / SecantusDB: no source faults;
// the proxy needs a single-host URI).
//
//   node scripts/kafka-chaos.js --kafka HOST:PORT [--ops 3000 | --duration S] [--kills 10]
//       [--broker-restart | --broker-restarts N] [--fault-rate 0.05] [--rate 300]
//       [--snapshot-docs N] [--snapshot-batch-size 100] [--cut-ms M] [--blackhole-every S]
//       [--snapshot-cut-ms M] [--snapshot-fault-rate R]
//       [--kafka-pause-every S] [--batch-size 40] [--until-faults N [--max-seconds 3600]]
//       [--min-faults N] [--collections N] [--wait-seconds 600] [--json]
// --collections N (N > 1): a database-wide stream (cdc --db D --topic-prefix P) over N collections,
// a topic each; the checks then also require each record in its collection's topic.
// --until-faults N: the writes (and the faults) go on past --ops / --duration until N faults were
// injected; --max-seconds (default 3600) ends the writes in any case.
// --wait-seconds S: how long, after the writes, the events may take to reach the topic before the
// run ends and reports what is missing (default 600).
// The broker restarts and pauses act on the broker of `scripts/kafka.sh` (its KAFKA_DIR).
// Exit status 0 when every check passes (and, with --min-faults, at least that many faults were
// injected), 1 otherwise (the report says which check failed).

const { spawn, execFile } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { parseArgs, promisify } = require('node:util')

const ROOT = path.join(__dirname, '..')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const debug = process.env.KAFKA_CHAOS_DEBUG ? (...a) => process.stderr.write(`kafka-chaos: ${a.join(' ')}\n`) : () => {}
// A mean-`mean` exponential wait (Poisson arrivals), at least 1 ms.
const expWait = (mean) => Math.max(1, -Math.log(1 - Math.random()) * mean)

/**
 * A TCP proxy on 127.0.0.1 in front of `target` ("host:port"). `cut()` destroys one live
 * connection (both sides) at random and says whether there was one; `hold(ms, thenCut)` keeps
 * every byte both ways (and every new connection) for `ms`, then passes them on or cuts.
 */
async function startProxy(target) {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))]
  const pairs = new Set()
  let holding = false
  const server = net.createServer((client) => {
    const up = net.connect(port, host)
    const pair = { client, up, toUp: [], toClient: [] }
    pairs.add(pair)
    const done = () => {
      pairs.delete(pair)
      client.destroy()
      up.destroy()
    }
    for (const s of [client, up]) {
      s.on('error', done)
      s.on('close', done)
      s.setNoDelay(true)
    }
    client.on('data', (d) => (holding ? pair.toUp.push(d) : up.write(d)))
    up.on('data', (d) => (holding ? pair.toClient.push(d) : client.write(d)))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    address: `127.0.0.1:${server.address().port}`,
    connections: () => pairs.size,
    cut() {
      if (pairs.size === 0) return false
      const all = [...pairs]
      const p = all[Math.floor(Math.random() * all.length)]
      p.client.destroy()
      p.up.destroy()
      pairs.delete(p)
      return true
    },
    async hold(ms, thenCut) {
      holding = true
      await sleep(ms)
      holding = false
      for (const p of pairs) {
        if (thenCut) {
          p.client.destroy()
          p.up.destroy()
          pairs.delete(p)
          continue
        }
        for (const d of p.toUp.splice(0)) p.up.write(d)
        for (const d of p.toClient.splice(0)) p.client.write(d)
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const p of pairs) {
          p.client.destroy()
          p.up.destroy()
        }
        server.close(() => resolve())
      }),
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      kafka: { type: 'string' },
      ops: { type: 'string', default: '3000' },
      duration: { type: 'string' },
      kills: { type: 'string', default: '10' },
      'broker-restart': { type: 'boolean', default: false },
      'broker-restarts': { type: 'string' },
      'fault-rate': { type: 'string', default: '0.05' },
      rate: { type: 'string', default: '300' },
      partitions: { type: 'string', default: '3' },
      collections: { type: 'string', default: '1' },
      'batch-size': { type: 'string', default: '40' },
      'snapshot-docs': { type: 'string', default: '0' },
      'snapshot-batch-size': { type: 'string', default: '100' },
      'cut-ms': { type: 'string', default: '0' },
      'snapshot-cut-ms': { type: 'string' },
      'snapshot-fault-rate': { type: 'string' },
      'blackhole-every': { type: 'string', default: '0' },
      'kafka-pause-every': { type: 'string', default: '0' },
      'min-faults': { type: 'string', default: '0' },
      'until-faults': { type: 'string', default: '0' },
      'max-seconds': { type: 'string', default: '3600' },
      'wait-seconds': { type: 'string', default: '600' },
      json: { type: 'boolean', default: false },
    },
  })
  const brokers = values.kafka || process.env.KAFKA_BROKERS
  if (!brokers) throw new Error('--kafka HOST:PORT (or KAFKA_BROKERS) is required')
  const rate = Number(values.rate)
  const ops = values.duration !== undefined ? Math.round(Number(values.duration) * rate) : Number(values.ops)
  const kills = Number(values.kills)
  const brokerRestarts = values['broker-restarts'] !== undefined ? Number(values['broker-restarts']) : values['broker-restart'] ? 1 : 0
  const snapshotDocs = Number(values['snapshot-docs'])
  const cutMs = Number(values['cut-ms'])
  // The copy's own rates (default: the stream's): a failed range reopens after its last
  // committed _id, so the copy progresses as long as a batch gets through between faults.
  const snapshotCutMs = values['snapshot-cut-ms'] !== undefined ? Number(values['snapshot-cut-ms']) : cutMs
  const holeEvery = Number(values['blackhole-every'])
  const pauseEvery = Number(values['kafka-pause-every'])
  const kafkaDir = process.env.KAFKA_DIR || path.join(ROOT, 'tmp/kafka')
  const { MongoClient } = require('mongodb')
  const kafka = require('../lib/kafka/sink')
  const { Consumer } = require('@platformatic/kafka')
  const t0run = Date.now()

  // Faults, per kind and per phase ('snapshot' until cdc says the snapshot is done, then 'stream').
  let phase = snapshotDocs > 0 ? 'snapshot' : 'stream'
  let snapshotDoneAt = snapshotDocs > 0 ? Infinity : 0
  let faultsDoneAt = Infinity // when the faults ended (the writes done)
  const faultsByKind = {}
  const faultsByPhase = { snapshot: {}, stream: {} }
  let server = null
  const liveFaults = () => Object.values(faultsByKind).reduce((a, b) => a + b, 0) + (server ? server.faults.history.length : 0)
  const fault = (kind) => {
    faultsByKind[kind] = (faultsByKind[kind] || 0) + 1
    faultsByPhase[phase][kind] = (faultsByPhase[phase][kind] || 0) + 1
  }

  let uri = process.env.MONGODB_URI
  const faultRate = Number(values['fault-rate'])
  const snapshotFaultRate = values['snapshot-fault-rate'] !== undefined ? Number(values['snapshot-fault-rate']) : faultRate
  if (!uri) {
    const { startTestServer } = require('../tools/test-server')
    server = await startTestServer({
      port: 0,
      faultRate,
      seed: Date.now() % 100000,
      // With a snapshot, its find/getMore are hit too (the writer only inserts and updates).
      ...(snapshotDocs > 0 ? { randomFaultCommands: ['getMore', 'find'], randomFaultChangeStreamOnly: false } : {}),
    })
    uri = server.uri
  }
  const client = await MongoClient.connect(uri)
  const tag = `${process.pid}_${Date.now() % 1_000_000}`
  const dbName = `b2j_chaos_${tag}`
  // --collections N > 1: a database-wide stream (cdc --db D --topic-prefix P) over collections
  // c0..cN-1, document _id i in collection c(i mod N), one topic per collection.
  const nColls = Math.max(1, Number(values.collections))
  const colls = Array.from({ length: nColls }, (_, k) => client.db(dbName).collection(nColls === 1 ? 'c' : `c${k}`))
  const collOf = (id) => colls[id % nColls]
  const topic = `chaos-${tag}`
  const topics = nColls === 1 ? [topic] : colls.map((c) => `${topic}.${dbName}.${c.collectionName}`)
  const checkpointTopic = `chaos-${tag}-ck`
  const id = `chaos-${tag}`

  // Pre-fill (v: 0) for the snapshot; faults off meanwhile.
  const versions = []
  if (snapshotDocs > 0) {
    if (server) server.faults.setFaultRate(0)
    for (let i = 0; i < snapshotDocs; i += 1000) {
      const docs = []
      for (let j = i; j < Math.min(snapshotDocs, i + 1000); j++) docs.push({ _id: j, v: 0, pad: 'x'.repeat(j % 50) })
      for (const c of colls) {
        const mine = docs.filter((d) => collOf(d._id) === c)
        if (mine.length > 0) await c.insertMany(mine, { ordered: false })
      }
      for (const _ of docs) versions.push(0)
    }
    if (server) server.faults.setFaultRate(snapshotFaultRate)
  }

  // The proxy between cdc and MongoDB.
  let proxy = null
  let cdcUri = uri
  if (cutMs > 0 || holeEvery > 0) {
    const m = /^(mongodb:\/\/(?:[^@/]*@)?)([^/?]+)\/?(\?.*)?$/.exec(uri)
    if (!m || m[2].includes(',')) throw new Error('--cut-ms / --blackhole-every need a single-host mongodb:// URI')
    proxy = await startProxy(m[2])
    const q = (m[3] || '?').replace(/([?&])(replicaSet|directConnection)=[^&]*&?/g, '$1').replace(/[?&]$/, '')
    cdcUri = `${m[1]}${proxy.address}/${q}${q ? '&' : '?'}directConnection=true`
  }

  let startAt = null
  if (snapshotDocs === 0) {
    // The first start begins at this cluster time, so writes made before it is up are not missed.
    const s = client.startSession()
    await client.db(dbName).command({ ping: 1 }, { session: s })
    startAt = s.operationTime
    await s.endSession()
  }

  const args = [
    path.join(ROOT, 'bin/bson2json.js'),
    'cdc',
    '--uri',
    cdcUri,
    '--db',
    dbName,
    ...(nColls === 1 ? ['--collection', 'c', '--topic', topic] : ['--topic-prefix', topic]),
    '--kafka',
    brokers,
    '--checkpoint-topic',
    checkpointTopic,
    '--id',
    id,
    '--partitions',
    values.partitions,
    '--batch-size',
    values['batch-size'],
    '--max-await-ms',
    '100',
    // a command the source never answers is given up after 10 s (cdc's default is 60)
    '--reply-timeout',
    '10',
    // With KAFKA_CHAOS_DEBUG, a progress line every 5 s: where a stalled stream waits shows in the log.
    '--progress-interval',
    process.env.KAFKA_CHAOS_DEBUG ? '5' : '0',
    ...(snapshotDocs > 0 ? ['--snapshot', '--snapshot-batch-size', values['snapshot-batch-size']] : ['--start-at-operation-time', `${startAt.high}.${startAt.low}`]),
  ]
  const log = []
  let child = null
  let starts = 0
  let finishing = false
  const exits = []
  const selfExits = []
  // cdc's own retries, from its stderr: MongoDB failures retried in place, Kafka cycles restarted
  const retries = { mongo: 0, kafka: 0 }
  let positionTaken = null
  const positionCommitted = new Promise((resolve) => (positionTaken = resolve))
  function startCdc() {
    starts++
    const n = starts
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    c.exitInfo = new Promise((resolve) =>
      c.on('exit', (code, signal) => {
        c.exited = true
        resolve({ code, signal })
      }),
    )
    c.streaming = new Promise((resolve) => {
      c.stderr.on('data', (d) => {
        const s = String(d)
        c.lastLines = (c.lastLines || '') + s
        if (c.lastLines.length > 4000) c.lastLines = c.lastLines.slice(-2000)
        retries.mongo += (s.match(/: MongoDB at \S+ (failed|not reachable yet): /g) || []).length
        retries.kafka += (s.match(/: Kafka at \S+ (failed|not reachable yet): /g) || []).length
        log.push(s)
        if (log.length > 2000) log.splice(0, 1000)
        debug(`[cdc ${n}]`, s.trim())
        // "copying … then streaming": the snapshot's position is committed.
        if (s.includes('copying')) positionTaken()
        // "snapshot done", or a start that finds the copy finished: the process that committed
        // its last transaction may have been killed before it said "snapshot done"; the next one
        // then streams from the checkpoint, and the phase would otherwise never end.
        if ((s.includes('snapshot done') || / \(started from checkpoint[,)]/.test(s)) && phase === 'snapshot') {
          phase = 'stream'
          snapshotDoneAt = Date.now()
          // (not once the faults are over: a copy finishing after the writes would turn them back
          // on, into this script's own reads of the collection at the end)
          if (server && faultsDoneAt === Infinity) server.faults.setFaultRate(faultRate)
        }
        if (s.includes('streaming')) resolve(true)
      })
      c.exitInfo.then(() => resolve(false))
      setTimeout(() => resolve(false), 60_000).unref()
    })
    // Exited on its own (not our SIGKILL / final SIGTERM): restart it, as a supervisor would.
    c.exitInfo.then((info) => {
      if (c.killedByUs || finishing) return
      // its last line says why (the cause with the numbers taken out, to count alike ones together)
      const last = (c.lastLines || '').trim().split('\n').at(-1) || ''
      selfExits.push({ ...info, why: last.replace(/^bson2json cdc: /, '').replace(/\d+/g, 'N').slice(0, 160) })
      debug('cdc exited on its own', JSON.stringify(info))
      setTimeout(() => {
        if (!finishing && child === c) startCdc()
      }, 200)
    })
    child = c
    return c
  }

  // Writer: inserts (v: 0) and $inc updates of v; expected events keyed "key|v".
  const expected = new Map()
  let writes = 0
  let writesDone = false
  const writer = (async () => {
    if (snapshotDocs > 0) await positionCommitted // a change made before the position has no event
    const t0 = Date.now()
    const untilFaults = Number(values['until-faults'])
    const maxMs = Number(values['max-seconds']) * 1000
    for (let n = 0; (n < ops || liveFaults() < untilFaults) && Date.now() - t0run < maxMs; n++) {
      // While the snapshot runs, only updates of the pre-filled documents: live inserts would be
      // copied too (higher _ids), and the copy would chase the writer.
      if (versions.length === 0 || (n % 3 === 0 && phase === 'stream')) {
        const _id = versions.length
        await collOf(_id).insertOne({ _id, v: 0, pad: 'x'.repeat(n % 50) })
        versions.push(0)
        expected.set(`{"_id":${_id}}|0`, true)
      } else {
        const _id = snapshotDocs > 0 && n % 3 !== 2 ? (n * 7919) % snapshotDocs : (n * 7919) % versions.length
        await collOf(_id).updateOne({ _id }, { $inc: { v: 1 } })
        versions[_id]++
        expected.set(`{"_id":${_id}}|${versions[_id]}`, true)
      }
      writes++
      const ahead = writes / rate - (Date.now() - t0) / 1000
      if (ahead > 0) await sleep(ahead * 1000)
    }
  })().finally(() => (writesDone = true))

  const progress = setInterval(() => debug('progress', JSON.stringify({ s: Math.round((Date.now() - t0run) / 1000), phase, writes, faults: liveFaults(), kills: exits.length, selfExits: selfExits.length })), 30_000)
  progress.unref()
  // Cheap faults, until the writes are done: proxy cuts, black-holes, broker pauses.
  let brokerBusy = false
  const loops = []
  if (proxy && cutMs > 0) {
    loops.push(
      (async () => {
        while (!writesDone) {
          await sleep(expWait(phase === 'snapshot' ? snapshotCutMs : cutMs))
          if (proxy.cut()) fault('mongoCut')
        }
      })(),
    )
  }
  if (proxy && holeEvery > 0) {
    loops.push(
      (async () => {
        while (!writesDone) {
          await sleep(expWait(holeEvery * 1000))
          if (writesDone) break
          fault('mongoBlackhole')
          await proxy.hold(100 + Math.random() * 1400, Math.random() < 0.5)
        }
      })(),
    )
  }
  const brokerPid = () => Number(fs.readFileSync(path.join(kafkaDir, 'kafka.pid'), 'utf8'))
  const signalBroker = (sig) => {
    try {
      const pid = brokerPid()
      try {
        process.kill(-pid, sig)
      } catch {
        process.kill(pid, sig)
      }
      return true
    } catch (e) {
      debug('cannot signal the broker', e.message)
      return false
    }
  }
  let paused = false
  if (pauseEvery > 0) {
    loops.push(
      (async () => {
        while (!writesDone) {
          await sleep(expWait(pauseEvery * 1000))
          if (writesDone || brokerBusy) continue
          if (!signalBroker('SIGSTOP')) continue
          paused = true
          fault('kafkaPause')
          await sleep(20 + Math.random() * 180)
          signalBroker('SIGCONT')
          paused = false
        }
      })(),
    )
  }
  process.on('exit', () => {
    if (paused) signalBroker('SIGCONT')
  })

  // SIGKILL the cdc process `kills` times at random moments while writes go on (the first ones
  // hit the snapshot with --snapshot-docs), and restart the broker `brokerRestarts` times.
  startCdc()
  const writeMs = (ops / rate) * 1000
  const restartAt = new Set(Array.from({ length: brokerRestarts }, (_, i) => Math.floor(((i + 1) * kills) / (brokerRestarts + 1))))
  let restarted = 0
  // Kill k at a random moment of its slot (writeMs / kills), or, when the process of the moment
  // exited on its own, as soon as the next one runs. With --snapshot-docs, the writes (and the
  // slots) begin once the snapshot's position is committed.
  if (snapshotDocs > 0) await positionCommitted
  const tStart = Date.now()
  for (let k = 0; k < kills; ) {
    const at = tStart + ((k + Math.random()) * writeMs) / kills
    if (Date.now() < at) await sleep(at - Date.now())
    if (restartAt.has(k) && restarted < brokerRestarts && !brokerBusy) {
      restarted++
      brokerBusy = true
      while (paused) await sleep(50)
      await promisify(execFile)('bash', [path.join(ROOT, 'scripts/kafka.sh'), 'restart'])
      brokerBusy = false
      fault('brokerRestart')
    }
    const c = child
    if (c.exited) {
      await sleep(50) // it exited on its own: kill the next one
      continue
    }
    debug('kill', k, 'writes', writes)
    c.killedByUs = true
    c.kill('SIGKILL')
    exits.push(await c.exitInfo)
    fault('kill')
    k++
    await sleep(Math.random() * 300)
    startCdc()
  }
  await writer
  await Promise.all(loops)
  debug('writes done', writes)
  faultsDoneAt = Date.now()
  if (server) server.faults.setFaultRate(0)

  // Wait until the events topic holds every write (or 600 s), then stop cdc with SIGTERM. The
  // snapshot records are not counted: live inserts can have one too.
  const consumer = new Consumer({ clientId: 'chaos-check', groupId: 'chaos-check', bootstrapBrokers: brokers.split(',') })
  let messages = []
  const want = expected.size
  const isSnapshot = (r) => r.headers.some(([a, b]) => String(a) === 'operationType' && String(b) === 'snapshot')
  const deadline = Date.now() + Number(values['wait-seconds']) * 1000
  let lastRead = -1
  let lastSaid = 0
  for (;;) {
    messages = []
    try {
      for (const t of topics) await kafka.readCommitted(consumer, t, (partition, offset, r) => messages.push({ topic: t, partition, offset, r }))
    } catch (e) {
      // Not created yet: under load every cdc so far may have been killed before it created
      // its topics (node and the clients take seconds to load there); the next one will.
      if (!/Unknown topic|not found|UNKNOWN_TOPIC/i.test(String(e && e.message))) throw e
      debug('topic not there yet:', e.message)
    }
    const events = messages.filter((m) => !isSnapshot(m.r)).length
    // said when the count moves, and every 15 s while it does not (with what cdc is doing)
    if (events !== lastRead || Date.now() - lastSaid > 15_000) {
      debug('read', events, 'events of', want, `(phase ${phase}, cdc ${starts} ${child.exited ? 'exited' : 'running'})`)
      if (events === lastRead) debug('no new events; the last lines of cdc:', (child.lastLines || '').trim().split('\n').slice(-4).join(' | '))
      lastRead = events
      lastSaid = Date.now()
    }
    if ((events >= want && phase === 'stream') || Date.now() > deadline) break
    await sleep(1000)
  }
  await sleep(1500) // anything extra (duplicates) would show up now
  finishing = true
  // SIGTERM once its handler is installed (before that, the default kills it)
  for (;;) {
    if (child.exited) startCdc()
    if ((await child.streaming) && !child.exited) break
  }
  child.kill('SIGTERM')
  const last = await child.exitInfo
  messages = []
  for (const t of topics) await kafka.readCommitted(consumer, t, (partition, offset, r) => messages.push({ topic: t, partition, offset, r }))
  await consumer.close()

  // Checks
  const failures = []
  const seen = new Map()
  const keyPartition = new Map()
  const lastVersion = new Map()
  const snapshotRecords = new Map()
  const state = new Map()
  let orderViolations = 0
  messages.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition || (a.offset < b.offset ? -1 : 1)))
  for (const { topic: mTopic, partition, r } of messages) {
    const key = String(r.key)
    const ev = JSON.parse(String(r.value))
    if (JSON.stringify(ev.documentKey) !== key) failures.push(`key ${key} is not the documentKey ${JSON.stringify(ev.documentKey)}`)
    const headers = new Map(r.headers.map(([a, b]) => [String(a), String(b)]))
    if (headers.get('operationType') !== ev.operationType) failures.push(`operationType header ${headers.get('operationType')} != ${ev.operationType}`)
    const ns = `${dbName}.${collOf(ev.documentKey._id).collectionName}`
    if (headers.get('ns') !== ns) failures.push(`ns header ${headers.get('ns')}, the document's collection is ${ns}`)
    const wantTopic = nColls === 1 ? topic : `${topic}.${ns}`
    if (mTopic !== wantTopic) failures.push(`key ${key} of ${ns} in topic ${mTopic}`)
    if (keyPartition.has(key) && keyPartition.get(key) !== partition) failures.push(`key ${key} on partitions ${keyPartition.get(key)} and ${partition}`)
    keyPartition.set(key, partition)
    if (ev.operationType === 'snapshot') {
      if (headers.get('snapshot') !== 'initial') failures.push(`snapshot header ${headers.get('snapshot')}`)
      snapshotRecords.set(key, (snapshotRecords.get(key) || 0) + 1)
      if (lastVersion.has(key)) {
        orderViolations++
        failures.push(`key ${key}: snapshot record after its events`)
      }
      state.set(key, ev.fullDocument.v)
      continue
    }
    const v = ev.operationType === 'insert' ? ev.fullDocument.v : ev.updateDescription.updatedFields.v
    const k = `${key}|${v}`
    seen.set(k, (seen.get(k) || 0) + 1)
    if (lastVersion.has(key) && lastVersion.get(key) >= v) {
      orderViolations++
      failures.push(`key ${key}: version ${v} after ${lastVersion.get(key)}`)
    }
    lastVersion.set(key, v)
    state.set(key, v)
  }
  let missing = 0
  let duplicated = 0
  let unexpected = 0
  for (const k of expected.keys()) if (!seen.has(k)) missing++
  for (const [k, n] of seen) {
    if (n > 1) duplicated += n - 1
    if (!expected.has(k)) unexpected++
  }
  // The snapshot: one record per pre-filled document (live inserts may have one too), none twice.
  let snapshotMissing = 0
  let snapshotDuplicated = 0
  for (let i = 0; i < snapshotDocs; i++) if (!snapshotRecords.has(`{"_id":${i}}`)) snapshotMissing++
  for (const n of snapshotRecords.values()) if (n > 1) snapshotDuplicated += n - 1
  // Per key, the records replayed give the collection's final state.
  let finalStateMismatches = 0
  const docs = []
  for (const c of colls) docs.push(...(await c.find({}, { projection: { v: 1 } }).toArray()))
  for (const d of docs) {
    const key = JSON.stringify({ _id: d._id })
    if (state.get(key) !== d.v) {
      finalStateMismatches++
      if (finalStateMismatches <= 5) failures.push(`key ${key}: final state v ${state.get(key)}, the collection has ${d.v}`)
    }
  }
  if (state.size !== docs.length) failures.push(`${state.size} keys in the topic, ${docs.length} documents`)
  if (missing) failures.push(`${missing} events missing`)
  if (duplicated) failures.push(`${duplicated} duplicate events`)
  if (unexpected) failures.push(`${unexpected} unexpected events`)
  if (snapshotMissing) failures.push(`${snapshotMissing} snapshot records missing`)
  if (snapshotDuplicated) failures.push(`${snapshotDuplicated} duplicate snapshot records`)
  if (finalStateMismatches) failures.push(`${finalStateMismatches} keys whose final state differs from the collection's`)
  if (last.code !== 0) failures.push(`cdc exited with ${last.code}/${last.signal} on SIGTERM`)

  // The test server's faults, by kind and phase.
  if (server) {
    for (const f of server.faults.history) {
      const kind = `source.${f.kind}`
      faultsByKind[kind] = (faultsByKind[kind] || 0) + 1
      const ph = f.at.getTime() < snapshotDoneAt ? 'snapshot' : 'stream'
      faultsByPhase[ph][kind] = (faultsByPhase[ph][kind] || 0) + 1
    }
  }
  const faults = Object.values(faultsByKind).reduce((a, b) => a + b, 0)
  const minFaults = Number(values['min-faults'])
  if (faults < minFaults) failures.push(`${faults} faults injected, fewer than --min-faults ${minFaults}`)
  const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0)
  const report = {
    writes: expected.size,
    snapshotDocs,
    messages: messages.length,
    partitions: Number(values.partitions),
    kills: exits.length,
    starts,
    selfExits: selfExits.length,
    selfExitCodes: Object.fromEntries([...new Set(selfExits.map((e) => e.code))].map((c) => [c, selfExits.filter((e) => e.code === c).length])),
    selfExitCauses: Object.fromEntries([...new Set(selfExits.map((e) => e.why))].map((w) => [w, selfExits.filter((e) => e.why === w).length])),
    mongoRetries: retries.mongo,
    kafkaRestarts: retries.kafka,
    brokerRestarted: restarted > 0,
    brokerRestarts: restarted,
    sourceFaultRate: server ? faultRate : 0,
    // every fault the test server injected into the getMores (and the snapshot's finds), by kind
    sourceFaults: server ? server.faults.history.length : 0,
    sourceFaultsByKind: server ? Object.fromEntries([...new Set(server.faults.history.map((f) => f.kind))].map((k) => [k, server.faults.history.filter((f) => f.kind === k).length])) : {},
    faults,
    faultsByKind,
    faultsByPhase: { snapshot: sum(faultsByPhase.snapshot), stream: sum(faultsByPhase.stream), byKind: faultsByPhase },
    snapshotSeconds: snapshotDocs > 0 && snapshotDoneAt !== Infinity ? Math.round((snapshotDoneAt - t0run) / 1000) : undefined,
    faultSeconds: Math.round((faultsDoneAt - t0run) / 1000),
    seconds: Math.round((Date.now() - t0run) / 1000),
    source: server ? 'test-server' : 'MONGODB_URI',
    missing,
    duplicated,
    unexpected,
    orderViolations,
    snapshotRecords: sum(Object.fromEntries(snapshotRecords)),
    snapshotMissing,
    snapshotDuplicated,
    finalStateMismatches,
    sigtermExit: last.code,
    ok: failures.length === 0,
    failures: failures.slice(0, 20),
  }
  if (values.json) process.stdout.write(JSON.stringify(report) + '\n')
  else {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    if (!report.ok) process.stdout.write(`cdc log (last lines):\n${log.join('').split('\n').slice(-30).join('\n')}\n`)
  }
  await client.db(dbName).dropDatabase().catch(() => {})
  await client.close()
  if (proxy) await proxy.close()
  if (server) await server.close()
  process.exitCode = report.ok ? 0 : 1
}

main().catch((e) => {
  process.stderr.write(`kafka-chaos: ${e && e.stack ? e.stack : e}\n`)
  process.exit(1)
})
