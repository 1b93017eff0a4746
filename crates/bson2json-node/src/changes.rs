//! Change-stream batches: one call per `aggregate`/`getMore` reply. The routing fields of each
//! event are extracted here, in Rust, and the document parts become JSON text in the chosen
//! dialect; nothing is deserialized into JS objects by js-bson on this path.

use std::ffi::{c_char, CStr};

use bson2json_core::mongo::merge_fragments;
use bson2json_core::mongo::{
    change_event_fields, cursor_parts, resume_token_data, CursorParts, EventField, Part,
};
use bson2json_core::{Options, RegexRecord};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::{type_error, Failure};
use crate::node_api::{self, Value};
use crate::state::{with_state, State};
use crate::{options, regex, strings};

/// Property names made once per call: `napi_set_named_property` makes the name's V8 string and
/// looks it up in V8's string table on every call, ten times per event; a name made once is
/// looked up on its first use and reused for every later event of the batch.
///
/// The names are JS values of the current call, so a `Keys` never outlives it.
#[derive(Default)]
struct Keys {
    made: Vec<(*const c_char, Value)>,
}

impl Keys {
    fn get(&mut self, env: &Env, key: &'static CStr) -> Result<Value> {
        let p = key.as_ptr();
        if let Some(&(_, k)) = self.made.iter().find(|(q, _)| *q == p) {
            return Ok(k);
        }
        let k = node_api::string_utf8(env, key.to_bytes())?;
        self.made.push((p, k));
        Ok(k)
    }
}

/// Writes the JS values of one call's change events.
///
/// It holds the thread's scratch for the whole call (taken out of the thread state, see
/// [`with_state`]), so nothing it does borrows the state while it runs JavaScript (a setter
/// met while setting a property). The regexes of every transcoded part are collected in
/// `regexes`, each with its event's index, and checked by the caller once the writer is done.
struct EventWriter<'a> {
    env: &'a Env,
    opts: &'a Options,
    /// Whether each event carries `json`, the whole event's text, instead of one text per
    /// document part.
    whole: bool,
    /// Whether a fragment of a split event (one with `splitEvent`) is handed over raw, as
    /// `{ resumeToken, splitEvent, raw }`, for [`transcode_change_fragments`] to reassemble.
    raw_fragments: bool,
    st: &'a mut State,
    keys: Keys,
    fields: Vec<EventField>,
    regexes: Vec<(Option<usize>, RegexRecord)>,
}

impl<'a> EventWriter<'a> {
    fn new(env: &'a Env, opts: &'a Options, whole: bool, st: &'a mut State) -> Self {
        EventWriter {
            env,
            opts,
            whole,
            raw_fragments: false,
            st,
            keys: Keys::default(),
            fields: Vec::new(),
            regexes: Vec::new(),
        }
    }

    /// `obj[key] = value`, through the key cache.
    fn set(&mut self, obj: Value, key: &'static CStr, value: Value) -> Result<()> {
        let k = self.keys.get(self.env, key)?;
        node_api::set_property(self.env, obj, k, value)
    }

    fn string(&self, s: &[u8]) -> Result<Value> {
        node_api::string_utf8(self.env, s)
    }

    fn number(&self, x: f64) -> Result<Value> {
        node_api::number(self.env, x)
    }

    fn object(&self) -> Result<Value> {
        node_api::object(self.env)
    }

    fn null(&self) -> Result<Value> {
        node_api::null(self.env)
    }

    /// `doc` (a whole BSON document) as JSON text in the call's options; its regexes are
    /// recorded under `index`. Offsets in a failure are `doc`'s.
    fn json(&mut self, index: usize, doc: &[u8]) -> std::result::Result<Value, Failure> {
        let State {
            transcoder,
            out,
            wide,
            ..
        } = &mut *self.st;
        out.clear();
        transcoder.transcode(doc, self.opts, out)?;
        let found = transcoder.regexes();
        if !found.is_empty() {
            self.regexes
                .extend(found.iter().cloned().map(|r| (Some(index), r)));
        }
        Ok(strings::json(self.env, out, wide)?)
    }

    /// A resume token: `{ _data: string }` built here when `data` (its `_data` string, see
    /// [`resume_token_data`]) says it has that shape, the format every MongoDB version uses;
    /// any other shape as a `Buffer` holding a copy of its BSON (`doc`), which the wrapper
    /// decodes.
    fn token(&mut self, doc: &[u8], data: Option<&[u8]>) -> Result<Value> {
        match data {
            Some(data) => {
                let o = self.object()?;
                let s = self.string(data)?;
                self.set(o, c"_data", s)?;
                Ok(o)
            }
            None => node_api::buffer_copy(self.env, doc),
        }
    }

