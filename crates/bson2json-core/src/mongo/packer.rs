//! Writes change events in the packed layout ([`crate::mongo::layout`]): each event's routing
//! fields (read by [`change_event_fields`]) as [`ChangeOp`] words in the event's order, its
//! document parts (or the whole event) as JSON text, or with a record [`EventFormat`], its
//! Kafka record (key, value and headers) as bytes.
//!
//! The packer owns the words, the text being filled and the record bytes; what becomes a
//! JavaScript value while the batch is walked (a finished text, a Buffer of a token or a
//! fragment, a long string) is handed to a [`PackSink`], which the Node binding implements
//! with Node-API values and `tests/packed_events.rs` with plain Rust values.

use std::io::Write as _;
use std::ops::Range;

use crate::error::Error;
use crate::kafka::{ConnectorRecords, KafkaContext};
use crate::mongo::change::{change_event_fields, last_member_object, EventField, Part};
use crate::mongo::layout::{
    ChangeOp, EventFormat, IN_EXTRAS, NEXT_TEXT, OWN_STRING_BYTES, TEXT_BYTES,
};
use crate::options::Options;
use crate::row::packed::PackedRows;
use crate::row::{RowOptions, RowWriter};
use crate::transcode::{RegexRecord, Transcoder};
use crate::utf8::{to_utf16, UTF16_SLACK};

/// Where the values of a packed batch that are not words or bytes go, in the order the
/// decoder reads them.
pub trait PackSink {
    /// A failure of the sink's own (making a JS value); core errors convert into it.
    type Error: From<Error>;
    /// The next text: ASCII bytes.
    fn text_latin1(&mut self, ascii: &[u8]) -> Result<(), Self::Error>;
    /// The next text: UTF-16 code units.
    fn text_utf16(&mut self, units: &[u16]) -> Result<(), Self::Error>;
    /// The next extra: a Buffer holding a copy of `bytes`.
    fn extra_buffer(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;
    /// The next extra: the string of the UTF-8 `text`, a long one (made by the sink when it
    /// likes: making a long string may run JavaScript).
    fn extra_string(&mut self, text: Vec<u8>) -> Result<(), Self::Error>;
}

/// What a packer leaves once its batch is done: the words, the record bytes and the regexes
/// it met (each with its event's index), for the caller to check.
#[derive(Debug, Default)]
pub struct Packed {
    /// The words.
    pub words: Vec<u32>,
    /// The record bytes (empty unless the format is a record format).
    pub bytes: Vec<u8>,
    /// The regexes of every transcoded part, with their event's index.
    pub regexes: Vec<(usize, RegexRecord)>,
}

/// The scratch a packer borrows for its batch (the binding keeps it per thread).
pub struct PackScratch<'a> {
    /// Transcodes the parts.
    pub transcoder: &'a mut Transcoder,
    /// A part's JSON, before it joins the text.
    pub out: &'a mut Vec<u8>,
    /// UTF-16 of a text being finished.
    pub wide: &'a mut Vec<u16>,
}

/// Where an [`EventFormat::Rows`] batch's rows go, and how they are made.
pub struct RowPacking<'a> {
    /// The batch's rows.
    pub packed: &'a mut PackedRows,
    /// Makes them.
    pub writer: &'a mut RowWriter,
    /// Their format and options.
    pub opts: RowOptions,
}

/// Writes the packed form of one batch of change events.
pub struct EventPacker<'a, S: PackSink> {
    /// With [`EventFormat::Rows`], the rows of the documents.
    rows: Option<RowPacking<'a>>,
    sink: &'a mut S,
    opts: &'a Options,
    format: EventFormat,
    raw_fragments: bool,
    transcoder: &'a mut Transcoder,
    out: &'a mut Vec<u8>,
    wide: &'a mut Vec<u16>,
    words: Vec<u32>,
    /// The strings of the text being filled, UTF-8, back to back.
    text: Vec<u8>,
    /// Each string in `text`: the index of its operand in `words`, and its end in `text`.
    strs: Vec<(usize, usize)>,
    /// Texts made so far.
    texts: usize,
    /// Record bytes.
    bytes: Vec<u8>,
    fields: Vec<EventField>,
    regexes: Vec<(usize, RegexRecord)>,
    /// With a whole format, the event's JSON, made before its fields are read, and its regexes.
    whole_json: Vec<u8>,
    whole_regexes: Vec<RegexRecord>,
    /// The event's JSON was made and met no regex: the text of a `documentKey` that is the
    /// event's last element is taken from it ([`last_member_object`]).
    whole_reusable: bool,
    /// The bytes of the last `OperationType` and `NsDbColl` strings: an event that repeats
    /// them gets the same JS strings (`OperationTypeAgain`, `NsAgain`), not new ones.
    last_operation_type: Option<Vec<u8>>,
    last_ns: Option<(Vec<u8>, Vec<u8>)>,
    /// A snapshot record's event without its `_id`.
    without_id: Vec<u8>,
    /// What a connector's records name besides the event ([`EventPacker::with_kafka`]).
    kafka: KafkaContext,
}

