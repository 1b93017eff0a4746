//! Batch exports: many documents per call, synchronously or on the libuv thread pool.
//!
//! The result's shape is the call's `layout` ([`BatchLayout`]).

// Exports take one Rust argument per JS argument: the wrapper passes resolved options as numbers.
#![allow(clippy::too_many_arguments)]

use std::sync::{Arc, Mutex};

use bson2json_core::batch::{
    transcode_docs_parallel_with, transcode_docs_with, transcode_each, BatchError, BatchOutput,
    Layout,
};
use bson2json_core::concat::{split_concatenated, transcode_concatenated};
use bson2json_core::csv::{self, CsvFields};
use bson2json_core::mongo::{cursor_parts, CursorParts};
use bson2json_core::project::Shape;
use bson2json_core::{Options, Transcoder};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::{type_error, Failure};
use crate::node_api::{self, Value};
use crate::shape::Shaper;
use crate::state::{with_wide, KEEP_CAPACITY, STATE};
use crate::{options, regex, strings};

/// The shape of a batch call's result (its `layout` argument). Exported to JavaScript, so the
/// generated `binding.d.ts` types the argument and `index.js` takes the numbers from here.
#[napi]
#[derive(Clone, Copy)]
pub enum BatchLayout {
    /// One JSON array string, `[doc,doc,…]`.
    Array = 0,
    /// A `Buffer` of NDJSON.
    NdjsonBuffer = 1,
    /// An array of per-document strings.
    List = 2,
    /// One NDJSON string.
    NdjsonString = 3,
    /// Joined texts of whole documents with their UTF-16 offsets (`[text, offsets, …]`).
    Joined = 4,
}

impl BatchLayout {
    /// The layout numbered `x` (the staged calls' arguments); `None` if there is none.
    pub(crate) fn from_number(x: u32) -> Option<Self> {
        Some(match x {
            0 => BatchLayout::Array,
            1 => BatchLayout::NdjsonBuffer,
            2 => BatchLayout::List,
            3 => BatchLayout::NdjsonString,
            4 => BatchLayout::Joined,
            _ => return None,
        })
    }

    /// How the core separates the documents for this layout.
    pub(crate) fn core(self) -> Layout {
        match self {
            BatchLayout::Array => Layout::Array,
            BatchLayout::NdjsonBuffer | BatchLayout::NdjsonString => Layout::Lines,
            BatchLayout::List | BatchLayout::Joined => Layout::Bare,
        }
    }
}

/// Builds the JS result for `layout` from a finished batch.
fn batch_value(
    env: &Env,
    r: &BatchOutput,
    layout: BatchLayout,
    wide: &mut Vec<u16>,
) -> Result<Value> {
    match layout {
        BatchLayout::NdjsonBuffer => node_api::buffer_copy(env, &r.out),
        BatchLayout::List => list_value(env, r, wide),
        // Joining pays off up to documents of tens of KB; documents of a text's size or more
        // are cheaper as separate strings.
        BatchLayout::Joined if r.out.len() <= JOINED_TEXT_BYTES / 2 * r.offsets.len().max(1) => {
            joined_value(env, r, wide)
        }
        BatchLayout::Joined => list_value(env, r, wide),
        BatchLayout::Array | BatchLayout::NdjsonString => strings::json(env, &r.out, wide),
    }
}

/// One string per document.
fn list_value(env: &Env, r: &BatchOutput, wide: &mut Vec<u16>) -> Result<Value> {
    let n = r.offsets.len().saturating_sub(1);
    let arr = node_api::array(env, n)?;
    for i in 0..n {
        let s = strings::json(env, &r.out[r.offsets[i]..r.offsets[i + 1]], wide)?;
        node_api::set_element(env, arr, i as u32, s)?;
    }
    Ok(arr)
}

/// UTF-8 bytes of JSON per text of a [`BatchLayout::Joined`] result: at most 128 KiB of V8 payload even
/// as UTF-16, so each text is a flat string in V8's regular heap, which `slice` can share.
/// (One multi-megabyte text would be a large object, or a rope that the first `slice`
/// flattens into one.)
const JOINED_TEXT_BYTES: usize = 64 * 1024 - 32;

