'use strict'

/**
 * `SnapshotCopy`: the initial snapshot of a cycle. The collection's documents go into the topic
 * in `_id` order, in `snapshotParallel` `_id` ranges read by one cursor each, concurrently
 * (lib/mongo/ranges.js splits them, once: the bounds are in the checkpoint). Each transaction
 * holds the batches the ranges have ready (at most one per range, up to `maxTransactionBytes`)
 * with one checkpoint saying how far every range got (`after`, `done`), so a crash resumes each
 * range after its last committed batch and no record is written twice. A key lives in one range
 * and a range's batches go in `_id` order, so per key the order holds. A new snapshot first takes
 * the change stream's position and commits it with the ranges and an empty copy, so every change
 * made while the copy runs is streamed after it. The last transaction checkpoints that position
 * without `snapshot`: the stream takes over.
 */

const { splitRanges } = require('../mongo/ranges')
const { SourceError } = require('./errors')
const { ejson, messageSize, sleep } = require('./client')
const { formatOf } = require('./records')
const { capturedCollections, collectionOf } = require('./scope')
const { tokenClusterTime } = require('./checkpoint')

/**
 * @typedef {{ ns?: string, lo: string|null, hi: string|null, after: string|null, done: boolean }} Range
 * One `_id` range of a snapshot: its collection (`db.coll`; none: the source, a Collection), `lo
 * <= _id < hi` (null: open; canonical Extended JSON), the last `_id` copied (null: none yet), and
 * whether all of it is copied.
 * @typedef {{ reason: string, ranges: Range[]|null, records: number, fresh: boolean, rangesNote?: string }} Snap
 * A snapshot: why it runs, its ranges (null until a fresh one is split), the records copied so
 * far, and whether this cycle starts it (else it resumes the checkpoint's).
 */

/** A snapshot's state as its checkpoint records it. */
function snapshotState(snap) {
  const ranges = snap.ranges.map((r) => ({ ns: r.ns, lo: r.lo, hi: r.hi, after: r.after, done: r.done }))
  const one = ranges.length === 1 && ranges[0].ns === undefined && ranges[0].lo === null && ranges[0].hi === null
  // one range also as `after`, the form before parallel ranges
  return { reason: snap.reason, records: snap.records, after: one ? ranges[0].after : undefined, ranges }
}

/** The ranges of a snapshot under way, from its checkpoint (one whole-collection range before parallel ranges). */
function resumedRanges(state) {
  if (Array.isArray(state.ranges)) return state.ranges.map((r) => ({ ns: r.ns === null ? undefined : r.ns, lo: r.lo, hi: r.hi, after: r.after, done: r.done === true }))
  return [{ lo: null, hi: null, after: state.after === undefined ? null : state.after, done: false }]
}

const parse = (v) => (v === null || v === undefined ? undefined : ejson().parse(v, { relaxed: false }))
const ext = (v) => (v === undefined ? null : ejson().stringify(v, { relaxed: false }))

/** One range's reader: its cursor, the iterator, the next batch under way and, once there, its outcome. */
class RangeReader {
  constructor(copy, i) {
    this.copy = copy
    this.i = i
    this.cursor = null
    this.it = null
    this.next = null
    // `{ v }` or `{ e }` once the batch asked for is there (never a rejection left unhandled
    // while the others are written); null while it is under way.
    this.settled = null
    // with a format that marks the last record: the batch taken last, not written yet, and
    // whether the range's end waits for another range's next result (SnapshotCopy#take)
    this.held = null
    this.deferred = false
    this.open()
  }

  /**
   * The range's cursor, from its position in the last committed checkpoint: after its last
   * committed `_id` (`after`), else from its start. Batches read past it but not committed are
   * read again; none of them is in Kafka (a round commits before the next one takes batches).
   */
  open() {
    const o = this.copy.o
    const range = this.copy.snap.ranges[this.i]
    this.cursor = this.copy.format.snapshotCursor(o, collectionOf(o.source, range.ns), {
      dialect: this.copy.sink.dialect,
      projection: o.projection,
      redact: o.redact,
      batchSize: o.snapshotBatchSize,
      timeoutMS: o.timeoutMS,
      from: parse(range.lo),
      before: parse(range.hi),
      after: parse(range.after),
    }, this.copy.at)
    this.it = this.cursor.batches()[Symbol.asyncIterator]()
  }

