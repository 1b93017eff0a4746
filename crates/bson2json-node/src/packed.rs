//! Change-stream batches, packed: what `watch()`, the snapshot cursor and the Kafka sink use.
//! A batch's events are written in the packed layout (core `mongo::layout`, ARCHITECTURE.md
//! decision 19) by the core's `EventPacker`, handed over in a few JS values per batch instead of
//! a dozen Node-API calls per event; `lib/native/events.js`, generated from the layout, builds
//! the event objects (or Kafka records) from them in JavaScript, where V8 allocates an object
//! and its properties inline (through Node-API every property is a generic lookup in V8's
//! runtime, `napi_set_property`; ARCHITECTURE.md decision 19).
//!
//! This module is the Node-API side only: [`NapiSink`] makes the texts and extras the packer
//! hands it, and the exports frame the reply, shape it (a projection or redaction, in the same
//! call) and assemble `[words, extras, bytes, ...texts]`.

use std::cell::RefCell;

use bson2json_core::kafka::KafkaContext;
use bson2json_core::mongo::merge_fragments;
use bson2json_core::mongo::{
    cursor_parts, resume_token_data, CursorParts, EventFormat, EventPacker, PackScratch, PackSink,
    Packed, RowPacking,
};
use bson2json_core::row::packed::PackedRows;
use bson2json_core::row::{RowOptions, RowWriter};
use bson2json_core::Options;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::{type_error, Failure};
use crate::node_api::{self, bytes_of, Value};
use crate::shape::Shaper;
use crate::state::{keeps_wide, with_state, KEEP_CAPACITY};
use crate::{options, regex, strings};

/// Record bytes above this size become an external Buffer (no copy).
const EXTERNAL_ABOVE: usize = 64 * 1024;

thread_local! {
    /// A shaped reply and the projection's scratch, kept per thread.
    static SHAPED: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// A value of the extras: made at once (a `Buffer` copy, which runs no JavaScript), or a long
/// string's UTF-8, made into a JS string once nothing borrows the input (a long one becomes a
/// rope, which runs a JS function).
enum Extra {
    Value(Value),
    Text(Vec<u8>),
}

/// The packer's sink: each text a flat JS string (making one runs no JavaScript), each extra a
/// Buffer copy now or a long string later ([`NapiSink::finish`]).
struct NapiSink<'a> {
    env: &'a Env,
    texts: Vec<Value>,
    extras: Vec<Extra>,
}

impl PackSink for NapiSink<'_> {
    type Error = Failure;

    fn text_latin1(&mut self, ascii: &[u8]) -> std::result::Result<(), Failure> {
        self.texts.push(strings::latin1(self.env, ascii)?);
        Ok(())
    }

    fn text_utf16(&mut self, units: &[u16]) -> std::result::Result<(), Failure> {
        self.texts.push(strings::utf16(self.env, units)?);
        Ok(())
    }

    fn extra_buffer(&mut self, bytes: &[u8]) -> std::result::Result<(), Failure> {
        let b = node_api::buffer_copy(self.env, bytes)?;
        self.extras.push(Extra::Value(b));
        Ok(())
    }

    fn extra_string(&mut self, text: Vec<u8>) -> std::result::Result<(), Failure> {
        self.extras.push(Extra::Text(text));
        Ok(())
    }
}

impl NapiSink<'_> {
    /// `[words, extras, bytes, text0, text1, …]`: the words as a `Buffer` (native-endian, what a
    /// `Uint32Array` over it reads), `extras` an array (or `null` when there are none), the
    /// record bytes as a `Buffer` (or `null`), and the texts. Runs JavaScript (a setter on
    /// `Array.prototype`, the rope of a long string): only once nothing borrows the input.
    fn finish(self, packed: Packed, wide: &mut Vec<u16>) -> Result<Value> {
        let env = self.env;
        let bytes: Vec<u8> = packed.words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let words = node_api::buffer_copy(env, &bytes)?;
        let extras = if self.extras.is_empty() {
            node_api::null(env)?
        } else {
            let a = node_api::array(env, self.extras.len())?;
            for (k, x) in self.extras.into_iter().enumerate() {
                let v = match x {
                    Extra::Value(v) => v,
                    Extra::Text(t) => strings::json(env, &t, wide)?,
                };
                node_api::set_element(env, a, k as u32, v)?;
            }
            a
        };
        let record_bytes = if packed.bytes.is_empty() {
            node_api::null(env)?
        } else if packed.bytes.len() > EXTERNAL_ABOVE {
            node_api::buffer_owned(env, packed.bytes)?
        } else {
            node_api::buffer_copy(env, &packed.bytes)?
        };
        let result = node_api::array(env, 3 + self.texts.len())?;
        node_api::set_element(env, result, 0, words)?;
        node_api::set_element(env, result, 1, extras)?;
        node_api::set_element(env, result, 2, record_bytes)?;
        for (k, &t) in self.texts.iter().enumerate() {
            node_api::set_element(env, result, 3 + k as u32, t)?;
        }
        if !keeps_wide(wide) {
            *wide = Vec::new();
        }
        Ok(result)
    }
}