/// `[text0, offsets0, text1, offsets1, ...]` for [`BatchLayout::Joined`]. The wrapper cuts
/// each text with `slice`, which V8 does without copying, so a list costs one string creation
/// per text instead of one per document. The texts hold the documents' JSON back to back, at
/// most [`JOINED_TEXT_BYTES`] (or one document each), and for each text the
/// UTF-16 index where each of its documents starts, plus its end.
fn joined_value(env: &Env, r: &BatchOutput, wide: &mut Vec<u16>) -> Result<Value> {
    let n = r.offsets.len().saturating_sub(1);
    let result = node_api::array(env, 0)?;
    let mut slot = 0u32;
    let mut units: Vec<u32> = Vec::new();
    let mut first = 0usize;
    while first < n {
        // Documents `first..last` go into one text.
        let start = r.offsets[first];
        let mut last = first + 1;
        while last < n && r.offsets[last + 1] - start <= JOINED_TEXT_BYTES {
            last += 1;
        }
        let text = &r.out[start..r.offsets[last]];
        units.clear();
        let value = if last == first + 1 {
            // One document (perhaps larger than a text): a rope if it is long.
            let (value, n) = strings::from_utf8(env, text, wide)?;
            units.extend([0, n as u32]);
            value
        } else if bson2json_core::is_ascii(text) {
            units.extend(r.offsets[first..=last].iter().map(|&o| (o - start) as u32));
            strings::latin1(env, text)?
        } else {
            let dst = strings::utf16_scratch(wide, text.len());
            let mut pos = 0usize;
            units.push(0);
            for i in first..last {
                // `pos` never passes the segment's byte offset in `text`, so `dst[pos..]` holds
                // the segment plus the converter's slack.
                let seg = &r.out[r.offsets[i]..r.offsets[i + 1]];
                pos += bson2json_core::to_utf16(seg, &mut dst[pos..]);
                units.push(pos as u32);
            }
            strings::utf16(env, &wide[..pos])?
        };
        let offsets = node_api::uint32_array(env, &units)?;
        node_api::set_element(env, result, slot, value)?;
        node_api::set_element(env, result, slot + 1, offsets)?;
        slot += 2;
        first = last;
    }
    Ok(result)
}

fn bad_docs(env: &Env) -> Error {
    type_error(
        env,
        "bson2json: docs must be an array of Uint8Arrays, one Uint8Array of concatenated BSON \
         documents, or a raw reply { cursor: Uint8Array }",
    )
}

/// Whether `input` is a JS array (a `Proxy` of one is not: it is rejected as not bytes).
fn is_array(env: &Env, input: &Unknown<'_>) -> Result<bool> {
    node_api::is_array(env, Value::of_unknown(input))
}

/// A batch argument, its elements read: an array of `Uint8Array`s, or one `Uint8Array` of
/// concatenated documents. No byte is borrowed yet.
pub(crate) enum DocsArg {
    List(Vec<Value>),
    Concatenated(Value),
}

/// Reads a batch argument's elements. Reading an array element can run JavaScript (an
/// accessor on the array or on `Array.prototype`), which may detach or shrink any buffer, so
/// every element is read first and only then are the bytes borrowed ([`with_docs`]).
pub(crate) fn docs_arg(env: &Env, input: &Unknown<'_>) -> Result<DocsArg> {
    let array = Value::of_unknown(input);
    if !is_array(env, input)? {
        return Ok(DocsArg::Concatenated(array));
    }
    // Reading a JS array's length runs no JavaScript; reading its elements may (getters).
    let len = node_api::array_length(env, array)?;
    let mut values = Vec::with_capacity(len as usize);
    for i in 0..len {
        values.push(node_api::get_element(env, array, i)?);
    }
    Ok(DocsArg::List(values))
}

