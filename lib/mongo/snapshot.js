'use strict'

/**
 * `snapshot()`: a collection's documents in `_id` order, each transcoded as a change event, for
 * change capture's initial snapshot (lib/kafka/snapshot-copy.js). The cursor runs on raw
 * replies through the same change-event transcoder as `watch()` (lib/mongo/change-stream.js),
 * so `documentKey` and `fullDocument` are byte for byte what the change stream gives.
 */

const native = require('../native')
const { resolveDriverOptions, BASE_KEYS, intOption } = require('../options')
const { RawCursor, replyCursor } = require('./raw-cursor')
const { resolveTarget, tokenValue } = require('./change-stream')

/** The option names snapshot() accepts. */
const SNAPSHOT_KEYS = new Set([...BASE_KEYS, 'batchSize', 'prefetch', 'timeoutMS', 'after', 'from', 'before', 'signal', 'enableUtf8Validation'])

/** The `$type` aliases of each BSON comparison bracket an `_id` can be in, in the server's order. */
const BRACKETS = [['minKey'], ['null'], ['double', 'int', 'long', 'decimal'], ['string', 'symbol'], ['object'], ['binData'], ['objectId'], ['bool'], ['date'], ['timestamp'], ['regex'], ['maxKey']]

/** The index in BRACKETS of a (canonical Extended JSON parsed) `_id` value. */
function bracketOf(v) {
  if (v === null || v === undefined) return 1
  if (typeof v === 'number' || typeof v === 'bigint') return 2
  if (typeof v === 'string') return 3
  if (typeof v === 'boolean') return 7
  if (v instanceof Date) return 8
  switch (v._bsontype) {
    case 'MinKey':
      return 0
    case 'Int32':
    case 'Double':
    case 'Long':
    case 'Decimal128':
      return 2
    case 'BSONSymbol':
      return 3
    case 'Binary':
      return 5
    case 'ObjectId':
      return 6
    case 'Timestamp':
      return 9
    case 'BSONRegExp':
      return 10
    case 'MaxKey':
      return 11
    default:
      return 4
  }
}

/**
 * The documents of a collection after `_id` `after`, in `_id` order across types: `$gt` compares
 * within a type's bracket only, so the later brackets are added by `$type`.
 */
function afterFilter(after) {
  const later = BRACKETS.slice(bracketOf(after) + 1).flat()
  return later.length === 0 ? { _id: { $gt: after } } : { $or: [{ _id: { $gt: after } }, { _id: { $type: later } }] }
}

/**
 * The `$match` of a snapshot: `_id` after `after` (else from `from` on) and before `before`.
 * Without bounds (the whole collection, one range) `after` compares across types. A range of
 * several (lib/mongo/ranges.js) exists only when every `_id` was of one kind when it was split,
 * after the change stream's position was taken: an `_id` of another kind can only come from a
 * later insert, which the stream carries. So a bounded range compares plainly (`$gt`/`$gte`,
 * `$lt`), one `_id` predicate a server answers from the `_id` index. Null: no `$match`.
 */
function rangeMatch(after, from, before) {
  if (from === undefined && before === undefined) return after === undefined ? null : afterFilter(after)
  const id = {}
  if (after !== undefined) id.$gt = after
  else if (from !== undefined) id.$gte = from
  if (before !== undefined) id.$lt = before
  return { _id: id }
}

/**
 * A collection's documents in `_id` order, each shaped and transcoded as a change event
 * (`operationType: 'snapshot'`, `ns`, `documentKey`, `fullDocument`): an `aggregate` of
 * `[$match after, $sort _id, $project]` whose replies go through the change-event transcoder, so
 * `documentKey` and `fullDocument` are byte for byte what the change stream gives for the same
 * document. For change capture's initial snapshot (lib/kafka/snapshot-copy.js). `batches()` yields
 * `{ events, after }`, `after` being the last `_id` of the batch (resume with `options.after`).
 */
