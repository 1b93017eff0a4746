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

const { parseCanonical, write, javaJson } = require('./java-json')
const { watch, watchRecords } = require('../mongo/change-stream')
const { snapshot, snapshotRecords } = require('../mongo/snapshot')

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

/** The value of field `name` of a parsed document, or undefined. */
function field(doc, name) {
  const k = doc.keys.indexOf(name)
  return k < 0 ? undefined : doc.values[k]
}

const record = (topic, key, value) => ({ topic, key: key === null ? undefined : Buffer.from(key), value: value === null ? undefined : Buffer.from(value) })

// -- the MongoDB Kafka source connector (mongo-kafka-connect 2.0.1, output.format.key/value=json,
// output.json.formatter DefaultJson = the Java driver's JsonMode.STRICT,
// change.stream.document.key.as.key=true) -------------------------------------------------

/** The change event as the connector's value (the event as the server sent it), its documentKey as the key (else `{"_id": token}`). */
function mongoKafkaRecords(o, ev, out) {
  const key = typeof ev.documentKey === 'string' ? javaJson(ev.documentKey, 'strict') : `{"_id": ${write(field(parseCanonical(ev.json), '_id'), 'strict')}}`
  out.push(record(o.topicOf(ev.ns), key, javaJson(ev.json, 'strict')))
}

/**
 * A snapshot document as `startup.mode=copy_existing` writes it: an insert event whose `_id` is
 * `{"_id": <document _id>, "copyingData": true}`, without clusterTime, fields in the copy
 * pipeline's order.
 */
function mongoKafkaSnapshot(o, ev, _reason, out) {
  const dk = parseCanonical(ev.documentKey)
  const id = write(field(dk, '_id'), 'strict')
  const key = write(dk, 'strict')
  const ns = `{"db": ${JSON.stringify(ev.ns.db)}, "coll": ${JSON.stringify(ev.ns.coll)}}`
  const value = `{"_id": {"_id": ${id}, "copyingData": true}, "operationType": "insert", "documentKey": ${key}, "fullDocument": ${javaJson(ev.fullDocument, 'strict')}, "ns": ${ns}}`
  out.push(record(o.topicOf(ev.ns), key, value))
}

// -- Debezium's MongoDB connector (debezium-connector-mongodb 3.0.8.Final, its defaults:
// capture.mode change_streams_update_full, tombstones.on.delete true; JsonConverter with
// schemas.enable=false) -------------------------------------------------------------------

const { version: VERSION } = require('../../package.json')
const OPS = { insert: 'c', update: 'u', replace: 'u', delete: 'd' }

/** Debezium's key: `{"id": <the _id in the compact writer, as a JSON string>}`. */
function debeziumKey(dk) {
  return JSON.stringify({ id: write(field(dk, '_id'), 'compact') })
}

/**
 * Debezium's `source` block. `name` is the logical name (Debezium's topic.prefix: here the topic
 * prefix, else the stream id) and `version` names bson2json's version: the two fields that name
 * the producer (docs/kafka.md). Cluster time t (seconds) gives ts_ms/us/ns, its increment `ord`.
 */
function debeziumSource(o, ns, ct, wallTime, snapshot) {
  const t = ct ? ct.t : 0
  return (
    `{"version":${JSON.stringify(`bson2json ${VERSION}`)},"connector":"mongodb","name":${JSON.stringify(o.topicPrefix || o.id)},` +
    `"ts_ms":${t * 1000},"snapshot":"${snapshot}","db":${JSON.stringify(ns.db)},"sequence":null,"ts_us":${t * 1e6},"ts_ns":${BigInt(t) * 1_000_000_000n},` +
    `"collection":${JSON.stringify(ns.coll)},"ord":${ct ? ct.i : 0},"lsid":null,"txnNumber":null,"wallTime":${wallTime === undefined ? 'null' : wallTime}}`
  )
}

/** The millis of a parsed canonical `$date`, or undefined. */
function dateMillis(v) {
  return v && v.keys && v.keys[0] === '$date' && v.values[0].keys ? v.values[0].values[0] : undefined
}