/// `f` of the documents of `docs`, borrowed (`node_api::with_bytes`: `f` runs no JavaScript),
/// and for concatenated input each one's start offset (for error reporting). A concatenated
/// input that does not frame is its framing error, a value of another kind a `TypeError`.
pub(crate) fn with_docs<R>(
    env: &Env,
    docs: &DocsArg,
    f: impl FnOnce(&[&[u8]], Option<&[usize]>) -> R + Send,
) -> std::result::Result<R, Failure> {
    match docs {
        DocsArg::List(values) => Ok(node_api::with_each_bytes(env, values, "docs", |d| {
            f(d, None)
        })?),
        DocsArg::Concatenated(v) => {
            let framed = node_api::with_bytes(env, *v, &"docs", |bytes| {
                let mut ranges = Vec::new();
                split_concatenated(bytes, &mut ranges)?;
                let starts: Vec<usize> = ranges.iter().map(|r| r.0).collect();
                let docs: Vec<&[u8]> = ranges.iter().map(|&(s, e)| &bytes[s..e]).collect();
                Ok(f(&docs, Some(&starts)))
            })
            .map_err(|_| not_docs(env))?;
            framed.map_err(|e: BatchError| Failure::from(e))
        }
    }
}

/// The `TypeError` for a batch argument that is neither documents nor concatenated documents
/// (the one Node-API left pending cleared first).
pub(crate) fn not_docs(env: &Env) -> Error {
    node_api::take_exception(env);
    bad_docs(env)
}

/// Transcodes `docs` (each one's start in the caller's buffer in `starts`, for concatenated
/// input) on `threads` threads, each document shaped first when there is a `shape` (a
/// projection / redaction): an error then keeps the document's index, and its offset is
/// where the fault is in the document as given (the shaped document's offset mapped back).
pub(crate) fn run_batch(
    docs: &[&[u8]],
    starts: Option<&[usize]>,
    shape: Option<&Shape>,
    opts: &Options,
    layout: BatchLayout,
    threads: u32,
    tc: &mut Transcoder,
    r: &mut BatchOutput,
) -> std::result::Result<(), BatchError> {
    let res = if threads > 1 {
        transcode_docs_parallel_with(tc, docs, shape, opts, layout.core(), threads as usize, r)
    } else {
        transcode_docs_with(tc, docs, 0, shape, opts, layout.core(), r)
    };
    match (res, starts) {
        (Ok(()), Some(s)) => {
            // The regexes still to check carry offsets in their documents; a failure reports
            // the input's, as every other error of a concatenated batch does.
            for (i, x) in &mut r.regexes {
                x.offset += s.get(*i).copied().unwrap_or(0);
            }
            Ok(())
        }
        (Err(mut e), Some(s)) => {
            e.doc_offset = s.get(e.index).copied().unwrap_or(0);
            Err(e)
        }
        (res, None) => res,
    }
}

/// Batch core, synchronous: `input` is `Uint8Array[]` or concatenated documents.
#[napi(
    js_name = "transcodeBatch",
    catch_unwind,
    ts_args_type = "input: Uint8Array | Uint8Array[], layout: BatchLayout, packed: number, maxOutputBytes: number, threads: number, shaper?: Shaper",
    ts_return_type = "BatchValue"
)]
pub fn transcode_batch<'env>(
    env: &'env Env,
    input: Unknown<'env>,
    layout: BatchLayout,
    packed: f64,
    max_output_bytes: f64,
    threads: u32,
    shaper: Option<ClassInstance<'env, Shaper>>,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    let shape = shaper.as_ref().map(|s| s.compiled());
    let (outcome, r) = if shape.is_none() && !is_array(env, &input)? && threads <= 1 {
        // Concatenated documents on this thread: framed and transcoded in one pass.
        node_api::with_bytes(env, Value::of_unknown(&input), &"docs", |bytes| {
            let mut out = take_output(bytes.len());
            let outcome = STATE.with(|s| {
                let tc = &mut s.borrow_mut().transcoder;
                transcode_concatenated(tc, bytes, &opts, layout.core(), &mut out)
            });
            (outcome, out)
        })
        .map_err(|_| not_docs(env))?
    } else {
        let docs = docs_arg(env, &input)?;
        with_docs(env, &docs, |docs, starts| {
            run_on_thread(docs, starts, shape, &opts, layout, threads)
        })
        .map_err(|f| f.throw(env))?
    };
    // The input is not read after this point: everything below works on `r`, which this call
    // owns, and may run JavaScript (the regex check, setters met while building the result).
    batch_result(env, outcome, r, layout)
}

