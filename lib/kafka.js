'use strict'

/**
 * `require('bson2json/kafka')`: a MongoDB change stream into a Kafka topic, exactly once.
 *
 * The server batches of the change stream (lib/change-stream.js `batches()`) go into Kafka
 * transactions, each holding whole batches' events and ONE checkpoint record (the last batch's
 * resume token) in a compacted checkpoint topic, keyed by the stream id; a transaction commits
 * once it is `commitIntervalMS` old (default 100) or holds `maxTransactionBytes`, or when no next
 * batch comes within the interval. On start the process
 *   1. opens a transactional producer whose transactional.id is derived from the stream id:
 *      InitProducerId bumps the epoch, which fences any older process with the same id and
 *      aborts (or completes) the transaction it left open;
 *   2. reads the checkpoint topic with read_committed isolation up to its last stable offset and
 *      takes the last checkpoint for the stream id;
 *   3. resumes the change stream after that token (the first time: `resumeAfter`,
 *      `startAtOperationTime`, or now; with `overrideCheckpoint`, those once instead of it).
 * A crash between 1 and the commit of a batch leaves that batch's transaction open or aborted, so
 * read_committed consumers never see its events and the next run fetches them again.
 *
 * Kafka errors (broker restart, network) restart the cycle (new producer, fence, re-read the
 * checkpoint, re-open the stream) with a back-off; change-stream errors the driver and the stream
 * cannot resume end the run. See docs/kafka.md for the guarantees and their conditions.
 *
 * The Kafka client is the optional peer dependency `@platformatic/kafka` (1.35.x).
 */

const { watch, snapshot } = require('./change-stream')
const { loadPeer } = require('./peer')

const CHECKPOINT_VERSION = 1
const IS_TRANSACTIONAL = 1 << 4
const IS_CONTROL = 1 << 5
const READ_COMMITTED = 1

let kafkaLib = null
function kafka() {
  if (kafkaLib === null) {
    try {
      kafkaLib = loadPeer('@platformatic/kafka')
    } catch (e) {
      const err = new Error('bson2json/kafka needs the Kafka client `@platformatic/kafka` (npm install @platformatic/kafka@~1.35.0)', { cause: e })
      err.code = 'ERR_BSON2JSON_KAFKA_CLIENT'
      throw err
    }
  }
  return kafkaLib
}

let EJSON = null
function ejson() {
  if (EJSON === null) EJSON = require('bson').EJSON
  return EJSON
}

/**
 * Kafka could not be reached: at start within `connectTimeoutMS`, or, once running, again within
 * `retryTimeoutMS` of the first failure of an outage. `reason` is the most specific cause found
 * in the client's error (`connect ECONNREFUSED 127.0.0.1:9092`, `getaddrinfo ENOTFOUND host`, a
 * Kafka error name, or `no answer within N s`).
 */
class KafkaUnavailableError extends Error {
  constructor({ brokers, phase, reason, seconds, cause, refused = false }) {
    const where = brokers.join(',')
    super(
      refused
        ? `bson2json/kafka: Kafka at ${where} refused the connection: ${reason}`
        : phase === 'start'
          ? `bson2json/kafka: cannot reach Kafka at ${where} within ${seconds} s: ${reason}`
          : `bson2json/kafka: lost Kafka at ${where} for ${seconds} s: ${reason}`,
      { cause },
    )
    this.name = 'KafkaUnavailableError'
    this.code = 'ERR_BSON2JSON_KAFKA_UNAVAILABLE'
    this.brokers = brokers
    this.phase = phase
    this.reason = reason
    // authentication or TLS: not retried, a retry cannot fix it
    this.refused = refused
  }
}

/**
 * The server no longer has the change stream's history at the checkpoint (MongoDB error 286,
 * ChangeStreamHistoryLost: the oplog rolled past it). Not retried: the events between the
 * checkpoint and the oldest entry still in the oplog can no longer be delivered.
 * `checkpointClusterTime` and `oldestClusterTime` are `{t, i}` or null when not known (the oldest
 * one is read from `local.oplog.rs`, which needs read access there).
 */
class ChangeStreamHistoryLostError extends Error {
  constructor({ id, checkpointClusterTime, oldestClusterTime, cause }) {
    const at = (ct) => (ct ? `${ct.t}.${ct.i}` : 'unknown')
    super(
      `bson2json/kafka: the change stream history of ${JSON.stringify(id)} is lost: the checkpoint is at cluster time ` +
        `${at(checkpointClusterTime)}, the oldest the server still has is ${at(oldestClusterTime)}`,
      { cause },
    )
    this.name = 'ChangeStreamHistoryLostError'
    this.code = 'ERR_BSON2JSON_HISTORY_LOST'
    this.id = id
    this.checkpointClusterTime = checkpointClusterTime
    this.oldestClusterTime = oldestClusterTime
  }
}

function isHistoryLost(e) {
  return e !== null && typeof e === 'object' && (e.code === 286 || e.codeName === 'ChangeStreamHistoryLost')
}

/** `{t, i}` of the oldest entry of the oplog of `source`'s deployment, or null (no access, no oplog). */
async function oldestOplogTime(source) {
  try {
    // a Collection or a Db has its client; a MongoClient is one
    const client = typeof source.startSession === 'function' ? source : source.client
    if (!client || typeof client.db !== 'function') return null
    const first = await client
      .db('local')
      .collection('oplog.rs')
      .find({}, { sort: { $natural: 1 }, limit: 1, projection: { ts: 1 }, maxTimeMS: 5000 })
      .next()
    const ts = first && first.ts
    if (!ts || typeof ts.getHighBits !== 'function') return null
    return { t: ts.getHighBits() >>> 0, i: ts.getLowBits() >>> 0 }
  } catch {
    return null
  }
}