/** A change event as Debezium's envelope (`op` c/u/d), a tombstone after a delete; other events (drop, rename, …) as Debezium: none. */
function debeziumRecords(o, ev, out) {
  const op = OPS[ev.operationType]
  if (op === undefined) return
  const doc = parseCanonical(ev.json)
  const dk = field(doc, 'documentKey')
  if (dk === undefined) return
  const key = debeziumKey(dk)
  const full = field(doc, 'fullDocument')
  const after = op === 'd' || full === undefined || full === null ? 'null' : JSON.stringify(javaJson(ev.json, 'compact', full.start, full.end))
  let update = 'null'
  const ud = field(doc, 'updateDescription')
  if (ev.operationType === 'update' && ud !== undefined) {
    const removed = field(ud, 'removedFields')
    const truncated = field(ud, 'truncatedArrays')
    const fields = field(ud, 'updatedFields')
    update =
      `{"removedFields":${removed === undefined || removed.length === 0 ? 'null' : JSON.stringify(removed)},` +
      `"updatedFields":${fields === undefined ? 'null' : JSON.stringify(write(fields, 'relaxed'))},` +
      `"truncatedArrays":${truncated === undefined || truncated.length === 0 ? 'null' : JSON.stringify(truncated.map((x) => ({ field: field(x, 'field'), size: Number(write(field(x, 'size'), 'relaxed')) })))}}`
  }
  const value = `{"before":null,"after":${after},"updateDescription":${update},"source":${debeziumSource(o, ev.ns, ev.clusterTime, dateMillis(field(doc, 'wallTime')), 'false')},"op":"${op}","ts_ms":${Date.now()},"transaction":null}`
  const topic = o.topicOf(ev.ns)
  out.push(record(topic, key, value))
  if (op === 'd') out.push(record(topic, key, null))
}

/**
 * A snapshot document as Debezium's initial snapshot writes it: `op: "r"`, `source.snapshot:
 * "true"`, and `"last"` on the snapshot's last record (Debezium 3.0.8's MongoDB connector marks
 * no other: not `first`, nor the `*_in_data_collection` of its relational connectors); `ts_ms`
 * and `ord` of `source` are the cluster time of the position the snapshot starts from (`mark.at`;
 * the copy's time when unknown).
 */
function debeziumSnapshot(o, ev, _reason, out, mark) {
  const key = debeziumKey(parseCanonical(ev.documentKey))
  const after = JSON.stringify(javaJson(ev.fullDocument, 'compact'))
  const now = Date.now()
  const ct = mark && mark.at ? mark.at : { t: Math.floor(now / 1000), i: 0 }
  const snapshot = mark && mark.last ? 'last' : 'true'
  out.push(record(o.topicOf(ev.ns), key, `{"before":null,"after":${after},"updateDescription":null,"source":${debeziumSource(o, ev.ns, ct, undefined, snapshot)},"op":"r","ts_ms":${now},"transaction":null}`))
}

// -- heartbeat records (heartbeatTopic): written with the checkpoint a quiet stream advances ---

/** A resume token `{_data}` as the Java driver's `toJson()` writes it. */
function tokenJson(token) {
  if (token && typeof token._data === 'string' && Object.keys(token).length === 1) return `{"_data": "${token._data}"}`
  return require('./client').ejson().stringify(token, { relaxed: true })
}

/** The change stream and snapshot cursor of a format that reads event objects. */
const openEvents = { watch: (_o, source, pipeline, wopts) => watch(source, pipeline, wopts), snapshotCursor: (_o, collection, options) => snapshot(collection, options) }

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
  'mongo-kafka': { ...openEvents, dialect: 'canonical', records: mongoKafkaRecords, snapshot: mongoKafkaSnapshot, heartbeat: (o, token, _ct, out) => out.push(record(o.heartbeatTopic, tokenJson(token), null)) },
  // Debezium's default capture mode looks the document up after an update (`after` is it)
  // Debezium's heartbeat: key the logical name, value the time
  debezium: {
    ...openEvents,
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
