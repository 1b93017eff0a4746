//! Change-stream batches, packed: what `watch()` uses. The same events as
//! `transcodeChangeBatch` ([`crate::changes`], kept as the reference this path is tested
//! against), handed over in a few JS values per batch instead of a dozen Node-API calls per
//! event: a `Buffer` of 32-bit words (each event's fields as operation codes, [`ChangeOp`], in
//! the event's field order, with their numbers and the UTF-16 ends of their strings), texts
//! holding every string of the batch back to back (at most [`TEXT_BYTES`] each, which
//! `lib/native/index.js` cuts with `slice`), and the few values that are neither (Buffers,
//! long texts). lib/native/index.js builds the event objects from them in JavaScript, where V8
//! allocates an object and its properties inline; through Node-API every property is a
//! generic lookup in V8's runtime (`napi_set_property`; ARCHITECTURE.md decision 19).
//!
//! Words, in order, per event: `op` then its operands, where a string operand is its end in
//! the current text (it starts where the previous one ended), with [`NEXT_TEXT`] set when it
//! is the first of the next text (starting at 0), or [`IN_EXTRAS`] when it is the next value
//! of the extras. `End` closes an event.

use bson2json_core::mongo::{
    change_event_fields, cursor_parts, last_member_object, resume_token_data, CursorParts,
    EventField, Part,
};
use bson2json_core::{Options, RegexRecord};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::Failure;
use crate::node_api::{self, bytes_of, Value};
use crate::state::{with_state, State};
use crate::{options, regex, strings};

/// The operation codes of a packed change batch: one per field of an event, in the event's
/// order, each followed by its operands (`s` a string, `n` a 32-bit number, `x` the next value
/// of the extras). Exported, so that a test holds lib/native/index.js's numbers to these.
#[napi]
#[derive(Clone, Copy)]
pub enum ChangeOp {
    /// The event is complete.
    End = 0,
    /// `resumeToken: { _data: s }`.
    Token = 1,
    /// `resumeToken: x` (a Buffer of the token's BSON, for any other shape).
    TokenBson = 2,
    /// `operationType: s`.
    OperationType = 3,
    /// `ns: {}`.
    Ns = 4,
    /// `ns: { db: s }`.
    NsDb = 5,
    /// `ns: { coll: s }`.
    NsColl = 6,
    /// `ns: { db: s, coll: s }`.
    NsDbColl = 7,
    /// `clusterTime: { t: n, i: n }`.
    ClusterTime = 8,
    /// `wallTime: new Date(high * 2^32 + low)`, `high` (signed) and `low` two words.
    WallTime = 9,
    /// `splitEvent: {}`.
    Split = 10,
    /// `splitEvent: { fragment: n }` (signed).
    SplitFragment = 11,
    /// `splitEvent: { of: n }` (signed).
    SplitOf = 12,
    /// `splitEvent: { fragment: n, of: n }` (signed).
    SplitFragmentOf = 13,
    /// `documentKey: s`.
    DocumentKey = 14,
    /// `fullDocument: s`.
    FullDocument = 15,
    /// `fullDocument: null`.
    FullDocumentNull = 16,
    /// `fullDocumentBeforeChange: s`.
    FullDocumentBeforeChange = 17,
    /// `fullDocumentBeforeChange: null`.
    FullDocumentBeforeChangeNull = 18,
    /// `updateDescription: s`.
    UpdateDescription = 19,
    /// `updateDescription: null`.
    UpdateDescriptionNull = 20,
    /// `json: s` (with `whole`, after the other fields).
    Json = 21,
    /// `raw: x` (a Buffer of a split event's fragment, with `rawFragments`).
    Raw = 22,
    /// `operationType`: the string of the batch's last `OperationType` (the same bytes).
    OperationTypeAgain = 23,
    /// `ns: { db, coll }` with the strings of the batch's last `NsDbColl` (the same bytes).
    NsAgain = 24,
}

