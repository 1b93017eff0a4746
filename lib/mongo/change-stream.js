'use strict'

/**
 * `watch()`: a MongoDB change stream run on raw command replies, one native
 * `transcodeChangeBatch` call per batch (the projection and redaction too), with prefetch and
 * spec-conformant resume.
 *
 * The stream runs the commands itself (the driver's `watch()` cannot return raw events):
 *   aggregate {pipeline: [{$changeStream}, ...user], cursor: {batchSize}}   (raw, one session)
 *   getMore  {getMore: id, collection, batchSize, maxTimeMS: maxAwaitTimeMS} (raw, same session)
 * Resume rules, token cache and resumable-error classification follow the Change Streams spec
 * (mongodb/specifications source/change-streams/change-streams.md); see docs/change-streams.md.
 *
 * Two token positions are kept:
 *   - the fetch position (what the next resume starts after): the last token RECEIVED from the
 *     server. Batches already received but not yet delivered stay buffered across a resume, so
 *     resuming from here neither loses nor duplicates events.
 *   - `stream.resumeToken`: the token of the last event / batch DELIVERED to the consumer; this is
 *     what an application persists as its checkpoint.
 */

const native = require('../native')
const { resolveDriverOptions, intOption, ownOptions, rowModeOf } = require('../options')
const { describe, argumentError } = require('../errors')

const { EventFormat } = native
const { RawCursor, checkPipeline, replyCursor } = require('./raw-cursor')
const { cursorReadable } = require('./readable')

let bson = null
function bsonPackage() {
  if (bson === null) bson = require('bson')
  return bson
}

/** Server error codes that are resumable on servers with maxWireVersion < 9 (spec list). */
const RESUMABLE_CODES = new Set([
  6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133,
])
const CURSOR_NOT_FOUND = 43

/** The change stream was invalidated (the watched collection/database was dropped or renamed). */
class ChangeStreamInvalidatedError extends Error {
  constructor(event) {
    super('bson2json: change stream invalidated (the invalidate event was delivered; open a new stream with startAfter: its resumeToken to continue)')
    this.name = 'ChangeStreamInvalidatedError'
    this.event = event
  }
}

/** A change stream protocol error (for example an event without `_id`). */
class ChangeStreamError extends Error {
  constructor(message, cause) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'ChangeStreamError'
  }
}

function hasLabel(err, label) {
  if (typeof err.hasErrorLabel === 'function') {
    try {
      return err.hasErrorLabel(label)
    } catch {
      // fall through to the plain array
    }
  }
  return Array.isArray(err.errorLabels) && err.errorLabels.includes(label)
}

/**
 * Spec "resumable error" for a getMore failure.
 * @param {any} err
 * @param {number | undefined} maxWireVersion
 */
function isResumableError(err, maxWireVersion) {
  if (err === null || typeof err !== 'object') return false
  const name = String(err.name || '')
  // Non-server errors: network errors, pool cleared, server selection (no server reply).
  if (name.startsWith('MongoNetwork') || name === 'MongoPoolClearedError' || name === 'MongoServerSelectionError') {
    return true
  }
  if (err.code === CURSOR_NOT_FOUND) return true
  if (maxWireVersion === undefined || maxWireVersion >= 9) {
    return hasLabel(err, 'ResumableChangeStreamError')
  }
  return RESUMABLE_CODES.has(err.code) || hasLabel(err, 'ResumableChangeStreamError')
}

/**
 * Resolves the watch target (driver MongoClient, Db or Collection, by duck typing).
 * @returns {{ client: any, db: any, aggregate: string | 1, cluster: boolean }}
 */
function resolveTarget(target) {
  if (target === null || typeof target !== 'object') {
    throw new TypeError('bson2json: watch() target must be a MongoClient, Db or Collection')
  }
  if (typeof target.collectionName === 'string' && typeof target.dbName === 'string') {
    const client = target.client
    if (!client || typeof client.db !== 'function') throw new TypeError('bson2json: watch(): collection has no client')
    return { client, db: client.db(target.dbName), aggregate: target.collectionName, cluster: false }
  }
  if (typeof target.databaseName === 'string' && typeof target.command === 'function') {
    const client = target.client
    if (!client || typeof client.startSession !== 'function') throw new TypeError('bson2json: watch(): db has no client')
    return { client, db: target, aggregate: 1, cluster: false }
  }
  if (typeof target.db === 'function' && typeof target.startSession === 'function') {
    return { client: target, db: target.db('admin'), aggregate: 1, cluster: true }
  }
  throw new TypeError('bson2json: watch() target must be a MongoClient, Db or Collection')
}