/// A string's range in an event, if it has the string.
type Str = Option<Range<usize>>;

/// What a record's headers are made of, gathered from the event's fields.
#[derive(Default)]
struct Headers {
    operation_type: Str,
    /// `ns`'s `db` and `coll`, when the event has `ns`.
    ns: Option<(Str, Str)>,
    cluster_time: Option<(u32, u32)>,
}

impl<'a, S: PackSink> EventPacker<'a, S> {
    /// A packer of events in `format` with the options `opts`. With `raw_fragments`, a
    /// fragment of a split event (an event with `splitEvent`) is packed raw: its resume token,
    /// its `splitEvent` and `raw`, a copy of its BSON, for the caller to merge.
    pub fn new(
        sink: &'a mut S,
        scratch: PackScratch<'a>,
        opts: &'a Options,
        format: EventFormat,
        raw_fragments: bool,
    ) -> Self {
        EventPacker {
            rows: None,
            sink,
            opts,
            format,
            raw_fragments,
            transcoder: scratch.transcoder,
            out: scratch.out,
            wide: scratch.wide,
            words: Vec::new(),
            text: Vec::new(),
            strs: Vec::new(),
            texts: 0,
            bytes: Vec::new(),
            fields: Vec::new(),
            regexes: Vec::new(),
            whole_json: Vec::new(),
            whole_regexes: Vec::new(),
            whole_reusable: false,
            last_operation_type: None,
            last_ns: None,
            without_id: Vec::new(),
            kafka: KafkaContext::default(),
        }
    }

    /// The packer with `rows` for the documents' rows, used when the format is
    /// [`EventFormat::Rows`].
    pub fn with_rows(mut self, rows: RowPacking<'a>) -> Self {
        self.rows = Some(rows);
        self
    }

    /// Whether documents become rows.
    fn rows(&self) -> bool {
        self.format == EventFormat::Rows && self.rows.is_some()
    }

    /// A U32 operand: `doc` (`at` bytes into the event) as the batch's next row, its number.
    /// Its regexes are recorded under `index`; offsets in a failure are the event's.
    fn row(&mut self, index: usize, doc: &[u8], at: usize) -> Result<(), S::Error> {
        let Some(r) = self.rows.as_mut() else {
            return Ok(());
        };
        r.packed
            .row(r.writer, doc, &r.opts)
            .map_err(|e| S::Error::from(e.shifted(at)))?;
        self.regexes
            .extend(r.writer.regexes().iter().cloned().map(|mut x| {
                x.offset += at;
                (index, x)
            }));
        self.words.push((r.packed.rows - 1) as u32);
        Ok(())
    }

    /// With a connector's format: its records' context (Debezium's logical name, version, time).
    pub fn with_kafka(mut self, kafka: KafkaContext) -> Self {
        self.kafka = kafka;
        self
    }

    #[inline]
    fn op(&mut self, op: ChangeOp) {
        self.words.push(op as u32);
    }

    /// A string operand whose UTF-8 was just appended to `text` from `start`.
    fn close_string(&mut self, start: usize) -> Result<(), S::Error> {
        if self.text.len() - start > OWN_STRING_BYTES {
            self.sink.extra_string(self.text[start..].to_vec())?;
            self.text.truncate(start);
            self.words.push(IN_EXTRAS);
            return Ok(());
        }
        if self.text.len() > TEXT_BYTES && start > 0 {
            // The text is full without this string: made now, so that `text` stays small.
            self.flush_text(start)?;
            self.text.drain(..start);
        }
        self.strs.push((self.words.len(), self.text.len()));
        self.words.push(0);
        Ok(())
    }