/// [`run_batch`] with this thread's transcoder, into a [`take_output`] buffer.
fn run_on_thread(
    docs: &[&[u8]],
    starts: Option<&[usize]>,
    shape: Option<&Shape>,
    opts: &Options,
    layout: BatchLayout,
    threads: u32,
) -> (std::result::Result<(), BatchError>, BatchOutput) {
    let mut r = take_output(docs.iter().map(|d| d.len()).sum());
    let outcome = STATE.with(|s| {
        let mut s = s.borrow_mut();
        run_batch(
            docs,
            starts,
            shape,
            opts,
            layout,
            threads,
            &mut s.transcoder,
            &mut r,
        )
    });
    (outcome, r)
}

/// The JS result (or the thrown error) of a synchronous batch, once its input is dropped.
fn batch_result<'env>(
    env: &'env Env,
    outcome: std::result::Result<(), BatchError>,
    mut r: BatchOutput,
    layout: BatchLayout,
) -> Result<Unknown<'env>> {
    let value = outcome
        .map_err(Failure::from)
        .and_then(|()| finish(env, &mut r, layout));
    keep_output(r);
    Ok(value.map_err(|f| f.throw(env))?.into_unknown(env))
}

/// `transcodeBatch` for an array of `Uint8Array`s described by a views table, which
/// lib/native builds in JavaScript (reading each element's `buffer`, `byteOffset` and
/// `byteLength` there costs a fraction of the two Node-API calls and the element read per
/// document of `transcodeBatch`): `buffers` holds the distinct `ArrayBuffer`s, `table` (a
/// `Uint32Array`) per document the index of its buffer, its byte offset and its byte
/// length. Returns `undefined` unless every buffer is a plain `ArrayBuffer` and every range a
/// non-empty one in its buffer as it stands now ([`node_api::Views`]; checked as each document
/// is transcoded, and to the end of the table when one fails): the wrapper then calls
/// `transcodeBatch` with the elements, the plain twin this call must agree with.
#[napi(
    js_name = "transcodeBatchViews",
    catch_unwind,
    ts_args_type = "buffers: ArrayBuffer[], table: Uint32Array, count: number, layout: BatchLayout, packed: number, maxOutputBytes: number, threads: number, shaper?: Shaper",
    ts_return_type = "BatchValue | undefined"
)]
pub fn transcode_batch_views<'env>(
    env: &'env Env,
    buffers: Unknown<'env>,
    table: Unknown<'env>,
    count: u32,
    layout: BatchLayout,
    packed: f64,
    max_output_bytes: f64,
    threads: u32,
    shaper: Option<ClassInstance<'env, Shaper>>,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    let shape = shaper.as_ref().map(|s| s.compiled());
    let list = Value::of_unknown(&buffers);
    if !node_api::is_array(env, list)? {
        return Ok(node_api::undefined(env)?.into_unknown(env));
    }
    // Every handle is read before the first byte pointer is taken (an element read may run
    // JavaScript: an accessor on `Array.prototype`).
    let buffer_count = node_api::array_length(env, list)?;
    let mut values = Vec::with_capacity(buffer_count as usize);
    for i in 0..buffer_count {
        values.push(node_api::get_element(env, list, i)?);
    }
    let table = Value::of_unknown(&table);
    let done = node_api::with_views(env, &values, table, count as usize, |views| {
        if shape.is_none() && threads <= 1 {
            // Each row checked as it is transcoded, with no list of the documents.
            let mut r = take_output(0);
            let outcome = STATE.with(|s| {
                let tc = &mut s.borrow_mut().transcoder;
                transcode_each(
                    tc,
                    views.count(),
                    |i| views.doc(i),
                    &opts,
                    layout.core(),
                    &mut r,
                )
            });
            match outcome {
                Ok(false) => {
                    keep_output(r);
                    None
                }
                Ok(true) => Some((Ok(()), r)),
                Err(e) => Some((Err(e), r)),
            }
        } else {
            let docs = views.all()?;
            Some(run_on_thread(&docs, None, shape, &opts, layout, threads))
        }
    });
    match done {
        Some(Some((outcome, r))) => batch_result(env, outcome, r, layout),
        _ => Ok(node_api::undefined(env)?.into_unknown(env)),
    }
}

