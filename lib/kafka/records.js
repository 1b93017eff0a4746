'use strict'

/**
 * The Kafka record of a change event (or a snapshot record): key, value and headers, in the
 * record format the run writes (docs/kafka.md "Messages").
 */

/** A change event as a Kafka message: key the document key, value the event or the document. */
function toMessage(o, ev) {
  const headers = new Map()
  headers.set(Buffer.from('operationType'), Buffer.from(String(ev.operationType)))
  if (ev.ns) headers.set(Buffer.from('ns'), Buffer.from(ev.ns.coll === undefined ? String(ev.ns.db) : `${ev.ns.db}.${ev.ns.coll}`))
  if (ev.clusterTime) headers.set(Buffer.from('clusterTime'), Buffer.from(`${ev.clusterTime.t}.${ev.clusterTime.i}`))
  let value
  if (o.value === 'fullDocument') value = ev.fullDocument === undefined || ev.fullDocument === null ? null : Buffer.from(ev.fullDocument)
  else value = Buffer.from(ev.json)
  return {
    topic: o.topic,
    key: ev.documentKey === undefined || ev.documentKey === null ? undefined : Buffer.from(ev.documentKey),
    value: value === null ? undefined : value,
    headers,
  }
}

/** A snapshot record: the event's shape with operationType "snapshot", and a `snapshot` header (why it was copied). */
function snapshotMessage(o, ev, reason) {
  ev.json = `{"operationType":"snapshot","ns":${JSON.stringify(ev.ns)},"documentKey":${ev.documentKey},"fullDocument":${ev.fullDocument}}`
  const m = toMessage(o, ev)
  m.headers.set(Buffer.from('snapshot'), Buffer.from(reason))
  return m
}

module.exports = { toMessage, snapshotMessage }
