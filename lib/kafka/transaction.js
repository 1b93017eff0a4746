'use strict'

/**
 * `Transaction`: the one owner of the cycle's Kafka transactions, on its transactional producer.
 * Everything the sink writes goes through it: `send()` begins a transaction when none is open and
 * adds messages to it, `commit(at)` adds the ONE checkpoint record saying where the stream is
 * after them and commits both together (so a read_committed reader sees a checkpoint exactly
 * when it sees what it covers), `close()` aborts what was not committed. `fence()` is the first
 * begin of a cycle: the producer's InitProducerId, which fences an older process with the same
 * transactional id and aborts (or completes) the transaction that process left open.
 */

const { sendChunked } = require('./client')
const { checkpointRecord } = require('./checkpoint')

class Transaction {
  /**
   * @param {any} producer the cycle's transactional @platformatic/kafka Producer
   * @param {{ checkpointTopic: string, id: string, maxRequestBytes: number }} o
   * @param {{ transactions: number }} stats counts the commits
   * @param {() => (string|null)} origin the start position override the checkpoints carry (lib/kafka/sink.js)
   */
  constructor(producer, o, stats, origin) {
    this.producer = producer
    this.o = o
    this.stats = stats
    this.origin = origin
    this.tx = null
  }

  /**
   * InitProducerId for the transactional id, beginning the cycle's first transaction.
   * producerId/epoch -1: "a new producer instance" (the client would send 0/0, which a broker that
   * knows the transactional id answers with PRODUCER_FENCED).
   */
  async fence() {
    this.tx = await this.producer.beginTransaction({ producerId: -1n, producerEpoch: -1 })
  }

  /** Whether a transaction is open (begun and neither committed nor aborted). */
  get open() {
    return this.tx !== null
  }

  async begin() {
    if (this.tx === null) this.tx = await this.producer.beginTransaction()
  }

  /**
   * Adds `messages` to the open transaction (begun if none is), in produce requests of about
   * `maxRequestBytes`. @returns {Promise<number>} their size (client.js messageSize)
   */
  async send(messages) {
    await this.begin()
    return sendChunked(this.tx, messages, this.o.maxRequestBytes)
  }

  /**
   * Commits what was sent since the transaction began and `messages` (the last ones, sent in the
   * same produce requests as the checkpoint: one round trip fewer), with the checkpoint `at`.
   * @param {{ resumeToken: any, clusterTime?: {t: number, i: number}, events: number, snapshot?: any }} at
   * @param {any[]} [messages]
   */
  async commit(at, messages = []) {
    await this.begin()
    const checkpoint = checkpointRecord(this.o, { ...at, origin: this.origin() })
    await sendChunked(this.tx, messages.length === 0 ? [checkpoint] : [...messages, checkpoint], this.o.maxRequestBytes)
    await this.tx.commit()
    this.tx = null
    this.stats.transactions++
  }

  /**
   * Ends the cycle's transaction if one is open: nothing of it was committed, so it is aborted
   * (best effort: the next fence aborts it anyway), or dropped locally when nothing reached the
   * broker.
   */
  async close() {
    const tx = this.tx
    this.tx = null
    if (tx !== null && !tx.completed) await tx.abort().catch(() => tx.cancel().catch(() => {}))
  }
}

module.exports = { Transaction }
