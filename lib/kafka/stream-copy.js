'use strict'

/**
 * `StreamCopy`: the change stream into Kafka. The open transaction holds the server batches sent
 * into it since it began; it commits with one checkpoint (the last batch's token) once it is
 * `commitIntervalMS` old or holds `maxTransactionBytes`, when no next batch comes within that
 * interval, and at the end. Empty batches only move the token (the server's postBatchResumeToken,
 * which goes on advancing while the captured namespaces are quiet and others are written): into
 * the open transaction's checkpoint, or checkpointed at most every `idleCheckpointMS` (`cdc
 * --heartbeat-interval`), with a heartbeat record when `heartbeatTopic` is set, except the first
 * of a run (a first start then has a position to resume from). So the stored position stays
 * within the oplog's window however long the captured collections stay quiet.
 *
 * Pipelined: the Kafka writes (a batch's produce requests, a commit) go one after the other on a
 * chain (`Writes`), and while one is in flight the loop takes the next server batch and writes
 * its records; it waits for the chain only before adding the next write to it. So a batch's
 * transcoding and records overlap the previous batch's sends and the commit's EndTxn, and the
 * next getMores are already under way (the change stream's prefetch). The writes themselves
 * cannot overlap: a transactional producer has one transaction at a time (the next one's
 * AddPartitionsToTxn follows EndTxn), and `@platformatic/kafka` runs an idempotent producer's
 * requests one at a time (docs/kafka.md "Where cdc waits"). The checkpoint goes in the same
 * produce request as the transaction's last batch.
 */

const { performance } = require('node:perf_hooks')
const { SourceError } = require('./errors')
const { timer, messageSize } = require('./client')
const { formatOf } = require('./records')
const { tokenClusterTime } = require('./checkpoint')

const TIMEOUT = Symbol('commit interval')

/**
 * Where the stream's time goes (`stats.phases`, milliseconds since the run began). The loop's
 * own time: waiting for the next server batch (`source`), writing a batch's records (`records`),
 * waiting for the Kafka writes in flight before it can add the next (`kafka`). And the Kafka
 * writes' durations, which overlap those: produce requests (`send`, AddPartitionsToTxn
 * included) and commits (`commit`: the last batch with the checkpoint record, and EndTxn). A
 * stream that runs flat out is bounded by the source when `source` dominates the loop's time, by
 * Kafka when `kafka` does.
 */
function phasesOf(stats) {
  if (stats.phases === undefined) stats.phases = { source: 0, records: 0, kafka: 0, send: 0, commit: 0 }
  return stats.phases
}

/** The batches added to the open transaction since it began, and the checkpoint they lead to. */
class OpenBatches {
  constructor(now) {
    this.since = now
    this.bytes = 0
    this.events = 0
    this.batches = 0
    this.token = null
    this.clusterTime = null
    this.last = null
  }
}

/**
 * The Kafka writes of a stream, one at a time in order: `add(write)` starts `write` once the
 * previous ones are done. A failed write fails the chain: every later `add` and `done()` rejects
 * with its error, and `failure` rejects at once (the loop races it against the source).
 */
class Writes {
  constructor() {
    this.tail = Promise.resolve()
    this.error = null
    let fail
    this.failure = new Promise((_resolve, reject) => (fail = reject))
    this.failure.catch(() => {})
    this.fail = fail
  }

  /** Waits for the writes in flight (rejects if one failed). */
  async done() {
    await this.tail
    if (this.error !== null) throw this.error
  }

  /** Starts `write` after the writes in flight (call after `done()`, so the chain stays one deep). */
  add(write) {
    this.tail = this.tail.then(write).catch((e) => {
      if (this.error === null) {
        this.error = e
        this.fail(e)
      }
    })
  }
}

class StreamCopy {
  /**
   * @param {import('./sink').KafkaSink} sink
   * @param {import('./transaction').Transaction} tx
   * @param {any} stream the ChangeStream (lib/mongo/change-stream.js)
   * @param {number} committed the events committed before this cycle (the checkpoint's count)
   */
  constructor(sink, tx, stream, committed) {
    this.sink = sink
    this.o = sink.o
    this.tx = tx
    this.stream = stream
    this.total = committed
    this.lastCheckpointAt = Date.now()
    /** @type {OpenBatches|null} the transaction batches are added to (null: none) */
    this.open = null
    this.format = formatOf(sink.o.format)
    this.phases = phasesOf(sink.stats)
    this.writes = new Writes()
  }

