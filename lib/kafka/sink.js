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
 * The Kafka client is the optional peer dependency `@platformatic/kafka` (1.35.x, or 2.x from 2.12.1
 * on Node >= 22.22: the same code path, docs/kafka.md).
 */

const { watch, snapshot } = require('../mongo/change-stream')
const { KafkaUnavailableError, ChangeStreamHistoryLostError, KafkaFencedError, SourceError, isHistoryLost, isTransientSourceError, kafkaCause, isRefused, isFenced } = require('./errors')
const { kafka, ejson, transactionalIdOf, ensureTopics, sendChunked, messageSize, sleep, timer } = require('./client')
const { CHECKPOINT_VERSION, committedRecords, readCommitted, readCheckpointWith, readCheckpoint, oldestOplogTime, tokenClusterTime } = require('./checkpoint')
const { checkOptions, withDefaults } = require('./options')
const { splitRanges } = require('../mongo/ranges')

/**
 * One run of a change stream into Kafka (`changeStreamToKafka`). The run is a loop of cycles
 * ({@link KafkaSink#cycle}: clients, fence, checkpoint, then the snapshot and the stream), each
 * ended by a Kafka failure, which starts the next after a back-off until the outage outlasts its
 * limit; a MongoDB failure or a fence ends the run. {@link KafkaSink#stop} ends it cleanly.
 */
