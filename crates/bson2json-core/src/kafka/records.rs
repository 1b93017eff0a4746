//! The Kafka connectors' records of a change event (or of an initial snapshot's document), key
//! and value, written from the raw event in the native pass: what the MongoDB Kafka source
//! connector 2.0.1 writes with its defaults ([`Connector::MongoKafka`]: `DefaultJson`, the
//! `documentKey` as the key) and Debezium's MongoDB connector 3.0.8 with its defaults
//! ([`Connector::Debezium`]: its envelope as Kafka Connect's `JsonConverter` writes it without
//! schemas). docs/kafka.md "Record formats" says what each holds; lib/kafka/records.js writes
//! the same records from canonical Extended JSON (its plain twin, compared by the tests).

use std::ops::Range;

use crate::element::{ARRAY, DOCUMENT, INT32, INT64, STRING};
use crate::error::Error;
use crate::escape::write_quoted;
use crate::mongo::change::{EventField, Part};
use crate::options::Options;
use crate::raw::{Elements, RawElement};

use super::java::{JavaJson, JavaMode};

/// Which connector's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connector {
    /// The MongoDB Kafka source connector (`mongo-kafka-connect` 2.0.1).
    MongoKafka,
    /// Debezium's MongoDB connector (3.0.8.Final).
    Debezium,
}

/// What a Debezium record names besides the event: the connector's logical name (its
/// `topic.prefix`), the producer's version, the time the records are made, and for a snapshot
/// the cluster time of the position the copy starts from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KafkaContext {
    /// `source.name`.
    pub name: String,
    /// `source.version`.
    pub version: String,
    /// The top-level `ts_ms`: milliseconds since the epoch, now.
    pub now_ms: i64,
    /// A snapshot record's `source.ts_ms` and `ord` (seconds, increment); `None`: `now_ms`'s
    /// second and 0.
    pub at: Option<(u32, u32)>,
}

/// The parts of an event a record is made of, found among its [`EventField`]s.
#[derive(Default)]
struct Parts {
    id: Option<Range<usize>>,
    operation_type: Option<Range<usize>>,
    db: Option<Range<usize>>,
    coll: Option<Range<usize>>,
    cluster_time: Option<(u32, u32)>,
    wall_time: Option<i64>,
    document_key: Option<Range<usize>>,
    /// `fullDocument`: absent, not a document (`Some(None)`), or a document.
    full_document: Option<Option<Range<usize>>>,
    update_description: Option<Option<Range<usize>>>,
}

impl Parts {
    fn of(fields: &[EventField]) -> Parts {
        let mut p = Parts::default();
        for f in fields {
            match f {
                EventField::ResumeToken { doc, .. } => p.id = Some(doc.clone()),
                EventField::OperationType(r) => p.operation_type = Some(r.clone()),
                EventField::Ns { db, coll } => {
                    p.db = db.clone();
                    p.coll = coll.clone();
                }
                EventField::ClusterTime { t, i } => p.cluster_time = Some((*t, *i)),
                EventField::WallTime(ms) => p.wall_time = Some(*ms),
                EventField::DocumentKey(r) => p.document_key = Some(r.clone()),
                EventField::Part(Part::FullDocument, r) => p.full_document = Some(r.clone()),
                EventField::Part(Part::UpdateDescription, r) => {
                    p.update_description = Some(r.clone());
                }
                EventField::Part(Part::FullDocumentBeforeChange, _)
                | EventField::SplitEvent { .. } => {}
            }
        }
        p
    }
}

/// The element `name` of the document `ev[doc]`, if it has one.
/// `[`, each element of the array at `arr` in `ev` written by `each` (its type and value range
/// in `ev`), comma-separated, `]`.
fn each_element(
    ev: &[u8],
    arr: Range<usize>,
    out: &mut Vec<u8>,
    mut each: impl FnMut(u8, Range<usize>, &mut Vec<u8>) -> Result<(), Error>,
) -> Result<(), Error> {
    out.push(b'[');
    for (k, x) in Elements::new(&ev[arr.clone()])
        .map_err(|x| x.shifted(arr.start))?
        .enumerate()
    {
        let x = x.map_err(|x| x.shifted(arr.start))?;
        if k > 0 {
            out.push(b',');
        }
        each(
            x.element_type,
            (x.value_start + arr.start)..(x.value_end + arr.start),
            out,
        )?;
    }
    out.push(b']');
    Ok(())
}