/// The JS result of a finished batch, after its regex check.
fn finish(
    env: &Env,
    r: &mut BatchOutput,
    layout: BatchLayout,
) -> std::result::Result<Value, Failure> {
    if !r.regexes.is_empty() {
        regex::check(env, r.regexes.drain(..).map(|(i, x)| (Some(i), x)))?;
    }
    Ok(with_wide(|wide| batch_value(env, r, layout, wide))?)
}

/// The thread's reusable batch output, emptied, with room for `input_bytes` of BSON turned
/// into JSON (taken out of the thread state, so a re-entrant call from JavaScript, e.g. a
/// patched `RegExp`, simply gets a fresh one).
pub(crate) fn take_output(input_bytes: usize) -> BatchOutput {
    let mut r = STATE.with(|s| std::mem::take(&mut s.borrow_mut().batch));
    r.clear();
    r.out.reserve(input_bytes + input_bytes / 4 + 64);
    r
}

/// Gives a batch output back for the next call, unless it grew past the kept size.
pub(crate) fn keep_output(r: BatchOutput) {
    if r.out.capacity() <= KEEP_CAPACITY {
        STATE.with(|s| s.borrow_mut().batch = r);
    }
}

/// Batch core for a raw cursor reply: `cursor` is the `cursor` sub-document of a
/// `find`/`aggregate`/`getMore` reply (`db.command(cmd, { raw: true })` hands it back as a
/// Buffer). Returns `{ id, ns, postBatchResumeToken, count, docs }`.
#[napi(
    js_name = "transcodeCursor",
    catch_unwind,
    ts_args_type = "cursor: Uint8Array, layout: BatchLayout, packed: number, maxOutputBytes: number, shaper?: Shaper",
    ts_return_type = "{ id: bigint; ns: string | null; postBatchResumeToken: Uint8Array | null; count: number; docs: BatchValue }"
)]
pub fn transcode_cursor<'env>(
    env: &'env Env,
    cursor: Unknown<'env>,
    layout: BatchLayout,
    packed: f64,
    max_output_bytes: f64,
    shaper: Option<ClassInstance<'env, Shaper>>,
) -> Result<Unknown<'env>> {
    let opts = options::decode(packed, max_output_bytes)?;
    let shape = shaper.as_ref().map(|s| s.compiled());
    // Everything still needed from the input is copied out while it is borrowed: the regex
    // check and the property sets below can run JavaScript, which may detach its buffer.
    let read = node_api::with_bytes(env, Value::of_unknown(&cursor), &"cursor", |bytes| {
        read_cursor(bytes, shape, layout, &opts)
    })?;
    cursor_result(env, read, layout)
        .map(|v| v.into_unknown(env))
        .map_err(|f| f.throw(env))
}

/// What a cursor reply's batch gave: its transcoded documents (or the failure), and the
/// reply's fields, copied out of it.
struct CursorRead {
    outcome: std::result::Result<(), Failure>,
    r: BatchOutput,
    id: i64,
    ns: Option<Vec<u8>>,
    token: Option<Vec<u8>>,
    count: usize,
}