function maxWireVersionOf(client) {
  try {
    const d = client.topology && client.topology.description
    const v = d && d.commonWireVersion
    return typeof v === 'number' && v > 0 ? v : undefined
  } catch {
    return undefined
  }
}

/**
 * A resume token as the binding gives it, as the driver takes it: `{_data}` as is; any other
 * shape crosses as a Uint8Array of its BSON, decoded here once with its BSON types kept
 * (`promoteValues: false`, as canonical Extended JSON would keep them), so it is sent back
 * unchanged. `undefined` / `null` (no token) are returned as they are.
 */
function tokenValue(t) {
  if (!(t instanceof Uint8Array)) return t
  return bsonPackage().BSON.deserialize(t, { promoteValues: false, bsonRegExp: true })
}

// ---- the stream ----------------------------------------------------------------------------

class ChangeStream extends RawCursor {
  /**
   * @param {any} target MongoClient, Db or Collection
   * @param {object[]} [pipeline]
   * @param {object} [options]
   */
  constructor(target, pipeline = [], options = {}, format = undefined, kafka = undefined) {
    // An argument error is not thrown: every consumer fails with it (lib/mongo/cursor.js find()).
    let stages, t, o, batchSize, maxAwaitTimeMS, prefetch, timeoutMS
    let failure = null
    try {
      stages = checkPipeline(pipeline, 'watch() pipeline')
      if (options === null || typeof options !== 'object') throw new TypeError(`bson2json: watch() options must be an object, got ${describe(options, 'object')}`)
      // the caller's own properties, each read once (lib/option-table.js: the names watch takes)
      options = ownOptions(options)
      t = resolveTarget(target)
      // The driver's BSON options for the target and its js-bson major, under the call's.
      o = resolveDriverOptions(target, options, 'watch')
      if (options.rows !== undefined && typeof options.rows !== 'boolean') throw new TypeError(`bson2json: options.rows must be a boolean, got ${describe(options.rows, 'boolean')}`)
      if (options.rows === true) {
        if (options.whole === true) throw new TypeError('bson2json: options.rows and options.whole do not go together (rows are of the documents, whole is the event as one text)')
        o.rowMode = rowModeOf(options)
      } else if (options.rowFormat !== undefined || options.dateRenderMode !== undefined) {
        throw new TypeError('bson2json: options.rowFormat and options.dateRenderMode apply with rows: true')
      }
      batchSize = intOption(options, 'batchSize', 0, Infinity, undefined)
      maxAwaitTimeMS = intOption(options, 'maxAwaitTimeMS', 0, Infinity, undefined)
      prefetch = intOption(options, 'prefetch', 0, Infinity, 4)
      timeoutMS = intOption(options, 'timeoutMS', 0, Infinity, 0)
      if (timeoutMS > 0) {
        // each getMore waits up to maxAwaitTimeMS for events: it must end before the reply's bound
        if (maxAwaitTimeMS === undefined) maxAwaitTimeMS = Math.min(1000, Math.floor(timeoutMS / 2))
        else if (maxAwaitTimeMS >= timeoutMS) throw new RangeError(`bson2json: options.maxAwaitTimeMS (${maxAwaitTimeMS}) must be below options.timeoutMS (${timeoutMS})`)
      }
    } catch (e) {
      failure = argumentError(e)
      options = Object.create(null)
      stages = []
      t = {}
    }
    super(
      failure !== null
        ? { failure, what: 'change stream' }
        : { client: t.client, db: t.db, prefetch, prefetchGiven: options.prefetch !== undefined, batchSize, maxAwaitTimeMS, timeoutMS, signal: options.signal, what: 'change stream' },
    )
    this._aggregate = t.aggregate
    this._o = o
    // what each event becomes: an event object (its parts, or the whole event, as JSON), or,
    // for lib/kafka ({@link watchRecords}), a Kafka record
    this._format = format !== undefined ? format : options.whole === true ? EventFormat.Whole : options.rows === true ? EventFormat.Rows : EventFormat.Parts
    // a connector's records: what they name besides the event (lib/native transcodeChangeBatch)
    this._kafka = kafka
    this._split = options.splitLargeEvents === true

    const stage = {}
    if (t.cluster) stage.allChangesForCluster = true
    for (const k of ['fullDocument', 'fullDocumentBeforeChange', 'showExpandedEvents', 'resumeAfter', 'startAfter', 'startAtOperationTime']) {
      if (options[k] !== undefined) stage[k] = options[k]
    }
    this._stage = stage
    this._userPipeline = this._split ? [...stages, { $changeStreamSplitLargeEvent: {} }] : stages

    // Spec token cache (fetch position) and saved operation time.
    this._position = options.startAfter !== undefined ? options.startAfter : options.resumeAfter
    this._startedWithStartAfter = options.startAfter !== undefined
    this._received = 0
    this._operationTime = options.startAtOperationTime
    this._checkpoint = this._position === undefined ? null : this._position
    this._pending = [] // split fragments awaiting their last piece

    // Consumer state
    this._cur = null
    this._idx = 0
    this._resumeToken = this._checkpoint
    this._terminal = null
    this._resumes = 0
  }

