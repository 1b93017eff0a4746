'use strict'

/**
 * `require('bson2json/kafka')`: a MongoDB change stream into a Kafka topic, exactly once.
 *
 * The server batches of the change stream (lib/mongo/change-stream.js `batches()`) go into Kafka
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
 * checkpoint, re-open the stream) with a back-off. Transient MongoDB errors (a closed connection,
 * `CursorNotFound`, a resumable error) the change stream's own resume did not outlast restart the
 * cycle too; during the snapshot the failed range alone reopens its cursor after its last
 * committed `_id`. Both for up to `mongoRetryTimeoutMS` without an answer from MongoDB. Other
 * MongoDB errors end the run. See docs/kafka.md for the guarantees and their conditions.
 *
 * The parts: a cycle's writes go through one `Transaction` (lib/kafka/transaction.js: begin, the
 * checkpoint, commit), the snapshot is a `SnapshotCopy` (snapshot-copy.js), the stream a
 * `StreamCopy` (stream-copy.js), the outages' clocks `KafkaOutage` and `MongoOutage` (outage.js),
 * the records records.js.
 *
 * The Kafka client is the optional peer dependency `@platformatic/kafka` (1.35.x, or 2.x from 2.12.1
 * on Node >= 22.22: the same code path, docs/kafka.md).
 */

const { watch } = require('../mongo/change-stream')
const { ChangeStreamHistoryLostError, KafkaFencedError, KafkaUnavailableError, SourceError, isHistoryLost, isTransientSourceError, kafkaCause, isFenced } = require('./errors')
const { kafka, ejson, transactionalIdOf, retryDelay, ensureTopics, sleep } = require('./client')
const { readCommitted, readCheckpointWith, readCheckpoint, oldestOplogTime, tokenClusterTime } = require('./checkpoint')
const { checkOptions, withDefaults } = require('./options')
const { KafkaOutage, MongoOutage } = require('./outage')
const { Transaction } = require('./transaction')
const { SnapshotCopy, resumedRanges } = require('./snapshot-copy')
const { StreamCopy } = require('./stream-copy')
const { formatOf } = require('./records')
const { namespaceMatch, router } = require('./scope')

/**
 * One run of a change stream into Kafka (`changeStreamToKafka`). The run is a loop of cycles
 * ({@link KafkaSink#cycle}: clients, fence, checkpoint, then the snapshot and the stream), each
 * ended by a Kafka failure, which starts the next after a back-off until the outage outlasts its
 * limit; a MongoDB failure or a fence ends the run. {@link KafkaSink#stop} ends it cleanly.
 */
class KafkaSink {
  constructor(options) {
    const brokers = checkOptions(options)
    const o = withDefaults({ ...options, brokers })
    this.o = o
    // the transcoder's dialect: the record format's own, else the option's
    this.dialect = formatOf(o.format).dialect || o.dialect
    // the records' topic per namespace (lib/kafka/scope.js)
    o.topicOf = router(o)
    // $changeStream, then the include/exclude namespaces' $match, then the user's stages
    const match = namespaceMatch(o.include, o.exclude)
    this.pipeline = match === null ? o.pipeline || [] : [match, ...(o.pipeline || [])]
    // the topics known to exist (null: not created by this run, createTopics false)
    this.knownTopics = null
    this.stats = {
      events: 0,
      batches: 0,
      transactions: 0,
      restarts: 0,
      mongoRetries: 0, // MongoDB failures retried (cursor reopened, or the cycle restarted)
      resumeToken: null,
      clusterTime: null, // {t, i} of the last committed event or checkpoint
      startedFrom: null, // 'checkpoint' | 'snapshot' | 'resumeAfter' | 'startAtOperationTime' | 'now'
      snapshot: null, // { reason, records, done } while or after a snapshot ran in this process
    }
    // Set when the history at the checkpoint was lost and onHistoryLost is 'snapshot': the next
    // cycle starts a new snapshot whatever the checkpoint says.
    this.resnapshot = null
    // The start position this run was asked for, as a string; with overrideCheckpoint it is
    // written into every checkpoint, so a restart with the same override resumes from the
    // checkpoint instead of applying it again (an override takes effect once).
    this.requested =
      o.resumeAfter !== undefined
        ? `resumeAfter:${ejson().stringify(o.resumeAfter, { relaxed: false })}`
        : o.startAtOperationTime !== undefined
          ? `startAtOperationTime:${o.startAtOperationTime.toString()}`
          : 'now'
    this.origin = null // carried from checkpoint to checkpoint
    this.ac = new AbortController()
    this.signal = this.ac.signal
    this.stopping = false
    this.current = null // { admin } or { stream, producer, consumer }
    this.kafkaOutage = new KafkaOutage(o, () => this.closeCurrent())
    this.mongo = new MongoOutage(o.mongoRetryTimeoutMS, this.stats, o.onMongoRetry)
    this.onAbort = () => this.stop()
    if (o.signal) {
      if (o.signal.aborted) this.stopping = true
      else o.signal.addEventListener('abort', this.onAbort, { once: true })
    }
    this.done = this.run()
  }

