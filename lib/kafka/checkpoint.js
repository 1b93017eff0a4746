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
const READ_COMMITTED = 1

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
      // Records at or past the stable offset of the start were not delivered: the read reaches
      // `end`, and one from there (`from`) gets them once they are stable.
      if (offset >= end) {
        offset = end
        break
      }
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

module.exports = { CHECKPOINT_VERSION, checkpointRecord, committedRecords, readCommitted, readCheckpointWith, readCheckpoint, oldestOplogTime, tokenClusterTime }