/** Cluster time `{t, i}` in a resume token `{_data: hex}` (KeyString: 0x82 + 8-byte timestamp), or null. */
function tokenClusterTime(token) {
  const d = token && typeof token._data === 'string' ? token._data : null
  if (d === null || d.length < 18 || d.slice(0, 2).toLowerCase() !== '82') return null
  const t = parseInt(d.slice(2, 10), 16)
  const i = parseInt(d.slice(10, 18), 16)
  return Number.isFinite(t) && Number.isFinite(i) ? { t, i } : null
}

/** A newer process with the same stream id took over (its producer epoch fenced ours). */
class KafkaFencedError extends Error {
  constructor(id, cause) {
    super(`bson2json/kafka: stream id ${JSON.stringify(id)} was taken over by another process (producer fenced)`, { cause })
    this.name = 'KafkaFencedError'
    this.code = 'ERR_BSON2JSON_KAFKA_FENCED'
  }
}

const OPTION_NAMES = new Set([
  'source',
  'pipeline',
  'brokers',
  'topic',
  'checkpointTopic',
  'id',
  'dialect',
  'value',
  'fullDocument',
  'fullDocumentBeforeChange',
  'showExpandedEvents',
  'startAtOperationTime',
  'resumeAfter',
  'overrideCheckpoint',
  'snapshot',
  'snapshotBatchSize',
  'onHistoryLost',
  'batchSize',
  'maxAwaitTimeMS',
  'prefetch',
  'splitLargeEvents',
  'projection',
  'redact',
  'createTopics',
  'partitions',
  'idleCheckpointMS',
  'commitIntervalMS',
  'maxTransactionBytes',
  'maxRequestBytes',
  'retryDelayMS',
  'connectTimeoutMS',
  'retryTimeoutMS',
  'kafka',
  'onProgress',
  'onRestart',
  'signal',
])

function checkOptions(o) {
  if (o === null || typeof o !== 'object') throw new TypeError('bson2json/kafka: options must be an object')
  for (const k of Object.keys(o)) {
    if (!OPTION_NAMES.has(k)) throw new TypeError(`bson2json/kafka: unknown option ${JSON.stringify(k)}`)
  }
  if (o.source === null || typeof o.source !== 'object') {
    throw new TypeError('bson2json/kafka: options.source must be a driver MongoClient, Db or Collection')
  }
  for (const k of ['topic', 'checkpointTopic', 'id']) {
    if (typeof o[k] !== 'string' || o[k].length === 0) throw new TypeError(`bson2json/kafka: options.${k} must be a non-empty string`)
  }
  if (o.topic === o.checkpointTopic) throw new RangeError('bson2json/kafka: options.topic and options.checkpointTopic must differ')
  const brokers = typeof o.brokers === 'string' ? o.brokers.split(',') : o.brokers
  if (!Array.isArray(brokers) || brokers.length === 0 || !brokers.every((b) => typeof b === 'string' && /^[^:\s]+:\d+$/.test(b))) {
    throw new TypeError('bson2json/kafka: options.brokers must be "HOST:PORT" strings (an array or a comma-separated string)')
  }
  if (o.value !== undefined && o.value !== 'event' && o.value !== 'fullDocument') {
    throw new RangeError('bson2json/kafka: options.value must be "event" or "fullDocument"')
  }
  if (o.pipeline !== undefined && !Array.isArray(o.pipeline)) throw new TypeError('bson2json/kafka: options.pipeline must be an array')
  // projection / redact: checked (and compiled) now, applied by watch() to every event.
  if (o.projection !== undefined || o.redact !== undefined) require('./shape').compileShape(o.projection, o.redact)
  for (const k of ['partitions', 'snapshotBatchSize', 'idleCheckpointMS', 'commitIntervalMS', 'maxTransactionBytes', 'maxRequestBytes', 'retryDelayMS', 'connectTimeoutMS', 'retryTimeoutMS']) {
    const v = o[k]
    if (v !== undefined && (!Number.isInteger(v) || v < (k === 'idleCheckpointMS' || k === 'commitIntervalMS' ? 0 : 1))) {
      throw new RangeError(`bson2json/kafka: options.${k} must be a positive integer, got ${String(v)}`)
    }
  }
  if (o.resumeAfter !== undefined && (o.resumeAfter === null || typeof o.resumeAfter !== 'object')) {
    throw new TypeError('bson2json/kafka: options.resumeAfter must be a resume token (an object such as {_data: "82..."})')
  }
  if (o.resumeAfter !== undefined && o.startAtOperationTime !== undefined) {
    throw new TypeError('bson2json/kafka: options.resumeAfter and options.startAtOperationTime are exclusive')
  }
  if (o.snapshot !== undefined && typeof o.snapshot !== 'boolean') throw new TypeError('bson2json/kafka: options.snapshot must be a boolean')
  if (o.onHistoryLost !== undefined && o.onHistoryLost !== 'fail' && o.onHistoryLost !== 'snapshot') {
    throw new RangeError('bson2json/kafka: options.onHistoryLost must be "fail" or "snapshot"')
  }
  if (o.snapshot === true || o.onHistoryLost === 'snapshot') {
    if (typeof o.source.collectionName !== 'string') throw new TypeError('bson2json/kafka: a snapshot (options.snapshot, onHistoryLost "snapshot") needs a Collection as options.source')
    if (o.snapshot === true && (o.resumeAfter !== undefined || o.startAtOperationTime !== undefined)) {
      throw new TypeError('bson2json/kafka: options.snapshot starts from now: it excludes resumeAfter and startAtOperationTime')
    }
  }
  if (o.overrideCheckpoint !== undefined && typeof o.overrideCheckpoint !== 'boolean') {
    throw new TypeError('bson2json/kafka: options.overrideCheckpoint must be a boolean')
  }
  for (const k of ['onProgress', 'onRestart']) {
    if (o[k] !== undefined && typeof o[k] !== 'function') throw new TypeError(`bson2json/kafka: options.${k} must be a function`)
  }
  if (o.kafka !== undefined && (o.kafka === null || typeof o.kafka !== 'object')) {
    throw new TypeError('bson2json/kafka: options.kafka must be an object (extra @platformatic/kafka client options)')
  }
  return brokers
}

