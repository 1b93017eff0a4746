#!/usr/bin/env node
'use strict'

// Chaos test of `bson2json cdc` (exactly once into Kafka). Writes inserts and `$inc` updates to
// a collection while the cdc process is SIGKILLed and restarted again and again (and, with
// --broker-restart, the Kafka broker is restarted once mid-run), then reads the events topic
// with read_committed isolation and checks:
//   - every write appears exactly once (identified by documentKey and the document's version v),
//   - per key, the versions appear in increasing order (one partition per key),
//   - each message key is the event's documentKey JSON, and its headers match the event.
// Source: the in-repo test server (random getMore faults: closed sockets, resumable errors,
// killed cursors, empty batches, delays; counted in the report), or MONGODB_URI (a replica set /
// SecantusDB). `faults` in the report is every injected fault: SIGKILLs, the broker restart and
// the source's.
//
//   node scripts/kafka-chaos.js --kafka HOST:PORT [--ops 3000] [--kills 10] [--broker-restart]
//                               [--fault-rate 0.05] [--rate 300] [--json]
// Exit status 0 when every check passes, 1 otherwise (the report says which check failed).

const { spawn, execFileSync } = require('node:child_process')
const path = require('node:path')
const { parseArgs } = require('node:util')

const ROOT = path.join(__dirname, '..')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const debug = process.env.KAFKA_CHAOS_DEBUG ? (...a) => process.stderr.write(`kafka-chaos: ${a.join(' ')}\n`) : () => {}