    /// Makes the text of the first `len` bytes of `text` (the strings of `strs`), and sets each
    /// string operand to its UTF-16 end in it.
    fn flush_text(&mut self, len: usize) -> Result<(), S::Error> {
        let Some(&(first, _)) = self.strs.first() else {
            return Ok(());
        };
        let chunk = &self.text[..len];
        if crate::lanes::is_ascii(chunk) {
            for &(w, e) in &self.strs {
                self.words[w] = e as u32;
            }
            self.sink.text_latin1(chunk)?;
        } else {
            let need = chunk.len() + UTF16_SLACK;
            if self.wide.len() < need {
                self.wide.resize(need, 0);
            }
            let dst = &mut self.wide[..need];
            let (mut pos, mut from) = (0usize, 0usize);
            for &(w, e) in &self.strs {
                // `pos` never passes the string's byte offset in the chunk, so `dst[pos..]`
                // holds the string plus the converter's slack. Every string in `text` is
                // well-formed UTF-8 (transcoder output, or BSON strings made so).
                pos += to_utf16(&chunk[from..e], &mut dst[pos..]);
                self.words[w] = pos as u32;
                from = e;
            }
            self.sink.text_utf16(&self.wide[..pos])?;
        }
        if self.texts > 0 {
            self.words[first] |= NEXT_TEXT;
        }
        self.texts += 1;
        self.strs.clear();
        Ok(())
    }

    /// A string operand of BSON string bytes `s` (invalid UTF-8 becomes U+FFFD, as V8's
    /// UTF-8 decoding makes it).
    fn string(&mut self, s: &[u8]) -> Result<(), S::Error> {
        let start = self.text.len();
        push_lossy(&mut self.text, s);
        self.close_string(start)
    }

    /// `doc` (a whole BSON document, `at` bytes into the event) as JSON in the call's options,
    /// into `out`; its regexes are recorded under `index`. Offsets in a failure are the event's.
    fn transcode_part(&mut self, index: usize, doc: &[u8], at: usize) -> Result<(), S::Error> {
        // Into the scratch first: the output limit counts from the start of `out`.
        self.out.clear();
        self.transcoder
            .transcode(doc, self.opts, self.out)
            .map_err(|e| S::Error::from(e.shifted(at)))?;
        let found = self.transcoder.regexes();
        if !found.is_empty() {
            self.regexes
                .extend(found.iter().cloned().map(|r| (index, r)));
        }
        Ok(())
    }

    /// A string operand: `doc` (`at` bytes into the event) as JSON text.
    fn json(&mut self, index: usize, doc: &[u8], at: usize) -> Result<(), S::Error> {
        self.transcode_part(index, doc, at)?;
        let start = self.text.len();
        self.text.extend_from_slice(self.out);
        self.close_string(start)
    }

    /// A bytes operand: `doc` (`at` bytes into the event) as JSON bytes.
    fn json_bytes(&mut self, index: usize, doc: &[u8], at: usize) -> Result<(), S::Error> {
        self.transcode_part(index, doc, at)?;
        self.bytes.extend_from_slice(self.out);
        self.close_bytes();
        Ok(())
    }

    /// A bytes operand: the bytes appended to `bytes` since the previous one.
    #[inline]
    fn close_bytes(&mut self) {
        self.words.push(self.bytes.len() as u32);
    }

    /// An extras operand: a Buffer holding a copy of `bytes`.
    fn buffer(&mut self, bytes: &[u8]) -> Result<(), S::Error> {
        self.sink.extra_buffer(bytes)
    }