class KafkaSink {
  constructor(options) {
    this.brokers = checkOptions(options)
    // own properties only (null prototype), with the table's defaults (lib/option-table.js)
    const o = withDefaults(options)
    o.brokers = this.brokers
    this.o = o
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
    this.stopping = false
    this.current = null // { admin } or { stream, producer, consumer }
    this.connectTimeoutMS = o.connectTimeoutMS
    this.maxRequestBytes = o.maxRequestBytes
    this.retryTimeoutMS = o.retryTimeoutMS
    // Kafka has been unreachable since this time (the start counts as an outage until the first
    // fence and checkpoint read succeed); null while it answers.
    this.outageSince = Date.now()
    this.started = false
    this.lastCause = null
    // MongoDB has failed without an answer since this time (null: it answers), and the next
    // back-off before a retry (100 ms doubling to 5 s, from the first failure of an outage).
    this.mongoRetryTimeoutMS = o.mongoRetryTimeoutMS
    this.mongoOutageSince = null
    this.mongoDelayMS = MONGO_FIRST_DELAY_MS
    this.watchdog = null
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
    try {
      // The limits count from the first attempt to reach Kafka, not from loading its client
      // (a second or more on a loaded machine).
      kafka()
      if (!this.started) this.outageSince = Date.now()
      await this.ensureTopicsOnce()
      let delay = o.retryDelayMS
      for (;;) {
        if (this.stopping) return
        try {
          await this.bounded(() => this.cycle())
          return
        } catch (e) {
          if (e instanceof SourceError) {
            if (!e.final && !this.stopping) {
              // The stream's own resume (or the snapshot's start) did not outlast it: the cycle
              // again, from the last committed checkpoint.
              const what = stats.snapshot && !stats.snapshot.done ? 'the snapshot' : 'the change stream'
              const wait = this.sourceFailure(e.cause, what)
              if (wait !== null) {
                await sleep(wait, this.ac.signal)
                continue
              }
            }
            if (this.stopping && isTransientSourceError(e.cause)) return
            if (!isHistoryLost(e.cause)) throw sourceMarked(e.cause)
            if (o.onHistoryLost === 'snapshot' && this.resnapshot === null) {
              this.resnapshot = 'history-lost'
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
          if (this.stopping) return
          const fatal = this.afterFailure(e)
          if (fatal) throw fatal
          stats.restarts++
          stats.lastError = this.lastCause
          stats.giveUpInMS = Math.max(0, this.outageSince + this.limit() - Date.now())
          if (o.onRestart) o.onRestart(e, stats)
          await sleep(Math.min(delay, stats.giveUpInMS), this.ac.signal)
          delay = Math.min(delay * 2, 10_000)
        }
      }
    } finally {
      if (o.signal) o.signal.removeEventListener('abort', this.onAbort)
    }
  }

  // -- MongoDB outages -----------------------------------------------------------------------

  /**
   * After a MongoDB failure: the back-off (ms) before it is retried, or null when it ends the run:
   * not transient (lib/kafka/errors.js `isTransientSourceError`), or MongoDB has not answered for
   * `mongoRetryTimeoutMS` (then `e.retriedMS` says so). Reports the retry through `onMongoRetry`.
   * @param {any} e the driver's error
   * @param {string} what what is reopened ('the change stream', 'the snapshot', 'snapshot range 2 of 4')
   */
  sourceFailure(e, what) {
    if (!isTransientSourceError(e)) return null
    const now = Date.now()
    if (this.mongoOutageSince === null) {
      this.mongoOutageSince = now
      this.mongoDelayMS = MONGO_FIRST_DELAY_MS
    }
    const left = this.mongoOutageSince + this.mongoRetryTimeoutMS - now
    if (left <= 0) {
      if (e !== null && typeof e === 'object') e.retriedMS = this.mongoRetryTimeoutMS
      return null
    }
    const wait = Math.min(this.mongoDelayMS, left)
    this.mongoDelayMS = Math.min(this.mongoDelayMS * 2, MONGO_MAX_DELAY_MS)
    const stats = this.stats
    stats.mongoRetries++
    stats.lastMongoError = sourceCause(e)
    stats.mongoGiveUpInMS = left
    if (this.o.onMongoRetry) this.o.onMongoRetry(e, stats, what)
    return wait
  }

  /** MongoDB answered (a batch came): the next failure starts a new outage. */
  sourceAnswered() {
    this.mongoOutageSince = null
  }

  // -- Kafka outages -------------------------------------------------------------------------

  /** How long the current outage may last: `connectTimeoutMS` at the start, then `retryTimeoutMS`. */
  limit() {
    return this.started ? this.retryTimeoutMS : this.connectTimeoutMS
  }

  /** Bounds one attempt: past the outage's limit, close whatever client it is waiting on. */
  async bounded(attempt) {
    const limit = this.limit()
    let timedOut = false
    if (this.outageSince !== null) {
      this.watchdog = setTimeout(
        () => {
          timedOut = true
          this.closeCurrent()
        },
        Math.max(0, this.outageSince + limit - Date.now()),
      )
    }
    try {
      return await attempt()
    } catch (e) {
      if (timedOut && e !== null && typeof e === 'object') e.timeoutReason = `no answer within ${Math.round(limit / 1000)} s`
      throw e
    } finally {
      clearTimeout(this.watchdog)
      this.watchdog = null
    }
  }

  closeCurrent() {
    const c = this.current
    if (!c) return
    if (c.admin) c.admin.close().catch(() => {})
    if (c.consumer) c.consumer.close(true).catch(() => {})
    if (c.producer) c.producer.close(true).catch(() => {})
  }

  /** After a failed attempt: the error that ends the run, or null to retry. */
  afterFailure(e) {
    if (this.outageSince === null) this.outageSince = Date.now()
    // A timed-out attempt fails with whatever closing the client threw: keep the cause seen
    // before it, if any.
    this.lastCause = e && e.timeoutReason ? (this.lastCause ?? e.timeoutReason) : kafkaCause(e)
    const limit = this.limit()
    const phase = this.started ? 'running' : 'start'
    if (isRefused(this.lastCause)) return new KafkaUnavailableError({ brokers: this.brokers, phase, reason: this.lastCause, seconds: 0, cause: e, refused: true })
    if (Date.now() - this.outageSince < limit) return null
    return new KafkaUnavailableError({ brokers: this.brokers, phase, reason: this.lastCause, seconds: Math.round(limit / 1000), cause: e })
  }

  kafkaAnswered() {
    clearTimeout(this.watchdog)
    this.watchdog = null
    this.started = true
    this.outageSince = null
    this.lastCause = null
  }

  async ensureTopicsOnce() {
    const o = this.o
    if (o.createTopics === false) return
    let said = false
    for (;;) {
      try {
        await this.bounded(() => ensureTopics(o, this.brokers, o.kafka || {}, (admin) => (this.current = admin === null ? null : { admin })))
        return
      } catch (e) {
        if (this.stopping) return
        const fatal = this.afterFailure(e)
        if (fatal) throw fatal
        if (!said && o.onRestart) {
          // Said once: the start goes on retrying until connectTimeoutMS.
          said = true
          this.stats.lastError = this.lastCause
          this.stats.giveUpInMS = Math.max(0, this.outageSince + this.connectTimeoutMS - Date.now())
          o.onRestart(e, this.stats)
        }
        await sleep(Math.min(500, Math.max(0, this.outageSince + this.connectTimeoutMS - Date.now())), this.ac.signal)
      }
    }
  }

  // -- one cycle -----------------------------------------------------------------------------

  /** The checkpoint record of stream `o.id` (committed in the same transaction as what it covers). */
  checkpointMessage(resumeToken, clusterTime, events, snap) {
    const o = this.o
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
          origin: this.origin === null ? undefined : this.origin,
          // while a snapshot is under way: why it runs, the records copied so far, and each `_id`
          // range's bounds, last _id copied and whether it is done (canonical Extended JSON,
          // null: open / none yet); one range also as `after`, the form before parallel ranges
          snapshot: snap === undefined ? undefined : snapshotState(snap),
        }),
      ),
    }
  }

  /**
   * One cycle: new clients, the fence, the last checkpoint, then the snapshot when one is due
   * and the change stream after it. Returns when stopped or at the stream's end; throws on any
   * failure (the run decides whether to retry).
   */
  async cycle() {
    const o = this.o
    const stats = this.stats
    const { Producer, Consumer, compatibilityPartitioner } = kafka()
    const extra = o.kafka || {}
    const producer = new Producer({
      retries: 5,
      retryDelay: 200,
      ...extra,
      clientId: `bson2json-cdc.${o.id}`,
      bootstrapBrokers: this.brokers,
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
      bootstrapBrokers: this.brokers,
    })
    const current = { producer, consumer, stream: null }
    this.current = current
    // The transaction in hand: { tx } so the phases below can pass it on and clear it.
    const hand = { tx: null }
    let initialized = false
    try {
      // 1. Fence: InitProducerId for our transactional.id (aborts a zombie's open transaction).
      // producerId/epoch -1: "a new producer instance" (the client would send 0/0, which a
      // broker that knows the transactional id answers with PRODUCER_FENCED).
      hand.tx = await producer.beginTransaction({ producerId: -1n, producerEpoch: -1 })
      initialized = true
      // 2. The last committed checkpoint (read_committed, after the fence).
      const ck = await readCheckpointWith(consumer, o.checkpointTopic, o.id)
      await consumer.close().catch(() => {})
      this.kafkaAnswered()
      if (this.stopping) return
      // 3. Where the stream starts: after a snapshot, the checkpoint, or the requested position.
      const override = o.overrideCheckpoint === true && (!ck || ck.origin !== this.requested)
      // 3a. The snapshot: a new one (first start with `snapshot`, an override with it, or lost
      // history), or the one the checkpoint says is under way.
      let snap = null
      if (this.resnapshot !== null) snap = { reason: this.resnapshot, ranges: null, records: 0, fresh: true }
      else if ((!ck || override) && o.snapshot === true) snap = { reason: ck ? 'override' : 'initial', ranges: null, records: 0, fresh: true }
      else if (ck && !override && ck.snapshot) snap = { ...ck.snapshot, ranges: resumedRanges(ck.snapshot), fresh: false }
      const wopts = this.watchOptions()
      const committed = ck && typeof ck.events === 'number' ? ck.events : 0
      if (snap !== null) {
        stats.startedFrom = 'snapshot'
        const token = await this.runSnapshot(producer, snap, ck, hand)
        if (token === null) return // stopped
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
      // 4. The change stream.
      const stream = watch(o.source, o.pipeline || [], wopts)
      current.stream = stream
      if (this.stopping) stream.close().catch(() => {})
      await this.runStream(producer, stream, hand, committed)
    } catch (e) {
      if (e instanceof SourceError) throw e
      // Fenced after our own InitProducerId succeeded: a newer process owns the id.
      if (initialized && isFenced(e)) throw new KafkaFencedError(o.id, e)
      throw e
    } finally {
      const tx = hand.tx
      if (tx !== null && !tx.completed) {
        // Nothing of this transaction was committed: abort it (best effort; the next fence
        // aborts it anyway), or drop it locally when nothing reached the broker.
        await tx.abort().catch(() => tx.cancel().catch(() => {}))
      }
      if (current.stream) await current.stream.close().catch(() => {})
      await consumer.close().catch(() => {})
      await producer.close(true).catch(() => {})
      this.current = null
    }
  }

  /** The options of the cycle's `watch()` (its start position is added by the cycle). */
  watchOptions() {
    const o = this.o
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
    return wopts
  }

  /** The change stream's position now (the postBatchResumeToken of an empty first batch). */
  async positionNow() {
    const o = this.o
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
   * The snapshot: the collection's documents into the topic in `_id` order, in `snapshotParallel`
   * `_id` ranges read by one cursor each, concurrently (lib/mongo/ranges.js splits them, once:
   * the bounds are in the checkpoint). Each transaction holds the batches the ranges have ready
   * (at most one per range, up to `maxTransactionBytes`) with one checkpoint saying how far every range got (`after`, `done`),
   * so a crash resumes each range after its last committed batch and no record is written twice.
   * A key lives in one range and a range's batches go in `_id` order, so per key the order holds.
   * A new snapshot first takes the change stream's position and commits it with the ranges and an
   * empty copy, so every change made while the copy runs is streamed after it. The last
   * transaction checkpoints that position without `snapshot`: the stream takes over. Returns that
   * position, or null when stopped.
   * @param {any} producer
   * @param {{reason: string, ranges: Range[]|null, records: number, fresh: boolean}} snap
   * @param {any} ck the checkpoint read at the start of the cycle (null: none)
   * @param {{ tx: any }} hand the transaction in hand (the fence's, used first)
   */
  async runSnapshot(producer, snap, ck, hand) {
    const o = this.o
    const stats = this.stats
    const events = ck && typeof ck.events === 'number' ? ck.events : 0
    let token
    if (snap.fresh) {
      token = await this.positionNow()
      const split = await this.snapshotRanges()
      snap.ranges = split.ranges
      snap.rangesNote = split.note
      if (hand.tx === null) hand.tx = await producer.beginTransaction()
      await hand.tx.send({ messages: [this.checkpointMessage(token, undefined, events, snap)] })
      await this.commit(hand)
    } else {
      token = ck.resumeToken
      if (ck.origin !== undefined) this.origin = ck.origin
    }
    stats.snapshot = { reason: snap.reason, records: snap.records, done: false, ranges: snap.ranges.length, rangesNote: snap.rangesNote }
    if (o.onProgress) o.onProgress(stats, { events: [], resumeToken: token })
    const parse = (v) => (v === null || v === undefined ? undefined : ejson().parse(v, { relaxed: false }))
    const batchSize = o.snapshotBatchSize
    // One reader per range not done: its cursor, the iterator, and the next batch under way.
    const readers = []
    // A range's cursor, from its position in the last committed checkpoint: after its last
    // committed `_id` (`after`), else from its start. Batches read past it but not committed are
    // read again; none of them is in Kafka (a round commits before the next one takes batches).
    const open = (r) => {
      const range = snap.ranges[r.i]
      r.cursor = snapshot(o.source, {
        dialect: o.dialect,
        projection: o.projection,
        redact: o.redact,
        batchSize,
        from: parse(range.lo),
        before: parse(range.hi),
        after: parse(range.after),
      })
      r.it = r.cursor.batches()[Symbol.asyncIterator]()
    }
    snap.ranges.forEach((range, i) => {
      if (range.done) return
      const r = { i, cursor: null, it: null, next: null, settled: null }
      open(r)
      readers.push(r)
    })
    this.current.stream = { close: () => Promise.all(readers.map((r) => r.cursor.close())) }
    if (this.stopping) await this.current.stream.close()
    // Asks a range for its next batch; `settled` holds the outcome once there (never a rejection
    // left unhandled while the others are written).
    const pull = (r) => {
      r.settled = null
      r.next = r.it.next().then(
        (v) => (r.settled = { v }),
        (e) => (r.settled = { e }),
      )
    }
    // A range whose cursor failed (a transient MongoDB error): after the back-off, a new cursor
    // from the range's committed position; the other ranges go on meanwhile.
    const reopen = (r, wait) => {
      r.cursor.close().catch(() => {})
      r.settled = null
      r.next = sleep(wait, this.ac.signal)
        .then(() => {
          if (this.stopping) return { done: true }
          open(r)
          return r.it.next()
        })
        .then(
          (v) => (r.settled = { v }),
          (e) => (r.settled = { e }),
        )
    }
    for (const r of readers) pull(r)
    const maxTxBytes = o.maxTransactionBytes
    let live = readers
    let round = 0
    while (live.length > 0) {
      if (!live.some((r) => r.settled !== null)) await Promise.race(live.map((r) => r.next))
      // A stop closes the cursors, which ends them like the end of their ranges does (or fails
      // them): nothing of this round is committed, and no range is marked done.
      if (this.stopping) return null
      const messages = []
      const took = []
      let ended = false
      let bytes = 0
      // From a range that turns with each round: a transaction full (maxTransactionBytes) leaves
      // the other ranges' batches for the next, and no range waits behind the others every time.
      const first = round++ % live.length
      for (let k = 0; k < live.length; k++) {
        const r = live[(first + k) % live.length]
        const got = r.settled
        if (got === null) continue
        if (bytes >= maxTxBytes && got.e === undefined && !got.v.done) continue
        if (got.e !== undefined) {
          const what = snap.ranges.length > 1 ? `snapshot range ${r.i + 1} of ${snap.ranges.length}` : 'the snapshot'
          const wait = this.sourceFailure(got.e, what)
          if (wait === null) throw Object.assign(new SourceError(got.e), { final: true })
          reopen(r, wait)
          continue
        }
        this.sourceAnswered()
        if (got.v.done) {
          ended = true
          continue
        }
        const b = got.v.value
        pull(r)
        if (b.events.length === 0) continue
        for (const ev of b.events) {
          ev.json = `{"operationType":"snapshot","ns":${JSON.stringify(ev.ns)},"documentKey":${ev.documentKey},"fullDocument":${ev.fullDocument}}`
          const m = toMessage(o, ev)
          m.headers.set(Buffer.from('snapshot'), Buffer.from(snap.reason))
          messages.push(m)
          bytes += messageSize(m)
        }
        took.push({ r, b })
      }
      if (this.stopping) return null
      if (ended) {
        for (const r of live) if (r.settled !== null && r.settled.v && r.settled.v.done) snap.ranges[r.i].done = true
        live = live.filter((r) => !snap.ranges[r.i].done)
      }
      // A range's end rides on the next checkpoint (a crash before it finds the range empty).
      if (messages.length === 0) continue
      for (const { r, b } of took) {
        snap.ranges[r.i].after = ejson().stringify(b.after, { relaxed: false })
        snap.records += b.events.length
      }
      messages.push(this.checkpointMessage(token, undefined, events, snap))
      if (hand.tx === null) hand.tx = await producer.beginTransaction()
      await sendChunked(hand.tx, messages, this.maxRequestBytes)
      await this.commit(hand)
      stats.snapshot.records = snap.records
      if (o.onProgress) for (const { b } of took) o.onProgress(stats, b)
    }
    if (this.stopping) return null
    if (hand.tx === null) hand.tx = await producer.beginTransaction()
    await hand.tx.send({ messages: [this.checkpointMessage(token, undefined, events, undefined)] })
    await this.commit(hand)
    stats.snapshot.done = true
    return token
  }

  /**
   * The `_id` ranges of a new snapshot (`snapshotParallel`, default 1): bounds as canonical
   * Extended JSON, nothing copied yet. One range where splitting does not apply (few documents,
   * `_id`s of different kinds, a slow server): lib/mongo/ranges.js, whose reason is `note`.
   * @returns {Promise<{ ranges: Range[], note?: string }>}
   */
  async snapshotRanges() {
    const o = this.o
    const n = o.snapshotParallel
    if (n === 1) return { ranges: [{ lo: null, hi: null, after: null, done: false }] }
    let split
    try {
      split = await splitRanges(o.source, {}, n)
    } catch (e) {
      throw new SourceError(e)
    }
    const ext = (v) => (v === undefined ? null : ejson().stringify(v, { relaxed: false }))
    const ranges = split.ranges.map((r) => ({ lo: ext(r.lo), hi: ext(r.hi), after: null, done: false }))
    return { ranges, note: ranges.length < n ? split.note : undefined }
  }

  /** Commits the transaction in hand. */
  async commit(hand) {
    await hand.tx.commit()
    hand.tx = null
    this.stats.transactions++
  }

  /**
   * The change stream into Kafka. The open transaction holds the server batches sent into it
   * since it began; it commits with one checkpoint (the last batch's token) once it is
   * `commitIntervalMS` old or holds `maxTransactionBytes`, when no next batch comes within that
   * interval, and at the end.
   * @param {any} producer
   * @param {any} stream the ChangeStream
   * @param {{ tx: any }} hand the transaction in hand
   * @param {number} committed the events committed before this cycle (the checkpoint's count)
   */
  async runStream(producer, stream, hand, committed) {
    const o = this.o
    const stats = this.stats
    let total = committed
    let lastCheckpointAt = Date.now()
    let first = true
    const idleMS = o.idleCheckpointMS
    const commitMS = o.commitIntervalMS
    const maxTxBytes = o.maxTransactionBytes
    let open = null
    const commitOpen = async () => {
      const t = open
      total += t.events
      await hand.tx.send({ messages: [this.checkpointMessage(t.token, t.clusterTime || stats.clusterTime || undefined, total, undefined)] })
      await this.commit(hand)
      open = null
      lastCheckpointAt = Date.now()
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
          if (wait <= 0) r = TIMEOUT
          else {
            // The timer goes (with its abort listener) as soon as the race is decided.
            const t = timer(wait, this.ac.signal)
            try {
              r = await Promise.race([pending, t.promise.then(() => TIMEOUT)])
            } finally {
              t.cancel()
            }
          }
        }
      } catch (e) {
        throw new SourceError(e)
      }
      if (r === TIMEOUT) {
        await commitOpen()
        continue
      }
      this.sourceAnswered()
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
      if (hand.tx === null) hand.tx = await producer.beginTransaction()
      if (open === null) open = { since: now, bytes: 0, events: 0, batches: 0, token: null, clusterTime: null, last: null }
      const messages = batch.events.map((ev) => {
        if (ev.clusterTime) open.clusterTime = ev.clusterTime
        return toMessage(o, ev)
      })
      open.bytes += await sendChunked(hand.tx, messages, this.maxRequestBytes)
      open.events += batch.events.length
      open.batches++
      open.token = batch.resumeToken
      open.last = batch
      if (open.bytes >= maxTxBytes || Date.now() - open.since >= commitMS || this.stopping) await commitOpen()
    }
    if (open !== null) await commitOpen()
  }
}