/// A string operand with this bit set is the first of the next text.
const NEXT_TEXT: u32 = 1 << 31;
/// A string operand that is the next value of the extras (a JS string made on its own).
const IN_EXTRAS: u32 = u32::MAX;
/// UTF-8 bytes per text at most: at most 128 KiB of V8 payload even as UTF-16, so each text
/// is a flat string in V8's regular heap, which `slice` shares (as `BatchLayout::Joined`).
const TEXT_BYTES: usize = 64 * 1024 - 32;
/// A string longer than this many UTF-8 bytes becomes a JS string of its own (a rope if very
/// long, see [`strings`]) rather than a part of a text: a text it filled would be shared by
/// one string only.
const OWN_STRING_BYTES: usize = 16 * 1024;

/// A value of the extras: made at once (a `Buffer` copy, which runs no JavaScript), or a long
/// string's UTF-8, made into a JS string by [`Packer::finish`] (a long one becomes a rope,
/// which runs a JS function).
enum Extra {
    Value(Value),
    Text(Vec<u8>),
}

/// Writes the packed form of one call's change events. Like `changes::EventWriter` it holds
/// the thread's scratch for the whole call (taken out of the thread state by [`with_state`])
/// and collects the regexes of every transcoded part, with their event's index, for the
/// caller to check once it is done.
struct Packer<'a> {
    env: &'a Env,
    opts: &'a Options,
    whole: bool,
    raw_fragments: bool,
    st: &'a mut State,
    words: Vec<u32>,
    /// The strings of the text being filled, UTF-8, back to back.
    text: Vec<u8>,
    /// Each string in `text`: the index of its operand in `words`, and its end in `text`.
    strs: Vec<(usize, usize)>,
    /// The texts made so far.
    texts: Vec<Value>,
    extras: Vec<Extra>,
    fields: Vec<EventField>,
    regexes: Vec<(Option<usize>, RegexRecord)>,
    /// With `whole`, the event's JSON, made before its fields are read, and its regexes.
    whole_json: Vec<u8>,
    whole_regexes: Vec<RegexRecord>,
    /// With `whole`, the event's JSON was made and met no regex: the text of a `documentKey`
    /// that is the event's last element is taken from it ([`last_member_object`]).
    whole_reusable: bool,
    /// The bytes of the last `OperationType` and `NsDbColl` strings: an event that repeats
    /// them gets the same JS strings (`OperationTypeAgain`, `NsAgain`), not new ones.
    last_operation_type: Option<Vec<u8>>,
    last_ns: Option<(Vec<u8>, Vec<u8>)>,
}

impl<'a> Packer<'a> {
    fn new(
        env: &'a Env,
        opts: &'a Options,
        whole: bool,
        raw_fragments: bool,
        st: &'a mut State,
    ) -> Self {
        Packer {
            env,
            opts,
            whole,
            raw_fragments,
            st,
            words: Vec::new(),
            text: Vec::new(),
            strs: Vec::new(),
            texts: Vec::new(),
            extras: Vec::new(),
            fields: Vec::new(),
            regexes: Vec::new(),
            whole_json: Vec::new(),
            whole_regexes: Vec::new(),
            whole_reusable: false,
            last_operation_type: None,
            last_ns: None,
        }
    }

    fn op(&mut self, op: ChangeOp) {
        self.words.push(op as u32);
    }