    /// One event (`ev`, a whole BSON document, the `index`-th of its batch). Offsets in a
    /// failure are `ev`'s.
    pub fn event(&mut self, index: usize, ev: &[u8]) -> Result<(), S::Error> {
        // With a whole format, the whole event is transcoded first: that walk reads the event's
        // bytes in order, seldom in cache yet, and the reading of its fields then finds them
        // there (in the other order the fields' jumps over the parts missed the cache). Its
        // outcome is used after the fields, so that errors come in the fields' order.
        let whole = self.format.whole().then(|| {
            self.whole_json.clear();
            let r = self
                .transcoder
                .transcode(ev, self.opts, &mut self.whole_json);
            self.whole_regexes.clear();
            self.whole_regexes
                .extend(self.transcoder.regexes().iter().cloned());
            r
        });
        self.whole_reusable = matches!(whole, Some(Ok(()))) && self.whole_regexes.is_empty();
        let mut fields = std::mem::take(&mut self.fields);
        let built = change_event_fields(ev, &mut fields)
            .map_err(S::Error::from)
            .and_then(|()| {
                let fragment = |f: &EventField| matches!(f, EventField::SplitEvent { .. });
                if self.raw_fragments && fields.iter().any(fragment) {
                    // A fragment of a split event, raw: its resume token and `splitEvent`,
                    // and `raw`, a copy of its BSON.
                    for field in &fields {
                        if matches!(
                            field,
                            EventField::ResumeToken { .. } | EventField::SplitEvent { .. }
                        ) {
                            self.field(index, ev, field)?;
                        }
                    }
                    self.op(ChangeOp::Raw);
                    self.buffer(ev)?;
                } else if self.format.is_record() {
                    self.record(index, ev, &fields, whole)?;
                } else {
                    for field in &fields {
                        self.field(index, ev, field)?;
                    }
                    if let Some(r) = whole {
                        r.map_err(S::Error::from)?;
                        self.take_whole_regexes(index);
                        self.op(ChangeOp::Json);
                        let start = self.text.len();
                        self.text.extend_from_slice(&self.whole_json);
                        self.close_string(start)?;
                    }
                }
                self.op(ChangeOp::End);
                Ok(())
            });
        self.fields = fields;
        built
    }

    fn take_whole_regexes(&mut self, index: usize) {
        self.regexes
            .extend(self.whole_regexes.drain(..).map(|r| (index, r)));
    }

    /// The text of the `documentKey` at `r`, taken from the whole event's JSON when it is the
    /// event's last element (its value ends at the event's NUL): its text is the end of the
    /// whole event's, where it is the last member unless `compat` moved another after it (a
    /// repeated key).
    fn reused_document_key(&self, ev: &[u8], r: &Range<usize>) -> Option<Range<usize>> {
        (self.whole_reusable && r.end + 1 == ev.len())
            .then(|| last_member_object(&self.whole_json, b"documentKey"))
            .flatten()
    }