/// What the records of a connector's format (`EventFormat.RecordDebezium*`) name besides the
/// event: Debezium's logical name (`source.name`) and version (`source.version`), and for a
/// snapshot the cluster time of the position the copy starts from (`source.ts_ms` and `ord`).
#[napi(object)]
pub struct KafkaRecords {
    /// `source.name`.
    pub name: String,
    /// `source.version`.
    pub version: String,
    /// The snapshot position's seconds.
    pub at_t: Option<u32>,
    /// The snapshot position's increment.
    pub at_i: Option<u32>,
}

/// The core's context of `kafka` (none: empty names), the records made now.
fn kafka_context(kafka: Option<KafkaRecords>) -> KafkaContext {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    match kafka {
        Some(k) => KafkaContext {
            name: k.name,
            version: k.version,
            now_ms,
            at: k.at_t.map(|t| (t, k.at_i.unwrap_or(0))),
        },
        None => KafkaContext {
            now_ms,
            ..KafkaContext::default()
        },
    }
}

/// The event format of code `format`, or a TypeError.
fn format_of(env: &Env, format: u32) -> Result<EventFormat> {
    EventFormat::from_code(format)
        .ok_or_else(|| type_error(env, &format!("bson2json: unknown event format {format}")))
}

/// What a call's events become: the format, with [`EventFormat::Rows`] the row options, with a
/// connector's format the context its records name.
struct Output {
    format: EventFormat,
    rows: Option<RowOptions>,
    kafka: KafkaContext,
}

impl Output {
    fn of(
        env: &Env,
        format: u32,
        opts: &Options,
        row_mode: Option<f64>,
        kafka: Option<KafkaRecords>,
    ) -> Result<Self> {
        let format = format_of(env, format)?;
        Ok(Output {
            format,
            rows: rows_of(format, opts, row_mode)?,
            kafka: kafka_context(kafka),
        })
    }
}

/// The row options of an [`EventFormat::Rows`] call's `rowMode` (`rowFormat | dateRenderMode
/// << 2`), `None` for another format; an error for a bad one.
fn rows_of(
    format: EventFormat,
    opts: &Options,
    row_mode: Option<f64>,
) -> Result<Option<RowOptions>> {
    if format != EventFormat::Rows {
        return Ok(None);
    }
    crate::rows::row_options(*opts, row_mode.unwrap_or(0.0))
        .map(Some)
        .ok_or_else(options::bad_options)
}

/// Runs `walk` with an [`EventPacker`] on the thread's scratch, then makes its packed events
/// (which can run JavaScript, so `walk` must have dropped any borrowed input by then), then
/// checks the regexes it met. Returns what `walk` returned and the packed events; with `rows`
/// (an [`EventFormat::Rows`] batch) the documents' rows are made in the same walk and handed
/// over as the packed events' property `rows` (crates/bson2json-node/src/rows.rs's packed
/// form), which lib/native turns into row objects before the events.
fn pack_events<T>(
    env: &Env,
    opts: &Options,
    Output {
        format,
        rows,
        kafka,
    }: Output,
    raw_fragments: bool,
    walk: impl FnOnce(&mut EventPacker<'_, NapiSink<'_>>) -> std::result::Result<T, Failure>,
) -> std::result::Result<(T, Value), Failure> {
    let (value, regexes) = with_state(|st| {
        let mut sink = NapiSink {
            env,
            texts: Vec::new(),
            extras: Vec::new(),
        };
        let scratch = PackScratch {
            transcoder: &mut st.transcoder,
            out: &mut st.out,
            wide: &mut st.wide,
        };
        let (mut packed_rows, mut writer) = (PackedRows::new(), RowWriter::new());
        let mut p =
            EventPacker::new(&mut sink, scratch, opts, format, raw_fragments).with_kafka(kafka);
        if let Some(opts) = rows {
            p = p.with_rows(RowPacking {
                packed: &mut packed_rows,
                writer: &mut writer,
                opts,
            });
        }
        let head = match walk(&mut p) {
            Ok(head) => head,
            Err(f) => return (Err(f), Vec::new()),
        };
        let mut packed = match p.finish() {
            Ok(packed) => packed,
            Err(f) => return (Err(f), Vec::new()),
        };
        let regexes = std::mem::take(&mut packed.regexes);
        let value = sink.finish(packed, &mut st.wide).and_then(|events| {
            if rows.is_some() {
                let rows = crate::rows::packed_value(env, &mut packed_rows, &mut st.wide)?;
                node_api::set_named(env, events, c"rows", rows)?;
            }
            Ok(events)
        });
        (value.map_err(Failure::from).map(|v| (head, v)), regexes)
    });
    let value = value?;
    if !regexes.is_empty() {
        regex::check(env, regexes.into_iter().map(|(i, r)| (Some(i), r)))?;
    }
    Ok(value)
}