    /// The `{ id, ns, postBatchResumeToken, events }` of a cursor document (`bytes`, framed
    /// into `parts`).
    fn batch(&mut self, bytes: &[u8], parts: &CursorParts) -> std::result::Result<Value, Failure> {
        let result = self.object()?;
        let id = node_api::bigint(self.env, parts.id)?;
        self.set(result, c"id", id)?;
        let ns = match parts.ns {
            Some((a, b)) => self.string(&bytes[a..b])?,
            None => self.null()?,
        };
        self.set(result, c"ns", ns)?;
        let pbrt = match parts.post_batch_resume_token {
            Some((a, b)) => {
                let token = &bytes[a..b];
                let data = resume_token_data(token)
                    .map_err(|e| Failure::from(e.shifted(a)))?
                    .map(|r| &token[r]);
                self.token(token, data)?
            }
            None => self.null()?,
        };
        self.set(result, c"postBatchResumeToken", pbrt)?;
        let events = node_api::array(self.env, parts.docs.len())?;
        for (i, &(a, b)) in parts.docs.iter().enumerate() {
            let ev = self.event(i, &bytes[a..b]).map_err(|f| f.in_event(i, a))?;
            node_api::set_element(self.env, events, i as u32, ev)?;
        }
        self.set(result, c"events", events)?;
        Ok(result)
    }

    /// One event (`ev`, a whole BSON document, the `index`-th of its batch) as a JS object:
    /// its routing fields as values, its document parts (or with `whole`, the whole event) as
    /// JSON text. Offsets in a failure are `ev`'s.
    fn event(&mut self, index: usize, ev: &[u8]) -> std::result::Result<Value, Failure> {
        let mut fields = std::mem::take(&mut self.fields);
        let built = change_event_fields(ev, &mut fields)
            .map_err(Failure::from)
            .and_then(|()| {
                let o = self.object()?;
                let fragment = |f: &EventField| matches!(f, EventField::SplitEvent { .. });
                if self.raw_fragments && fields.iter().any(fragment) {
                    return self.fragment(o, index, ev, &fields);
                }
                for field in &fields {
                    self.field(o, index, ev, field)?;
                }
                if self.whole {
                    let j = self.json(index, ev)?;
                    self.set(o, c"json", j)?;
                }
                Ok(o)
            });
        self.fields = fields;
        built
    }

    /// A fragment of a split event, raw: its resume token and `splitEvent` as values, and
    /// `raw`, a copy of its BSON.
    fn fragment(
        &mut self,
        o: Value,
        index: usize,
        ev: &[u8],
        fields: &[EventField],
    ) -> std::result::Result<Value, Failure> {
        for field in fields {
            if matches!(
                field,
                EventField::ResumeToken { .. } | EventField::SplitEvent { .. }
            ) {
                self.field(o, index, ev, field)?;
            }
        }
        let raw = node_api::buffer_copy(self.env, ev)?;
        self.set(o, c"raw", raw)?;
        Ok(o)
    }

    /// Sets one routing field or document part of the event `ev` on `o`.
    fn field(
        &mut self,
        o: Value,
        index: usize,
        ev: &[u8],
        field: &EventField,
    ) -> std::result::Result<(), Failure> {
        let at = |start: usize| move |f: Failure| f.shifted(start);
        let (key, value) = match field {
            EventField::ResumeToken { doc, data } => {
                let data = data.clone().map(|r| &ev[r]);
                (c"resumeToken", self.token(&ev[doc.clone()], data)?)
            }
            EventField::OperationType(r) => (c"operationType", self.string(&ev[r.clone()])?),
            EventField::Ns { db, coll } => {
                let ns = self.object()?;
                for (k, r) in [(c"db", db), (c"coll", coll)] {
                    if let Some(r) = r {
                        let s = self.string(&ev[r.clone()])?;
                        self.set(ns, k, s)?;
                    }
                }
                (c"ns", ns)
            }
            EventField::ClusterTime { t, i } => {
                let ts = self.object()?;
                let tv = self.number(f64::from(*t))?;
                self.set(ts, c"t", tv)?;
                let iv = self.number(f64::from(*i))?;
                self.set(ts, c"i", iv)?;
                (c"clusterTime", ts)
            }
            EventField::WallTime(ms) => (c"wallTime", node_api::date(self.env, *ms as f64)?),
            EventField::SplitEvent { fragment, of } => {
                let split = self.object()?;
                for (k, x) in [(c"fragment", fragment), (c"of", of)] {
                    if let Some(x) = x {
                        let xv = self.number(f64::from(*x))?;
                        self.set(split, k, xv)?;
                    }
                }
                (c"splitEvent", split)
            }
            EventField::DocumentKey(r) => (
                c"documentKey",
                self.json(index, &ev[r.clone()]).map_err(at(r.start))?,
            ),
            EventField::Part(part, r) if !self.whole => {
                let key = match part {
                    Part::FullDocument => c"fullDocument",
                    Part::FullDocumentBeforeChange => c"fullDocumentBeforeChange",
                    Part::UpdateDescription => c"updateDescription",
                };
                let value = match r {
                    Some(r) => self.json(index, &ev[r.clone()]).map_err(at(r.start))?,
                    None => self.null()?,
                };
                (key, value)
            }
            EventField::Part(..) => return Ok(()),
        };
        self.set(o, key, value)?;
        Ok(())
    }
}

