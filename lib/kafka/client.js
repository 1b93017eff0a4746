'use strict'

/**
 * The Kafka client (the optional peer dependency `@platformatic/kafka`, loaded on first use) and
 * what the sink asks of it: topics created, messages sent in produce requests of a bounded size.
 */

const { loadPeer } = require('../peer')
const { errorText } = require('./errors')

let kafkaLib = null
function kafka() {
  if (kafkaLib === null) {
    try {
      kafkaLib = loadPeer('@platformatic/kafka')
    } catch (e) {
      const err = new Error('bson2json/kafka needs the Kafka client `@platformatic/kafka` (npm install @platformatic/kafka@~1.35.0, or @platformatic/kafka@^2.12.1 on Node >= 22.22)', { cause: e })
      err.code = 'ERR_BSON2JSON_KAFKA_CLIENT'
      throw err
    }
  }
  return kafkaLib
}

let EJSON = null
/** The `bson` package's EJSON (checkpoints keep resume tokens as canonical Extended JSON). */
function ejson() {
  if (EJSON === null) EJSON = require('bson').EJSON
  return EJSON
}

/** The transactional.id of a stream id (one active process per id). */
function transactionalIdOf(id) {
  return `bson2json-cdc.${id}`
}

/**
 * The back-off before the client retries a request (`retryDelay` of the cycle's clients, retry
 * `attempt` from 1): 200 ms, except after CONCURRENT_TRANSACTIONS, the broker's answer to the
 * next transaction's AddPartitionsToTxn while it still writes the previous one's commit markers
 * (EndTxn answers before they are written). That comes after most commits of a stream writing
 * flat out and clears within milliseconds, so it is retried after 20 ms, doubling (20 … 320 ms
 * over the 5 retries), as the Java producer retries it after 20 ms: a 200 ms wait after a commit
 * is longer than the commit interval itself (docs/kafka.md "Where cdc waits").
 */
function retryDelay(_client, _operation, attempt, _retries, error) {
  if (error?.findBy?.('apiId', 'CONCURRENT_TRANSACTIONS')) return 20 * 2 ** Math.min(Math.max(attempt, 1) - 1, 4)
  return 200
}

/**
 * Creates the checkpoint topic (compacted, one partition) and the `wanted` topics (`partitions`
 * each) that do not exist yet. @returns {Promise<Set<string>>} the topics that exist now
 */
async function ensureTopics(o, brokers, extra, register = () => {}, wanted = [o.topic]) {
  const { Admin } = kafka()
  const admin = new Admin({ retries: 1, retryDelay: 200, ...extra, clientId: `bson2json-cdc-admin.${o.id}`, bootstrapBrokers: brokers })
  register(admin)
  try {
    const existing = new Set(await admin.listTopics())
    if (!existing.has(o.checkpointTopic)) {
      await createTopic(admin, o.checkpointTopic, 1, [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'min.compaction.lag.ms', value: '0' },
      ])
      existing.add(o.checkpointTopic)
    }
    for (const t of wanted) {
      if (t === undefined || existing.has(t)) continue
      await createTopic(admin, t, o.partitions, [])
      existing.add(t)
    }
    return existing
  } finally {
    register(null)
    await admin.close().catch(() => {})
  }
}

async function createTopic(admin, name, partitions, configs) {
  try {
    await admin.createTopics({ topics: [name], partitions, replicas: -1, configs })
  } catch (e) {
    // Created concurrently by another process: fine.
    if (!/TOPIC_ALREADY_EXISTS|already exists/i.test(errorText(e))) throw e
  }
}

/** A message's bytes as counted against the produce-request and transaction sizes. */
function messageSize(m) {
  return (m.value ? m.value.length : 0) + (m.key ? m.key.length : 0) + 64
}

/**
 * Sends `messages` into the open transaction in produce requests of about `maxBytes` each.
 * @returns {Promise<number>} their size (messageSize)
 */
async function sendChunked(tx, messages, maxBytes) {
  let total = 0
  let bytes = 0
  let from = 0
  for (let i = 0; i < messages.length; i++) {
    const size = messageSize(messages[i])
    total += size
    bytes += size
    if (bytes >= maxBytes) {
      await tx.send({ messages: messages.slice(from, i + 1) })
      from = i + 1
      bytes = 0
    }
  }
  if (from < messages.length) await tx.send({ messages: messages.slice(from) })
  return total
}

/**
 * A timer that also ends when `signal` aborts: `{ promise, cancel }`. `cancel()` clears the
 * timer and removes the abort listener at once (a race lost to another promise must not keep
 * them: a stream of small batches would pile up a listener per batch on the one signal).
 */
function timer(ms, signal) {
  let cancel
  const promise = new Promise((resolve) => {
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      if (signal) signal.removeEventListener('abort', done)
      resolve()
    }
    cancel = () => {
      clearTimeout(t)
      if (signal) signal.removeEventListener('abort', done)
    }
    if (signal) signal.addEventListener('abort', done, { once: true })
  })
  return { promise, cancel }
}

function sleep(ms, signal) {
  return timer(ms, signal).promise
}

module.exports = { kafka, ejson, transactionalIdOf, retryDelay, ensureTopics, sendChunked, messageSize, sleep, timer }