fn member<'a>(
    ev: &'a [u8],
    doc: &Range<usize>,
    name: &[u8],
) -> Result<Option<RawElement<'a>>, Error> {
    for e in Elements::new(&ev[doc.clone()]).map_err(|e| e.shifted(doc.start))? {
        let e = e.map_err(|e| e.shifted(doc.start))?;
        if e.key == name {
            return Ok(Some(RawElement {
                value_start: e.value_start + doc.start,
                value_end: e.value_end + doc.start,
                ..e
            }));
        }
    }
    Ok(None)
}

/// The records of one change event (or snapshot document) for a connector: the key and the
/// value, each into its own buffer, or nothing (`Ok(false)`) when the connector writes no
/// record for it (Debezium: events other than inserts, updates, replaces and deletes, or
/// without a `documentKey`). Debezium follows a delete with a tombstone, which the caller adds
/// (the key again, no value).
pub struct ConnectorRecords<'o> {
    connector: Connector,
    opts: &'o Options,
    ctx: &'o KafkaContext,
}

impl<'o> ConnectorRecords<'o> {
    /// Records of `connector` under the call's options `opts` and `ctx`.
    pub fn new(connector: Connector, opts: &'o Options, ctx: &'o KafkaContext) -> Self {
        ConnectorRecords {
            connector,
            opts,
            ctx,
        }
    }

