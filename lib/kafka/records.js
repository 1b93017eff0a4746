'use strict'

/**
 * The Kafka records of change events and snapshot records, in the record format the run writes
 * (`format`, docs/kafka.md "Record formats"): `bson2json` (the event in the chosen dialect, its
 * documentKey as the key, three headers), `mongo-kafka` (what the MongoDB Kafka source connector
 * writes with its defaults) and `debezium` (Debezium's MongoDB connector envelope, as its
 * JsonConverter writes it without schemas). Each format declares the dialect it needs from the
 * transcoder (and the change stream's `fullDocument` it implies) and two writers that push the
 * records of one event (or one snapshot document).
 */

const { watchRecords } = require('../mongo/change-stream')
const { snapshotRecords } = require('../mongo/snapshot')
const { version: VERSION } = require('../../package.json')

const SNAPSHOT = Buffer.from('snapshot')

/**
 * A change event as a Kafka message: key the document key, value the event or the document,
 * headers `operationType`, `ns`, `clusterTime`: bytes made in the native pass (the events of
 * lib/mongo `watchRecords` and `snapshotRecords`, which {@link FORMATS}' `watch` and
 * `snapshotCursor` open for this format).
 */
function toMessage(o, ev) {
  return { topic: o.topicOf(ev.ns), key: ev.key, value: ev.value, headers: ev.headers }
}

/** A snapshot record: the event's shape with operationType "snapshot" (its value), and a `snapshot` header (why it was copied). */
function snapshotMessage(o, ev, reason) {
  const m = toMessage(o, ev)
  m.headers.set(SNAPSHOT, Buffer.from(reason))
  return m
}

// -- the connectors' records, written in the native pass (crates/bson2json-core/src/kafka/;
// the plain twin in JavaScript: records-plain.js) -----------------------------------------

/**
 * What a connector's records name besides the event: Debezium's logical name (its
 * `topic.prefix`: the run's topic prefix, else its id) and version (bson2json's), and for the
 * snapshot the cluster time `at` of the position the copy starts from.
 */
function kafkaContext(o, at) {
  const ctx = { name: o.topicPrefix || o.id, version: `bson2json ${VERSION}` }
  if (at) {
    ctx.atT = at.t
    ctx.atI = at.i
  }
  return ctx
}

/** A record of the native pass (none when the connector writes none for the event). */
function connectorRecord(o, ev, out) {
  if (ev.value === undefined) return false
  out.push({ topic: o.topicOf(ev.ns), key: ev.key, value: ev.value })
  return true
}

/**
 * Debezium's record of an event, a tombstone (the key, no value) after a delete; other events
 * (drop, rename, …) as Debezium: none.
 */
function debeziumRecords(o, ev, out) {
  if (connectorRecord(o, ev, out) && ev.operationType === 'delete') out.push({ topic: o.topicOf(ev.ns), key: ev.key, value: undefined })
}

const TRUE_SNAPSHOT = Buffer.from(',"snapshot":"true","db":')

/**
 * Debezium's snapshot record; the snapshot's last one marked `"last"` (`mark.last`): its value
 * copied with `source.snapshot` rewritten (the first `,"snapshot":"true","db":` of the value is
 * `source`'s: `after` before it is a JSON string, whose quotes are escaped).
 */
function debeziumSnapshot(o, ev, _reason, out, mark) {
  let value = ev.value
  if (mark && mark.last) {
    value = Buffer.from(value)
    value.write('last', value.indexOf(TRUE_SNAPSHOT) + 13)
  }
  out.push({ topic: o.topicOf(ev.ns), key: ev.key, value })
}

/** The change stream and snapshot cursor of a connector's records. */
const connectorCursors = (format) => ({
  watch: (o, source, pipeline, wopts) => watchRecords(source, pipeline, wopts, format, kafkaContext(o)),
  snapshotCursor: (o, collection, options, at) => snapshotRecords(collection, options, format, kafkaContext(o, at)),
})

// -- heartbeat records (heartbeatTopic): written with the checkpoint a quiet stream advances ---

/** A resume token `{_data}` as the Java driver's `toJson()` writes it. */
function tokenJson(token) {
  if (token && typeof token._data === 'string' && Object.keys(token).length === 1) return `{"_data": "${token._data}"}`
  return require('./client').ejson().stringify(token, { relaxed: true })
}

const record = (topic, key, value) => ({ topic, key: key === null ? undefined : Buffer.from(key), value: value === null ? undefined : Buffer.from(value) })

/**
 * The record formats: the dialect each needs from the transcoder (undefined: the run's
 * `dialect`), the change stream and snapshot cursor it reads (`watch`, `snapshotCursor`), the
 * writer of a change event's records and of a snapshot document's.
 */
const FORMATS = {
  bson2json: {
    dialect: undefined,
    // events as records: their bytes made in the native pass
    watch: (o, source, pipeline, wopts) => watchRecords(source, pipeline, wopts, o.value),
    snapshotCursor: (o, collection, options) => snapshotRecords(collection, options, o.value),
    records: (o, ev, out) => out.push(toMessage(o, ev)),
    snapshot: (o, ev, reason, out) => out.push(snapshotMessage(o, ev, reason)),
    // key the stream id, value where the stream is
    heartbeat: (o, token, ct, out) => out.push(record(o.heartbeatTopic, o.id, `{"id":${JSON.stringify(o.id)},"resumeToken":${JSON.stringify(tokenJson(token))},"clusterTime":${ct ? `"${ct.t}.${ct.i}"` : 'null'},"ts_ms":${Date.now()}}`)),
  },
  // the connector's HeartbeatManager: key the resume token's JSON, no value
  'mongo-kafka': {
    ...connectorCursors('mongo-kafka'),
    dialect: 'canonical',
    records: connectorRecord,
    snapshot: (o, ev, _reason, out) => connectorRecord(o, ev, out),
    heartbeat: (o, token, _ct, out) => out.push(record(o.heartbeatTopic, tokenJson(token), null)),
  },
  // Debezium's default capture mode looks the document up after an update (`after` is it)
  // Debezium's heartbeat: key the logical name, value the time
  debezium: {
    ...connectorCursors('debezium'),
    dialect: 'canonical',
    fullDocument: 'updateLookup',
    records: debeziumRecords,
    snapshot: debeziumSnapshot,
    // the snapshot's last record is marked (SnapshotCopy holds each range's latest batch back for it)
    marksLast: true,
    heartbeat: (o, _token, _ct, out) => out.push(record(o.heartbeatTopic, JSON.stringify({ serverName: o.topicPrefix || o.id }), `{"ts_ms":${Date.now()}}`)),
  },
}

/** The format named `name` (default bson2json). */
function formatOf(name) {
  return FORMATS[name === undefined ? 'bson2json' : name]
}

module.exports = { toMessage, snapshotMessage, formatOf, FORMAT_NAMES: Object.keys(FORMATS) }
