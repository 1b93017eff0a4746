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
 */

const { SourceError } = require('./errors')
const { timer } = require('./client')
const { formatOf } = require('./records')
const { tokenClusterTime } = require('./checkpoint')

const TIMEOUT = Symbol('commit interval')

/** The batches sent into the open transaction since it began, and the checkpoint they lead to. */
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
    /** @type {OpenBatches|null} */
    this.open = null
    this.format = formatOf(sink.o.format)
  }

  /** Commits the open batches with their checkpoint, and counts them. */
  async commit() {
    const t = this.open
    const stats = this.sink.stats
    this.total += t.events
    await this.tx.commit({ resumeToken: t.token, clusterTime: t.clusterTime || stats.clusterTime || undefined, events: this.total })
    this.open = null
    this.lastCheckpointAt = Date.now()
    stats.batches += t.batches
    stats.events += t.events
    stats.resumeToken = t.token
    if (t.clusterTime) stats.clusterTime = t.clusterTime
    if (this.o.onProgress) this.o.onProgress(stats, t.last)
  }

  /**
   * The next batch, or TIMEOUT when the open transaction's interval runs out first (the timer
   * goes, with its abort listener, as soon as the race is decided).
   */
  async nextOrTimeout(pending) {
    if (this.open === null) return pending
    const wait = this.open.since + this.o.commitIntervalMS - Date.now()
    if (wait <= 0) return TIMEOUT
    const t = timer(wait, this.sink.signal)
    try {
      return await Promise.race([pending, t.promise.then(() => TIMEOUT)])
    } finally {
      t.cancel()
    }
  }

  async run() {
    const { sink, o } = this
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
      try {
        r = await this.nextOrTimeout(pending)
      } catch (e) {
        throw new SourceError(e)
      }
      if (r === TIMEOUT) {
        await this.commit()
        continue
      }
      sink.mongo.answered()
      pending = null
      if (r.done) break
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
      for (const ev of batch.events) {
        if (ev.clusterTime) open.clusterTime = ev.clusterTime
        format.records(o, ev, messages)
      }
      // A quiet stream's checkpoint moves to the server's position: with heartbeatTopic, a
      // heartbeat record in the same transaction says so.
      if (batch.events.length === 0 && o.heartbeatTopic !== undefined) format.heartbeat(o, batch.resumeToken, tokenClusterTime(batch.resumeToken), messages)
      await sink.ensureTopicsOf(messages)
      open.bytes += await this.tx.send(messages)
      open.events += batch.events.length
      open.batches++
      open.token = batch.resumeToken
      open.last = batch
      if (open.bytes >= o.maxTransactionBytes || Date.now() - open.since >= o.commitIntervalMS || sink.stopping) await this.commit()
    }
    if (this.open !== null) await this.commit()
  }
}

module.exports = { StreamCopy }