/// Frames the cursor reply `bytes` and transcodes its batch's documents. Runs no JavaScript.
fn read_cursor(
    bytes: &[u8],
    shape: Option<&Shape>,
    layout: BatchLayout,
    opts: &Options,
) -> CursorRead {
    let mut parts = CursorParts::default();
    if let Err(e) = cursor_parts(bytes, &mut parts) {
        return CursorRead {
            outcome: Err(e.into()),
            r: BatchOutput::default(),
            id: 0,
            ns: None,
            token: None,
            count: 0,
        };
    }
    let docs: Vec<&[u8]> = parts.docs.iter().map(|&(s, e)| &bytes[s..e]).collect();
    let starts: Vec<usize> = parts.docs.iter().map(|d| d.0).collect();
    let mut r = take_output(docs.iter().map(|d| d.len()).sum());
    let outcome = STATE.with(|s| {
        let mut s = s.borrow_mut();
        run_batch(
            &docs,
            Some(&starts),
            shape,
            opts,
            layout,
            1,
            &mut s.transcoder,
            &mut r,
        )
    });
    CursorRead {
        outcome: outcome.map_err(Failure::from),
        r,
        id: parts.id,
        ns: parts.ns.map(|(s, e)| bytes[s..e].to_vec()),
        token: parts
            .post_batch_resume_token
            .map(|(s, e)| bytes[s..e].to_vec()),
        count: docs.len(),
    }
}

/// `{ id, ns, postBatchResumeToken, count, docs }` of a [`read_cursor`], once the input is
/// dropped.
fn cursor_result(
    env: &Env,
    read: CursorRead,
    layout: BatchLayout,
) -> std::result::Result<Value, Failure> {
    let CursorRead {
        outcome,
        mut r,
        id,
        ns,
        token,
        count,
    } = read;
    let out = outcome.and_then(|()| finish(env, &mut r, layout));
    keep_output(r);
    let out = out?;
    let obj = cursor_object(env, id, ns, count)?;
    let token = match token {
        Some(t) => node_api::buffer_copy(env, &t)?,
        None => node_api::null(env)?,
    };
    node_api::set_named(env, obj, c"postBatchResumeToken", token)?;
    node_api::set_named(env, obj, c"docs", out)?;
    Ok(obj)
}

/// `{ id, ns, count }` of a cursor reply (`ns`: its bytes, copied out of the reply).
fn cursor_object(env: &Env, id: i64, ns: Option<Vec<u8>>, count: usize) -> Result<Value> {
    let obj = node_api::object(env)?;
    let id = node_api::bigint(env, id)?;
    node_api::set_named(env, obj, c"id", id)?;
    let ns = match ns {
        Some(ns) => node_api::string_utf8(env, &ns)?,
        None => node_api::null(env)?,
    };
    node_api::set_named(env, obj, c"ns", ns)?;
    let count = node_api::number(env, count as f64)?;
    node_api::set_named(env, obj, c"count", count)?;
    Ok(obj)
}

/// Buffers of finished pool tasks (their input copies and their outputs), kept for the next
/// tasks: a fresh multi-megabyte allocation is page-faulted in on first write, which made a
/// stream with several batches in flight spend more time in page faults than in transcoding
/// (`perf`, benchmark/vs-bsondump.sh).
pub(crate) static SPARE_INPUTS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
static SPARE_OUTPUTS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
/// At most this many spare buffers of each kind, each at most [`SPARE_BYTES`].
const SPARE_KEPT: usize = 8;
const SPARE_BYTES: usize = 16 << 20;

/// An empty buffer with room for `bytes`: a spare one when there is one.
pub(crate) fn spare_take(pool: &Mutex<Vec<Vec<u8>>>, bytes: usize) -> Vec<u8> {
    let spare = pool.lock().ok().and_then(|mut v| v.pop());
    let mut data = spare.unwrap_or_default();
    data.clear();
    // Rounded up, so that a spare fits the next batch of about the same size.
    data.reserve(bytes.checked_next_power_of_two().unwrap_or(bytes));
    data
}

/// Keeps `data` for a later [`spare_take`], unless it is too big or enough are kept.
pub(crate) fn spare_put(pool: &Mutex<Vec<Vec<u8>>>, data: Vec<u8>) {
    if data.capacity() == 0 || data.capacity() > SPARE_BYTES {
        return;
    }
    if let Ok(mut spare) = pool.lock() {
        if spare.len() < SPARE_KEPT {
            spare.push(data);
        }
    }
}

impl Drop for BatchTask {
    fn drop(&mut self) {
        spare_put(&SPARE_INPUTS, std::mem::take(&mut self.data));
    }
}

