'use strict'

/**
 * The server's global history of writes (a simplified oplog), the cluster
 * clock, and resume-token encoding.
 *
 * Resume tokens look like the real server's: `{_data: '<UPPERCASE HEX>'}` where
 * the hex is a KeyString-like encoding. Layout (all big-endian):
 *
 *   82 <8 bytes: clusterTime (t << 32 | i)>      CType Timestamp
 *   2B 04                                         version 2 (small int, value << 1)
 *   2B <type << 1>                                0 = high-water mark, 1 = event, 2 = invalidate
 *   2E <4 bytes: seq << 1>                        per-server event sequence number
 *   2C <2 bytes: fragment << 1>                   split-event fragment (0 = whole event)
 *   5A 10 <16 bytes>                              oplog UUID (differs per server instance)
 *   04                                            end
 *
 * so the server can decode exactly which event (and fragment) a token refers to.
 */

const crypto = require('node:crypto')
const { Timestamp } = require('bson')

const TOKEN_TYPES = Object.freeze({ highWaterMark: 0, event: 1, invalidate: 2 })

/**
 * Compare two BSON Timestamps.
 * @param {Timestamp} a
 * @param {Timestamp} b
 * @returns {number}
 */
function compareTimestamps(a, b) {
  if (a.t !== b.t) return a.t < b.t ? -1 : 1
  if (a.i !== b.i) return a.i < b.i ? -1 : 1
  return 0
}

/** A strictly increasing cluster clock producing BSON Timestamps. */
class ClusterClock {
  constructor() {
    this.current = new Timestamp({ t: Math.floor(Date.now() / 1000), i: 1 })
  }

  /** @returns {Timestamp} a new cluster time strictly greater than every previous one */
  tick() {
    const seconds = Math.floor(Date.now() / 1000)
    this.current = seconds > this.current.t ? new Timestamp({ t: seconds, i: 1 }) : new Timestamp({ t: this.current.t, i: this.current.i + 1 })
    return this.current
  }

  /** @returns {Timestamp} the latest cluster time */
  now() {
    return this.current
  }
}

/**
 * @typedef {object} DecodedResumeToken
 * @property {Timestamp} clusterTime
 * @property {number} version
 * @property {'highWaterMark'|'event'|'invalidate'} type
 * @property {number} seq oplog sequence number (0 = before the first event)
 * @property {number} fragment split-event fragment number (0 if none)
 * @property {string} uuid oplog UUID hex
 */

/**
 * Encode a resume token.
 * @param {{clusterTime: Timestamp, type: 'highWaterMark'|'event'|'invalidate', seq: number, fragment?: number, uuid: Buffer}} parts
 * @returns {{_data: string}}
 */
function encodeResumeToken({ clusterTime, type, seq, fragment = 0, uuid }) {
  const buf = Buffer.alloc(1 + 8 + 2 + 2 + 5 + 3 + 18 + 1)
  let o = 0
  buf[o++] = 0x82
  buf.writeUInt32BE(clusterTime.t, o)
  buf.writeUInt32BE(clusterTime.i, o + 4)
  o += 8
  buf[o++] = 0x2b
  buf[o++] = 2 << 1
  buf[o++] = 0x2b
  buf[o++] = TOKEN_TYPES[type] << 1
  buf[o++] = 0x2e
  buf.writeUInt32BE(seq * 2, o)
  o += 4
  buf[o++] = 0x2c
  buf.writeUInt16BE(fragment * 2, o)
  o += 2
  buf[o++] = 0x5a
  buf[o++] = 0x10
  buf.set(uuid, o)
  o += 16
  buf[o++] = 0x04
  return { _data: buf.toString('hex').toUpperCase() }
}

/**
 * Decode a resume token produced by {@link encodeResumeToken}.
 * @param {any} token `{_data: string}`
 * @returns {DecodedResumeToken | null} null when the token is not in this format
 */
function decodeResumeToken(token) {
  const data = token && typeof token === 'object' ? token._data : undefined
  if (typeof data !== 'string' || !/^[0-9a-fA-F]{80}$/.test(data)) return null
  const buf = Buffer.from(data, 'hex')
  if (buf[0] !== 0x82 || buf[9] !== 0x2b || buf[11] !== 0x2b || buf[13] !== 0x2e || buf[18] !== 0x2c || buf[21] !== 0x5a || buf[22] !== 0x10 || buf[39] !== 0x04) return null
  const typeCode = buf[12] >> 1
  const type = Object.keys(TOKEN_TYPES).find((k) => TOKEN_TYPES[k] === typeCode)
  if (!type) return null
  return {
    clusterTime: new Timestamp({ t: buf.readUInt32BE(1), i: buf.readUInt32BE(5) }),
    version: buf[10] >> 1,
    type,
    seq: buf.readUInt32BE(14) / 2,
    fragment: buf.readUInt16BE(19) / 2,
    uuid: buf.subarray(23, 39).toString('hex'),
  }
}