  /** Ends the run: the batch in hand is committed (or aborted), then the clients close. */
  stop() {
    if (!this.stopping) {
      this.stopping = true
      this.ac.abort()
      // Closing the stream ends the batches() loop after the batch in hand; an open
      // transaction is committed (its batch was complete) or aborted by the loop.
      if (this.current && this.current.stream) this.current.stream.close().catch(() => {})
    }
    return this.done.then(
      () => undefined,
      () => undefined,
    )
  }

  /** The cycles, until a stop, a clean end or a failure that ends the run. */
  async run() {
    const o = this.o
    const stats = this.stats
    const outage = this.kafkaOutage
    try {
      // The limits count from the first attempt to reach Kafka, not from loading its client
      // (a second or more on a loaded machine).
      kafka()
      outage.restartClock()
      await this.ensureTopicsOnce()
      let delay = o.retryDelayMS
      for (;;) {
        if (this.stopping) return
        try {
          await outage.bounded(() => this.cycle())
          return
        } catch (e) {
          if (e instanceof SourceError) {
            if (await this.afterSourceFailure(e)) continue
            return
          }
          if (e instanceof KafkaFencedError) throw e
          if (this.stopping) return
          const fatal = outage.failed(e)
          if (fatal) throw fatal
          stats.restarts++
          stats.lastError = outage.lastCause
          stats.giveUpInMS = outage.left()
          if (o.onRestart) o.onRestart(e, stats)
          await sleep(Math.min(delay, stats.giveUpInMS), this.signal)
          delay = Math.min(delay * 2, 10_000)
        }
      }
    } finally {
      if (o.signal) o.signal.removeEventListener('abort', this.onAbort)
    }
  }

  /**
   * After a MongoDB failure of a cycle: true to run the next cycle (after the back-off, or for a
   * new snapshot after lost history), false when stopped; throws when it ends the run.
   * @param {SourceError} e
   */
  async afterSourceFailure(e) {
    const o = this.o
    const stats = this.stats
    if (!e.final && !this.stopping) {
      // The stream's own resume (or the snapshot's start) did not outlast it: the cycle
      // again, from the last committed checkpoint.
      const what = stats.snapshot && !stats.snapshot.done ? 'the snapshot' : 'the change stream'
      const wait = this.mongo.failed(e.cause, what)
      if (wait !== null) {
        await sleep(wait, this.signal)
        return true
      }
    }
    if (this.stopping && isTransientSourceError(e.cause)) return false
    if (!isHistoryLost(e.cause)) throw sourceMarked(e.cause)
    if (o.onHistoryLost === 'snapshot' && this.resnapshot === null) {
      this.resnapshot = 'history-lost'
      return true
    }
    throw new ChangeStreamHistoryLostError({
      id: o.id,
      checkpointClusterTime: tokenClusterTime(stats.resumeToken) || stats.clusterTime || null,
      oldestClusterTime: await oldestOplogTime(o.source),
      cause: e.cause,
    })
  }

  closeCurrent() {
    const c = this.current
    if (!c) return
    if (c.admin) c.admin.close().catch(() => {})
    if (c.consumer) c.consumer.close(true).catch(() => {})
    if (c.producer) c.producer.close(true).catch(() => {})
  }