    /// One routing field or document part of the event `ev`, as an event object's.
    fn field(&mut self, index: usize, ev: &[u8], field: &EventField) -> Result<(), S::Error> {
        match field {
            EventField::ResumeToken { doc, data } => match data {
                Some(r) => {
                    self.op(ChangeOp::Token);
                    self.string(&ev[r.clone()])?;
                }
                None => {
                    self.op(ChangeOp::TokenBson);
                    self.buffer(&ev[doc.clone()])?;
                }
            },
            EventField::OperationType(r) => {
                let s = &ev[r.clone()];
                if self.last_operation_type.as_deref() == Some(s) {
                    self.op(ChangeOp::OperationTypeAgain);
                } else {
                    self.op(ChangeOp::OperationType);
                    self.string(s)?;
                    self.last_operation_type = Some(s.to_vec());
                }
            }
            EventField::Ns {
                db: Some(db),
                coll: Some(coll),
            } => {
                let (db, coll) = (&ev[db.clone()], &ev[coll.clone()]);
                if matches!(&self.last_ns, Some((d, c)) if d == db && c == coll) {
                    self.op(ChangeOp::NsAgain);
                } else {
                    self.op(ChangeOp::NsDbColl);
                    self.string(db)?;
                    self.string(coll)?;
                    self.last_ns = Some((db.to_vec(), coll.to_vec()));
                }
            }
            EventField::Ns { db, coll } => {
                self.op(match (db, coll) {
                    (None, None) => ChangeOp::Ns,
                    (Some(_), None) => ChangeOp::NsDb,
                    (None, Some(_)) => ChangeOp::NsColl,
                    (Some(_), Some(_)) => ChangeOp::NsDbColl,
                });
                for r in [db, coll].into_iter().flatten() {
                    self.string(&ev[r.clone()])?;
                }
            }
            EventField::ClusterTime { t, i } => {
                self.op(ChangeOp::ClusterTime);
                self.words.extend([*t, *i]);
            }
            EventField::WallTime(ms) => {
                self.op(ChangeOp::WallTime);
                self.words.extend([(*ms >> 32) as u32, *ms as u32]);
            }
            EventField::SplitEvent { fragment, of } => {
                self.op(match (fragment, of) {
                    (None, None) => ChangeOp::Split,
                    (Some(_), None) => ChangeOp::SplitFragment,
                    (None, Some(_)) => ChangeOp::SplitOf,
                    (Some(_), Some(_)) => ChangeOp::SplitFragmentOf,
                });
                self.words
                    .extend([fragment, of].into_iter().flatten().map(|&x| x as u32));
            }
            EventField::DocumentKey(r) if self.rows() => {
                self.op(ChangeOp::DocumentKeyRow);
                self.row(index, &ev[r.clone()], r.start)?;
            }
            EventField::DocumentKey(r) => {
                self.op(ChangeOp::DocumentKey);
                match self.reused_document_key(ev, r) {
                    Some(v) => {
                        let start = self.text.len();
                        self.text.extend_from_slice(&self.whole_json[v]);
                        self.close_string(start)?;
                    }
                    None => self.json(index, &ev[r.clone()], r.start)?,
                }
            }
            EventField::Part(part, r) if !self.format.whole() => {
                let (op, null) = match part {
                    Part::FullDocument => (ChangeOp::FullDocument, ChangeOp::FullDocumentNull),
                    Part::FullDocumentBeforeChange => (
                        ChangeOp::FullDocumentBeforeChange,
                        ChangeOp::FullDocumentBeforeChangeNull,
                    ),
                    Part::UpdateDescription => {
                        (ChangeOp::UpdateDescription, ChangeOp::UpdateDescriptionNull)
                    }
                };
                let row = match part {
                    Part::FullDocument => Some(ChangeOp::FullDocumentRow),
                    Part::FullDocumentBeforeChange => Some(ChangeOp::FullDocumentBeforeChangeRow),
                    Part::UpdateDescription => None,
                };
                match (r, row) {
                    (Some(r), Some(row)) if self.rows() => {
                        self.op(row);
                        self.row(index, &ev[r.clone()], r.start)?;
                    }
                    (Some(r), _) => {
                        self.op(op);
                        self.json(index, &ev[r.clone()], r.start)?;
                    }
                    (None, _) => self.op(null),
                }
            }
            EventField::Part(..) => {}
        }
        Ok(())
    }

