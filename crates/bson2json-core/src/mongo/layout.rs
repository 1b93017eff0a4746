//! The packed change-event layout: the one declaration of how a batch of change events crosses
//! from Rust to JavaScript (ARCHITECTURE.md, decision 19). [`crate::mongo::packer`] writes it;
//! the JavaScript decoder (`lib/native/events.js`) and the TypeScript field list of
//! `ChangeEvent` (in `index.d.ts`) are generated from this file by
//! `crates/bson2json-core/tests/generated.rs`, which fails when they are not current
//! (`npm run generate` rewrites them).
//!
//! A packed batch is `[words, extras, bytes, text0, text1, …]`: `words` a `Buffer` of 32-bit
//! words (native-endian), `extras` an array of values that are neither numbers nor parts of a
//! text (or `null`), `bytes` a `Buffer` of byte strings (or `null`), then the texts, JS strings
//! holding the batch's strings back to back. Each event is a run of [`ChangeOp`] words, each
//! followed by its [`Operand`]s; [`ChangeOp::End`] closes the event.
//!
//! Every op is declared once, below, with its code, its operands and what it does to the event
//! object `ev` in JavaScript (a statement where `$0`, `$1`, … are its operands, read in that
//! order). Adding a field: an op here (and its line in [`EVENT_FIELDS`] for a public field), the
//! code in the packer that writes it, then `npm run generate`.

/// What an operand of an op is, and how the decoder reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A string: one word, its UTF-16 end in the current text (it starts where the previous
    /// string ended), with [`NEXT_TEXT`] set when it is the first of the next text, or
    /// [`IN_EXTRAS`] when it is the next value of the extras instead.
    Str,
    /// A 32-bit unsigned number: one word.
    U32,
    /// A 32-bit signed number: one word (two's complement).
    I32,
    /// The next value of the extras (no word).
    Extra,
    /// A byte string: one word, its end in `bytes` (it starts where the previous one ended).
    Bytes,
}

impl Operand {
    /// Whether the operand takes a word of its own.
    pub const fn has_word(self) -> bool {
        !matches!(self, Operand::Extra)
    }
}

/// One op of the layout, as the generator reads it.
#[derive(Debug)]
pub struct OpSpec {
    /// The op's name (the variant of [`ChangeOp`]).
    pub name: &'static str,
    /// Its code, the word that starts it.
    pub code: u32,
    /// Its operands, in order.
    pub operands: &'static [Operand],
    /// What it does, in JavaScript: statements on `ev` (the event being built) and the decoder's
    /// locals ([`DECODER_LOCALS`], [`DECODER_CONSTS`]), with `$i` the `i`-th operand.
    pub js: &'static str,
    /// Its documentation.
    pub doc: &'static str,
}

