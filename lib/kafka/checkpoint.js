'use strict'

/**
 * Checkpoints: where a stream id got to, written as one record per transaction (committed with
 * the events it covers) into the compacted checkpoint topic, read back with read_committed
 * isolation, and the cluster times a checkpoint and the source's oplog are at.
 */

const { kafka, ejson } = require('./client')

const CHECKPOINT_VERSION = 1
const IS_TRANSACTIONAL = 1 << 4
const IS_CONTROL = 1 << 5
const READ_UNCOMMITTED = 0

/**
 * The checkpoint record of stream `id` (key: the id; value: the format {@link readCheckpointWith}
 * reads back).
 * @param {{ checkpointTopic: string, id: string }} o
 * @param {{ resumeToken: any, clusterTime?: {t: number, i: number}, events: number, origin?: string|null, snapshot?: any }} at
 *   `snapshot`: while a snapshot is under way, its state (lib/kafka/snapshot-copy.js `snapshotState`)
 */
function checkpointRecord(o, at) {
  return {
    topic: o.checkpointTopic,
    key: Buffer.from(o.id),
    value: Buffer.from(
      JSON.stringify({
        v: CHECKPOINT_VERSION,
        id: o.id,
        resumeToken: ejson().stringify(at.resumeToken, { relaxed: false }),
        clusterTime: at.clusterTime,
        events: at.events,
        at: new Date().toISOString(),
        origin: at.origin === null ? undefined : at.origin,
        snapshot: at.snapshot,
      }),
    ),
  }
}

/**
 * The committed records of one partition's log, read in offset order with read_uncommitted
 * isolation (every batch, the transaction markers included): each record of a transactional
 * batch waits for its producer's next marker, COMMIT or ABORT (a producer has one transaction at
 * a time on a partition, and a zombie's writes after its fence are refused by the broker); a
 * record outside a transaction is committed as it comes. `decided()` gives the records decided
 * so far, in offset order, up to the first one still waiting.
 *
 * Not the broker's `abortedTransactions` list: `@platformatic/kafka` (1.35 and 2.x) filters a
 * read_committed response with it keyed by producer only, so two aborted transactions of one
 * producer in one response, or a committed one between an aborted one and a later ABORT marker,
 * lose committed records (docs/kafka.md "Consumers").
 */
class TransactionFilter {
  constructor() {
    /** @type {{ offset: bigint, record: any, state: 0 | 1 | 2 }[]} 0 waiting, 1 committed, 2 aborted */
    this.queue = []
    this.head = 0
    /** producer id → the waiting records of its open transaction */
    this.open = new Map()
  }

  /** One batch of the log (a `@platformatic/kafka` fetch response's batch), in offset order. */
  push(batch) {
    const pid = String(batch.producerId)
    if (batch.attributes & IS_CONTROL) {
      const key = batch.records[0] && batch.records[0].key
      const waiting = this.open.get(pid)
      if (waiting !== undefined && key && key.length >= 4) {
        const state = key.readInt16BE(2) === 1 ? 1 : 2
        for (const x of waiting) x.state = state
        this.open.delete(pid)
      }
      return
    }
    const transactional = (batch.attributes & IS_TRANSACTIONAL) !== 0
    let waiting
    if (transactional) {
      waiting = this.open.get(pid)
      if (waiting === undefined) this.open.set(pid, (waiting = []))
    }
    for (const r of batch.records) {
      const x = { offset: batch.firstOffset + BigInt(r.offsetDelta), record: r, state: transactional ? 0 : 1 }
      this.queue.push(x)
      if (transactional) waiting.push(x)
    }
  }

  /** The committed records decided since the last call, in offset order. */
  *decided() {
    const q = this.queue
    while (this.head < q.length && q[this.head].state !== 0) {
      const x = q[this.head++]
      if (x.state === 1) yield x
    }
    if (this.head > 1024 && this.head * 2 > q.length) {
      q.splice(0, this.head)
      this.head = 0
    }
  }

  /** The offset of the first record still waiting for its transaction's marker, or null. */
  firstWaiting() {
    return this.head < this.queue.length ? this.queue[this.head].offset : null
  }
}

/**
 * Reads every partition of `topic` from `from` (default: the log start) up to its last stable
 * offset as it is when the read starts, and calls `onRecord(partition, offset, record)` for each
 * committed record (record: `{ key, value, headers }` with Buffers), in offset order: read
 * committed, by {@link TransactionFilter} over the log read whole (past the stable offset where
 * a transaction's marker lies beyond it). Returns the offsets reached per partition.
 * @param {any} consumer a @platformatic/kafka Consumer
 */
async function readCommitted(consumer, topic, onRecord, from = undefined) {
  const md = await consumer.metadata({ topics: [topic], forceUpdate: true })
  const t = md.topics.get(topic)
  if (!t) throw new Error(`bson2json/kafka: topic ${topic} not found`)
  const reached = []
  for (let p = 0; p < t.partitionsCount; p++) {
    const leader = t.partitions[p].leader
    const start = from && from[p] !== undefined ? from[p] : 0n
    let offset = start
    let end = null
    const filter = new TransactionFilter()
    for (;;) {
      const resp = await consumer.fetch({
        node: leader,
        isolationLevel: READ_UNCOMMITTED,
        maxWaitTime: 10,
        topics: [{ topicId: t.id, partitions: [{ partition: p, fetchOffset: offset, currentLeaderEpoch: -1, lastFetchedEpoch: -1, partitionMaxBytes: 4 << 20 }] }],
      })
      // (@platformatic/kafka 2.x leaves out a partition with nothing at the offset)
      const part = resp.responses.length === 0 ? undefined : resp.responses[0].partitions[0]
      if (part === undefined) break
      if (part.errorCode === 1 /* OFFSET_OUT_OF_RANGE */) {
        offset = part.logStartOffset > offset ? part.logStartOffset : offset
        if (end !== null && offset >= end) break
        continue
      }
      if (part.errorCode) throw new Error(`bson2json/kafka: fetch ${topic}/${p} failed with error code ${part.errorCode}`)
      if (end === null) end = part.lastStableOffset
      const batches = part.records || []
      for (const b of batches) filter.push(b)
      for (const x of filter.decided()) if (x.offset >= start && x.offset < end) onRecord(p, x.offset, x.record)
      // Nothing more in the log (a batch larger than partitionMaxBytes is still returned whole).
      if (batches.length === 0) break
      const lb = batches[batches.length - 1]
      offset = lb.firstOffset + BigInt(lb.lastOffsetDelta) + 1n
      if (offset < part.logStartOffset) offset = part.logStartOffset
      // Every record below `end` decided (a transaction below the stable offset is complete;
      // its marker may lie past it): the records from `end` on are for the next read (`from`).
      const waiting = filter.firstWaiting()
      if (offset >= end && (waiting === null || waiting >= end)) break
    }
    reached.push(end !== null && end > start ? end : start)
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

module.exports = { CHECKPOINT_VERSION, checkpointRecord, TransactionFilter, readCommitted, readCheckpointWith, readCheckpoint, oldestOplogTime, tokenClusterTime }