  async ensureTopicsOnce() {
    const o = this.o
    const outage = this.kafkaOutage
    if (o.createTopics === false) return
    let said = false
    for (;;) {
      try {
        this.knownTopics = await outage.bounded(() => ensureTopics(o, o.brokers, o.kafka || {}, (admin) => (this.current = admin === null ? null : { admin })))
        return
      } catch (e) {
        if (this.stopping) return
        const fatal = outage.failed(e)
        if (fatal) throw fatal
        if (!said && o.onRestart) {
          // Said once: the start goes on retrying until connectTimeoutMS.
          said = true
          this.stats.lastError = outage.lastCause
          this.stats.giveUpInMS = outage.left()
          o.onRestart(e, this.stats)
        }
        await sleep(Math.min(500, outage.left()), this.signal)
      }
    }
  }

  /**
   * Creates the topics of `messages` not known to exist yet (a collection seen for the first
   * time with a topic per collection), before they are sent.
   */
  async ensureTopicsOf(messages) {
    const known = this.knownTopics
    if (known === null) return
    let missing = null
    for (const m of messages) {
      if (!known.has(m.topic)) (missing ??= new Set()).add(m.topic)
    }
    if (missing === null) return
    const o = this.o
    const current = this.current
    const now = await ensureTopics(o, o.brokers, o.kafka || {}, (admin) => (current.admin = admin === null ? undefined : admin), [...missing])
    for (const t of now) known.add(t)
  }

  /** The cycle's clients: the transactional producer (its id derived from the stream id) and the checkpoint reader. */
  clients() {
    const o = this.o
    const { Producer, Consumer, compatibilityPartitioner } = kafka()
    const extra = o.kafka || {}
    const producer = new Producer({
      retries: 5,
      retryDelay,
      ...extra,
      clientId: `bson2json-cdc.${o.id}`,
      bootstrapBrokers: o.brokers,
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
      bootstrapBrokers: o.brokers,
    })
    return { producer, consumer, stream: null }
  }

  /**
   * One cycle: new clients, the fence, the last checkpoint, then the snapshot when one is due
   * and the change stream after it. Returns when stopped or at the stream's end; throws on any
   * failure (the run decides whether to retry).
   */
  async cycle() {
    const o = this.o
    const current = this.clients()
    const { producer, consumer } = current
    this.current = current
    const tx = new Transaction(producer, o, this.stats, () => this.origin)
    let fenced = false
    try {
      // 1. Fence: InitProducerId for our transactional.id (aborts a zombie's open transaction).
      await tx.fence()
      fenced = true
      // 2. The last committed checkpoint (read_committed, after the fence).
      const ck = await readCheckpointWith(consumer, o.checkpointTopic, o.id)
      await consumer.close().catch(() => {})
      this.kafkaOutage.answered()
      if (this.stopping) return
      // 3. Where the stream starts (after a snapshot, the checkpoint, or the requested position),
      // then 4. the change stream.
      const wopts = await this.startPosition(tx, ck)
      if (wopts === null) return // stopped during the snapshot
      const stream = formatOf(o.format).watch(o, o.source, this.pipeline, wopts)
      current.stream = stream
      if (this.stopping) stream.close().catch(() => {})
      await new StreamCopy(this, tx, stream, ck && typeof ck.events === 'number' ? ck.events : 0).run()
    } catch (e) {
      if (e instanceof SourceError) throw e
      // Fenced after our own InitProducerId succeeded: a newer process owns the id.
      if (fenced && isFenced(e)) throw new KafkaFencedError(o.id, e)
      throw e
    } finally {
      await tx.close()
      if (current.stream) await current.stream.close().catch(() => {})
      await consumer.close().catch(() => {})
      await producer.close(true).catch(() => {})
      this.current = null
    }
  }

