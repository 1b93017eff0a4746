'use strict'

/** The options of `changeStreamToKafka`, checked before anything connects, and their defaults. */

/**
 * The defaults of the numeric options: the one place they are written (lib/kafka/ reads them
 * from the options `withDefaults` returns; docs/kafka.md and `cdc --help` state them).
 */
const DEFAULTS = Object.freeze({
  commitIntervalMS: 100,
  maxTransactionBytes: 8 * 1024 * 1024,
  maxRequestBytes: 512 * 1024,
  idleCheckpointMS: 5000,
  snapshotBatchSize: 1000,
  snapshotParallel: 1,
  partitions: 1,
  retryDelayMS: 500,
  connectTimeoutMS: 10_000,
  retryTimeoutMS: 120_000,
  mongoRetryTimeoutMS: 120_000,
})

const OPTION_NAMES = new Set([
  'source',
  'pipeline',
  'brokers',
  'topic',
  'topicPrefix',
  'topics',
  'include',
  'exclude',
  'checkpointTopic',
  'id',
  'dialect',
  'format',
  'value',
  'fullDocument',
  'fullDocumentBeforeChange',
  'showExpandedEvents',
  'startAtOperationTime',
  'resumeAfter',
  'overrideCheckpoint',
  'snapshot',
  'snapshotBatchSize',
  'snapshotParallel',
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
  'heartbeatTopic',
  'commitIntervalMS',
  'maxTransactionBytes',
  'maxRequestBytes',
  'retryDelayMS',
  'connectTimeoutMS',
  'retryTimeoutMS',
  'mongoRetryTimeoutMS',
  'kafka',
  'onProgress',
  'onRestart',
  'onMongoRetry',
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
  for (const k of ['topic', 'checkpointTopic', 'id', 'topicPrefix']) {
    if (k === 'topic' && o.topic === undefined && o.topicPrefix !== undefined) continue
    if (k === 'topicPrefix' && o.topicPrefix === undefined) continue
    if (typeof o[k] !== 'string' || o[k].length === 0) throw new TypeError(`bson2json/kafka: options.${k} must be a non-empty string`)
  }
  if (o.heartbeatTopic !== undefined && (typeof o.heartbeatTopic !== 'string' || o.heartbeatTopic.length === 0 || o.heartbeatTopic === o.checkpointTopic)) {
    throw new TypeError('bson2json/kafka: options.heartbeatTopic must be a non-empty string other than options.checkpointTopic')
  }
  if (o.topics !== undefined) {
    if (o.topics === null || typeof o.topics !== 'object' || Array.isArray(o.topics) || !Object.values(o.topics).every((t) => typeof t === 'string' && t.length > 0)) {
      throw new TypeError('bson2json/kafka: options.topics must map namespaces ("db.coll" or "db") to topic names')
    }
    if (Object.values(o.topics).includes(o.checkpointTopic)) throw new RangeError('bson2json/kafka: options.topics must not name options.checkpointTopic')
  }
  for (const k of ['include', 'exclude']) {
    if (o[k] !== undefined && (!Array.isArray(o[k]) || !o[k].every((p) => typeof p === 'string' && /^[^.\s]+(\.\S+)?$/.test(p)))) {
      throw new TypeError(`bson2json/kafka: options.${k} must be an array of namespace patterns ("db", "db.coll", "*" for any characters)`)
    }
  }
  if (o.topic === o.checkpointTopic) throw new RangeError('bson2json/kafka: options.topic and options.checkpointTopic must differ')
  const brokers = typeof o.brokers === 'string' ? o.brokers.split(',') : o.brokers
  if (!Array.isArray(brokers) || brokers.length === 0 || !brokers.every((b) => typeof b === 'string' && /^[^:\s]+:\d+$/.test(b))) {
    throw new TypeError('bson2json/kafka: options.brokers must be "HOST:PORT" strings (an array or a comma-separated string)')
  }
  if (o.value !== undefined && o.value !== 'event' && o.value !== 'fullDocument') {
    throw new RangeError('bson2json/kafka: options.value must be "event" or "fullDocument"')
  }
  if (o.format !== undefined && !require('./records').FORMAT_NAMES.includes(o.format)) {
    throw new RangeError(`bson2json/kafka: options.format must be one of ${require('./records').FORMAT_NAMES.join(', ')}, got ${JSON.stringify(o.format)}`)
  }
  if (o.format !== undefined && o.format !== 'bson2json' && (o.dialect !== undefined || o.value === 'fullDocument')) {
    throw new TypeError(`bson2json/kafka: options.format ${JSON.stringify(o.format)} writes the connector's own records: it excludes options.dialect and value: "fullDocument"`)
  }
  if (o.pipeline !== undefined && !Array.isArray(o.pipeline)) throw new TypeError('bson2json/kafka: options.pipeline must be an array')
  // projection / redact: checked (and compiled) now, applied by watch() to every event.
  if (o.projection !== undefined || o.redact !== undefined) require('../shape').compileShape(o.projection, o.redact)
  for (const k of ['partitions', 'snapshotBatchSize', 'snapshotParallel', 'idleCheckpointMS', 'commitIntervalMS', 'maxTransactionBytes', 'maxRequestBytes', 'retryDelayMS', 'connectTimeoutMS', 'retryTimeoutMS', 'mongoRetryTimeoutMS']) {
    const v = o[k]
    if (v !== undefined && (!Number.isInteger(v) || v < (k === 'idleCheckpointMS' || k === 'commitIntervalMS' ? 0 : 1))) {
      throw new RangeError(`bson2json/kafka: options.${k} must be a positive integer, got ${String(v)}`)
    }
  }
  if (o.snapshotParallel !== undefined && o.snapshotParallel > 64) throw new RangeError(`bson2json/kafka: options.snapshotParallel must be at most 64, got ${o.snapshotParallel}`)
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
    if (o.snapshot === true && (o.resumeAfter !== undefined || o.startAtOperationTime !== undefined)) {
      throw new TypeError('bson2json/kafka: options.snapshot starts from now: it excludes resumeAfter and startAtOperationTime')
    }
  }
  if (o.overrideCheckpoint !== undefined && typeof o.overrideCheckpoint !== 'boolean') {
    throw new TypeError('bson2json/kafka: options.overrideCheckpoint must be a boolean')
  }
  for (const k of ['onProgress', 'onRestart', 'onMongoRetry']) {
    if (o[k] !== undefined && typeof o[k] !== 'function') throw new TypeError(`bson2json/kafka: options.${k} must be a function`)
  }
  if (o.kafka !== undefined && (o.kafka === null || typeof o.kafka !== 'object')) {
    throw new TypeError('bson2json/kafka: options.kafka must be an object (extra @platformatic/kafka client options)')
  }
  return brokers
}

/** The options with every default of {@link DEFAULTS} filled in (a new object). */
function withDefaults(o) {
  const out = { ...o }
  for (const [k, v] of Object.entries(DEFAULTS)) if (out[k] === undefined) out[k] = v
  return out
}

module.exports = { checkOptions, withDefaults, DEFAULTS }