    /// A string operand whose UTF-8 was just appended to `text` from `start`. Makes only
    /// values whose making runs no JavaScript (a text: a flat string).
    fn close_string(&mut self, start: usize) -> Result<()> {
        if self.text.len() - start > OWN_STRING_BYTES {
            self.extras.push(Extra::Text(self.text[start..].to_vec()));
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

    /// Makes the JS string of the first `len` bytes of `text` (the strings of `strs`), and
    /// sets each string operand to its UTF-16 end in it.
    fn flush_text(&mut self, len: usize) -> Result<()> {
        let Some(&(first, _)) = self.strs.first() else {
            return Ok(());
        };
        let chunk = &self.text[..len];
        let value = if bson2json_core::is_ascii(chunk) {
            for &(w, e) in &self.strs {
                self.words[w] = e as u32;
            }
            strings::latin1(self.env, chunk)?
        } else {
            let State { wide, .. } = &mut *self.st;
            let dst = strings::utf16_scratch(wide, chunk.len());
            let (mut pos, mut from) = (0usize, 0usize);
            for &(w, e) in &self.strs {
                // `pos` never passes the string's byte offset in the chunk, so `dst[pos..]`
                // holds the string plus the converter's slack. Every string in `text` is
                // well-formed UTF-8 (transcoder output, or BSON strings made so).
                pos += bson2json_core::to_utf16(&chunk[from..e], &mut dst[pos..]);
                self.words[w] = pos as u32;
                from = e;
            }
            strings::utf16(self.env, &wide[..pos])?
        };
        if !self.texts.is_empty() {
            self.words[first] |= NEXT_TEXT;
        }
        self.texts.push(value);
        self.strs.clear();
        Ok(())
    }

    /// A string operand of BSON string bytes `s` (invalid UTF-8 becomes U+FFFD, as V8's
    /// UTF-8 decoding makes it in `changes`).
    fn string(&mut self, s: &[u8]) -> Result<()> {
        let start = self.text.len();
        if bson2json_core::is_ascii(s) {
            self.text.extend_from_slice(s);
        } else {
            self.text
                .extend_from_slice(String::from_utf8_lossy(s).as_bytes());
        }
        self.close_string(start)
    }

    /// A string operand: `doc` (a whole BSON document) as JSON text in the call's options; its
    /// regexes are recorded under `index`. Offsets in a failure are `doc`'s.
    fn json(&mut self, index: usize, doc: &[u8]) -> std::result::Result<(), Failure> {
        let State {
            transcoder, out, ..
        } = &mut *self.st;
        // Into the scratch first: the output limit counts from the start of `out`.
        out.clear();
        transcoder.transcode(doc, self.opts, out)?;
        let found = transcoder.regexes();
        if !found.is_empty() {
            self.regexes
                .extend(found.iter().cloned().map(|r| (Some(index), r)));
        }
        let start = self.text.len();
        self.text.extend_from_slice(out);
        Ok(self.close_string(start)?)
    }

    /// An extras operand: a `Buffer` holding a copy of `bytes` (making it runs no JavaScript).
    fn buffer(&mut self, bytes: &[u8]) -> Result<()> {
        let b = node_api::buffer_copy(self.env, bytes)?;
        self.extras.push(Extra::Value(b));
        Ok(())
    }

    /// One event (`ev`, a whole BSON document, the `index`-th of its batch): its routing fields,
    /// its document parts (or with `whole`, the whole event) as JSON text. Offsets in a failure
    /// are `ev`'s.
    fn event(&mut self, index: usize, ev: &[u8]) -> std::result::Result<(), Failure> {
        // With `whole`, the whole event is transcoded first: that walk reads the event's bytes
        // in order, seldom in cache yet, and the reading of its fields then finds them there
        // (in the other order the fields' jumps over the parts missed the cache). Its outcome
        // is used after the fields, so that errors come in the reference's order.
        let whole = self.whole.then(|| {
            let State { transcoder, .. } = &mut *self.st;
            self.whole_json.clear();
            let r = transcoder.transcode(ev, self.opts, &mut self.whole_json);
            self.whole_regexes.clear();
            self.whole_regexes
                .extend(transcoder.regexes().iter().cloned());
            r
        });
        self.whole_reusable = matches!(whole, Some(Ok(()))) && self.whole_regexes.is_empty();
        let mut fields = std::mem::take(&mut self.fields);
        let built = change_event_fields(ev, &mut fields)
            .map_err(Failure::from)
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
                } else {
                    for field in &fields {
                        self.field(index, ev, field)?;
                    }
                    if let Some(r) = whole {
                        r?;
                        self.regexes
                            .extend(self.whole_regexes.drain(..).map(|r| (Some(index), r)));
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

    /// One routing field or document part of the event `ev`.
    fn field(
        &mut self,
        index: usize,
        ev: &[u8],
        field: &EventField,
    ) -> std::result::Result<(), Failure> {
        let at = |start: usize| move |f: Failure| f.shifted(start);
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
            EventField::DocumentKey(r) => {
                self.op(ChangeOp::DocumentKey);
                // The event's last element (its value ends at the event's NUL): its text is
                // the end of the whole event's, where it is the last member unless `compat`
                // moved another after it (a repeated key).
                let found = (self.whole_reusable && r.end + 1 == ev.len())
                    .then(|| last_member_object(&self.whole_json, b"documentKey"))
                    .flatten();
                match found {
                    Some(v) => {
                        let start = self.text.len();
                        self.text.extend_from_slice(&self.whole_json[v]);
                        self.close_string(start)?;
                    }
                    None => self.json(index, &ev[r.clone()]).map_err(at(r.start))?,
                }
            }
            EventField::Part(part, r) if !self.whole => {
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
                match r {
                    Some(r) => {
                        self.op(op);
                        self.json(index, &ev[r.clone()]).map_err(at(r.start))?;
                    }
                    None => self.op(null),
                }
            }
            EventField::Part(..) => {}
        }
        Ok(())
    }

    /// `[words, extras, text0, text1, …]`: the words as a `Buffer` (native-endian, what a
    /// `Uint32Array` over it reads), `extras` an array (or `null` when there are none), and the
    /// texts, each string operand rewritten to its UTF-16 end in its text.
    /// Runs JavaScript (a setter on `Array.prototype`, the rope of a long string): only once
    /// nothing borrows the input.
    fn finish(mut self) -> Result<Value> {
        self.flush_text(self.text.len())?;
        let bytes: Vec<u8> = self.words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let words = node_api::buffer_copy(self.env, &bytes)?;
        let extras = if self.extras.is_empty() {
            node_api::null(self.env)?
        } else {
            let a = node_api::array(self.env, self.extras.len())?;
            for (k, x) in self.extras.iter().enumerate() {
                let v = match x {
                    Extra::Value(v) => *v,
                    Extra::Text(t) => strings::json(self.env, t, &mut self.st.wide)?,
                };
                node_api::set_element(self.env, a, k as u32, v)?;
            }
            a
        };
        let result = node_api::array(self.env, 2 + self.texts.len())?;
        node_api::set_element(self.env, result, 0, words)?;
        node_api::set_element(self.env, result, 1, extras)?;
        for (k, &t) in self.texts.iter().enumerate() {
            node_api::set_element(self.env, result, 2 + k as u32, t)?;
        }
        if !crate::state::keeps_wide(&self.st.wide) {
            self.st.wide = Vec::new();
        }
        Ok(result)
    }
}

/// Runs `walk` with a [`Packer`] on the thread's scratch, then makes its packed events (which
/// can run JavaScript, so `walk` must have dropped any borrowed input by then), then checks the
/// regexes it met. Returns what `walk` returned and the packed events.
fn pack_events<T>(
    env: &Env,
    opts: &Options,
    whole: bool,
    raw_fragments: bool,
    walk: impl FnOnce(&mut Packer<'_>) -> std::result::Result<T, Failure>,
) -> std::result::Result<(T, Value), Failure> {
    let (value, regexes) = with_state(|st| {
        let mut p = Packer::new(env, opts, whole, raw_fragments, st);
        match walk(&mut p) {
            Ok(head) => {
                let regexes = std::mem::take(&mut p.regexes);
                (
                    p.finish().map(|v| (head, v)).map_err(Failure::from),
                    regexes,
                )
            }
            Err(f) => (Err(f), Vec::new()),
        }
    });
    let value = value?;
    if !regexes.is_empty() {
        regex::check(env, regexes)?;
    }
    Ok(value)
}

/// `transcodeChangeBatch`, packed: `{ id, ns, postBatchResumeToken, events }` with `events` the
/// packed events `[words, extras, ...texts]` that lib/native/index.js unpacks into the objects
/// `transcodeChangeBatch` returns.
#[napi(
    js_name = "transcodeChangeBatchPacked",
    catch_unwind,
    ts_args_type = "cursor: Uint8Array, whole: boolean, packed: number, maxOutputBytes: number, rawFragments?: boolean",
    ts_return_type = "{ id: bigint; ns: string | null; postBatchResumeToken: { _data: string } | Uint8Array | null; events: PackedChangeEvents }"
)]
pub fn transcode_change_batch_packed<'env>(
    env: &'env Env,
    cursor: Unknown<'env>,
    whole: bool,
    packed: f64,
    max_output_bytes: f64,
    raw_fragments: Option<bool>,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    let cursor = Value::of_unknown(&cursor);
    change_batch(env, cursor, whole, raw_fragments.unwrap_or(false), &opts)
        .map(|v| v.into_unknown(env))
        .map_err(|f| f.throw(env))
}

/// A batch's `postBatchResumeToken`: its `_data` string (the token is `{ _data }`), or a copy
/// of its BSON (any other shape).
enum Token {
    Data(Value),
    Bson(Value),
}

fn change_batch(
    env: &Env,
    cursor: Value,
    whole: bool,
    raw_fragments: bool,
    opts: &Options,
) -> std::result::Result<Value, Failure> {
    let ((id, ns, pbrt), events) = pack_events(env, opts, whole, raw_fragments, |p| {
        // Borrowed, not copied: until it is dropped at the end of this closure, the walk makes
        // only values whose making runs no JavaScript (flat strings, Buffer copies, numbers;
        // no property is set), and [`pack_events`] runs nothing before it.
        #[allow(unsafe_code)]
        // SAFETY: nothing runs JavaScript while `bytes` is alive (above); it is dropped when
        // this closure returns, before `Packer::finish`, the regex check and the result's
        // properties.
        let bytes = unsafe { bytes_of(env, cursor, &"cursor")? };
        let mut parts = CursorParts::default();
        cursor_parts(&bytes, &mut parts)?;
        for (i, &(a, b)) in parts.docs.iter().enumerate() {
            p.event(i, &bytes[a..b]).map_err(|f| f.in_event(i, a))?;
        }
        let ns = match parts.ns {
            Some((a, b)) => Some(node_api::string_utf8(env, &bytes[a..b])?),
            None => None,
        };
        let pbrt = match parts.post_batch_resume_token {
            Some((a, b)) => {
                let token = &bytes[a..b];
                Some(
                    match resume_token_data(token).map_err(|e| Failure::from(e.shifted(a)))? {
                        Some(r) => Token::Data(node_api::string_utf8(env, &token[r])?),
                        None => Token::Bson(node_api::buffer_copy(env, token)?),
                    },
                )
            }
            None => None,
        };
        Ok((parts.id, ns, pbrt))
    })?;
    // JavaScript may run from here on (a setter on `Object.prototype`).
    let result = node_api::object(env)?;
    let id = node_api::bigint(env, id)?;
    node_api::set_named(env, result, c"id", id)?;
    let ns = match ns {
        Some(ns) => ns,
        None => node_api::null(env)?,
    };
    node_api::set_named(env, result, c"ns", ns)?;
    let pbrt = match pbrt {
        Some(Token::Data(data)) => {
            let o = node_api::object(env)?;
            node_api::set_named(env, o, c"_data", data)?;
            o
        }
        Some(Token::Bson(buffer)) => buffer,
        None => node_api::null(env)?,
    };
    node_api::set_named(env, result, c"postBatchResumeToken", pbrt)?;
    node_api::set_named(env, result, c"events", events)?;
    Ok(result)
}

/// `transcodeChangeFragments`, packed: the merged event as packed events (one event).
#[napi(
    js_name = "transcodeChangeFragmentsPacked",
    catch_unwind,
    ts_args_type = "fragments: Uint8Array[], whole: boolean, packed: number, maxOutputBytes: number",
    ts_return_type = "PackedChangeEvents"
)]
pub fn transcode_change_fragments_packed<'env>(
    env: &'env Env,
    fragments: Unknown<'env>,
    whole: bool,
    packed: f64,
    max_output_bytes: f64,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    let merged = crate::changes::merged_fragments(env, &fragments)?;
    pack_events(env, &opts, whole, false, |p| {
        p.event(0, &merged).map_err(|f| f.in_event(0, 0))
    })
    .map(|((), v)| v.into_unknown(env))
    .map_err(|f| f.throw(env))
}