    fn java(&self, mode: JavaMode) -> JavaJson<'o> {
        JavaJson::new(self.opts, mode)
    }

    /// Whether the event `ev` (its `fields`) has a record (a snapshot document always does).
    pub fn has_record(&self, ev: &[u8], fields: &[EventField], snapshot: bool) -> bool {
        if self.connector == Connector::MongoKafka || snapshot {
            return true;
        }
        let p = Parts::of(fields);
        p.document_key.is_some() && debezium_op(&p, ev).is_some()
    }

    /// The record's key of the event `ev` into `out`.
    pub fn key(
        &self,
        ev: &[u8],
        fields: &[EventField],
        snapshot: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let p = Parts::of(fields);
        match (self.connector, &p.document_key) {
            // the documentKey in STRICT JSON
            (Connector::MongoKafka, Some(dk)) => {
                self.java(JavaMode::Strict)
                    .document(&ev[dk.clone()], dk.start, out)
            }
            // an event without one (drop, rename, …): `{"_id": <the event's _id>}`
            (Connector::MongoKafka, None) if !snapshot => {
                out.extend_from_slice(b"{\"_id\": ");
                if let Some(id) = &p.id {
                    self.java(JavaMode::Strict)
                        .document(&ev[id.clone()], id.start, out)?;
                } else {
                    out.extend_from_slice(b"null");
                }
                out.push(b'}');
                Ok(())
            }
            // Debezium: `{"id":"<the _id in compact STRICT JSON>"}`
            (_, Some(dk)) => {
                let mut id = Vec::new();
                self.id_of(ev, dk, JavaMode::Compact, &mut id)?;
                out.extend_from_slice(b"{\"id\":");
                write_quoted(out, &id);
                out.push(b'}');
                Ok(())
            }
            (_, None) => Ok(()),
        }
    }

    /// The `_id` value of the document key `ev[dk]` in `mode` (null when it has none).
    fn id_of(
        &self,
        ev: &[u8],
        dk: &Range<usize>,
        mode: JavaMode,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        match member(ev, dk, b"_id")? {
            Some(e) => self
                .java(mode)
                .value(ev, e.element_type, e.value_start, e.value_end, out),
            None => {
                out.extend_from_slice(b"null");
                Ok(())
            }
        }
    }

    /// The record's value of the event `ev` into `out`.
    pub fn value(
        &self,
        ev: &[u8],
        fields: &[EventField],
        snapshot: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let p = Parts::of(fields);
        match (self.connector, snapshot) {
            // the change event as the server sent it, field for field, in STRICT JSON
            (Connector::MongoKafka, false) => self.java(JavaMode::Strict).document(ev, 0, out),
            (Connector::MongoKafka, true) => self.mongo_kafka_snapshot(ev, &p, out),
            (Connector::Debezium, _) => self.debezium(ev, &p, snapshot, out),
        }
    }

    /// A snapshot document as `startup.mode=copy_existing` writes it: an insert whose `_id` is
    /// `{"_id": <the document's _id>, "copyingData": true}`, without clusterTime, in the copy
    /// pipeline's field order.
    fn mongo_kafka_snapshot(&self, ev: &[u8], p: &Parts, out: &mut Vec<u8>) -> Result<(), Error> {
        let strict = self.java(JavaMode::Strict);
        out.extend_from_slice(b"{\"_id\": {\"_id\": ");
        match &p.document_key {
            Some(dk) => self.id_of(ev, dk, JavaMode::Strict, out)?,
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(
            b", \"copyingData\": true}, \"operationType\": \"insert\", \"documentKey\": ",
        );
        match &p.document_key {
            Some(dk) => strict.document(&ev[dk.clone()], dk.start, out)?,
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b", \"fullDocument\": ");
        match &p.full_document {
            Some(Some(fd)) => strict.document(&ev[fd.clone()], fd.start, out)?,
            _ => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b", \"ns\": {\"db\": ");
        self.java_str(ev, &p.db, out)?;
        out.extend_from_slice(b", \"coll\": ");
        self.java_str(ev, &p.coll, out)?;
        out.extend_from_slice(b"}}");
        Ok(())
    }

    /// A string of the event as the Java writer quotes it (null when missing).
    fn java_str(
        &self,
        ev: &[u8],
        r: &Option<Range<usize>>,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        match r {
            Some(r) => {
                super::java::write_java_string(out, &String::from_utf8_lossy(&ev[r.clone()]));
            }
            None => out.extend_from_slice(b"null"),
        }
        Ok(())
    }

    /// Debezium's envelope: `before` (null), `after` (the document as a JSON string of compact
    /// STRICT JSON), `updateDescription`, `source`, `op`, `ts_ms`, `transaction` (null).
    fn debezium(
        &self,
        ev: &[u8],
        p: &Parts,
        snapshot: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let op = if snapshot {
            "r"
        } else {
            debezium_op(p, ev).unwrap_or("u")
        };
        out.extend_from_slice(b"{\"before\":null,\"after\":");
        match &p.full_document {
            Some(Some(fd)) if op != "d" => {
                let mut after = Vec::new();
                self.java(JavaMode::Compact)
                    .document(&ev[fd.clone()], fd.start, &mut after)?;
                write_quoted(out, &after);
            }
            _ => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"updateDescription\":");
        let update = !snapshot
            && p.operation_type
                .as_ref()
                .is_some_and(|r| &ev[r.clone()] == b"update");
        match &p.update_description {
            Some(Some(ud)) if update => self.update_description(ev, ud, out)?,
            _ => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"source\":");
        self.source(ev, p, snapshot, out);
        out.extend_from_slice(b",\"op\":\"");
        out.extend_from_slice(op.as_bytes());
        out.extend_from_slice(b"\",\"ts_ms\":");
        out.extend_from_slice(itoa::Buffer::new().format(self.ctx.now_ms).as_bytes());
        out.extend_from_slice(b",\"transaction\":null}");
        Ok(())
    }

    /// `{"removedFields":[…]|null,"updatedFields":"<relaxed JSON>"|null,"truncatedArrays":[…]|null}`.
    fn update_description(
        &self,
        ev: &[u8],
        ud: &Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        out.extend_from_slice(b"{\"removedFields\":");
        match member(ev, ud, b"removedFields")? {
            Some(e) if e.element_type == ARRAY && e.value_end - e.value_start > 5 => {
                each_element(ev, e.value_start..e.value_end, out, |ty, v, out| {
                    if ty == STRING {
                        write_quoted(
                            out,
                            String::from_utf8_lossy(&ev[v.start + 4..v.end - 1]).as_bytes(),
                        );
                        Ok(())
                    } else {
                        self.java(JavaMode::Relaxed)
                            .value(ev, ty, v.start, v.end, out)
                    }
                })?;
            }
            _ => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"updatedFields\":");
        match member(ev, ud, b"updatedFields")? {
            Some(e) if e.element_type == DOCUMENT => {
                let mut fields = Vec::new();
                self.java(JavaMode::Relaxed).document(
                    &ev[e.value_start..e.value_end],
                    e.value_start,
                    &mut fields,
                )?;
                write_quoted(out, &fields);
            }
            _ => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"truncatedArrays\":");
        match member(ev, ud, b"truncatedArrays")? {
            Some(e) if e.element_type == ARRAY && e.value_end - e.value_start > 5 => {
                each_element(ev, e.value_start..e.value_end, out, |_, t, out| {
                    out.extend_from_slice(b"{\"field\":");
                    match member(ev, &t, b"field")? {
                        Some(f) if f.element_type == STRING => write_quoted(
                            out,
                            String::from_utf8_lossy(&ev[f.value_start + 4..f.value_end - 1])
                                .as_bytes(),
                        ),
                        _ => {
                            out.extend_from_slice(b"null");
                            true
                        }
                    };
                    out.extend_from_slice(b",\"size\":");
                    match member(ev, &t, b"newSize")? {
                        Some(n) if n.element_type == INT32 || n.element_type == INT64 => self
                            .java(JavaMode::Relaxed)
                            .value(ev, n.element_type, n.value_start, n.value_end, out)?,
                        _ => out.extend_from_slice(b"null"),
                    }
                    out.push(b'}');
                    Ok(())
                })?;
            }
            _ => out.extend_from_slice(b"null"),
        }
        out.push(b'}');
        Ok(())
    }

    /// Debezium's `source` block: the producer (`version`, `connector`, `name`), the event's
    /// cluster time (`ts_ms`/`ts_us`/`ts_ns` of its seconds, `ord` its increment; a snapshot
    /// record's: the position the copy starts from), `snapshot`, `db`, `collection`, `wallTime`.
    fn source(&self, ev: &[u8], p: &Parts, snapshot: bool, out: &mut Vec<u8>) {
        let (t, i) = if snapshot {
            self.ctx
                .at
                .unwrap_or(((self.ctx.now_ms.max(0) / 1000) as u32, 0))
        } else {
            p.cluster_time.unwrap_or((0, 0))
        };
        let t = u64::from(t);
        let mut b = itoa::Buffer::new();
        out.extend_from_slice(b"{\"version\":");
        write_quoted(out, self.ctx.version.as_bytes());
        out.extend_from_slice(b",\"connector\":\"mongodb\",\"name\":");
        write_quoted(out, self.ctx.name.as_bytes());
        out.extend_from_slice(b",\"ts_ms\":");
        out.extend_from_slice(b.format(t * 1000).as_bytes());
        out.extend_from_slice(if snapshot {
            b",\"snapshot\":\"true\",\"db\":"
        } else {
            b",\"snapshot\":\"false\",\"db\":"
        });
        self.json_str(ev, &p.db, out);
        out.extend_from_slice(b",\"sequence\":null,\"ts_us\":");
        out.extend_from_slice(b.format(t * 1_000_000).as_bytes());
        out.extend_from_slice(b",\"ts_ns\":");
        out.extend_from_slice(b.format(t * 1_000_000_000).as_bytes());
        out.extend_from_slice(b",\"collection\":");
        self.json_str(ev, &p.coll, out);
        out.extend_from_slice(b",\"ord\":");
        out.extend_from_slice(b.format(i).as_bytes());
        out.extend_from_slice(b",\"lsid\":null,\"txnNumber\":null,\"wallTime\":");
        match p.wall_time {
            Some(ms) if !snapshot => out.extend_from_slice(b.format(ms).as_bytes()),
            _ => out.extend_from_slice(b"null"),
        }
        out.push(b'}');
    }

    /// A string of the event as JSON (null when missing).
    fn json_str(&self, ev: &[u8], r: &Option<Range<usize>>, out: &mut Vec<u8>) {
        match r {
            Some(r) => {
                write_quoted(out, String::from_utf8_lossy(&ev[r.clone()]).as_bytes());
            }
            None => out.extend_from_slice(b"null"),
        }
    }
}

/// Debezium's `op` of a change event: `c`, `u` (updates and replaces), `d`; none for the rest.
fn debezium_op(p: &Parts, ev: &[u8]) -> Option<&'static str> {
    match p.operation_type.as_ref().map(|r| &ev[r.clone()]) {
        Some(b"insert") => Some("c"),
        Some(b"update") | Some(b"replace") => Some("u"),
        Some(b"delete") => Some("d"),
        _ => None,
    }
}
