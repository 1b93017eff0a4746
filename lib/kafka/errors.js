'use strict'

/**
 * The errors of the Kafka sink, and how a Kafka client's error tree is read: its most specific
 * cause as one line, and whether a retry can fix it.
 */

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

/** Server error codes a retry can outlast (the Change Streams spec's resumable list, and CursorNotFound). */
const TRANSIENT_SOURCE_CODES = new Set([6, 7, 43, 63, 89, 91, 133, 150, 189, 234, 262, 9001, 10107, 11600, 11602, 13388, 13435, 13436])
const TRANSIENT_SOURCE_LABELS = ['ResumableChangeStreamError', 'RetryableError', 'RetryableReadError', 'RetryableWriteError', 'ResetPool']

/**
 * A MongoDB-side failure a retry from the checkpoint can outlast: a network error (a closed or
 * reset connection, a timeout, a cleared pool, no server selectable for now), `CursorNotFound`,
 * a resumable server error (by label or by the spec's code list). Also a bare socket error the
 * driver let through unwrapped: a write on a connection whose peer had closed it fails with
 * `This socket has been ended by the other party` (code `EPIPE`, name `Error`: the driver 7.x
 * awaits 'drain' and rethrows the socket's own error). History lost, authentication, a rejected
 * pipeline or option, an invalidated stream are not transient: they end the run.
 */
function isTransientSourceError(e) {
  if (e === null || typeof e !== 'object') return false
  const name = String(e.name || '')
  if (name === 'MongoTopologyClosedError' || name === 'MongoClientClosedError') return false
  if (name.startsWith('MongoNetwork') || name === 'MongoPoolClearedError' || name === 'MongoServerSelectionError' || name === 'MongoServerClosedError') return true
  if (isHistoryLost(e)) return false
  // no reply within timeoutMS: the command was cancelled and its connection closed
  if (e.code === 'BSON2JSON_TIMEOUT' || name === 'MongoOperationTimeoutError') return true
  if (typeof e.code === 'number' && TRANSIENT_SOURCE_CODES.has(e.code)) return true
  const labels = Array.isArray(e.errorLabels) ? e.errorLabels : e.errorLabelSet instanceof Set ? [...e.errorLabelSet] : []
  if (labels.some((l) => TRANSIENT_SOURCE_LABELS.includes(l))) return true
  if (typeof e.code === 'string' && /^(EPIPE|ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENETDOWN|EAI_AGAIN)$/.test(e.code)) return true
  if (!name.startsWith('Mongo') && /This socket has been ended by the other party|socket hang up/.test(String(e.message))) return true
  return false
}

/** A newer process with the same stream id took over (its producer epoch fenced ours). */
class KafkaFencedError extends Error {
  constructor(id, cause) {
    super(`bson2json/kafka: stream id ${JSON.stringify(id)} was taken over by another process (producer fenced)`, { cause })
    this.name = 'KafkaFencedError'
    this.code = 'ERR_BSON2JSON_KAFKA_FENCED'
  }
}

/** A MongoDB-side failure of the run (not retried as Kafka failures are); `cause` is the error. */
class SourceError extends Error {
  constructor(cause) {
    super(cause && cause.message, { cause })
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

module.exports = {
  KafkaUnavailableError,
  ChangeStreamHistoryLostError,
  KafkaFencedError,
  SourceError,
  isHistoryLost,
  isTransientSourceError,
  errorText,
  kafkaCause,
  isRefused,
  isFenced,
}
