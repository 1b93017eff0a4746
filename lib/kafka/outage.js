'use strict'

/**
 * How long the sink goes on through failures: a Kafka outage (at start within `connectTimeoutMS`,
 * once running within `retryTimeoutMS` of its first failure, each attempt bounded by a watchdog
 * that closes the client it waits on) and a MongoDB outage (retried with a back-off for up to
 * `mongoRetryTimeoutMS` without a batch received). Each class owns its clock; the sink asks it
 * what to do after a failure and tells it when the other side answered.
 */

const { KafkaUnavailableError, isTransientSourceError, kafkaCause, isRefused } = require('./errors')

/** The back-off before a MongoDB retry: the first of an outage, and the most (doubling between). */
const MONGO_FIRST_DELAY_MS = 100
const MONGO_MAX_DELAY_MS = 5000

class KafkaOutage {
  /**
   * @param {{ brokers: string[], connectTimeoutMS: number, retryTimeoutMS: number }} o
   * @param {() => void} closeCurrent closes whatever client the attempt waits on (the watchdog's action)
   */
  constructor(o, closeCurrent) {
    this.brokers = o.brokers
    this.connectTimeoutMS = o.connectTimeoutMS
    this.retryTimeoutMS = o.retryTimeoutMS
    this.closeCurrent = closeCurrent
    // Kafka has been unreachable since this time (the start counts as an outage until the first
    // fence and checkpoint read succeed); null while it answers.
    this.since = Date.now()
    this.started = false
    this.lastCause = null
    this.watchdog = null
  }

  /** The start counts from the first attempt to reach Kafka, not from loading its client. */
  restartClock() {
    if (!this.started) this.since = Date.now()
  }

  /** How long the current outage may last: `connectTimeoutMS` at the start, then `retryTimeoutMS`. */
  limit() {
    return this.started ? this.retryTimeoutMS : this.connectTimeoutMS
  }

  /** Milliseconds left before the current outage ends the run. */
  left() {
    return Math.max(0, this.since + this.limit() - Date.now())
  }

  /** Bounds one attempt: past the outage's limit, close whatever client it is waiting on. */
  async bounded(attempt) {
    const limit = this.limit()
    let timedOut = false
    if (this.since !== null) {
      this.watchdog = setTimeout(
        () => {
          timedOut = true
          this.closeCurrent()
        },
        Math.max(0, this.since + limit - Date.now()),
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

  /** After a failed attempt: the error that ends the run, or null to retry. */
  failed(e) {
    if (this.since === null) this.since = Date.now()
    // A timed-out attempt fails with whatever closing the client threw: keep the cause seen
    // before it, if any.
    this.lastCause = e && e.timeoutReason ? (this.lastCause ?? e.timeoutReason) : kafkaCause(e)
    const limit = this.limit()
    const phase = this.started ? 'running' : 'start'
    if (isRefused(this.lastCause)) return new KafkaUnavailableError({ brokers: this.brokers, phase, reason: this.lastCause, seconds: 0, cause: e, refused: true })
    if (Date.now() - this.since < limit) return null
    return new KafkaUnavailableError({ brokers: this.brokers, phase, reason: this.lastCause, seconds: Math.round(limit / 1000), cause: e })
  }

  /** Kafka answered (the fence and the checkpoint read went through). */
  answered() {
    clearTimeout(this.watchdog)
    this.watchdog = null
    this.started = true
    this.since = null
    this.lastCause = null
  }
}

class MongoOutage {
  /**
   * @param {number} retryTimeoutMS
   * @param {any} stats the run's stats (`mongoRetries`, `lastMongoError`, `mongoGiveUpInMS`)
   * @param {((e: any, stats: any, what: string) => void) | undefined} onRetry
   */
  constructor(retryTimeoutMS, stats, onRetry) {
    this.retryTimeoutMS = retryTimeoutMS
    this.stats = stats
    this.onRetry = onRetry
    // MongoDB has failed without an answer since this time (null: it answers), and the next
    // back-off before a retry (100 ms doubling to 5 s, from the first failure of an outage).
    this.since = null
    this.delayMS = MONGO_FIRST_DELAY_MS
  }

  /**
   * After a MongoDB failure: the back-off (ms) before it is retried, or null when it ends the run:
   * not transient (lib/kafka/errors.js `isTransientSourceError`), or MongoDB has not answered for
   * `mongoRetryTimeoutMS` (then `e.retriedMS` says so). Reports the retry through `onMongoRetry`.
   * @param {any} e the driver's error
   * @param {string} what what is reopened ('the change stream', 'the snapshot', 'snapshot range 2 of 4')
   */
  failed(e, what) {
    if (!isTransientSourceError(e)) return null
    const now = Date.now()
    if (this.since === null) {
      this.since = now
      this.delayMS = MONGO_FIRST_DELAY_MS
    }
    const left = this.since + this.retryTimeoutMS - now
    if (left <= 0) {
      if (e !== null && typeof e === 'object') e.retriedMS = this.retryTimeoutMS
      return null
    }
    const wait = Math.min(this.delayMS, left)
    this.delayMS = Math.min(this.delayMS * 2, MONGO_MAX_DELAY_MS)
    const stats = this.stats
    stats.mongoRetries++
    stats.lastMongoError = sourceCause(e)
    stats.mongoGiveUpInMS = left
    if (this.onRetry) this.onRetry(e, stats, what)
    return wait
  }

  /** MongoDB answered (a batch came): the next failure starts a new outage. */
  answered() {
    this.since = null
  }
}

/** A MongoDB error as one line for the retry report: its message and, when it has one, its code. */
function sourceCause(e) {
  if (e === null || typeof e !== 'object') return String(e)
  const msg = String(e.message || e.name || e).split('\n')[0]
  if (e.codeName) return `${msg} (${e.codeName} ${e.code})`
  if (typeof e.code === 'number' || (typeof e.code === 'string' && !msg.includes(e.code))) return `${msg} (${e.code})`
  return msg
}

module.exports = { KafkaOutage, MongoOutage }