/** The transactional.id of a stream id (one active process per id). */
function transactionalIdOf(id) {
  return `bson2json-cdc.${id}`
}

// ---- reading a topic with read_committed isolation -----------------------------------------

/**
 * Committed records of one fetched partition, in offset order: control batches are dropped, and
 * so is every batch of an aborted transaction (the response's `abortedTransactions` list, whose
 * ranges end at the producer's ABORT marker), whether or not the marker is in this response.
 */
function* committedRecords(part) {
  const aborted = [...(part.abortedTransactions || [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  let ai = 0
  const open = new Set()
  for (const batch of part.records || []) {
    const last = batch.firstOffset + BigInt(batch.lastOffsetDelta)
    while (ai < aborted.length && aborted[ai].firstOffset <= last) open.add(String(aborted[ai++].producerId))
    const pid = String(batch.producerId)
    if (batch.attributes & IS_CONTROL) {
      const key = batch.records[0] && batch.records[0].key
      if (key && key.length >= 4 && key.readInt16BE(2) === 0) open.delete(pid)
      continue
    }
    if (batch.attributes & IS_TRANSACTIONAL && open.has(pid)) continue
    for (const r of batch.records) yield { offset: batch.firstOffset + BigInt(r.offsetDelta), record: r }
  }
}

/**
 * Reads every partition of `topic` from `from` (default: the log start) up to its last stable
 * offset as it is when the read starts, read_committed. Calls `onRecord(partition, offset,
 * record)` for each committed record (record: `{ key, value, headers }` with Buffers).
 * Returns the offsets reached per partition.
 * @param {any} consumer a @platformatic/kafka Consumer
 */
async function readCommitted(consumer, topic, onRecord, from = undefined) {
  const md = await consumer.metadata({ topics: [topic], forceUpdate: true })
  const t = md.topics.get(topic)
  if (!t) throw new Error(`bson2json/kafka: topic ${topic} not found`)
  const reached = []
  for (let p = 0; p < t.partitionsCount; p++) {
    const leader = t.partitions[p].leader
    let offset = from && from[p] !== undefined ? from[p] : 0n
    let end = null
    for (;;) {
      const resp = await consumer.fetch({
        node: leader,
        isolationLevel: READ_COMMITTED,
        maxWaitTime: 10,
        topics: [{ topicId: t.id, partitions: [{ partition: p, fetchOffset: offset, currentLeaderEpoch: -1, lastFetchedEpoch: -1, partitionMaxBytes: 4 << 20 }] }],
      })
      const part = resp.responses[0].partitions[0]
      if (part.errorCode === 1 /* OFFSET_OUT_OF_RANGE */) {
        offset = part.logStartOffset > offset ? part.logStartOffset : offset
        if (end !== null && offset >= end) break
        continue
      }
      if (part.errorCode) throw new Error(`bson2json/kafka: fetch ${topic}/${p} failed with error code ${part.errorCode}`)
      if (end === null) end = part.lastStableOffset
      if (offset < part.logStartOffset) offset = part.logStartOffset
      const batches = part.records || []
      if (batches.length === 0) {
        if (offset >= end) break
        // Nothing returned below the stable offset: a batch larger than partitionMaxBytes is
        // still returned whole by the broker, so this only happens when the read caught up.
        break
      }
      for (const { offset: off, record } of committedRecords(part)) {
        if (off >= offset && off < end) onRecord(p, off, record)
      }
      const lb = batches[batches.length - 1]
      offset = lb.firstOffset + BigInt(lb.lastOffsetDelta) + 1n
      if (offset >= end) break
    }
    reached.push(offset)
  }
  return reached
}

/**
 * The last committed checkpoint of stream `id` in `checkpointTopic`, or null.
 * @returns {Promise<null | { resumeToken: any, clusterTime?: {t: number, i: number}, events: number }>}
 */
async function readCheckpointWith(consumer, checkpointTopic, id) {
  const key = Buffer.from(id)
  let last = null
  await readCommitted(consumer, checkpointTopic, (_p, _o, r) => {
    if (r.key && key.equals(r.key)) last = r.value
  })
  if (last === null || last.length === 0) return null
  const c = JSON.parse(last.toString())
  if (c.v !== CHECKPOINT_VERSION || typeof c.resumeToken !== 'string') throw new Error(`bson2json/kafka: checkpoint of ${id} has an unknown format`)
  return { resumeToken: ejson().parse(c.resumeToken, { relaxed: false }), clusterTime: c.clusterTime, events: c.events, origin: c.origin, snapshot: c.snapshot }
}

/** Public form: opens a short-lived consumer. */
async function readCheckpoint({ brokers, checkpointTopic, id, kafka: extra = {} }) {
  const { Consumer } = kafka()
  const consumer = new Consumer({ ...extra, clientId: `bson2json-checkpoint-reader`, groupId: `bson2json-checkpoint-reader`, bootstrapBrokers: typeof brokers === 'string' ? brokers.split(',') : brokers })
  try {
    return await readCheckpointWith(consumer, checkpointTopic, id)
  } finally {
    await consumer.close().catch(() => {})
  }
}

async function ensureTopics(o, brokers, extra, register = () => {}) {
  const { Admin } = kafka()
  const admin = new Admin({ retries: 1, retryDelay: 200, ...extra, clientId: `bson2json-cdc-admin.${o.id}`, bootstrapBrokers: brokers })
  register(admin)
  try {
    const existing = new Set(await admin.listTopics())
    if (!existing.has(o.checkpointTopic)) {
      await createTopic(admin, o.checkpointTopic, 1, [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'min.compaction.lag.ms', value: '0' },
      ])
    }
    if (!existing.has(o.topic)) await createTopic(admin, o.topic, o.partitions === undefined ? 1 : o.partitions, [])
  } finally {
    register(null)
    await admin.close().catch(() => {})
  }
}

async function createTopic(admin, name, partitions, configs) {
  try {
    await admin.createTopics({ topics: [name], partitions, replicas: -1, configs })
  } catch (e) {
    // Created concurrently by another process: fine.
    if (!/TOPIC_ALREADY_EXISTS|already exists/i.test(errorText(e))) throw e
  }
}

function errorText(e) {
  const parts = []
  const seen = new Set()
  const walk = (x) => {
    if (!x || typeof x !== 'object' || seen.has(x)) return
    seen.add(x)
    parts.push(String(x.message || ''), String(x.apiId || ''), String(x.code || ''))
    if (Array.isArray(x.errors)) x.errors.forEach(walk)
    walk(x.cause)
  }
  walk(e)
  return parts.join(' ')
}

/**
 * The most specific cause in a Kafka client error tree, as one line: a socket error
 * (`connect ECONNREFUSED 127.0.0.1:9092`), else a Kafka protocol error's name, else the
 * deepest message.
 */
function kafkaCause(e) {
  const leaves = []
  const seen = new Set()
  const walk = (x, depth) => {
    if (!x || typeof x !== 'object' || seen.has(x)) return
    seen.add(x)
    const kids = [...(Array.isArray(x.errors) ? x.errors : []), ...(x.cause ? [x.cause] : [])]
    if (kids.length === 0) leaves.push({ x, depth })
    for (const k of kids) walk(k, depth + 1)
  }
  walk(e, 0)
  const sys = [...new Set(leaves.filter(({ x }) => typeof x.code === 'string' && /^E[A-Z]+$/.test(x.code)).map(({ x }) => String(x.message).split('\n')[0]))]
  if (sys.length > 0) return sys.join('; ')
  const proto = leaves.find(({ x }) => typeof x.apiId === 'string' && x.apiId !== '')
  if (proto) return `${proto.x.apiId}${proto.x.message ? ` (${String(proto.x.message).split('\n')[0]})` : ''}`
  const deepest = leaves.sort((a, b) => b.depth - a.depth)[0]
  const m = deepest ? deepest.x.message : e && e.message
  return String(m || e).split('\n')[0]
}

/**
 * Failures a retry cannot fix: SASL authentication, and a broker certificate the client does not
 * trust (or that names another host). These end the run at once, whatever the timeouts.
 */
function isRefused(cause) {
  return /SASL authentication failed|Illegal SASL|self[- ]signed certificate|unable to (get|verify) (local issuer|the first) certificate|certificate has expired|Hostname\/IP does not match|ERR_TLS_CERT|wrong version number|CERT_/i.test(
    String(cause),
  )
}

function isFenced(e) {
  return /PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|TRANSACTIONAL_ID_AUTHORIZATION_FAILED/.test(errorText(e))
}

// ---- the run -------------------------------------------------------------------------------

/** A MongoDB-side failure of the run (not retried as Kafka failures are); `cause` is the error. */
class SourceError extends Error {
  constructor(cause) {
    super(cause && cause.message, { cause })
  }
}

/** A message's bytes as counted against the produce-request and transaction sizes. */
function messageSize(m) {
  return (m.value ? m.value.length : 0) + (m.key ? m.key.length : 0) + 64
}

/**
 * Sends `messages` into the open transaction in produce requests of about `maxBytes` each.
 * @returns {Promise<number>} their size (messageSize)
 */
async function sendChunked(tx, messages, maxBytes) {
  let total = 0
  let bytes = 0
  let from = 0
  for (let i = 0; i < messages.length; i++) {
    const size = messageSize(messages[i])
    total += size
    bytes += size
    if (bytes >= maxBytes) {
      await tx.send({ messages: messages.slice(from, i + 1) })
      from = i + 1
      bytes = 0
    }
  }
  if (from < messages.length) await tx.send({ messages: messages.slice(from) })
  return total
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      if (signal) signal.removeEventListener('abort', done)
      resolve()
    }
    if (signal) signal.addEventListener('abort', done, { once: true })
  })
}