  /**
   * The `watch()` options of the cycle with its start position: after a snapshot (a new one:
   * first start with `snapshot`, an override with it, or lost history; or the one the checkpoint
   * says is under way), which runs first; the checkpoint; or the requested position. Null when
   * stopped during the snapshot.
   */
  async startPosition(tx, ck) {
    const o = this.o
    const stats = this.stats
    const override = o.overrideCheckpoint === true && (!ck || ck.origin !== this.requested)
    let snap = null
    if (this.resnapshot !== null) snap = { reason: this.resnapshot, ranges: null, records: 0, fresh: true }
    else if ((!ck || override) && o.snapshot === true) snap = { reason: ck ? 'override' : 'initial', ranges: null, records: 0, fresh: true }
    else if (ck && !override && ck.snapshot) snap = { ...ck.snapshot, ranges: resumedRanges(ck.snapshot), fresh: false }
    const wopts = this.watchOptions()
    if (snap !== null) {
      stats.startedFrom = 'snapshot'
      const token = await new SnapshotCopy(this, tx, snap, ck).run()
      if (token === null) return null
      this.resnapshot = null
      if (snap.fresh && o.overrideCheckpoint === true) this.origin = this.requested
      wopts.resumeAfter = token
      if (stats.resumeToken === null) stats.resumeToken = token
    } else if (ck && !override) {
      this.origin = ck.origin === undefined ? null : ck.origin
      wopts.resumeAfter = ck.resumeToken
      stats.startedFrom = 'checkpoint'
      if (stats.resumeToken === null) {
        stats.resumeToken = ck.resumeToken
        stats.clusterTime = ck.clusterTime || null
      }
      if (stats.events === 0 && typeof ck.events === 'number') stats.committedEvents = ck.events
    } else {
      if (o.overrideCheckpoint === true) this.origin = this.requested
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
    return wopts
  }

  /** The options of the cycle's `watch()` (its start position is added by the cycle). */
  watchOptions() {
    const o = this.o
    const wopts = {
      whole: o.value !== 'fullDocument',
      dialect: this.dialect,
      batchSize: o.batchSize,
      maxAwaitTimeMS: o.maxAwaitTimeMS,
      timeoutMS: o.timeoutMS,
      prefetch: o.prefetch,
      fullDocument: o.fullDocument === undefined ? formatOf(o.format).fullDocument : o.fullDocument,
      fullDocumentBeforeChange: o.fullDocumentBeforeChange,
      showExpandedEvents: o.showExpandedEvents,
      splitLargeEvents: o.splitLargeEvents,
      projection: o.projection,
      redact: o.redact,
    }
    for (const k of Object.keys(wopts)) if (wopts[k] === undefined) delete wopts[k]
    return wopts
  }

  /**
   * The cluster time now (`{t, i}`, the operationTime of a ping), or null: the time of a snapshot's
   * position when its resume token does not say it (a server whose tokens are not MongoDB's).
   */
  async clusterTimeNow() {
    const source = this.o.source
    const client = typeof source.startSession === 'function' ? source : source.client
    if (!client || typeof client.startSession !== 'function') return null
    const session = client.startSession()
    try {
      await client.db('admin').command({ ping: 1 }, { session, timeoutMS: this.o.timeoutMS })
      const t = session.operationTime
      return t ? { t: t.high >>> 0, i: t.low >>> 0 } : null
    } catch {
      return null
    } finally {
      await session.endSession().catch(() => {})
    }
  }

  /** The change stream's position now (the postBatchResumeToken of an empty first batch). */
  async positionNow() {
    const o = this.o
    // no getMore after the first batch: its reply would only be waited for by close()
    const probe = watch(o.source, this.pipeline, { batchSize: 0, prefetch: 0, timeoutMS: o.timeoutMS, dialect: this.dialect })
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
}

/** A MongoDB error that ends the run, marked as the source's (a bare socket error has no Mongo name). */
function sourceMarked(e) {
  if (e !== null && typeof e === 'object') e.source = true
  return e
}

/**
 * Runs a change stream into Kafka until `stop()` (or the signal), a fatal error, or an
 * invalidate event. Returns `{ done, stop(), stats }`: `done` resolves when the run ends cleanly
 * and rejects with the fatal error otherwise.
 */
function changeStreamToKafka(options) {
  const sink = new KafkaSink(options)
  return { done: sink.done, stop: () => sink.stop(), stats: sink.stats }
}

module.exports = {
  changeStreamToKafka,
  readCheckpoint,
  readCommitted,
  transactionalIdOf,
  KafkaFencedError,
  KafkaUnavailableError,
  ChangeStreamHistoryLostError,
  kafkaCause,
  tokenClusterTime,
}