  /** Token of the last delivered event (or batch); persist it and pass it as `resumeAfter`. */
  get resumeToken() {
    return this._resumeToken
  }

  /** Number of resumes performed so far. */
  get resumeCount() {
    return this._resumes
  }

  get closed() {
    return this._closed
  }

  // -- engine hooks ------------------------------------------------------------------------

  _retry(err, isGetMore) {
    if (isGetMore && isResumableError(err, maxWireVersionOf(this._client))) {
      this._resumes++
      return true
    }
    return false
  }

  _accept(reply, isGetMore) {
    // projection / redact (lib/shape.js): each event's document parts shaped first, in the call
    const b = native.transcodeChangeBatch(replyCursor(reply), this._format, this._o, this._split, this._kafka)
    if (!isGetMore && this._resumes === 0 && this._operationTime === undefined && this._position === undefined && this._stage.startAfter === undefined) {
      this._operationTime = reply.operationTime
    }
    this._setCursor(b.id, b.ns, isGetMore)
    return this._acceptBatch(b)
  }

  /** Processes one transcoded batch: token bookkeeping, reassembly, queueing. */
  _acceptBatch(b) {
    const events = b.events
    const pbrt = tokenValue(b.postBatchResumeToken)
    const out = []
    let invalidate = null
    for (let i = 0; i < events.length; i++) {
      let ev = events[i]
      const tok = tokenValue(ev.resumeToken)
      if (tok === undefined) {
        return new ChangeStreamError('bson2json: a change event lacks a resume token (_id); a pipeline must not remove or modify _id')
      }
      this._position = tok
      this._received++
      if (ev.raw !== undefined) {
        // A fragment of a split event (splitLargeEvents): its BSON is kept until the last one,
        // then the binding merges them and returns the event as if it had not been split.
        this._pending.push(ev.raw)
        if (ev.splitEvent.fragment !== ev.splitEvent.of) continue
        ev = native.transcodeChangeFragments(this._pending, this._format, this._o, this._kafka)
        this._pending = []
      }
      if (ev.resumeToken instanceof Uint8Array) {
        // not the usual `{_data}` shape (rare): the value, and its canonical Extended JSON
        ev.resumeToken = tok
        ev.resumeTokenEJSON = bsonPackage().EJSON.stringify(tok, { relaxed: false })
      }
      out.push(ev)
      if (ev.operationType === 'invalidate') invalidate = ev
    }
    if (pbrt) this._position = pbrt
    // Checkpoint token for the consumer: never inside an unfinished split event.
    let ck
    if (this._pending.length > 0) ck = out.length ? out[out.length - 1].resumeToken : this._checkpoint
    else ck = pbrt || (out.length ? out[out.length - 1].resumeToken : this._checkpoint)
    this._checkpoint = ck
    // Consecutive empty batches are coalesced: only the newest token matters.
    this._pushOrFold({ events: out, resumeToken: ck }, (newest) => {
      if (out.length !== 0 || newest.events.length !== 0) return false
      newest.resumeToken = ck
      return true
    })
    if (invalidate) return new ChangeStreamInvalidatedError(invalidate)
    return null
  }

  _initialCommand() {
    const stage = { ...this._stage }
    delete stage.resumeAfter
    delete stage.startAfter
    delete stage.startAtOperationTime
    if (this._position !== undefined) {
      if (this._startedWithStartAfter && this._received === 0) stage.startAfter = this._position
      else stage.resumeAfter = this._position
    } else if (this._operationTime !== undefined) {
      stage.startAtOperationTime = this._operationTime
    }
    const cmd = {
      aggregate: this._aggregate,
      pipeline: [{ $changeStream: stage }, ...this._userPipeline],
      cursor: this._batchSize === undefined ? {} : { batchSize: this._batchSize },
    }
    return cmd
  }

  async _terminate(item) {
    this._terminal = item
    await this.close()
    if (item.error) throw item.error
  }

  // -- consumer API --------------------------------------------------------------------------