/**
 * Runs a change stream into Kafka until `stop()` (or the signal), a fatal error, or an
 * invalidate event. Returns `{ done, stop(), stats }`: `done` resolves when the run ends cleanly
 * and rejects with the fatal error otherwise.
 */
function changeStreamToKafka(options) {
  const brokers = checkOptions(options)
  const o = { ...options, brokers }
  const stats = {
    events: 0,
    batches: 0,
    transactions: 0,
    restarts: 0,
    resumeToken: null,
    clusterTime: null, // {t, i} of the last committed event or checkpoint
    startedFrom: null, // 'checkpoint' | 'snapshot' | 'resumeAfter' | 'startAtOperationTime' | 'now'
    snapshot: null, // { reason, records, done } while or after a snapshot ran in this process
  }
  // Set when the history at the checkpoint was lost and onHistoryLost is 'snapshot': the next
  // cycle starts a new snapshot whatever the checkpoint says.
  let resnapshot = null
  // The start position this run was asked for, as a string; with overrideCheckpoint it is written
  // into every checkpoint, so a restart with the same override resumes from the checkpoint
  // instead of applying it again (an override takes effect once).
  const requested =
    o.resumeAfter !== undefined
      ? `resumeAfter:${ejson().stringify(o.resumeAfter, { relaxed: false })}`
      : o.startAtOperationTime !== undefined
        ? `startAtOperationTime:${o.startAtOperationTime.toString()}`
        : 'now'
  let origin = null // carried from checkpoint to checkpoint
  const ac = new AbortController()
  let stopping = false
  const onAbort = () => stop()
  if (o.signal) {
    if (o.signal.aborted) stopping = true
    else o.signal.addEventListener('abort', onAbort, { once: true })
  }
  let current = null // { stream, producer, consumer }

  function stop() {
    if (!stopping) {
      stopping = true
      ac.abort()
      // Closing the stream ends the batches() loop after the batch in hand; an open
      // transaction is committed (its batch was complete) or aborted by the loop.
      if (current && current.stream) current.stream.close().catch(() => {})
    }
    return done.then(
      () => undefined,
      () => undefined,
    )
  }

  const connectTimeoutMS = o.connectTimeoutMS === undefined ? 10_000 : o.connectTimeoutMS
  const maxRequestBytes = o.maxRequestBytes === undefined ? 512 * 1024 : o.maxRequestBytes
  const retryTimeoutMS = o.retryTimeoutMS === undefined ? 120_000 : o.retryTimeoutMS
  // Kafka has been unreachable since this time (the start counts as an outage until the first
  // fence and checkpoint read succeed); null while it answers.
  let outageSince = Date.now()
  let started = false
  let lastCause = null

  /** Bounds one attempt: past the outage's limit, close whatever client it is waiting on. */
  let watchdog = null
  async function bounded(attempt) {
    const limit = started ? retryTimeoutMS : connectTimeoutMS
    let timedOut = false
    if (outageSince !== null) {
      watchdog = setTimeout(
        () => {
          timedOut = true
          closeCurrent()
        },
        Math.max(0, outageSince + limit - Date.now()),
      )
    }
    try {
      return await attempt()
    } catch (e) {
      if (timedOut && e !== null && typeof e === 'object') e.timeoutReason = `no answer within ${Math.round(limit / 1000)} s`
      throw e
    } finally {
      clearTimeout(watchdog)
      watchdog = null
    }
  }

  function closeCurrent() {
    const c = current
    if (!c) return
    if (c.admin) c.admin.close().catch(() => {})
    if (c.consumer) c.consumer.close(true).catch(() => {})
    if (c.producer) c.producer.close(true).catch(() => {})
  }

  /** After a failed attempt: the error that ends the run, or null to retry after `delay`. */
  function afterFailure(e) {
    if (outageSince === null) outageSince = Date.now()
    // A timed-out attempt fails with whatever closing the client threw: keep the cause seen
    // before it, if any.
    lastCause = e && e.timeoutReason ? (lastCause ?? e.timeoutReason) : kafkaCause(e)
    const limit = started ? retryTimeoutMS : connectTimeoutMS
    if (isRefused(lastCause)) return new KafkaUnavailableError({ brokers, phase: started ? 'running' : 'start', reason: lastCause, seconds: 0, cause: e, refused: true })
    if (Date.now() - outageSince < limit) return null
    return new KafkaUnavailableError({ brokers, phase: started ? 'running' : 'start', reason: lastCause, seconds: Math.round(limit / 1000), cause: e })
  }

  function kafkaAnswered() {
    clearTimeout(watchdog)
    watchdog = null
    started = true
    outageSince = null
    lastCause = null
  }

  const done = (async () => {
    try {
      // The limits count from the first attempt to reach Kafka, not from loading its client
      // (a second or more on a loaded machine).
      kafka()
      if (!started) outageSince = Date.now()
      await ensureTopicsOnce()
      let delay = o.retryDelayMS === undefined ? 500 : o.retryDelayMS
      for (;;) {
        if (stopping) return
        try {
          await bounded(cycle)
          return
        } catch (e) {
          if (e instanceof SourceError) {
            if (!isHistoryLost(e.cause)) throw e.cause
            if (o.onHistoryLost === 'snapshot' && resnapshot === null) {
              resnapshot = 'history-lost'
              continue
            }
            throw new ChangeStreamHistoryLostError({
              id: o.id,
              checkpointClusterTime: tokenClusterTime(stats.resumeToken) || stats.clusterTime || null,
              oldestClusterTime: await oldestOplogTime(o.source),
              cause: e.cause,
            })
          }
          if (e instanceof KafkaFencedError) throw e
          if (stopping) return
          const fatal = afterFailure(e)
          if (fatal) throw fatal
          stats.restarts++
          stats.lastError = lastCause
          const limit = started ? retryTimeoutMS : connectTimeoutMS
          stats.giveUpInMS = Math.max(0, outageSince + limit - Date.now())
          if (o.onRestart) o.onRestart(e, stats)
          await sleep(Math.min(delay, stats.giveUpInMS), ac.signal)
          delay = Math.min(delay * 2, 10_000)
        }
      }
    } finally {
      if (o.signal) o.signal.removeEventListener('abort', onAbort)
    }
  })()

  async function ensureTopicsOnce() {
    if (o.createTopics === false) return
    let said = false
    for (;;) {
      try {
        await bounded(() => ensureTopics(o, brokers, o.kafka || {}, (admin) => (current = admin === null ? null : { admin })))
        return
      } catch (e) {
        if (stopping) return
        const fatal = afterFailure(e)
        if (fatal) throw fatal
        if (!said && o.onRestart) {
          // Said once: the start goes on retrying until connectTimeoutMS.
          said = true
          stats.lastError = lastCause
          stats.giveUpInMS = Math.max(0, outageSince + connectTimeoutMS - Date.now())
          o.onRestart(e, stats)
        }
        await sleep(Math.min(500, Math.max(0, outageSince + connectTimeoutMS - Date.now())), ac.signal)
      }
    }
  }

  /** The checkpoint record of stream `o.id` (committed in the same transaction as what it covers). */
  function checkpointMessage(resumeToken, clusterTime, events, snap) {
    return {
      topic: o.checkpointTopic,
      key: Buffer.from(o.id),
      value: Buffer.from(
        JSON.stringify({
          v: CHECKPOINT_VERSION,
          id: o.id,
          resumeToken: ejson().stringify(resumeToken, { relaxed: false }),
          clusterTime,
          events,
          at: new Date().toISOString(),
          origin: origin === null ? undefined : origin,
          // while a snapshot is under way: why it runs, the last _id copied (canonical Extended
          // JSON, null before the first batch) and the records copied so far
          snapshot: snap === undefined ? undefined : { reason: snap.reason, after: snap.after, records: snap.records },
        }),
      ),
    }
  }

  /** The change stream's position now (the postBatchResumeToken of an empty first batch). */
  async function positionNow() {
    const probe = watch(o.source, o.pipeline || [], { batchSize: 0, dialect: o.dialect })
    try {
      const r = await probe.batches()[Symbol.asyncIterator]().next()
      const token = r.done ? null : r.value.resumeToken
      if (!token) throw new Error('bson2json/kafka: the server gave no resume position (postBatchResumeToken) to start the snapshot from')
      return token
    } catch (e) {
      throw new SourceError(e)
    } finally {
      await probe.close().catch(() => {})
    }
  }

  /**
   * The snapshot: the collection's documents into the topic in `_id` order, each server batch in
   * one transaction with a checkpoint saying how far the copy got (`snapshot.after`), so a crash
   * resumes after the last committed batch. A new snapshot first takes the change stream's
   * position and commits it with an empty copy, so every change made while the copy runs is
   * streamed after it. The last transaction checkpoints that position without `snapshot`: the
   * stream takes over. Returns that position, or null when stopped.
   * @param {any} producer
   * @param {{reason: string, after: string|null, records: number, fresh: boolean}} snap
   * @param {any} ck the checkpoint read at the start of the cycle (null: none)
   * @param {any} tx0 the transaction opened by the fence, used first
   */
  async function runSnapshot(producer, snap, ck, tx0) {
    let tx = tx0
    try {
      const events = ck && typeof ck.events === 'number' ? ck.events : 0
      let token
      if (snap.fresh) {
        token = await positionNow()
        if (tx === null) tx = await producer.beginTransaction()
        await tx.send({ messages: [checkpointMessage(token, undefined, events, snap)] })
        await tx.commit()
        tx = null
        stats.transactions++
      } else {
        token = ck.resumeToken
        if (ck.origin !== undefined) origin = ck.origin
      }
      stats.snapshot = { reason: snap.reason, records: snap.records, done: false }
      if (o.onProgress) o.onProgress(stats, { events: [], resumeToken: token })
      const cursor = snapshot(o.source, {
        dialect: o.dialect,
        projection: o.projection,
        redact: o.redact,
        batchSize: o.snapshotBatchSize === undefined ? 1000 : o.snapshotBatchSize,
        after: snap.after === null ? undefined : ejson().parse(snap.after, { relaxed: false }),
      })
      current.stream = cursor
      if (stopping) await cursor.close()
      const it = cursor.batches()[Symbol.asyncIterator]()
      for (;;) {
        let r
        try {
          r = await it.next()
        } catch (e) {
          throw new SourceError(e)
        }
        if (r.done) break
        const b = r.value
        if (b.events.length === 0) continue
        if (tx === null) tx = await producer.beginTransaction()
        const messages = b.events.map((ev) => {
          ev.json = `{"operationType":"snapshot","ns":${JSON.stringify(ev.ns)},"documentKey":${ev.documentKey},"fullDocument":${ev.fullDocument}}`
          const m = toMessage(o, ev)
          m.headers.set(Buffer.from('snapshot'), Buffer.from(snap.reason))
          return m
        })
        snap.after = ejson().stringify(b.after, { relaxed: false })
        snap.records += b.events.length
        messages.push(checkpointMessage(token, undefined, events, snap))
        await sendChunked(tx, messages, maxRequestBytes)
        await tx.commit()
        tx = null
        stats.transactions++
        stats.snapshot.records = snap.records
        if (o.onProgress) o.onProgress(stats, b)
      }
      // A stop closes the cursor, which ends the loop like the end of the collection does.
      if (stopping) return null
      if (tx === null) tx = await producer.beginTransaction()
      await tx.send({ messages: [checkpointMessage(token, undefined, events, undefined)] })
      await tx.commit()
      tx = null
      stats.transactions++
      stats.snapshot.done = true
      return token
    } finally {
      if (tx !== null && !tx.completed) await tx.abort().catch(() => tx.cancel().catch(() => {}))
    }
  }

  async function cycle() {
    const { Producer, Consumer, compatibilityPartitioner } = kafka()
    const extra = o.kafka || {}
    const producer = new Producer({
      retries: 5,
      retryDelay: 200,
      ...extra,
      clientId: `bson2json-cdc.${o.id}`,
      bootstrapBrokers: brokers,
      idempotent: true,
      transactionalId: transactionalIdOf(o.id),
      acks: -1,
      // The Java client's default partitioner (murmur2 of the key, positive): every client
      // producing the same key picks the same partition.
      partitioner: compatibilityPartitioner,
    })
    const consumer = new Consumer({
      retries: 5,
      retryDelay: 200,
      ...extra,
      clientId: `bson2json-cdc-reader.${o.id}`,
      groupId: `bson2json-cdc-reader.${o.id}`,
      bootstrapBrokers: brokers,
    })
    current = { producer, consumer, stream: null }
    let tx = null
    let stream = null
    let initialized = false
    try {
      // 1. Fence: InitProducerId for our transactional.id (aborts a zombie's open transaction).
      // producerId/epoch -1: "a new producer instance" (the client would send 0/0, which a
      // broker that knows the transactional id answers with PRODUCER_FENCED).
      tx = await producer.beginTransaction({ producerId: -1n, producerEpoch: -1 })
      initialized = true
      // 2. The last committed checkpoint (read_committed, after the fence).
      const ck = await readCheckpointWith(consumer, o.checkpointTopic, o.id)
      await consumer.close().catch(() => {})
      kafkaAnswered()
      if (stopping) return
      // 3. The change stream, after the checkpoint.
      const wopts = {
        whole: o.value !== 'fullDocument',
        dialect: o.dialect,
        batchSize: o.batchSize,
        maxAwaitTimeMS: o.maxAwaitTimeMS,
        prefetch: o.prefetch,
        fullDocument: o.fullDocument,
        fullDocumentBeforeChange: o.fullDocumentBeforeChange,
        showExpandedEvents: o.showExpandedEvents,
        splitLargeEvents: o.splitLargeEvents,
        projection: o.projection,
        redact: o.redact,
      }
      for (const k of Object.keys(wopts)) if (wopts[k] === undefined) delete wopts[k]
      const override = o.overrideCheckpoint === true && (!ck || ck.origin !== requested)
      // 3a. The snapshot: a new one (first start with `snapshot`, an override with it, or lost
      // history), or the one the checkpoint says is under way.
      let snap = null
      if (resnapshot !== null) snap = { reason: resnapshot, after: null, records: 0, fresh: true }
      else if ((!ck || override) && o.snapshot === true) snap = { reason: ck ? 'override' : 'initial', after: null, records: 0, fresh: true }
      else if (ck && !override && ck.snapshot) snap = { ...ck.snapshot, fresh: false }
      let ckAfterSnapshot = ck
      if (snap !== null) {
        stats.startedFrom = 'snapshot'
        const token = await runSnapshot(producer, snap, ck, tx)
        tx = null
        if (token === null) return // stopped
        resnapshot = null
        if (snap.fresh && o.overrideCheckpoint === true) origin = requested
        ckAfterSnapshot = { resumeToken: token, clusterTime: null, events: ck ? ck.events : 0, origin }
      }
      if (snap !== null) {
        wopts.resumeAfter = ckAfterSnapshot.resumeToken
        if (stats.resumeToken === null) stats.resumeToken = ckAfterSnapshot.resumeToken
      } else if (ck && !override) {
        origin = ck.origin === undefined ? null : ck.origin
        wopts.resumeAfter = ck.resumeToken
        stats.startedFrom = 'checkpoint'
        if (stats.resumeToken === null) {
          stats.resumeToken = ck.resumeToken
          stats.clusterTime = ck.clusterTime || null
        }
        if (stats.events === 0 && typeof ck.events === 'number') stats.committedEvents = ck.events
      } else {
        if (o.overrideCheckpoint === true) origin = requested
        if (ck) stats.overridden = { resumeToken: ck.resumeToken, clusterTime: ck.clusterTime || null }
        if (o.resumeAfter !== undefined) {
          wopts.resumeAfter = o.resumeAfter
          stats.startedFrom = 'resumeAfter'
        } else if (o.startAtOperationTime !== undefined) {
          wopts.startAtOperationTime = o.startAtOperationTime
          stats.startedFrom = 'startAtOperationTime'
        } else {
          stats.startedFrom = 'now'
        }
      }
      let total = ckAfterSnapshot && typeof ckAfterSnapshot.events === 'number' ? ckAfterSnapshot.events : 0
      stream = watch(o.source, o.pipeline || [], wopts)
      current.stream = stream
      if (stopping) stream.close().catch(() => {})
      let lastCheckpointAt = Date.now()
      let first = true
      const idleMS = o.idleCheckpointMS === undefined ? 5000 : o.idleCheckpointMS
      const commitMS = o.commitIntervalMS === undefined ? 100 : o.commitIntervalMS
      const maxTxBytes = o.maxTransactionBytes === undefined ? 8 * 1024 * 1024 : o.maxTransactionBytes
      // The open transaction: the server batches sent into it since it began. It commits with
      // one checkpoint (the last batch's token) once it is commitIntervalMS old or holds
      // maxTransactionBytes, when no next batch comes within that interval, and at the end.
      let open = null
      const commitOpen = async () => {
        const t = open
        total += t.events
        await tx.send({ messages: [checkpointMessage(t.token, t.clusterTime || stats.clusterTime || undefined, total, undefined)] })
        await tx.commit()
        tx = null
        open = null
        lastCheckpointAt = Date.now()
        stats.transactions++
        stats.batches += t.batches
        stats.events += t.events
        stats.resumeToken = t.token
        if (t.clusterTime) stats.clusterTime = t.clusterTime
        if (o.onProgress) o.onProgress(stats, t.last)
      }
      const it = stream.batches()[Symbol.asyncIterator]()
      const TIMEOUT = Symbol('commit interval')
      let pending = null
      for (;;) {
        if (pending === null) {
          pending = it.next()
          // awaited below, possibly after a commit: never an unhandled rejection meanwhile
          pending.catch(() => {})
        }
        let r
        try {
          if (open === null) r = await pending
          else {
            const wait = open.since + commitMS - Date.now()
            r = wait <= 0 ? TIMEOUT : await Promise.race([pending, sleep(wait, ac.signal).then(() => TIMEOUT)])
          }
        } catch (e) {
          throw new SourceError(e)
        }
        if (r === TIMEOUT) {
          await commitOpen()
          continue
        }
        pending = null
        if (r.done) break
        const batch = r.value
        const now = Date.now()
        if (batch.events.length === 0) {
          // Empty batches only move the token: into the open transaction's checkpoint, or
          // checkpointed at most every idleCheckpointMS, except the first of a run (a first
          // start then has a position to resume from).
          if (open !== null) {
            open.token = batch.resumeToken
            continue
          }
          if (!first && now - lastCheckpointAt < idleMS) continue
        }
        first = false
        if (tx === null) tx = await producer.beginTransaction()
        if (open === null) open = { since: now, bytes: 0, events: 0, batches: 0, token: null, clusterTime: null, last: null }
        const messages = batch.events.map((ev) => {
          if (ev.clusterTime) open.clusterTime = ev.clusterTime
          return toMessage(o, ev)
        })
        open.bytes += await sendChunked(tx, messages, maxRequestBytes)
        open.events += batch.events.length
        open.batches++
        open.token = batch.resumeToken
        open.last = batch
        if (open.bytes >= maxTxBytes || Date.now() - open.since >= commitMS || stopping) await commitOpen()
      }
      if (open !== null) await commitOpen()
    } catch (e) {
      if (e instanceof SourceError) throw e
      // Fenced after our own InitProducerId succeeded: a newer process owns the id.
      if (initialized && isFenced(e)) throw new KafkaFencedError(o.id, e)
      throw e
    } finally {
      if (tx !== null && !tx.completed) {
        // Nothing of this transaction was committed: abort it (best effort; the next fence
        // aborts it anyway), or drop it locally when nothing reached the broker.
        await tx.abort().catch(() => tx.cancel().catch(() => {}))
      }
      if (stream) await stream.close().catch(() => {})
      await consumer.close().catch(() => {})
      await producer.close(true).catch(() => {})
      current = null
    }
  }

  return { done, stop, stats }
}

function toMessage(o, ev) {
  const headers = new Map()
  headers.set(Buffer.from('operationType'), Buffer.from(String(ev.operationType)))
  if (ev.ns) headers.set(Buffer.from('ns'), Buffer.from(ev.ns.coll === undefined ? String(ev.ns.db) : `${ev.ns.db}.${ev.ns.coll}`))
  if (ev.clusterTime) headers.set(Buffer.from('clusterTime'), Buffer.from(`${ev.clusterTime.t}.${ev.clusterTime.i}`))
  let value
  if (o.value === 'fullDocument') value = ev.fullDocument === undefined || ev.fullDocument === null ? null : Buffer.from(ev.fullDocument)
  else value = Buffer.from(ev.json)
  return {
    topic: o.topic,
    key: ev.documentKey === undefined || ev.documentKey === null ? undefined : Buffer.from(ev.documentKey),
    value: value === null ? undefined : value,
    headers,
  }
}

module.exports = {
  changeStreamToKafka,
  readCheckpoint,
  readCommitted,
  committedRecords,
  transactionalIdOf,
  KafkaFencedError,
  KafkaUnavailableError,
  ChangeStreamHistoryLostError,
  kafkaCause,
  tokenClusterTime,
}