macro_rules! change_ops {
    ($( $(#[doc = $doc:literal])* $name:ident = $code:literal ($($operand:ident),*) => $js:literal; )*) => {
        /// The operation codes of a packed change batch: one per field of an event, in the
        /// event's order, each followed by its operands ([`CHANGE_OPS`] lists them).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum ChangeOp {
            $( $(#[doc = $doc])* $name = $code, )*
        }

        /// Every [`ChangeOp`], in code order, with its operands and its JavaScript.
        pub const CHANGE_OPS: &[OpSpec] = &[
            $( OpSpec {
                name: stringify!($name),
                code: $code,
                operands: &[$(Operand::$operand),*],
                js: $js,
                doc: concat!($($doc, "\n"),*),
            }, )*
        ];
    };
}

change_ops! {
    /// The event is complete.
    End = 0 () => "events.push(ev); ev = {}";
    /// `resumeToken: { _data: s }`.
    Token = 1 (Str) => "ev.resumeToken = { _data: $0 }";
    /// `resumeToken: x` (a Buffer of the token's BSON, for any other shape).
    TokenBson = 2 (Extra) => "ev.resumeToken = $0";
    /// `operationType: s`, remembered for [`ChangeOp::OperationTypeAgain`].
    OperationType = 3 (Str) => "operationType = $0; ev.operationType = operationType";
    /// `ns: {}`.
    Ns = 4 () => "ev.ns = {}";
    /// `ns: { db: s }`.
    NsDb = 5 (Str) => "ev.ns = { db: $0 }";
    /// `ns: { coll: s }`.
    NsColl = 6 (Str) => "ev.ns = { coll: $0 }";
    /// `ns: { db: s, coll: s }`, remembered for [`ChangeOp::NsAgain`].
    NsDbColl = 7 (Str, Str) => "db = $0; coll = $1; ev.ns = { db, coll }";
    /// `clusterTime: { t: n, i: n }`.
    ClusterTime = 8 (U32, U32) => "ev.clusterTime = { t: $0, i: $1 }";
    /// `wallTime: new Date(high * 2^32 + low)`: the milliseconds' high word (signed) and low word.
    WallTime = 9 (I32, U32) => "ev.wallTime = new Date($0 * 4294967296 + $1)";
    /// `splitEvent: {}`.
    Split = 10 () => "ev.splitEvent = {}";
    /// `splitEvent: { fragment: n }`.
    SplitFragment = 11 (I32) => "ev.splitEvent = { fragment: $0 }";
    /// `splitEvent: { of: n }`.
    SplitOf = 12 (I32) => "ev.splitEvent = { of: $0 }";
    /// `splitEvent: { fragment: n, of: n }`.
    SplitFragmentOf = 13 (I32, I32) => "ev.splitEvent = { fragment: $0, of: $1 }";
    /// `documentKey: s` (JSON text).
    DocumentKey = 14 (Str) => "ev.documentKey = $0";
    /// `fullDocument: s` (JSON text).
    FullDocument = 15 (Str) => "ev.fullDocument = $0";
    /// `fullDocument: null` (not a document).
    FullDocumentNull = 16 () => "ev.fullDocument = null";
    /// `fullDocumentBeforeChange: s` (JSON text).
    FullDocumentBeforeChange = 17 (Str) => "ev.fullDocumentBeforeChange = $0";
    /// `fullDocumentBeforeChange: null` (not a document).
    FullDocumentBeforeChangeNull = 18 () => "ev.fullDocumentBeforeChange = null";
    /// `updateDescription: s` (JSON text).
    UpdateDescription = 19 (Str) => "ev.updateDescription = $0";
    /// `updateDescription: null` (not a document).
    UpdateDescriptionNull = 20 () => "ev.updateDescription = null";
    /// `json: s`: the whole event as JSON text, after the other fields ([`EventFormat::Whole`]).
    Json = 21 (Str) => "ev.json = $0";
    /// `raw: x`: a Buffer of a split event's fragment (a raw fragment, see the packer).
    Raw = 22 (Extra) => "ev.raw = $0";
    /// `operationType`: the string of the batch's last [`ChangeOp::OperationType`] (the same bytes).
    OperationTypeAgain = 23 () => "ev.operationType = operationType";
    /// `ns: { db, coll }` with the strings of the batch's last [`ChangeOp::NsDbColl`].
    NsAgain = 24 () => "ev.ns = { db, coll }";
    /// `key: b`: a record's key, the `documentKey` as JSON bytes.
    Key = 25 (Bytes) => "ev.key = $0";
    /// `value: b`: a record's value, JSON bytes (which JSON: the [`EventFormat`]).
    Value = 26 (Bytes) => "ev.value = $0";
    /// `headers: Map { operationType: b }`: a record's headers, the first of them.
    HeaderOperationType = 27 (Bytes) => "ev.headers = new Map(); ev.headers.set(HEADER_OPERATION_TYPE, $0)";
    /// The header `ns: b` (`db.coll`, or `db`).
    HeaderNs = 28 (Bytes) => "ev.headers.set(HEADER_NS, $0)";
    /// The header `clusterTime: b` (`t.i`).
    HeaderClusterTime = 29 (Bytes) => "ev.headers.set(HEADER_CLUSTER_TIME, $0)";
    /// `documentKey`: row number `n` of the batch's rows ([`EventFormat::Rows`]).
    DocumentKeyRow = 30 (U32) => "ev.documentKey = rows[$0]";
    /// `fullDocument`: row number `n` of the batch's rows ([`EventFormat::Rows`]).
    FullDocumentRow = 31 (U32) => "ev.fullDocument = rows[$0]";
    /// `fullDocumentBeforeChange`: row number `n` of the batch's rows ([`EventFormat::Rows`]).
    FullDocumentBeforeChangeRow = 32 (U32) => "ev.fullDocumentBeforeChange = rows[$0]";
}

impl ChangeOp {
    /// The op's declaration.
    pub fn spec(self) -> &'static OpSpec {
        &CHANGE_OPS[self as usize]
    }
}

/// The decoder's parameters after the packed batch: `rows`, the batch's rows (core `row`,
/// `null` unless the format is [`EventFormat::Rows`]), which the `…Row` ops index.
pub const DECODER_PARAMS: &[&str] = &["rows"];

/// The decoder's locals across events: what the `…Again` ops reuse.
pub const DECODER_LOCALS: &[&str] = &["operationType", "db", "coll"];

/// The decoder's module constants: the record header names, made once and shared by every
/// record (the Kafka client only reads them).
pub const DECODER_CONSTS: &[(&str, &str)] = &[
    ("HEADER_OPERATION_TYPE", "Buffer.from('operationType')"),
    ("HEADER_NS", "Buffer.from('ns')"),
    ("HEADER_CLUSTER_TIME", "Buffer.from('clusterTime')"),
];

/// A string operand with this bit set is the first of the next text.
pub const NEXT_TEXT: u32 = 1 << 31;
/// A string operand that is the next value of the extras (a JS string made on its own).
pub const IN_EXTRAS: u32 = u32::MAX;
/// UTF-8 bytes per text at most: at most 128 KiB of V8 payload even as UTF-16, so each text
/// is a flat string in V8's regular heap, which `slice` shares (as the batch calls' `Joined`
/// layout).
pub const TEXT_BYTES: usize = 64 * 1024 - 32;
/// A string longer than this many UTF-8 bytes becomes a JS string of its own (in the extras)
/// rather than a part of a text: a text it filled would be shared by one string only.
pub const OWN_STRING_BYTES: usize = 16 * 1024;

macro_rules! event_formats {
    ($( $(#[doc = $doc:literal])* $name:ident = $code:literal, )*) => {
        /// What each event of a packed batch becomes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum EventFormat {
            $( $(#[doc = $doc])* $name = $code, )*
        }

        /// Every [`EventFormat`]: its name and code (the generated `EventFormat` of
        /// lib/native/events.js).
        pub const EVENT_FORMATS: &[(&str, u32)] = &[$( (stringify!($name), $code), )*];

        impl EventFormat {
            /// The format of code `code`, if there is one.
            pub fn from_code(code: u32) -> Option<EventFormat> {
                match code {
                    $( $code => Some(EventFormat::$name), )*
                    _ => None,
                }
            }
        }
    };
}

event_formats! {
    /// Event objects: the routing fields, `documentKey` and each document part as JSON text
    /// (`watch()`).
    Parts = 0,
    /// Event objects: the routing fields, `documentKey` and `json`, the whole event as JSON
    /// text (`watch({ whole: true })`).
    Whole = 1,
    /// Kafka records: `resumeToken`, `operationType`, `ns` (the topic's), `clusterTime`, then
    /// `key` (the `documentKey`'s JSON), `value` (the whole event's JSON) and `headers`
    /// (`operationType`, `ns`, `clusterTime`), as bytes.
    RecordEvent = 2,
    /// Kafka records as [`EventFormat::RecordEvent`], `value` the `fullDocument`'s JSON (none
    /// when it is not a document).
    RecordFullDocument = 3,
    /// Kafka records as [`EventFormat::RecordEvent`], `value` the JSON of the event without
    /// its `_id` (the initial snapshot's records).
    RecordSnapshot = 4,
    /// Event objects as [`EventFormat::Parts`], with `documentKey`, `fullDocument` and
    /// `fullDocumentBeforeChange` as rows (core `row`, docs/rows.md) made in the same pass,
    /// handed over beside the events (`watch({ rows: true })`).
    Rows = 5,
    /// Kafka records as the MongoDB Kafka source connector writes them (`crate::kafka`): the
    /// routing fields, `key` (the `documentKey` in the Java driver's STRICT JSON) and `value`
    /// (the event in it), no headers.
    RecordMongoKafka = 6,
    /// [`EventFormat::RecordMongoKafka`] of the initial snapshot's documents (`copy_existing`'s
    /// records).
    RecordMongoKafkaSnapshot = 7,
    /// Kafka records as Debezium's MongoDB connector writes them (`crate::kafka`): the routing
    /// fields, `key` and `value` (its envelope), no headers; no `key` nor `value` for an event
    /// it writes no record of. A delete's tombstone is the caller's.
    RecordDebezium = 8,
    /// [`EventFormat::RecordDebezium`] of the initial snapshot's documents (`op: "r"`).
    RecordDebeziumSnapshot = 9,
}

impl EventFormat {
    /// Whether the events are Kafka records (key, value and headers as bytes).
    pub fn is_record(self) -> bool {
        matches!(
            self,
            EventFormat::RecordEvent
                | EventFormat::RecordFullDocument
                | EventFormat::RecordSnapshot
        ) || self.connector().is_some()
    }

    /// The connector whose records the format writes, and whether they are a snapshot's.
    pub fn connector(self) -> Option<(crate::kafka::Connector, bool)> {
        use crate::kafka::Connector::{Debezium, MongoKafka};
        match self {
            EventFormat::RecordMongoKafka => Some((MongoKafka, false)),
            EventFormat::RecordMongoKafkaSnapshot => Some((MongoKafka, true)),
            EventFormat::RecordDebezium => Some((Debezium, false)),
            EventFormat::RecordDebeziumSnapshot => Some((Debezium, true)),
            _ => None,
        }
    }

    /// Whether the whole event is transcoded (for `json`, or a record's value).
    pub fn whole(self) -> bool {
        matches!(self, EventFormat::Whole | EventFormat::RecordEvent)
    }
}

/// Who sets a field of the public `ChangeEvent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetBy {
    /// The decoder, through the ops that assign it.
    Ops,
    /// lib/mongo/change-stream.js, after decoding.
    ChangeStream,
}

/// One field of the public `ChangeEvent` type (index.d.ts), as the generator writes it.
#[derive(Debug)]
pub struct FieldSpec {
    /// The property.
    pub key: &'static str,
    /// Its TypeScript type.
    pub ts: &'static str,
    /// Whether it may be missing.
    pub optional: bool,
    /// Who sets it.
    pub set_by: SetBy,
    /// Its documentation (one or more lines).
    pub doc: &'static str,
}

/// The properties an op may set that are not fields of the public `ChangeEvent`: a raw
/// fragment's bytes (lib/mongo/change-stream.js reassembles them) and a record's parts (the
/// Kafka sink sends them).
pub const INTERNAL_KEYS: &[&str] = &["raw", "key", "value", "headers"];

/// The fields of the public `ChangeEvent`, in the order index.d.ts lists them.
pub const EVENT_FIELDS: &[FieldSpec] = &[
    FieldSpec {
        key: "resumeToken",
        ts: "ResumeToken",
        optional: false,
        set_by: SetBy::Ops,
        doc: "The event's `_id`: `{ _data }`, or when it has another shape, its value as js-bson\n\
              deserializes it (BSON types kept, as with `promoteValues: false`). (For the last event of a batch, `stream.resumeToken` is the batch's\n\
              postBatchResumeToken.)",
    },
    FieldSpec {
        key: "resumeTokenEJSON",
        ts: "string",
        optional: true,
        set_by: SetBy::ChangeStream,
        doc: "Canonical EJSON of `_id` (of `resumeToken`) when it is not the usual `{ _data }` shape.",
    },
    FieldSpec {
        key: "operationType",
        ts: "string",
        optional: false,
        set_by: SetBy::Ops,
        doc: "`'insert'`, `'update'`, `'replace'`, `'delete'`, `'invalidate'`, `'drop'`, … (the server may add more).",
    },
    FieldSpec {
        key: "clusterTime",
        ts: "{ t: number; i: number }",
        optional: false,
        set_by: SetBy::Ops,
        doc: "",
    },
    FieldSpec {
        key: "wallTime",
        ts: "Date",
        optional: true,
        set_by: SetBy::Ops,
        doc: "MongoDB 6.0 and later.",
    },
    FieldSpec {
        key: "ns",
        ts: "{ db: string; coll?: string }",
        optional: true,
        set_by: SetBy::Ops,
        doc: "",
    },
    FieldSpec {
        key: "documentKey",
        ts: "D",
        optional: true,
        set_by: SetBy::Ops,
        doc: "JSON text; a row with `rows` (docs/rows.md).",
    },
    FieldSpec {
        key: "fullDocument",
        ts: "D | null",
        optional: true,
        set_by: SetBy::Ops,
        doc: "JSON text (not in `whole` mode); a row with `rows` (docs/rows.md).",
    },
    FieldSpec {
        key: "fullDocumentBeforeChange",
        ts: "D | null",
        optional: true,
        set_by: SetBy::Ops,
        doc: "JSON text; a row with `rows`.",
    },
    FieldSpec {
        key: "updateDescription",
        ts: "string | null",
        optional: true,
        set_by: SetBy::Ops,
        doc: "",
    },
    FieldSpec {
        key: "splitEvent",
        ts: "{ fragment: number; of: number }",
        optional: true,
        set_by: SetBy::Ops,
        doc: "Only on unreassembled fragments (when `splitLargeEvents` is false).",
    },
    FieldSpec {
        key: "json",
        ts: "string",
        optional: true,
        set_by: SetBy::Ops,
        doc: "The whole event as JSON text (`whole: true`).",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_table_indexes() {
        for (i, op) in CHANGE_OPS.iter().enumerate() {
            assert_eq!(op.code as usize, i, "{}", op.name);
        }
        assert_eq!(ChangeOp::HeaderClusterTime.spec().name, "HeaderClusterTime");
        for &(name, code) in EVENT_FORMATS {
            assert_eq!(
                EventFormat::from_code(code).map(|f| f as u32),
                Some(code),
                "{name}"
            );
        }
        assert_eq!(EventFormat::from_code(EVENT_FORMATS.len() as u32), None);
    }
}
