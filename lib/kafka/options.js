'use strict'

/** The options of `changeStreamToKafka`, checked before anything connects, and their defaults. */

const { OPTIONS, namesOf } = require('../option-table')
const { checkValue, unknownOptionError, ownOptions } = require('../options')

const PREFIX = 'bson2json/kafka: '
/** The names changeStreamToKafka takes (lib/option-table.js). */
const OPTION_NAMES = new Set(namesOf('kafka'))

/**
 * The defaults of the numeric options (lib/option-table.js): lib/kafka/ reads them from the
 * options {@link withDefaults} returns.
 */
const DEFAULTS = Object.freeze(Object.fromEntries([...OPTION_NAMES].filter((k) => OPTIONS[k].type.kind === 'int' && typeof OPTIONS[k].default === 'number').map((k) => [k, OPTIONS[k].default])))

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
    checkValue(OPTIONS[k], o[k], PREFIX)
  }
  for (const k of ['topic', 'checkpointTopic', 'id']) if (o[k] === undefined) checkValue(OPTIONS[k], o[k], PREFIX)
  if (o.source === null || typeof o.source !== 'object') {
    throw new TypeError('bson2json/kafka: options.source must be a driver MongoClient, Db or Collection')
  }
  if (o.topic === o.checkpointTopic) throw new RangeError('bson2json/kafka: options.topic and options.checkpointTopic must differ')
  const brokers = typeof o.brokers === 'string' ? o.brokers.split(',') : o.brokers
  if (!Array.isArray(brokers) || brokers.length === 0 || !brokers.every((b) => typeof b === 'string' && /^[^:\s]+:\d+$/.test(b))) {
    throw new TypeError('bson2json/kafka: options.brokers must be "HOST:PORT" strings (an array or a comma-separated string)')
  }
  if (o.pipeline !== undefined && !Array.isArray(o.pipeline)) throw new TypeError('bson2json/kafka: options.pipeline must be an array')
  // projection / redact: checked (and compiled) now, applied by watch() to every event.
  if (o.projection !== undefined || o.redact !== undefined) require('../shape').compileShape(o.projection, o.redact)
  if (o.resumeAfter !== undefined && (o.resumeAfter === null || typeof o.resumeAfter !== 'object')) {
    throw new TypeError('bson2json/kafka: options.resumeAfter must be a resume token (an object such as {_data: "82..."})')
  }
  if (o.resumeAfter !== undefined && o.startAtOperationTime !== undefined) {
    throw new TypeError('bson2json/kafka: options.resumeAfter and options.startAtOperationTime are exclusive')
  }
  if (o.snapshot === true || o.onHistoryLost === 'snapshot') {
    if (typeof o.source.collectionName !== 'string') throw new TypeError('bson2json/kafka: a snapshot (options.snapshot, onHistoryLost "snapshot") needs a Collection as options.source')
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
