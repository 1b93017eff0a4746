'use strict'

/**
 * The Kafka connectors' records written in JavaScript from event objects in canonical Extended
 * JSON (`watch()` with `dialect: 'canonical'`, `whole: true`): the plain twin of the native
 * writers (crates/bson2json-core/src/kafka/, `EventFormat.RecordMongoKafka*` and
 * `RecordDebezium*`), which the sink uses. The tests compare the two on the same events
 * (__test__/kafka/connector-records.spec.ts), and benchmark/kafka-formats.mjs their cost.
 * `PLAIN[format]` has each format's `records(o, ev, out)` and `snapshot(o, ev, reason, out,
 * mark)`, pushing `{ topic, key, value }` records (Buffers; a tombstone has no value).
 */

const { parseCanonical, write, javaJson, javaString } = require('./java-json')
const { version: VERSION } = require('../../package.json')

const record = (topic, key, value) => ({ topic, key: key === null ? undefined : Buffer.from(key), value: value === null ? undefined : Buffer.from(value) })

/** The value of field `name` of a parsed document, or undefined. */
function field(doc, name) {
  const k = doc.keys.indexOf(name)
  return k < 0 ? undefined : doc.values[k]
}


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
  const ns = `{"db": ${javaString(ev.ns.db)}, "coll": ${javaString(ev.ns.coll)}}`
  const value = `{"_id": {"_id": ${id}, "copyingData": true}, "operationType": "insert", "documentKey": ${key}, "fullDocument": ${javaJson(ev.fullDocument, 'strict')}, "ns": ${ns}}`
  out.push(record(o.topicOf(ev.ns), key, value))
}

// -- Debezium's MongoDB connector (debezium-connector-mongodb 3.0.8.Final, its defaults:
// capture.mode change_streams_update_full, tombstones.on.delete true; JsonConverter with
// schemas.enable=false) -------------------------------------------------------------------

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
      `"truncatedArrays":${truncated === undefined || truncated.length === 0 ? 'null' : JSON.stringify(truncated.map((x) => ({ field: field(x, 'field'), size: Number(write(field(x, 'newSize'), 'relaxed')) })))}}`
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


/** The connectors' records, written in JavaScript. */
const PLAIN = {
  'mongo-kafka': { records: mongoKafkaRecords, snapshot: mongoKafkaSnapshot },
  debezium: { records: debeziumRecords, snapshot: debeziumSnapshot },
}

module.exports = { PLAIN }