    /// One event as a Kafka record: its resume token, `operationType`, `ns`, `clusterTime` (and
    /// a `splitEvent`) as an event object's fields, in the event's order, then its `key`, `value`
    /// and headers as bytes: the key and value where the event holds them (JSON, in the
    /// call's options), the headers after them.
    fn record(
        &mut self,
        index: usize,
        ev: &[u8],
        fields: &[EventField],
        whole: Option<Result<(), Error>>,
    ) -> Result<(), S::Error> {
        let connector = self.format.connector();
        let mut headers = Headers::default();
        let mut id = None;
        for field in fields {
            match field {
                EventField::ResumeToken { doc, .. } => {
                    id = Some(doc.clone());
                    self.field(index, ev, field)?;
                }
                EventField::SplitEvent { .. } => self.field(index, ev, field)?,
                EventField::OperationType(r) => {
                    headers.operation_type = Some(r.clone());
                    self.field(index, ev, field)?;
                }
                EventField::ClusterTime { t, i } => {
                    headers.cluster_time = Some((*t, *i));
                    self.field(index, ev, field)?;
                }
                EventField::Ns { db, coll } => {
                    headers.ns = Some((db.clone(), coll.clone()));
                    self.field(index, ev, field)?;
                }
                EventField::DocumentKey(_) if connector.is_some() => {}
                EventField::DocumentKey(r) => {
                    self.op(ChangeOp::Key);
                    match self.reused_document_key(ev, r) {
                        Some(v) => {
                            self.bytes.extend_from_slice(&self.whole_json[v]);
                            self.close_bytes();
                        }
                        None => self.json_bytes(index, &ev[r.clone()], r.start)?,
                    }
                }
                EventField::Part(Part::FullDocument, Some(r))
                    if self.format == EventFormat::RecordFullDocument =>
                {
                    self.op(ChangeOp::Value);
                    self.json_bytes(index, &ev[r.clone()], r.start)?;
                }
                EventField::WallTime(_) | EventField::Part(..) => {}
            }
        }
        if let Some((connector, snapshot)) = connector {
            // a connector's key and value where the event has a record of it, no headers
            // (fields, not methods: `records` borrows `self.kafka`)
            let records = ConnectorRecords::new(connector, self.opts, &self.kafka);
            if records.has_record(ev, fields, snapshot) {
                self.words.push(ChangeOp::Key as u32);
                records
                    .key(ev, fields, snapshot, &mut self.bytes)
                    .map_err(S::Error::from)?;
                self.words.push(self.bytes.len() as u32);
                self.words.push(ChangeOp::Value as u32);
                records
                    .value(ev, fields, snapshot, &mut self.bytes)
                    .map_err(S::Error::from)?;
                self.words.push(self.bytes.len() as u32);
            }
            return Ok(());
        }
        match self.format {
            EventFormat::RecordEvent => {
                if let Some(r) = whole {
                    r.map_err(S::Error::from)?;
                    self.take_whole_regexes(index);
                    self.op(ChangeOp::Value);
                    self.bytes.extend_from_slice(&self.whole_json);
                    self.close_bytes();
                }
            }
            EventFormat::RecordSnapshot => {
                // The event without its `_id` element (a document: 5 bytes of type and key
                // before its value), transcoded; offsets past the cut are moved back.
                let cut = id.map_or(0..0, |d| d.start - 5..d.end);
                let mut copy = std::mem::take(&mut self.without_id);
                copy.clear();
                copy.extend_from_slice(&ev[..cut.start]);
                copy.extend_from_slice(&ev[cut.end..]);
                let len = copy.len() as u32;
                copy[..4].copy_from_slice(&len.to_le_bytes());
                self.op(ChangeOp::Value);
                self.out.clear();
                let done = self.transcoder.transcode(&copy, self.opts, self.out);
                self.without_id = copy;
                done.map_err(|e| {
                    let shift = if e.offset() >= cut.start {
                        cut.len()
                    } else {
                        0
                    };
                    S::Error::from(e.shifted(shift))
                })?;
                let found = self.transcoder.regexes();
                if !found.is_empty() {
                    self.regexes
                        .extend(found.iter().cloned().map(|r| (index, r)));
                }
                self.bytes.extend_from_slice(self.out);
                self.close_bytes();
            }
            _ => {}
        }
        // The headers, as lib/kafka wrote them from an event object: `operationType` always
        // (`undefined` when the event has none), `ns` when the event has one (`db.coll`, or
        // `db` without `coll`), `clusterTime` when it has one (`t.i`).
        self.op(ChangeOp::HeaderOperationType);
        match headers.operation_type {
            Some(r) => push_lossy(&mut self.bytes, &ev[r]),
            None => self.bytes.extend_from_slice(b"undefined"),
        }
        self.close_bytes();
        if let Some((db, coll)) = headers.ns {
            self.op(ChangeOp::HeaderNs);
            match db {
                Some(r) => push_lossy(&mut self.bytes, &ev[r]),
                None => self.bytes.extend_from_slice(b"undefined"),
            }
            if let Some(r) = coll {
                self.bytes.push(b'.');
                push_lossy(&mut self.bytes, &ev[r]);
            }
            self.close_bytes();
        }
        if let Some((t, i)) = headers.cluster_time {
            self.op(ChangeOp::HeaderClusterTime);
            // Writing into a Vec cannot fail.
            let _ = write!(self.bytes, "{t}.{i}");
            self.close_bytes();
        }
        Ok(())
    }

    /// Finishes the batch: its last text made, its words, bytes and regexes.
    pub fn finish(mut self) -> Result<Packed, S::Error> {
        self.flush_text(self.text.len())?;
        Ok(Packed {
            words: self.words,
            bytes: self.bytes,
            regexes: self.regexes,
        })
    }
}

/// `s`, BSON string bytes, appended to `out` as UTF-8 with each invalid sequence replaced by
/// U+FFFD (as V8's UTF-8 decoding replaces it).
fn push_lossy(out: &mut Vec<u8>, s: &[u8]) {
    if crate::lanes::is_ascii(s) {
        out.extend_from_slice(s);
    } else {
        out.extend_from_slice(String::from_utf8_lossy(s).as_bytes());
    }
}