  /** Asks for the next batch. */
  pull() {
    this.settle(this.it.next())
  }

  /**
   * After a transient MongoDB error: after the back-off, a new cursor from the range's committed
   * position; the other ranges go on meanwhile.
   */
  reopen(wait) {
    this.cursor.close().catch(() => {})
    this.settle(
      sleep(wait, this.copy.sink.signal).then(() => {
        if (this.copy.sink.stopping) return { done: true }
        this.open()
        return this.it.next()
      }),
    )
  }

  settle(p) {
    this.settled = null
    this.next = p.then(
      (v) => (this.settled = { v }),
      (e) => (this.settled = { e }),
    )
  }
}

class SnapshotCopy {
  /**
   * @param {import('./sink').KafkaSink} sink
   * @param {import('./transaction').Transaction} tx
   * @param {Snap} snap
   * @param {any} ck the checkpoint read at the start of the cycle (null: none)
   */
  constructor(sink, tx, snap, ck) {
    this.sink = sink
    this.o = sink.o
    this.tx = tx
    this.snap = snap
    this.ck = ck
    this.events = ck && typeof ck.events === 'number' ? ck.events : 0
    this.format = formatOf(sink.o.format)
    /** @type {{t: number, i: number}|null} the cluster time of the position the snapshot starts from */
    this.at = null
  }

  /**
   * Commits the transaction in hand and `messages` with the checkpoint at `token` and the
   * snapshot's state (none: it is done).
   */
  commit(token, done, messages) {
    return this.tx.commit({ resumeToken: token, clusterTime: this.at || undefined, events: this.events, snapshot: done ? undefined : snapshotState(this.snap) }, messages)
  }

  /** Runs (or resumes) the copy. @returns {Promise<any>} the position the stream starts from, or null when stopped */
  async run() {
    const { sink, o, snap } = this
    const stats = sink.stats
    let token
    if (snap.fresh) {
      token = await sink.positionNow()
      this.at = tokenClusterTime(token) || (await sink.clusterTimeNow())
      const split = await this.ranges()
      snap.ranges = split.ranges
      snap.rangesNote = split.note
      await this.commit(token, false)
    } else {
      token = this.ck.resumeToken
      this.at = tokenClusterTime(token) || this.ck.clusterTime || null
      if (this.ck.origin !== undefined) sink.origin = this.ck.origin
    }
    stats.snapshot = { reason: snap.reason, records: snap.records, done: false, ranges: snap.ranges.length, rangesNote: snap.rangesNote }
    if (o.onProgress) o.onProgress(stats, { events: [], resumeToken: token })
    const readers = []
    snap.ranges.forEach((range, i) => {
      if (!range.done) readers.push(new RangeReader(this, i))
    })
    sink.current.stream = { close: () => Promise.all(readers.map((r) => r.cursor.close())) }
    if (sink.stopping) await sink.current.stream.close()
    for (const r of readers) r.pull()
    let live = readers
    let round = 0
    while (live.length > 0) {
      // wait for a result to act on (a range waiting for the others is not one)
      if (!live.some((r) => r.settled !== null && !r.deferred)) await Promise.race(live.filter((r) => !r.deferred).map((r) => r.next))
      // A stop closes the cursors, which ends them like the end of their ranges does (or fails
      // them): nothing of this round is committed, and no range is marked done.
      if (sink.stopping) return null
      const took = this.take(live, round++)
      if (sink.stopping) return null
      if (took.ended.length > 0) {
        for (const r of took.ended) snap.ranges[r.i].done = true
        live = live.filter((r) => !snap.ranges[r.i].done)
      }
      // A range's end rides on the next checkpoint (a crash before it finds the range empty).
      if (took.messages.length === 0) continue
      for (const { r, b } of took.batches) {
        snap.ranges[r.i].after = ext(b.after)
        snap.records += b.events.length
      }
      await sink.ensureTopicsOf(took.messages)
      await this.commit(token, false, took.messages)
      stats.snapshot.records = snap.records
      if (o.onProgress) for (const { b } of took.batches) o.onProgress(stats, b)
    }
    if (sink.stopping) return null
    await this.commit(token, true)
    stats.snapshot.done = true
    return token
  }