/**
 * @typedef {object} OplogEntry
 * @property {number} seq 1-based, strictly increasing
 * @property {Timestamp} clusterTime
 * @property {Date} wallTime
 * @property {'insert'|'update'|'replace'|'delete'|'drop'|'dropDatabase'|'create'|'rename'} operationType
 * @property {{db: string, coll?: string}} ns
 * @property {Record<string, any>} [documentKey]
 * @property {Record<string, any>|null} [postImage] document after the write
 * @property {Record<string, any>|null} [preImage] document before the write
 * @property {{updatedFields: Record<string, any>, removedFields: string[], truncatedArrays: any[]}} [updateDescription]
 * @property {string} [collectionUUID] hex
 */

/** In-memory oplog with waiters for change-stream getMores. */
class Oplog {
  /** @param {{maxEvents?: number}} [options] */
  constructor({ maxEvents = Infinity } = {}) {
    this.clock = new ClusterClock()
    this.uuid = crypto.randomBytes(16)
    this.uuidHex = this.uuid.toString('hex')
    /** @type {OplogEntry[]} */
    this.entries = []
    /** seq of the first retained entry */
    this.firstSeq = 1
    this.lastSeq = 0
    /** clusterTime of seq 0 (server start) and of truncated entries */
    this.startTime = this.clock.now()
    /** @type {Map<number, Timestamp>} clusterTime of every seq ever written */
    this.times = new Map([[0, this.startTime]])
    this.maxEvents = maxEvents
    /** @type {Set<() => void>} */
    this.waiters = new Set()
  }

  /**
   * Append an entry; assigns seq, clusterTime and wallTime and wakes waiters.
   * @param {Omit<OplogEntry, 'seq'|'clusterTime'|'wallTime'>} entry
   * @returns {OplogEntry}
   */
  append(entry) {
    const clusterTime = this.clock.tick()
    const full = { ...entry, seq: ++this.lastSeq, clusterTime, wallTime: new Date() }
    this.entries.push(full)
    this.times.set(full.seq, clusterTime)
    while (this.entries.length > this.maxEvents) this.truncate(1)
    for (const wake of this.waiters) wake()
    return full
  }

  /**
   * Forget the oldest `count` entries (default: all), so that tokens pointing
   * at them fail with ChangeStreamHistoryLost.
   * @param {number} [count]
   */
  truncate(count = this.entries.length) {
    const removed = this.entries.splice(0, count)
    if (removed.length) this.firstSeq = removed[removed.length - 1].seq + 1
  }

  /** @param {number} seq @returns {OplogEntry | undefined} */
  get(seq) {
    return this.entries[seq - this.firstSeq]
  }

  /** @param {number} seq @returns {Timestamp | undefined} clusterTime at seq (0 = server start) */
  timeAt(seq) {
    return this.times.get(seq)
  }

  /**
   * Can a stream continue after `seq`? False when entries after it were truncated.
   * @param {number} seq
   */
  hasHistoryAfter(seq) {
    return seq >= this.firstSeq - 1 && seq <= this.lastSeq
  }

  /**
   * The seq after which a stream starting at `time` (inclusive) begins.
   * @param {Timestamp} time
   * @returns {number | null} null when that history was truncated
   */
  seqBeforeTime(time) {
    let seq = this.lastSeq
    while (seq >= this.firstSeq && compareTimestamps(this.get(seq).clusterTime, time) >= 0) seq--
    if (seq < this.firstSeq - 1) return null
    if (seq === this.firstSeq - 1 && this.firstSeq > 1 && compareTimestamps(this.timeAt(this.firstSeq - 1), time) >= 0) return null
    return seq
  }

  /**
   * Resolve when an entry with seq > afterSeq exists, or after timeoutMs.
   * @param {number} afterSeq
   * @param {number} timeoutMs
   * @param {AbortSignal} [signal] resolves early when aborted
   * @returns {Promise<void>}
   */
  waitForEntriesAfter(afterSeq, timeoutMs, signal) {
    if (this.lastSeq > afterSeq || timeoutMs <= 0 || signal?.aborted) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.waiters.delete(wake)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const wake = () => {
        if (this.lastSeq > afterSeq) done()
      }
      const timer = setTimeout(done, timeoutMs)
      this.waiters.add(wake)
      signal?.addEventListener('abort', done)
    })
  }

  /**
   * Make a resume token for this oplog.
   * @param {'highWaterMark'|'event'|'invalidate'} type
   * @param {number} seq
   * @param {number} [fragment]
   */
  token(type, seq, fragment = 0) {
    return encodeResumeToken({ clusterTime: this.timeAt(seq) ?? this.startTime, type, seq, fragment, uuid: this.uuid })
  }
}

module.exports = { Oplog, ClusterClock, encodeResumeToken, decodeResumeToken, compareTimestamps, TOKEN_TYPES }