/** The back-off before a MongoDB retry: the first of an outage, and the most (doubling between). */
const MONGO_FIRST_DELAY_MS = 100
const MONGO_MAX_DELAY_MS = 5000

/** A MongoDB error as one line for the retry report: its message and, when it has one, its code. */
function sourceCause(e) {
  if (e === null || typeof e !== 'object') return String(e)
  const msg = String(e.message || e.name || e).split('\n')[0]
  if (e.codeName) return `${msg} (${e.codeName} ${e.code})`
  if (typeof e.code === 'number' || (typeof e.code === 'string' && !msg.includes(e.code))) return `${msg} (${e.code})`
  return msg
}

/** A MongoDB error that ends the run, marked as the source's (a bare socket error has no Mongo name). */
function sourceMarked(e) {
  if (e !== null && typeof e === 'object') e.source = true
  return e
}

/**
 * @typedef {{ lo: string|null, hi: string|null, after: string|null, done: boolean }} Range
 * One `_id` range of a snapshot: `lo <= _id < hi` (null: open; canonical Extended JSON), the
 * last `_id` copied (null: none yet), and whether all of it is copied.
 */

/** A snapshot's state as its checkpoint records it. */
function snapshotState(snap) {
  const ranges = snap.ranges.map((r) => ({ lo: r.lo, hi: r.hi, after: r.after, done: r.done }))
  const one = ranges.length === 1 && ranges[0].lo === null && ranges[0].hi === null
  return { reason: snap.reason, records: snap.records, after: one ? ranges[0].after : undefined, ranges }
}

/** The ranges of a snapshot under way, from its checkpoint (one whole-collection range before parallel ranges). */
function resumedRanges(state) {
  if (Array.isArray(state.ranges)) return state.ranges.map((r) => ({ lo: r.lo, hi: r.hi, after: r.after, done: r.done === true }))
  return [{ lo: null, hi: null, after: state.after === undefined ? null : state.after, done: false }]
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

/** A change event as a Kafka message: key the document key, value the event or the document. */
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