  /**
   * One round: the batches the ranges have ready, from a range that turns with each round (a
   * transaction full at `maxTransactionBytes` leaves the other ranges' batches for the next, and
   * no range waits behind the others every time). A failed range is reopened (or ends the run);
   * a batch taken asks its range for the next at once.
   */
  take(live, round) {
    const { sink, o, snap } = this
    const hold = this.format.marksLast === true
    const out = { messages: [], batches: [], ended: [] }
    let bytes = 0
    // With a format that marks the snapshot's last record (Debezium's `snapshot: "last"`), each
    // range holds back its latest batch until the next result says whether more follows: a batch
    // followed by the range's end is its last. A range whose last batch is there waits while
    // another range's next result is unknown (no batch held, none settled): that one may end
    // empty, and the last record overall must not be written before that is known.
    const unknown = (x) => x.held === null && (x.settled === null || x.settled.e !== undefined)
    const first = round % live.length
    for (let k = 0; k < live.length; k++) {
      const r = live[(first + k) % live.length]
      const got = r.settled
      r.deferred = false
      if (got === null) continue
      if (bytes >= o.maxTransactionBytes && got.e === undefined && !got.v.done) continue
      if (got.e !== undefined) {
        const what = snap.ranges.length > 1 ? `snapshot range ${r.i + 1} of ${snap.ranges.length}` : 'the snapshot'
        const wait = sink.mongo.failed(got.e, what)
        if (wait === null) throw Object.assign(new SourceError(got.e), { final: true })
        // a held batch is past the range's committed position: the new cursor reads it again
        r.held = null
        r.reopen(wait)
        continue
      }
      sink.mongo.answered()
      if (got.v.done) {
        if (r.held !== null) {
          if (live.some((x) => x !== r && unknown(x))) {
            r.deferred = true
            continue
          }
          bytes += this.release(r, r.held, out)
          r.held = null
        }
        out.ended.push(r)
        continue
      }
      const b = got.v.value
      r.pull()
      if (b.events.length === 0) continue
      if (!hold) bytes += this.release(r, b, out)
      else {
        if (r.held !== null) bytes += this.release(r, r.held, out)
        r.held = b
      }
    }
    // The round that ends the last ranges holds the snapshot's last record: written again, marked.
    if (hold && out.batches.length > 0 && out.ended.length === live.length) {
      const { b } = out.batches[out.batches.length - 1]
      out.messages.length = out.lastEventAt
      this.format.snapshot(o, b.events[b.events.length - 1], snap.reason, out.messages, { at: this.at, last: true })
    }
    return out
  }

  /** A batch's records into the round's messages. @returns {number} their size */
  release(r, b, out) {
    const { o, snap } = this
    const messages = out.messages
    let bytes = 0
    for (const ev of b.events) {
      out.lastEventAt = messages.length
      this.format.snapshot(o, ev, snap.reason, messages, { at: this.at, last: false })
      for (let m = out.lastEventAt; m < messages.length; m++) bytes += messageSize(messages[m])
    }
    out.batches.push({ r, b })
    return bytes
  }

  /**
   * The `_id` ranges of a new snapshot: per captured collection (lib/kafka/scope.js: the source
   * Collection, or every collection of the Db or the deployment that `include` / `exclude` keep),
   * `snapshotParallel` ranges, bounds as canonical Extended JSON, nothing copied yet. One range
   * where splitting does not apply (few documents, `_id`s of different kinds, a slow server):
   * lib/mongo/ranges.js, whose reason is `note`.
   * @returns {Promise<{ ranges: Range[], note?: string }>}
   */
  async ranges() {
    const o = this.o
    const n = o.snapshotParallel
    const whole = typeof o.source.collectionName === 'string'
    let colls
    try {
      colls = await capturedCollections(o.source, o.include, o.exclude, o.timeoutMS)
    } catch (e) {
      throw new SourceError(e)
    }
    const ranges = []
    let note
    for (const c of colls) {
      const ns = whole ? undefined : `${c.db}.${c.coll}`
      if (n === 1) {
        ranges.push({ ns, lo: null, hi: null, after: null, done: false })
        continue
      }
      let split
      try {
        split = await splitRanges(collectionOf(o.source, ns), {}, n)
      } catch (e) {
        throw new SourceError(e)
      }
      if (split.ranges.length < n) note ??= split.note
      for (const r of split.ranges) ranges.push({ ns, lo: ext(r.lo), hi: ext(r.hi), after: null, done: false })
    }
    return { ranges, note: whole ? note : undefined }
  }
}

module.exports = { SnapshotCopy, resumedRanges }