  /**
   * Next event: `{ value, done }`. Errors end the stream (after delivering buffered events).
   * A buffered event comes back in an already-resolved promise without an async function's
   * frame (the per-event cost of `for await`); anything else goes through {@link _nextPlain}.
   * The batch lets go of each event it hands out (its slot is cleared): an event the caller
   * does not keep dies young, rather than living as long as its batch (and the batch is still
   * held by the suspended {@link _nextPlain} while the next one is fetched and transcoded, so
   * a young-generation collection there would copy a whole batch of events and their strings,
   * and promote them to the old generation).
   */
  next() {
    const cur = this._cur
    if (cur !== null) {
      const events = cur.events
      const i = this._idx
      if (i < events.length) {
        const ev = events[i]
        events[i] = undefined
        this._idx = i + 1
        this._resumeToken = i + 1 === events.length ? cur.resumeToken : ev.resumeToken
        return Promise.resolve({ value: ev, done: false })
      }
    }
    return this._nextPlain()
  }

  /** {@link next} in full (the buffered case too): its plain twin, which the tests compare. */
  async _nextPlain() {
    for (;;) {
      const cur = this._cur
      if (cur !== null && this._idx < cur.events.length) {
        const ev = cur.events[this._idx]
        cur.events[this._idx++] = undefined
        this._resumeToken = this._idx === cur.events.length ? cur.resumeToken : ev.resumeToken
        return { value: ev, done: false }
      }
      this._cur = null
      const item = await this._take()
      if (item.events) {
        if (item.events.length === 0) {
          this._resumeToken = item.resumeToken
          continue
        }
        this._cur = item
        this._idx = 0
        continue
      }
      await this._terminate(item)
      return { value: undefined, done: true }
    }
  }

  /** Whole batches `{ events, resumeToken }` (empty batches too: their token still advances). */
  async *batches() {
    try {
      if (this._cur !== null && this._idx < this._cur.events.length) {
        const rest = { events: this._cur.events.slice(this._idx), resumeToken: this._cur.resumeToken }
        this._cur = null
        this._resumeToken = rest.resumeToken
        yield rest
      }
      this._cur = null
      for (;;) {
        const item = await this._take()
        if (item.events) {
          this._resumeToken = item.resumeToken
          yield item
          continue
        }
        await this._terminate(item)
        return
      }
    } finally {
      await this.close()
    }
  }

  [Symbol.asyncIterator]() {
    return {
      next: () => this.next(),
      return: async () => {
        await this.close()
        return { value: undefined, done: true }
      },
      [Symbol.asyncIterator]() {
        return this
      },
    }
  }

  /** A Node.js object-mode Readable of events, with backpressure; destroying it closes the stream. */
  stream(options = {}) {
    return cursorReadable(this, {
      objectMode: true,
      highWaterMark: options.highWaterMark === undefined ? 16 : options.highWaterMark,
      next: () => this.next().then((r) => (r.done ? null : [r.value])),
    })
  }

  /**
   * Stops fetching, lets an in-flight getMore finish (at most maxAwaitTimeMS + 2 s), kills the
   * server cursor (killCursors, awaited) and ends the session. Idempotent.
   */
  close() {
    this._cur = null
    return super.close()
  }
}

/**
 * Opens a change stream on a driver MongoClient, Db or Collection. Nothing is sent until the
 * first `next()` / iteration.
 */
function watch(target, pipeline = [], options = {}) {
  return new ChangeStream(target, pipeline, options)
}

/** The record formats of {@link watchRecords}: bson2json's (`event`, `fullDocument`) and the connectors'. */
const RECORD_FORMATS = {
  event: EventFormat.RecordEvent,
  fullDocument: EventFormat.RecordFullDocument,
  'mongo-kafka': EventFormat.RecordMongoKafka,
  debezium: EventFormat.RecordDebezium,
}

/**
 * {@link watch} whose events are Kafka records (for lib/kafka): `resumeToken`, `operationType`,
 * `ns`, `clusterTime`, and `key` (the documentKey's JSON), `value` (the whole event's JSON, or
 * with `value: 'fullDocument'` the fullDocument's) and `headers` as bytes, made in the native
 * pass; with `'mongo-kafka'` or `'debezium'`, the key and value the connector writes (no
 * headers; Debezium: none for an event it writes no record of), `kafka` naming Debezium's
 * logical name and version. `options.whole` does not apply.
 * @param {'event' | 'fullDocument' | 'mongo-kafka' | 'debezium'} value
 * @param {{ name: string, version: string }} [kafka]
 */
function watchRecords(target, pipeline, options, value, kafka = undefined) {
  return new ChangeStream(target, pipeline, options, RECORD_FORMATS[value] ?? EventFormat.RecordEvent, kafka)
}

module.exports = {
  watch,
  watchRecords,
  ChangeStream,
  ChangeStreamInvalidatedError,
  ChangeStreamError,
  isResumableError,
  // for lib/mongo/snapshot.js: the same target resolution and token decoding
  resolveTarget,
  tokenValue,
}