/// A batch transcoded on the libuv thread pool. The input bytes are copied when the task is
/// created, so JavaScript may reuse or mutate its buffers while the task runs.
pub struct BatchTask {
    data: Vec<u8>,
    ranges: Vec<(usize, usize)>,
    concatenated: bool,
    shape: Option<Arc<Shape>>,
    opts: Options,
    layout: BatchLayout,
    threads: u32,
}

type TaskOutput = std::result::Result<BatchOutput, BatchError>;

#[napi]
impl Task for BatchTask {
    type Output = TaskOutput;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Self::Output> {
        // A panic here would abort the process (napi-rs calls `compute` from a bare
        // `extern "C"` callback), so it is caught and reported as an error instead.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let docs: Vec<&[u8]> = self.ranges.iter().map(|&(s, e)| &self.data[s..e]).collect();
            let starts: Vec<usize> = self.ranges.iter().map(|r| r.0).collect();
            let mut r = BatchOutput::default();
            r.out = spare_take(&SPARE_OUTPUTS, self.data.len() + self.data.len() / 4 + 64);
            let mut tc = Transcoder::new();
            run_batch(
                &docs,
                self.concatenated.then_some(&starts[..]),
                self.shape.as_deref(),
                &self.opts,
                self.layout,
                self.threads,
                &mut tc,
                &mut r,
            )
            .map(|()| r)
        }))
        .map_err(|_| {
            Error::new(
                Status::GenericFailure,
                "bson2json: internal panic in a worker task (a bug; please report it)".to_owned(),
            )
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        match output {
            Ok(mut r) => {
                let v = finish(&env, &mut r, self.layout).map_err(|f| f.throw(&env));
                spare_put(&SPARE_OUTPUTS, std::mem::take(&mut r.out));
                if let Err(e) = &v {
                    // The failure (an invalid regex) was thrown as a JS exception: taken back,
                    // it settles the promise. Left pending here, it escaped as an uncaught
                    // exception that ended the process.
                    if e.status == Status::PendingException {
                        if let Some(exc) = node_api::take_exception(&env) {
                            // As below: on wasm the error is resolved, and lib/wasi.js rejects.
                            #[cfg(target_family = "wasm")]
                            return Ok(exc.into_task_result(&env));
                            #[cfg(not(target_family = "wasm"))]
                            return Err(Error::from(exc.into_unknown(&env)));
                        }
                    }
                }
                Ok(v?.into_task_result(&env))
            }
            Err(e) => {
                let obj = Failure::from(e).into_value(&env)?;
                // napi-rs's wasm build keeps only the message of an error value (no `code`,
                // `offset`, `index`, `name`), so there the error is resolved and lib/wasi.js
                // rejects with it (no batch result is an `Error`).
                #[cfg(target_family = "wasm")]
                return Ok(obj.into_task_result(&env));
                #[cfg(not(target_family = "wasm"))]
                Err(Error::from(obj.into_unknown(&env)))
            }
        }
    }
}