async function main() {
  const { values } = parseArgs({
    options: {
      kafka: { type: 'string' },
      ops: { type: 'string', default: '3000' },
      kills: { type: 'string', default: '10' },
      'broker-restart': { type: 'boolean', default: false },
      'fault-rate': { type: 'string', default: '0.05' },
      rate: { type: 'string', default: '300' },
      partitions: { type: 'string', default: '3' },
      json: { type: 'boolean', default: false },
    },
  })
  const brokers = values.kafka || process.env.KAFKA_BROKERS
  if (!brokers) throw new Error('--kafka HOST:PORT (or KAFKA_BROKERS) is required')
  const ops = Number(values.ops)
  const kills = Number(values.kills)
  const rate = Number(values.rate)
  const { MongoClient } = require('mongodb')
  const kafka = require('../lib/kafka/sink')
  const { Consumer } = require('@platformatic/kafka')

  let server = null
  let uri = process.env.MONGODB_URI
  if (!uri) {
    const { startTestServer } = require('../tools/test-server')
    server = await startTestServer({ port: 0, faultRate: Number(values['fault-rate']), seed: Date.now() % 100000 })
    uri = server.uri
  }
  const client = await MongoClient.connect(uri)
  const tag = `${process.pid}_${Date.now() % 1_000_000}`
  const dbName = `b2j_chaos_${tag}`
  const coll = client.db(dbName).collection('c')
  const topic = `chaos-${tag}`
  const checkpointTopic = `chaos-${tag}-ck`
  const id = `chaos-${tag}`
  // The first start begins at this cluster time, so writes made before it is up are not missed.
  const s = client.startSession()
  await client.db(dbName).command({ ping: 1 }, { session: s })
  const startAt = s.operationTime
  await s.endSession()

  const args = [
    path.join(ROOT, 'bin/bson2json.js'),
    'cdc',
    '--uri',
    uri,
    '--db',
    dbName,
    '--collection',
    'c',
    '--kafka',
    brokers,
    '--topic',
    topic,
    '--checkpoint-topic',
    checkpointTopic,
    '--id',
    id,
    '--partitions',
    values.partitions,
    '--batch-size',
    '40',
    '--max-await-ms',
    '100',
    '--progress-interval',
    '0',
    '--start-at-operation-time',
    `${startAt.high}.${startAt.low}`,
  ]
  const log = []
  let child = null
  let starts = 0
  const exits = []
  function startCdc() {
    starts++
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    c.streaming = new Promise((resolve) => {
      c.stderr.on('data', (d) => {
        log.push(String(d))
        debug(`[cdc ${starts}]`, String(d).trim())
        if (String(d).includes('streaming')) resolve(true)
      })
      setTimeout(() => resolve(false), 60_000)
    })
    c.exitInfo = new Promise((resolve) => c.on('exit', (code, signal) => resolve({ code, signal })))
    child = c
    return c
  }

  // Writer: inserts (v: 0) and $inc updates of v; expected events keyed "key|v".
  const expected = new Map()
  const versions = []
  let writes = 0
  const writer = (async () => {
    const t0 = Date.now()
    for (let n = 0; n < ops; n++) {
      if (versions.length === 0 || n % 3 === 0) {
        const _id = versions.length
        await coll.insertOne({ _id, v: 0, pad: 'x'.repeat(n % 50) })
        versions.push(0)
        expected.set(`{"_id":${_id}}|0`, true)
      } else {
        const _id = (n * 7919) % versions.length
        await coll.updateOne({ _id }, { $inc: { v: 1 } })
        versions[_id]++
        expected.set(`{"_id":${_id}}|${versions[_id]}`, true)
      }
      writes++
      const ahead = writes / rate - (Date.now() - t0) / 1000
      if (ahead > 0) await sleep(ahead * 1000)
    }
  })()

  // Chaos: SIGKILL the cdc process `kills` times at random moments while writes go on.
  startCdc()
  const writeMs = (ops / rate) * 1000
  let brokerRestarted = false
  for (let k = 0; k < kills; k++) {
    // Kill while it streams (after its first commit), at a random moment of its batches.
    const t = Date.now()
    await child.streaming
    await sleep(Math.random() * Math.max(300, writeMs / kills - (Date.now() - t)))
    if (values['broker-restart'] && !brokerRestarted && k === Math.floor(kills / 2)) {
      brokerRestarted = true
      execFileSync('bash', [path.join(ROOT, 'scripts/kafka.sh'), 'restart'], { stdio: ['ignore', 'ignore', 'inherit'] })
    }
    debug('kill', k, 'writes', writes)
    child.kill('SIGKILL')
    exits.push(await child.exitInfo)
    await sleep(Math.random() * 300)
    startCdc()
  }
  await writer
  debug('writes done', writes)

  // Wait until the events topic holds every write (or 120 s), then stop cdc with SIGTERM.
  const consumer = new Consumer({ clientId: 'chaos-check', groupId: 'chaos-check', bootstrapBrokers: brokers.split(',') })
  let messages = []
  const deadline = Date.now() + 120_000
  for (;;) {
    messages = []
    await kafka.readCommitted(consumer, topic, (partition, offset, r) => messages.push({ partition, offset, r }))
    debug('read', messages.length, 'of', expected.size)
    if (messages.length >= expected.size || Date.now() > deadline) break
    await sleep(1000)
  }
  await sleep(1500) // anything extra (duplicates) would show up now
  await child.streaming // SIGTERM once its handler is installed (before that, the default kills it)
  child.kill('SIGTERM')
  const last = await child.exitInfo
  messages = []
  await kafka.readCommitted(consumer, topic, (partition, offset, r) => messages.push({ partition, offset, r }))
  await consumer.close()

  // Checks
  const failures = []
  const seen = new Map()
  const keyPartition = new Map()
  const lastVersion = new Map()
  messages.sort((a, b) => (a.partition - b.partition) || (a.offset < b.offset ? -1 : 1))
  for (const { partition, r } of messages) {
    const key = String(r.key)
    const ev = JSON.parse(String(r.value))
    if (JSON.stringify(ev.documentKey) !== key) failures.push(`key ${key} is not the documentKey ${JSON.stringify(ev.documentKey)}`)
    const headers = new Map(r.headers.map(([a, b]) => [String(a), String(b)]))
    if (headers.get('operationType') !== ev.operationType) failures.push(`operationType header ${headers.get('operationType')} != ${ev.operationType}`)
    if (headers.get('ns') !== `${dbName}.c`) failures.push(`ns header ${headers.get('ns')}`)
    const v = ev.operationType === 'insert' ? ev.fullDocument.v : ev.updateDescription.updatedFields.v
    const k = `${key}|${v}`
    seen.set(k, (seen.get(k) || 0) + 1)
    if (keyPartition.has(key) && keyPartition.get(key) !== partition) failures.push(`key ${key} on partitions ${keyPartition.get(key)} and ${partition}`)
    keyPartition.set(key, partition)
    if (lastVersion.has(key) && lastVersion.get(key) >= v) failures.push(`key ${key}: version ${v} after ${lastVersion.get(key)}`)
    lastVersion.set(key, v)
  }
  let missing = 0
  let duplicated = 0
  let unexpected = 0
  for (const k of expected.keys()) if (!seen.has(k)) missing++
  for (const [k, n] of seen) {
    if (n > 1) duplicated += n - 1
    if (!expected.has(k)) unexpected++
  }
  if (missing) failures.push(`${missing} events missing`)
  if (duplicated) failures.push(`${duplicated} duplicate events`)
  if (unexpected) failures.push(`${unexpected} unexpected events`)
  if (last.code !== 0) failures.push(`cdc exited with ${last.code}/${last.signal} on SIGTERM`)
  const report = {
    writes: expected.size,
    messages: messages.length,
    partitions: Number(values.partitions),
    kills: exits.length,
    starts,
    brokerRestarted,
    sourceFaultRate: uri === process.env.MONGODB_URI ? 0 : Number(values['fault-rate']),
    // every fault the test server injected into the change stream's getMores, by kind
    sourceFaults: server ? server.faults.history.length : 0,
    sourceFaultsByKind: server ? Object.fromEntries([...new Set(server.faults.history.map((f) => f.kind))].map((k) => [k, server.faults.history.filter((f) => f.kind === k).length])) : {},
    faults: exits.length + (brokerRestarted ? 1 : 0) + (server ? server.faults.history.length : 0),
    source: server ? 'test-server' : 'MONGODB_URI',
    missing,
    duplicated,
    unexpected,
    orderViolations: failures.filter((f) => f.includes('version')).length,
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
  if (server) await server.close()
  process.exitCode = report.ok ? 0 : 1
}

main().catch((e) => {
  process.stderr.write(`kafka-chaos: ${e && e.stack ? e.stack : e}\n`)
  process.exit(1)
})