class SnapshotCursor extends RawCursor {
  /** @param {number} [format] what each document becomes: an event object, or a Kafka record ({@link snapshotRecords}) */
  constructor(collection, options = {}, format = native.EventFormat.Parts, kafka = undefined) {
    const t = resolveTarget(collection)
    if (t.aggregate === 1) throw new TypeError('bson2json: a snapshot needs a Collection')
    const o = resolveDriverOptions(collection, options, SNAPSHOT_KEYS)
    const batchSize = intOption(options, 'batchSize', 1, Infinity, undefined)
    const prefetch = intOption(options, 'prefetch', 0, Infinity, 1)
    const timeoutMS = intOption(options, 'timeoutMS', 0, Infinity, 0)
    super({ client: t.client, db: t.db, prefetch, prefetchGiven: true, batchSize, timeoutMS, signal: options.signal, what: 'snapshot' })
    this._o = o
    this._format = format
    this._kafka = kafka
    this._coll = t.aggregate
    this._ns = { db: t.db.databaseName, coll: t.aggregate }
    this._after = options.after
    this._from = options.from
    this._before = options.before
  }

  _initialCommand() {
    const pipeline = []
    const match = rangeMatch(this._after, this._from, this._before)
    if (match !== null) pipeline.push({ $match: match })
    pipeline.push(
      { $sort: { _id: 1 } },
      // The event's own _id carries the document's _id in a document (`{k: _id}`), so that any
      // _id type comes back as canonical Extended JSON (the resume position).
      { $project: { _id: { k: '$_id' }, operationType: { $literal: 'snapshot' }, ns: { $literal: this._ns }, documentKey: { _id: '$_id' }, fullDocument: '$$ROOT' } },
    )
    return { aggregate: this._coll, pipeline, cursor: this._batchSize === undefined ? {} : { batchSize: this._batchSize } }
  }

  _accept(reply, isGetMore) {
    // projection / redact (in the call): the snapshot's records get what the change stream's events get
    const b = native.transcodeChangeBatch(replyCursor(reply), this._format, this._o, false, this._kafka)
    this._setCursor(b.id, b.ns, isGetMore)
    const events = b.events
    if (events.length > 0) {
      const last = events[events.length - 1]
      this._after = tokenValue(last.resumeToken).k
      for (const ev of events) delete ev.resumeToken
    }
    this._push({ events, after: this._after })
    return null
  }

  /** Whole batches `{ events, after }` until the collection is read; closes the cursor at the end or on a break. */
  async *batches() {
    try {
      for (;;) {
        const item = await this._take()
        if (item.events) {
          yield item
          continue
        }
        if (item.error) throw item.error
        return
      }
    } finally {
      await this.close()
    }
  }
}

/**
 * The documents of `collection` (after `_id` `options.after`, else from `options.from` on; below
 * `options.before`) as snapshot events; see SnapshotCursor.
 */
function snapshot(collection, options = {}) {
  return new SnapshotCursor(collection, options)
}

/** The record formats of {@link snapshotRecords}. */
const RECORD_FORMATS = {
  event: native.EventFormat.RecordSnapshot,
  fullDocument: native.EventFormat.RecordFullDocument,
  'mongo-kafka': native.EventFormat.RecordMongoKafkaSnapshot,
  debezium: native.EventFormat.RecordDebeziumSnapshot,
}

/**
 * {@link snapshot} whose documents are Kafka records (for lib/kafka): `key` the documentKey's
 * JSON, `value` the snapshot event's JSON without its `_id` (`{ operationType: 'snapshot', ns,
 * documentKey, fullDocument }`), or with `value: 'fullDocument'` the document's, and
 * `headers`, as bytes made in the native pass, beside `ns`; with `'mongo-kafka'` or
 * `'debezium'`, the key and value of the connector's snapshot records (`kafka`: Debezium's
 * logical name, version, and the cluster time `atT`/`atI` of the position the copy starts from).
 * @param {'event' | 'fullDocument' | 'mongo-kafka' | 'debezium'} [value]
 * @param {{ name: string, version: string, atT?: number, atI?: number }} [kafka]
 */
function snapshotRecords(collection, options = {}, value = 'event', kafka = undefined) {
  return new SnapshotCursor(collection, options, RECORD_FORMATS[value] ?? native.EventFormat.RecordSnapshot, kafka)
}

module.exports = { snapshot, snapshotRecords, SnapshotCursor, rangeMatch }
