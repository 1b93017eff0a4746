'use strict'

/** The options of `changeStreamToKafka`, checked before anything connects, and their defaults. */

const { rowOf, namesOf } = require('../option-table')
const { checkValue, unknownOptionError, ownOptions } = require('../options')

const PREFIX = 'bson2json/kafka: '
/** The names changeStreamToKafka takes (lib/option-table.js). */
const OPTION_NAMES = new Set(namesOf('kafka'))

/**
 * The defaults of the numeric options (lib/option-table.js): lib/kafka/ reads them from the
 * options {@link withDefaults} returns.
 */
const DEFAULTS = Object.freeze(Object.fromEntries([...OPTION_NAMES].map((k) => rowOf('kafka', k)).filter((r) => r.type.kind === 'int' && typeof r.default === 'number').map((r) => [r.name, r.default])))

/**
 * Checks the options (own properties only; a name on `Object.prototype` is not an option) and
 * returns the brokers as an array.
 * @param {any} o
 */
function checkOptions(o) {
  if (o === null || typeof o !== 'object') throw new TypeError(`${PREFIX}options must be an object`)
  o = ownOptions(o)
  for (const k of Object.keys(o)) {
    if (!OPTION_NAMES.has(k)) throw unknownOptionError(k, OPTION_NAMES, PREFIX)
    // enums, booleans, integers, strings and functions, from the table
    checkValue(rowOf('kafka', k), o[k], PREFIX)
  }
  for (const k of ['checkpointTopic', 'id']) if (o[k] === undefined) checkValue(rowOf('kafka', k), o[k], PREFIX)
  if (o.source === null || typeof o.source !== 'object') {
    throw new TypeError('bson2json/kafka: options.source must be a driver MongoClient, Db or Collection')
  }
  if (o.topic === undefined && o.topicPrefix === undefined) checkValue(rowOf('kafka', 'topic'), o.topic, PREFIX)
  if (o.heartbeatTopic !== undefined && o.heartbeatTopic === o.checkpointTopic) {
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
  if (o.format !== undefined && !require('./records').FORMAT_NAMES.includes(o.format)) {
    throw new RangeError(`bson2json/kafka: options.format must be one of ${require('./records').FORMAT_NAMES.join(', ')}, got ${JSON.stringify(o.format)}`)
  }
  if (o.format !== undefined && o.format !== 'bson2json' && (o.dialect !== undefined || o.value === 'fullDocument')) {
    throw new TypeError(`bson2json/kafka: options.format ${JSON.stringify(o.format)} writes the connector's own records: it excludes options.dialect and value: "fullDocument"`)
  }
  const timeoutMS = o.timeoutMS === undefined ? DEFAULTS.timeoutMS : o.timeoutMS
  if (o.maxAwaitTimeMS !== undefined && o.maxAwaitTimeMS >= timeoutMS) {
    throw new RangeError(`bson2json/kafka: options.maxAwaitTimeMS (${o.maxAwaitTimeMS}) must be below options.timeoutMS (${timeoutMS})`)
  }
  if (o.pipeline !== undefined && !Array.isArray(o.pipeline)) throw new TypeError('bson2json/kafka: options.pipeline must be an array')
  // projection / redact: checked now (watch() compiles them and applies them to every event)
  require('../shape').checkShape(o.projection, o.redact)
  if (o.resumeAfter !== undefined && (o.resumeAfter === null || typeof o.resumeAfter !== 'object')) {
    throw new TypeError('bson2json/kafka: options.resumeAfter must be a resume token (an object such as {_data: "82..."})')
  }
  if (o.resumeAfter !== undefined && o.startAtOperationTime !== undefined) {
    throw new TypeError('bson2json/kafka: options.resumeAfter and options.startAtOperationTime are exclusive')
  }
  if (o.snapshot === true || o.onHistoryLost === 'snapshot') {
    if (o.snapshot === true && (o.resumeAfter !== undefined || o.startAtOperationTime !== undefined)) {
      throw new TypeError('bson2json/kafka: options.snapshot starts from now: it excludes resumeAfter and startAtOperationTime')
    }
  }
  if (o.kafka !== undefined && (o.kafka === null || typeof o.kafka !== 'object')) {
    throw new TypeError('bson2json/kafka: options.kafka must be an object (extra @platformatic/kafka client options)')
  }
  return brokers
}

/** The options, own properties only, with every default of {@link DEFAULTS} filled in (a new object). */
function withDefaults(o) {
  const out = ownOptions(o)
  for (const [k, v] of Object.entries(DEFAULTS)) if (out[k] === undefined) out[k] = v
  return out
}

module.exports = { checkOptions, withDefaults, DEFAULTS }