  /**
   * Closes the open transaction: once the writes in flight are done, `messages` (the last
   * batch's, or none) and the checkpoint go in one send, then the commit; then it is counted.
   */
  closeOpen(messages) {
    const t = this.open
    const stats = this.sink.stats
    this.open = null
    this.total += t.events
    const at = { resumeToken: t.token, clusterTime: t.clusterTime || undefined, events: this.total }
    this.writes.add(async () => {
      const t0 = performance.now()
      if (at.clusterTime === undefined) at.clusterTime = stats.clusterTime || undefined
      await this.tx.commit(at, messages)
      this.phases.commit += performance.now() - t0
      this.lastCheckpointAt = Date.now()
      stats.batches += t.batches
      stats.events += t.events
      stats.resumeToken = t.token
      if (t.clusterTime) stats.clusterTime = t.clusterTime
      if (this.o.onProgress) this.o.onProgress(stats, t.last)
    })
  }

  /** Waits for the Kafka writes in flight (counted as the loop's `kafka` time). */
  async written() {
    const t0 = performance.now()
    await this.writes.done()
    this.phases.kafka += performance.now() - t0
  }

  /**
   * The next batch, or TIMEOUT when the open transaction's interval runs out first (the timer
   * goes, with its abort listener, as soon as the race is decided); rejects at once when a Kafka
   * write fails meanwhile.
   */
  async nextOrTimeout(pending) {
    const failure = this.writes.failure
    if (this.open === null) return Promise.race([pending, failure])
    const wait = this.open.since + this.o.commitIntervalMS - Date.now()
    if (wait <= 0) return TIMEOUT
    const t = timer(wait, this.sink.signal)
    try {
      return await Promise.race([pending, failure, t.promise.then(() => TIMEOUT)])
    } finally {
      t.cancel()
    }
  }

  async run() {
    try {
      await this.loop()
      if (this.open !== null) {
        await this.written()
        this.closeOpen([])
      }
      await this.written()
    } finally {
      // Nothing may still write into the transaction the cycle aborts next.
      await this.writes.tail
    }
  }

  async loop() {
    const { sink, o, phases } = this
    const it = this.stream.batches()[Symbol.asyncIterator]()
    let first = true
    let pending = null
    for (;;) {
      if (pending === null) {
        pending = it.next()
        // awaited below, possibly after a commit: never an unhandled rejection meanwhile
        pending.catch(() => {})
      }
      let r
      const t0 = performance.now()
      try {
        r = await this.nextOrTimeout(pending)
      } catch (e) {
        if (this.writes.error === e) throw e
        throw new SourceError(e)
      }
      phases.source += performance.now() - t0
      if (r === TIMEOUT) {
        await this.written()
        this.closeOpen([])
        continue
      }
      sink.mongo.answered()
      pending = null
      if (r.done) return
      const batch = r.value
      const now = Date.now()
      if (batch.events.length === 0) {
        if (this.open !== null) {
          this.open.token = batch.resumeToken
          continue
        }
        if (!first && now - this.lastCheckpointAt < o.idleCheckpointMS) continue
      }
      first = false
      if (this.open === null) this.open = new OpenBatches(now)
      const open = this.open
      const messages = []
      const format = this.format
      const t1 = performance.now()
      for (const ev of batch.events) {
        if (ev.clusterTime) open.clusterTime = ev.clusterTime
        format.records(o, ev, messages)
      }
      // A quiet stream's checkpoint moves to the server's position: with heartbeatTopic, a
      // heartbeat record in the same transaction says so.
      if (batch.events.length === 0 && o.heartbeatTopic !== undefined) format.heartbeat(o, batch.resumeToken, tokenClusterTime(batch.resumeToken), messages)
      let bytes = 0
      for (const m of messages) bytes += messageSize(m)
      phases.records += performance.now() - t1
      open.bytes += bytes
      open.events += batch.events.length
      open.batches++
      open.token = batch.resumeToken
      open.last = batch
      // The writes in flight first (a topic is created, and the next write added, after them).
      await this.written()
      await sink.ensureTopicsOf(messages)
      if (open.bytes >= o.maxTransactionBytes || Date.now() - open.since >= o.commitIntervalMS || sink.stopping) this.closeOpen(messages)
      else this.writes.add(() => this.send(messages))
    }
  }

  /** Sends a batch's records into the open transaction (the `send` phase). */
  async send(messages) {
    const t0 = performance.now()
    await this.tx.send(messages)
    this.phases.send += performance.now() - t0
  }
}

module.exports = { StreamCopy }