/// One change-stream reply's `cursor` document → `{ id, ns, postBatchResumeToken, events }`,
/// `events` packed (`[words, extras, bytes, ...texts]`) in `format` (core `EventFormat`), which
/// lib/native/events.js unpacks. With `rawFragments`, each fragment of a split event is
/// `{ resumeToken, splitEvent, raw }`, `raw` a copy of its BSON (see
/// `transcodeChangeFragmentsPacked`). With a `shaper`, every event is projected and redacted
/// first, in the same call (offsets in a later error are the shaped reply's). With a
/// connector's format, `kafka` is what its records name besides the event.
#[napi(
    js_name = "transcodeChangeBatchPacked",
    catch_unwind,
    ts_args_type = "cursor: Uint8Array, format: number, packed: number, maxOutputBytes: number, rawFragments?: boolean, shaper?: Shaper, rowMode?: number, kafka?: KafkaRecords",
    ts_return_type = "{ id: bigint; ns: string | null; postBatchResumeToken: { _data: string } | Uint8Array | null; events: PackedChangeEvents }"
)]
// Exports take one Rust argument per JS argument.
#[allow(clippy::too_many_arguments)]
pub fn transcode_change_batch_packed<'env>(
    env: &'env Env,
    cursor: Unknown<'env>,
    format: u32,
    packed: f64,
    max_output_bytes: f64,
    raw_fragments: Option<bool>,
    shaper: Option<ClassInstance<'env, Shaper>>,
    row_mode: Option<f64>,
    kafka: Option<KafkaRecords>,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    let output = Output::of(env, format, &opts, row_mode, kafka)?;
    let cursor = Value::of_unknown(&cursor);
    let raw_fragments = raw_fragments.unwrap_or(false);
    let shaper = shaper.as_deref();
    change_batch(env, cursor, output, raw_fragments, &opts, shaper)
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
    output: Output,
    raw_fragments: bool,
    opts: &Options,
    shaper: Option<&Shaper>,
) -> std::result::Result<Value, Failure> {
    // The shaped reply (when there is a shaper): owned, so the walk below reads it and not the
    // caller's bytes; the buffers go back to the thread afterwards unless large.
    let mut shaped = shaper.map(|_| SHAPED.with(|s| std::mem::take(&mut *s.borrow_mut())));
    let done = pack_events(env, opts, output, raw_fragments, |p| {
        // Borrowed, not copied: until it is dropped at the end of this closure, the walk makes
        // only values whose making runs no JavaScript (flat strings, Buffer copies, numbers;
        // no property is set), and [`pack_events`] runs nothing before it.
        #[allow(unsafe_code)]
        // SAFETY: nothing runs JavaScript while `input` is alive (above); it is dropped when
        // this closure returns, before `NapiSink::finish`, the regex check and the result's
        // properties.
        let input = unsafe { bytes_of(env, cursor, &"cursor")? };
        let bytes: &[u8] = match (shaper, shaped.as_mut()) {
            (Some(s), Some((out, scratch))) => {
                out.clear();
                s.compiled().cursor(&input, true, out, scratch)?;
                out
            }
            _ => &input,
        };
        let mut parts = CursorParts::default();
        cursor_parts(bytes, &mut parts)?;
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
    });
    if let Some((out, scratch)) = shaped {
        if out.capacity() + scratch.capacity() <= KEEP_CAPACITY {
            SHAPED.with(|s| *s.borrow_mut() = (out, scratch));
        }
    }
    let ((id, ns, pbrt), events) = done?;
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

/// The event that the fragments of one split event (their `raw` bytes, in order, from
/// `transcodeChangeBatchPacked` with `rawFragments`) were split from, reassembled at the BSON
/// level (core `merge_fragments`) and packed in `format` as `transcodeChangeBatchPacked` packs
/// an event that was not split (one event).
#[napi(
    js_name = "transcodeChangeFragmentsPacked",
    catch_unwind,
    ts_args_type = "fragments: Uint8Array[], format: number, packed: number, maxOutputBytes: number, rowMode?: number, kafka?: KafkaRecords",
    ts_return_type = "PackedChangeEvents"
)]
pub fn transcode_change_fragments_packed<'env>(
    env: &'env Env,
    fragments: Unknown<'env>,
    format: u32,
    packed: f64,
    max_output_bytes: f64,
    row_mode: Option<f64>,
    kafka: Option<KafkaRecords>,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    let output = Output::of(env, format, &opts, row_mode, kafka)?;
    let merged = merged_fragments(env, &fragments)?;
    pack_events(env, &opts, output, false, |p| {
        p.event(0, &merged).map_err(|f| f.in_event(0, 0))
    })
    .map(|((), v)| v.into_unknown(env))
    .map_err(|f| f.throw(env))
}

/// The BSON of the event whose fragments are the array `fragments` (`Uint8Array[]`, in order),
/// merged (core `merge_fragments`); a TypeError for anything but an array, a TranscodeError for
/// fragments that do not merge.
fn merged_fragments(env: &Env, fragments: &Unknown<'_>) -> Result<Vec<u8>> {
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