/// Batch core on the libuv thread pool: same arguments as `transcodeBatch`, returns a Promise.
#[napi(
    js_name = "transcodeBatchAsync",
    catch_unwind,
    ts_args_type = "input: Uint8Array | Uint8Array[], layout: BatchLayout, packed: number, maxOutputBytes: number, threads: number, cursor: boolean, shaper?: Shaper",
    ts_return_type = "Promise<BatchValue>"
)]
pub fn transcode_batch_async(
    env: &Env,
    input: Unknown<'_>,
    layout: BatchLayout,
    packed: f64,
    max_output_bytes: f64,
    threads: u32,
    cursor: bool,
    shaper: Option<ClassInstance<'_, Shaper>>,
) -> Result<AsyncTask<BatchTask>> {
    let opts = options::decode(packed, max_output_bytes)?;
    // Shaping runs on the pool with the transcoding.
    let shape = shaper.as_ref().map(|s| s.shared_shape());
    if cursor {
        // Copied at once, then framed in the copy.
        let data = node_api::bytes_copied(env, Value::of_unknown(&input), &"cursor")?;
        let mut parts = CursorParts::default();
        if let Err(e) = cursor_parts(&data, &mut parts) {
            return Err(Failure::from(e).throw(env));
        }
        return Ok(AsyncTask::new(BatchTask {
            data,
            ranges: parts.docs,
            concatenated: true,
            shape,
            opts,
            layout,
            threads,
        }));
    }
    // The documents copied into one buffer (a spare one, see `SPARE_INPUTS`), each one's
    // range noted.
    let copy = |docs: &[&[u8]]| {
        let total = docs.iter().map(|d| d.len()).sum();
        let mut data = spare_take(&SPARE_INPUTS, total);
        let mut ranges = Vec::with_capacity(docs.len());
        for d in docs {
            ranges.push((data.len(), data.len() + d.len()));
            data.extend_from_slice(d);
        }
        (data, ranges)
    };
    let ((data, mut ranges), concatenated) = match docs_arg(env, &input)? {
        DocsArg::Concatenated(v) => {
            let copied = node_api::with_bytes(env, v, &"docs", |b| copy(&[b]));
            (copied.map_err(|_| not_docs(env))?, true)
        }
        DocsArg::List(values) => (
            node_api::with_each_bytes(env, &values, "docs", copy)?,
            false,
        ),
    };
    if concatenated {
        ranges.clear();
        if let Err(e) = split_concatenated(&data, &mut ranges) {
            return Err(Failure::from(e).throw(env));
        }
    }
    Ok(AsyncTask::new(BatchTask {
        data,
        ranges,
        concatenated,
        shape,
        opts,
        layout,
        threads,
    }))
}

/// CSV rows (mongoexport's cells, core `csv`) of a raw cursor reply's `cursor` document:
/// `{ id, ns, count, rows }`, `rows` a Buffer of one line per document of its batch, with the
/// cells of `fields` (dotted paths).
#[napi(
    js_name = "csvCursor",
    catch_unwind,
    ts_args_type = "cursor: Uint8Array, fields: string[]",
    ts_return_type = "{ id: bigint; ns: string | null; count: number; rows: Buffer }"
)]
pub fn csv_cursor<'env>(
    env: &'env Env,
    cursor: Unknown<'env>,
    fields: Vec<String>,
) -> Result<Unknown<'env>> {
    let fields = CsvFields::new(&fields);
    // The rows and `ns` are copies, made while the input is borrowed.
    let read = node_api::with_bytes(env, Value::of_unknown(&cursor), &"cursor", |bytes| {
        let mut parts = CursorParts::default();
        let mut rows = Vec::with_capacity(bytes.len() / 2);
        let outcome = cursor_parts(bytes, &mut parts).and_then(|()| {
            for &(s, e) in &parts.docs {
                csv::write_row(&bytes[s..e], &fields, &mut rows).map_err(|err| err.shifted(s))?;
            }
            Ok(())
        });
        let ns = parts.ns.map(|(s, e)| bytes[s..e].to_vec());
        outcome.map(|()| (parts, ns, rows))
    })?;
    let (parts, ns, rows) = match read {
        Ok(read) => read,
        Err(e) => return Err(Failure::from(e).throw(env)),
    };
    let obj = cursor_object(env, parts.id, ns, parts.docs.len())?;
    // large rows are handed over without a copy; small ones are cheaper copied
    let rows = if rows.len() > 64 * 1024 {
        node_api::buffer_owned(env, rows)?
    } else {
        node_api::buffer_copy(env, &rows)?
    };
    node_api::set_named(env, obj, c"rows", rows)?;
    Ok(obj.into_unknown(env))
}

/// The CSV header line of `fields` (the names as given, quoted as the rows' cells are).
#[napi(js_name = "csvHeader", catch_unwind, ts_return_type = "Buffer")]
pub fn csv_header<'env>(env: &'env Env, fields: Vec<String>) -> Result<Unknown<'env>> {
    let mut out = Vec::new();
    csv::write_header(&fields, &mut out);
    Ok(node_api::buffer_copy(env, &out)?.into_unknown(env))
}