/// One raw change-stream reply's `cursor` document → `{ id, ns, postBatchResumeToken,
/// events }`. With `whole`, each event also carries `json`, the whole event as one JSON string
/// (in `compat` exactly `JSON.stringify` of what the driver's own `watch()` yields). With
/// `rawFragments`, each fragment of a split event is `{ resumeToken, splitEvent, raw }`, `raw`
/// a copy of its BSON (see `transcodeChangeFragments`).
#[napi(
    js_name = "transcodeChangeBatch",
    catch_unwind,
    ts_args_type = "cursor: Uint8Array, whole: boolean, packed: number, maxOutputBytes: number, rawFragments?: boolean",
    ts_return_type = "{ id: bigint; ns: string | null; postBatchResumeToken: { _data: string } | Uint8Array | null; events: RawChangeEvent[] }"
)]
pub fn transcode_change_batch<'env>(
    env: &'env Env,
    cursor: Unknown<'env>,
    whole: bool,
    packed: f64,
    max_output_bytes: f64,
    raw_fragments: Option<bool>,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    // Copied: the events are read while their JS objects are built, and setting a property
    // can run JavaScript (a setter on `Object.prototype`) that could detach a borrowed input.
    let bytes = node_api::bytes_copied(env, Value::of_unknown(&cursor), &"cursor")?;
    change_batch(env, &bytes, whole, raw_fragments.unwrap_or(false), &opts)
        .map(|v| v.into_unknown(env))
        .map_err(|f| f.throw(env))
}

fn change_batch(
    env: &Env,
    bytes: &[u8],
    whole: bool,
    raw_fragments: bool,
    opts: &Options,
) -> std::result::Result<Value, Failure> {
    let mut parts = CursorParts::default();
    cursor_parts(bytes, &mut parts)?;
    write_events(env, opts, whole, raw_fragments, |w| w.batch(bytes, &parts))
}

/// Runs `write` with an [`EventWriter`] on the thread's scratch, then checks the regexes it
/// met (which can run JavaScript, so only once the writer has given the scratch back).
fn write_events(
    env: &Env,
    opts: &Options,
    whole: bool,
    raw_fragments: bool,
    write: impl FnOnce(&mut EventWriter<'_>) -> std::result::Result<Value, Failure>,
) -> std::result::Result<Value, Failure> {
    let (value, regexes) = with_state(|st| {
        let mut w = EventWriter::new(env, opts, whole, st);
        w.raw_fragments = raw_fragments;
        let value = write(&mut w);
        (value, w.regexes)
    });
    let value = value?;
    if !regexes.is_empty() {
        regex::check(env, regexes)?;
    }
    Ok(value)
}

/// The event that the fragments of one split event (their `raw` bytes, in order, from
/// `transcodeChangeBatch` with `rawFragments`) were split from, reassembled at the BSON level
/// ([`merge_fragments`]) and returned exactly as `transcodeChangeBatch` returns an event that
/// was not split.
#[napi(
    js_name = "transcodeChangeFragments",
    catch_unwind,
    ts_args_type = "fragments: Uint8Array[], whole: boolean, packed: number, maxOutputBytes: number",
    ts_return_type = "RawChangeEvent"
)]
pub fn transcode_change_fragments<'env>(
    env: &'env Env,
    fragments: Unknown<'env>,
    whole: bool,
    packed: f64,
    max_output_bytes: f64,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    let merged = merged_fragments(env, &fragments)?;
    write_events(env, &opts, whole, false, |w| {
        w.event(0, &merged).map_err(|f| f.in_event(0, 0))
    })
    .map(|v| v.into_unknown(env))
    .map_err(|f| f.throw(env))
}

/// The BSON of the event whose fragments are the array `fragments` (`Uint8Array[]`, in order),
/// merged ([`merge_fragments`]); a TypeError for anything but an array, a TranscodeError for
/// fragments that do not merge.
pub(crate) fn merged_fragments(env: &Env, fragments: &Unknown<'_>) -> Result<Vec<u8>> {
    let list = Value::of_unknown(fragments);
    if !node_api::is_array(env, list)? {
        return Err(type_error(
            env,
            "bson2json: fragments must be an array of Uint8Arrays",
        ));
    }
    // Every element is read (which can run JavaScript: an accessor) before any byte pointer
    // is taken.
    let len = node_api::array_length(env, list)?;
    let mut values = Vec::with_capacity(len as usize);
    for i in 0..len {
        values.push(node_api::get_element(env, list, i)?);
    }
    let mut merged = Vec::new();
    let outcome = node_api::with_each_bytes(env, &values, "fragments", |parts| {
        merge_fragments(parts, &mut merged)
    })?;
    match outcome {
        Ok(()) => Ok(merged),
        Err(e) => Err(Failure::from(e).throw(env)),
    }
}
