//! Rows (`toRow`, `toRows`, `toRowsAsync`): each document's top-level fields as typed values
//! (core `row`), handed to JavaScript packed (core `row::packed`): per call one `Uint32Array`
//! of slots, one `Uint8Array` of every byte value, and the call's strings back to back in texts
//! of at most [`TEXT_BYTES`], which lib/native/index.js (`unpackRows`) turns into the row
//! objects, cutting the texts with `slice`. Making each value and setting each property
//! through Node-API would cost a call into V8's runtime per field (ARCHITECTURE.md,
//! decisions 19 and 28).
//!
//! The result: `[words, bins | null, text0, text1, …]`. A string operand in `words` is its
//! UTF-16 end in the current text, with [`NEXT_TEXT`] set when it is the first of the next
//! text; a bytes operand its end in `bins`. lib/native/index.js reads the tags' numbers from
//! the binding's `RowTag` (core `row::packed::Tag`, declared once).

// Exports take one Rust argument per JS argument: the wrapper passes resolved options as numbers.
#![allow(clippy::too_many_arguments)]

use std::cell::RefCell;
use std::sync::Arc;

use bson2json_core::batch::BatchError;
use bson2json_core::concat::split_concatenated;
use bson2json_core::mongo::{cursor_parts, CursorParts};
use bson2json_core::project::Shape;
use bson2json_core::row::packed::{PackedRows, Tag};
use bson2json_core::row::{DateMode, RowFormat, RowOptions, RowWriter};
use bson2json_core::{Error as CoreError, RegexRecord};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::batch::{docs_arg, not_docs, spare_put, spare_take, with_docs, DocsArg, SPARE_INPUTS};
use crate::errors::Failure;
use crate::node_api::{self, Args, Value};
use crate::shape::Shaper;
use crate::state::{with_wide, KEEP_CAPACITY};
use crate::{options, regex, strings};

/// A string operand with this bit set is the first of the next text.
const NEXT_TEXT: u32 = 1 << 31;
/// A string operand with this bit set is the first of a text that starts with one unit of
/// padding (the WASI build only: see [`plan_texts`]). V8's strings are shorter than 2^30.
const PADDED: u32 = 1 << 30;
/// UTF-8 bytes per text at most: at most 128 KiB of V8 payload even as UTF-16, so each text is
/// a flat string in V8's regular heap, which `slice` shares.
const TEXT_BYTES: usize = 64 * 1024 - 32;
/// A string longer than this many UTF-8 bytes becomes a text of its own (a rope if very long).
const OWN_STRING_BYTES: usize = 16 * 1024;

/// A row call's scratch, kept per thread between calls (and a pool task's result).
#[derive(Default)]
pub struct Scratch {
    writer: RowWriter,
    packed: PackedRows,
    /// A shaped (projected, redacted) document and the shaping's own scratch.
    shaped: Vec<u8>,
    shaping: Vec<u8>,
    /// The regexes the general format's JSON met, with their document's index.
    regexes: Vec<(usize, RegexRecord)>,
    /// A pool task's texts, planned on its thread ([`plan_texts`]), and their UTF-16.
    plans: Vec<TextPlan>,
    wide: Vec<u16>,
}

impl Scratch {
    fn capacity(&self) -> usize {
        self.packed.words.capacity() * 4
            + self.packed.text.capacity()
            + self.packed.bins.capacity()
            + self.shaped.capacity()
            + self.shaping.capacity()
    }
}

thread_local! {
    /// Boxed: taking it out and putting it back moves a pointer, not the whole scratch.
    static SCRATCH: RefCell<Option<Box<Scratch>>> = const { RefCell::new(None) };
}

/// The thread's scratch, emptied, taken out of its slot (a call that re-enters from JavaScript
/// while this one builds its result gets a fresh one).
fn take_scratch() -> Box<Scratch> {
    let mut s = SCRATCH.with(|s| s.borrow_mut().take()).unwrap_or_default();
    s.packed.clear();
    s.regexes.clear();
    s
}

/// Gives the scratch back for the next call, unless it grew large.
fn keep_scratch(s: Box<Scratch>) {
    if s.capacity() <= KEEP_CAPACITY {
        SCRATCH.with(|slot| *slot.borrow_mut() = Some(s));
    }
}

/// The row options of the resolved options and `mode` (`format | dateMode << 2`).
pub(crate) fn row_options(json: bson2json_core::Options, mode: f64) -> Option<RowOptions> {
    if !(0.0..16.0).contains(&mode) || mode.fract() != 0.0 {
        return None;
    }
    let mode = mode as u32;
    Some(RowOptions {
        format: RowFormat::from_number(mode & 3)?,
        date_mode: DateMode::from_number(mode >> 2)?,
        json,
    })
}

/// Why rows failed: a document's error (with its index, in a batch), or the framing's.
pub enum RowError {
    Transcode(CoreError),
    Batch(BatchError),
}

impl From<CoreError> for RowError {
    fn from(e: CoreError) -> Self {
        RowError::Transcode(e)
    }
}

impl From<BatchError> for RowError {
    fn from(e: BatchError) -> Self {
        RowError::Batch(e)
    }
}

impl From<RowError> for Failure {
    fn from(e: RowError) -> Self {
        match e {
            RowError::Transcode(e) => Failure::from(e),
            RowError::Batch(b) => Failure::from(b),
        }
    }
}

/// Appends the rows of `docs` (each with its start in the input, for errors and regexes),
/// each shaped first when there is a `shape`. An error is the first document's that fails:
/// its index (unless `single`), and its offset in the input as given.
fn write_rows<'a>(
    s: &mut Scratch,
    docs: impl Iterator<Item = (usize, &'a [u8])>,
    shape: Option<&Shape>,
    opts: &RowOptions,
    single: bool,
) -> std::result::Result<(), RowError> {
    for (index, (start, doc)) in docs.enumerate() {
        write_row(s, index, start, doc, shape, opts, single)?;
    }
    Ok(())
}

/// Appends the row of document number `index` ([`write_rows`]).
fn write_row(
    s: &mut Scratch,
    index: usize,
    start: usize,
    doc: &[u8],
    shape: Option<&Shape>,
    opts: &RowOptions,
    single: bool,
) -> std::result::Result<(), RowError> {
    let r = match shape {
        None => s.packed.row(&mut s.writer, doc, opts),
        Some(shape) => {
            s.shaped.clear();
            shape
                .document(doc, &mut s.shaped, &mut s.shaping)
                .and_then(|()| s.packed.row(&mut s.writer, &s.shaped, opts))
                .map_err(|e| {
                    let at = shape.source_offset(doc, e.offset());
                    CoreError::custom(e.kind(), at, e.detail())
                })
        }
    };
    if let Err(error) = r {
        return Err(if single {
            RowError::Transcode(error.shifted(start))
        } else {
            RowError::Batch(BatchError {
                index,
                doc_offset: start,
                error,
            })
        });
    }
    s.regexes.extend(s.writer.regexes().iter().map(|r| {
        let mut r = r.clone();
        r.offset += start;
        (index, r)
    }));
    Ok(())
}

/// The form of a call's result: one row's ([`row_value`], with the caller's scratch for the
/// words if it gave one), or a pool task's.
#[derive(Clone, Copy)]
enum Form {
    Row(Option<Value>),
    /// [`packed_value`]'s, its texts planned already (a pool task's).
    Planned,
}

/// The JS result of a finished call: the regex check, then the packed rows as JS values. Both
/// may run JavaScript: the input must be dropped.
fn finish(
    env: &Env,
    s: &mut Scratch,
    single: bool,
    form: Form,
) -> std::result::Result<Value, Failure> {
    check_regexes(env, s, single)?;
    match form {
        Form::Planned => {
            let texts = make_texts(env, &mut s.packed, &s.wide, &s.plans)?;
            let words = words_value(env, &s.packed.words)?;
            Ok(result_array(env, words, &s.packed.bins, texts)?)
        }
        Form::Row(scratch) => Ok(with_wide(|wide| {
            row_value(env, &mut s.packed, scratch, wide)
        })?),
    }
}

/// The regex check of the regexes the call met (runs JavaScript: the input must be dropped).
fn check_regexes(env: &Env, s: &mut Scratch, single: bool) -> std::result::Result<(), Failure> {
    if !s.regexes.is_empty() {
        let found = std::mem::take(&mut s.regexes);
        regex::check(
            env,
            found.into_iter().map(|(i, r)| ((!single).then_some(i), r)),
        )?;
    }
    Ok(())
}

/// `[words, bins | null, ...texts]` of `p` (its string operands set to their UTF-16 ends).
pub(crate) fn packed_value(env: &Env, p: &mut PackedRows, wide: &mut Vec<u16>) -> Result<Value> {
    let texts = texts_now(env, p, wide)?;
    let words = words_value(env, &p.words)?;
    result_array(env, words, &p.bins, texts)
}

/// The words as a `Uint32Array`; in the WASI build a `Buffer` of their bytes, which
/// lib/native copies at once (there a typed array made here is a view of wasm memory).
fn words_value(env: &Env, words: &[u32]) -> Result<Value> {
    #[cfg(target_family = "wasm")]
    {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        node_api::buffer_copy(env, &bytes)
    }
    #[cfg(not(target_family = "wasm"))]
    node_api::uint32_array(env, words)
}

/// The byte values as a plain `Uint8Array`; in the WASI build a `Buffer`, copied at once by
/// lib/native (as [`words_value`]).
fn bytes_value(env: &Env, bins: &[u8]) -> Result<Value> {
    #[cfg(target_family = "wasm")]
    {
        node_api::buffer_copy(env, bins)
    }
    #[cfg(not(target_family = "wasm"))]
    node_api::uint8_array(env, bins)
}

/// `[words, bins | null, ...texts]`.
fn result_array(env: &Env, words: Value, bins: &[u8], texts: Vec<Value>) -> Result<Value> {
    let result = node_api::array(env, 2 + texts.len())?;
    node_api::set_element(env, result, 0, words)?;
    let bins = if bins.is_empty() {
        node_api::null(env)?
    } else {
        bytes_value(env, bins)?
    };
    node_api::set_element(env, result, 1, bins)?;
    for (i, t) in texts.into_iter().enumerate() {
        node_api::set_element(env, result, 2 + i as u32, t)?;
    }
    Ok(result)
}

/// One row's packed form, its words written into `scratch` (a `Uint8Array`: their count, then
/// the words) when they fit there: then the one text itself (no bytes, one text), `undefined`
/// (no bytes, no text), or `[null, bins | null, ...texts]`; when they do not fit,
/// [`packed_value`]'s array. A new `ArrayBuffer` per call costs more than a small row's walk.
/// The scratch's memory is looked up at the copy, after every step that can run JavaScript.
fn row_value(
    env: &Env,
    p: &mut PackedRows,
    scratch: Option<Value>,
    wide: &mut Vec<u16>,
) -> Result<Value> {
    let mut texts = texts_now(env, p, wide)?;
    let in_scratch = scratch.is_some_and(|target| node_api::copy_words_into(env, target, &p.words));
    if !in_scratch {
        let words = words_value(env, &p.words)?;
        return result_array(env, words, &p.bins, texts);
    }
    if p.bins.is_empty() && texts.len() <= 1 {
        return match texts.pop() {
            Some(t) => Ok(t),
            None => node_api::undefined(env),
        };
    }
    let none = node_api::null(env)?;
    result_array(env, none, &p.bins, texts)
}

/// One text of a call's result, planned ([`plan_texts`]) before it is made ([`make_texts`]).
pub enum TextPlan {
    /// `text[from..to]` of the packed rows, all ASCII: a one-byte string.
    Latin1(usize, usize),
    /// `wide[from..to]`, converted already: a two-byte string.
    Utf16(usize, usize),
    /// String number `i` alone, `text[from..to]`, longer than [`OWN_STRING_BYTES`]: made by
    /// `strings::from_utf8` (a rope if very long, which runs JavaScript), its operand set then.
    Own(usize, usize, usize),
}

/// Plans the texts of `p`'s strings into `plans`, their UTF-16 in `wide`, and sets each
/// string's operand to its UTF-16 end in its text (but for [`TextPlan::Own`] strings): the
/// work that needs no JavaScript, which a pool task does on its thread. `continued`: texts of
/// the call were made before these (so the first of these is a next text too).
fn plan_texts(p: &mut PackedRows, wide: &mut Vec<u16>, plans: &mut Vec<TextPlan>, continued: bool) {
    let PackedRows {
        words,
        text,
        strings,
        ..
    } = p;
    plans.clear();
    let mut used = 0usize;
    // The strings `first..last` go into one text, which starts at byte `from`.
    let mut flush = |first: usize, last: usize, from: usize| {
        if first == last {
            return;
        }
        if continued || !plans.is_empty() {
            words[strings[first].0] |= NEXT_TEXT;
        }
        let to = strings[last - 1].1;
        let chunk = &text[from..to];
        // emnapi (the WASI build) cuts a one-byte string at its first NUL, whatever its
        // length: a text holding one (a shape's keys, a string value) is made as UTF-16 there;
        // and it drops a UTF-16 text's leading U+FEFF (a byte order mark to its decoder): such
        // a text starts with one unit of padding there, which the first string's
        // [`PADDED`] bit tells lib/native to skip
        let wasm = cfg!(target_family = "wasm");
        let nul_cut = wasm && chunk.contains(&0);
        let padded = wasm && chunk.starts_with(&[0xEF, 0xBB, 0xBF]);
        if last - first == 1 && chunk.len() > OWN_STRING_BYTES && !nul_cut && !padded {
            plans.push(TextPlan::Own(first, from, to));
        } else if !nul_cut && bson2json_core::is_ascii(chunk) {
            for &(w, e) in &strings[first..last] {
                words[w] |= (e - from) as u32;
            }
            plans.push(TextPlan::Latin1(from, to));
        } else {
            let need = used + 1 + chunk.len() + bson2json_core::UTF16_SLACK;
            if wide.len() < need {
                wide.resize(need, 0);
            }
            let (mut pos, mut at) = (used, from);
            if padded {
                wide[pos] = u16::from(b' ');
                pos += 1;
                words[strings[first].0] |= PADDED;
            }
            for &(w, e) in &strings[first..last] {
                // `pos` never passes the string's byte offset in the chunk, so `wide[pos..]`
                // holds the string plus the converter's slack; every string is well-formed.
                pos += bson2json_core::to_utf16(&text[at..e], &mut wide[pos..]);
                words[w] |= (pos - used) as u32;
                at = e;
            }
            plans.push(TextPlan::Utf16(used, pos));
            used = pos;
        }
    };
    let (mut first, mut from) = (0usize, 0usize);
    for i in 0..strings.len() {
        let start = if i == 0 { 0 } else { strings[i - 1].1 };
        let len = strings[i].1 - start;
        if len > OWN_STRING_BYTES {
            // A long string: a text of its own, after the strings before it.
            flush(first, i, from);
            flush(i, i + 1, start);
            (first, from) = (i + 1, strings[i].1);
        } else if strings[i].1 - from > TEXT_BYTES {
            flush(first, i, from);
            (first, from) = (i, start);
        }
    }
    flush(first, strings.len(), from);
}

/// The JS strings of planned texts (flat strings from ready bytes; a long one may be a rope).
fn make_texts(
    env: &Env,
    p: &mut PackedRows,
    wide: &[u16],
    plans: &[TextPlan],
) -> Result<Vec<Value>> {
    let mut texts = Vec::with_capacity(plans.len());
    // a long string's own scratch: `wide` holds the planned texts still to make
    let mut own = Vec::new();
    for plan in plans {
        texts.push(match *plan {
            TextPlan::Latin1(a, b) => strings::latin1(env, &p.text[a..b])?,
            TextPlan::Utf16(a, b) => strings::utf16(env, &wide[a..b])?,
            TextPlan::Own(i, a, b) => {
                let (v, n) = strings::from_utf8(env, &p.text[a..b], &mut own)?;
                p.words[p.strings[i].0] |= n as u32;
                v
            }
        });
    }
    Ok(texts)
}

/// [`plan_texts`] then [`make_texts`], on this thread.
fn texts_now(env: &Env, p: &mut PackedRows, wide: &mut Vec<u16>) -> Result<Vec<Value>> {
    let mut plans = Vec::new();
    plan_texts(p, wide, &mut plans, false);
    make_texts(env, p, wide, &plans)
}

/// `transcodeRow(bson, packed, maxOutputBytes, rowMode, scratch[, shaper])`: one document's
/// row, packed ([`row_value`]; `scratch` a `Uint8Array` or `undefined`), as a plain Node-API
/// callback (the per-document path skips napi-rs's glue, as `transcode` does).
struct TranscodeRow;

impl node_api::FastFn for TranscodeRow {
    fn call(env: &Env, args: &Args) -> Result<Value> {
        let packed = node_api::number_value(env, args.argv[1]).ok_or_else(options::bad_options)?;
        let max_out = node_api::number_value(env, args.argv[2]).ok_or_else(options::bad_options)?;
        let mode = node_api::number_value(env, args.argv[3]).ok_or_else(options::bad_options)?;
        let json = options::decode(packed, max_out)?;
        let opts = row_options(json, mode).ok_or_else(options::bad_options)?;
        let scratch = args.given(env, 4);
        let shaper = match args.given(env, 5) {
            Some(v) => Some(node_api::class_instance::<Shaper>(env, v, "shaper")?),
            None => None,
        };
        let mut s = take_scratch();
        let shape = shaper.as_ref().map(|x| x.compiled());
        // The bytes are read by the row writer (and the shaping) only, in a closure that
        // cannot run JavaScript; the regex check and the result come after.
        let r = node_api::with_bytes(env, args.argv[0], &"bson", |bytes| {
            write_rows(
                &mut s,
                std::iter::once((0, bytes)),
                shape.as_deref(),
                &opts,
                true,
            )
        })
        .map_err(Failure::from)
        .and_then(|r| r.map_err(Failure::from));
        let v = r.and_then(|()| finish(env, &mut s, true, Form::Row(scratch)));
        keep_scratch(s);
        v.map_err(|f| f.throw(env))
    }
}

/// Registers `transcodeRow` and the tags' numbers (`RowTag`) on the module's exports.
pub(crate) fn register(env: &Env, exports: &mut Object<'_>) -> Result<()> {
    node_api::export_fast::<TranscodeRow>(env, exports, c"transcodeRow")?;
    let tags = node_api::object(env)?;
    for (tag, name) in Tag::ALL {
        let n = node_api::number(env, f64::from(tag as u32))?;
        let key = node_api::string_utf8(env, name.as_bytes())?;
        node_api::set_property(env, tags, key, n)?;
    }
    exports.set_named_property("RowTag", tags.into_unknown(env))
}

/// The rows of many documents, packed: `input` is an array of `Uint8Array`s, concatenated
/// documents, or (`cursor`) a raw reply's `cursor` document.
#[napi(
    js_name = "transcodeRows",
    catch_unwind,
    ts_args_type = "input: Uint8Array | Uint8Array[], packed: number, maxOutputBytes: number, rowMode: number, cursor: boolean, shaper?: Shaper",
    ts_return_type = "PackedRows"
)]
pub fn transcode_rows<'env>(
    env: &'env Env,
    input: Unknown<'env>,
    packed: f64,
    max_output_bytes: f64,
    row_mode: f64,
    cursor: bool,
    shaper: Option<ClassInstance<'env, Shaper>>,
) -> Result<Unknown<'env>> {
    let json = options::decode(packed, max_output_bytes)?;
    let opts = row_options(json, row_mode).ok_or_else(options::bad_options)?;
    let shape = shaper.as_ref().map(|s| s.compiled());
    // Every element of an array is read (which can run JavaScript) before any byte is borrowed.
    let docs = if cursor {
        None
    } else {
        Some(docs_arg(env, &input)?)
    };
    let mut s = take_scratch();
    let mut made = MadeTexts::default();
    let r = rows_borrowed(
        env,
        Value::of_unknown(&input),
        docs.as_ref(),
        shape.as_deref(),
        &opts,
        &mut s,
        &mut made,
    )
    .and_then(|()| {
        // JavaScript may run from here on: the input is no longer borrowed.
        check_regexes(env, &mut s, false)?;
        let texts = made.finish(env, &mut s.packed)?;
        let words = words_value(env, &s.packed.words)?;
        Ok(result_array(env, words, &s.packed.bins, texts)?)
    });
    keep_scratch(s);
    Ok(r.map_err(|f| f.throw(env))?.into_unknown(env))
}

/// A batch's packed text is made into JS strings once it holds this many bytes (about one
/// text), while it is still in the cache, and emptied ([`MadeTexts::flush`]): a batch of long
/// strings would otherwise copy every one into a text larger than the cache and V8 copy it out
/// from there.
const FLUSH_TEXT_BYTES: usize = TEXT_BYTES;

/// The texts of a [`transcode_rows`] call made so far, while the input is borrowed: flat
/// strings (making one runs no JavaScript). A long string that would be a rope (which runs a
/// JS function) is kept as UTF-8 and made once nothing is borrowed ([`MadeTexts::finish`]).
#[derive(Default)]
struct MadeTexts {
    texts: Vec<Value>,
    /// Each long string kept for later: its text's index, its operand's index in the words,
    /// and where its UTF-8 is: `kept[k][a..b]`.
    later: Vec<(usize, usize, usize, usize, usize)>,
    /// Packed texts that hold such strings, taken whole (not copied).
    kept: Vec<Vec<u8>>,
    plans: Vec<TextPlan>,
    /// A long non-ASCII string's UTF-16 scratch.
    own: Vec<u16>,
}

impl MadeTexts {
    /// Makes the texts of `p`'s strings so far and empties its text: runs no JavaScript.
    fn flush(&mut self, env: &Env, p: &mut PackedRows, wide: &mut Vec<u16>) -> Result<()> {
        if p.strings.is_empty() {
            return Ok(());
        }
        plan_texts(p, wide, &mut self.plans, !self.texts.is_empty());
        let (k, later) = (self.kept.len(), self.later.len());
        for plan in &self.plans {
            let v = match *plan {
                TextPlan::Latin1(a, b) => strings::latin1(env, &p.text[a..b])?,
                TextPlan::Utf16(a, b) => strings::utf16(env, &wide[a..b])?,
                TextPlan::Own(i, a, b) => {
                    match strings::from_utf8_flat(env, &p.text[a..b], &mut self.own)? {
                        Some((v, n)) => {
                            p.words[p.strings[i].0] |= n as u32;
                            v
                        }
                        None => {
                            let at = (self.texts.len(), p.strings[i].0);
                            self.later.push((at.0, at.1, k, a, b));
                            node_api::undefined(env)?
                        }
                    }
                }
            };
            self.texts.push(v);
        }
        if self.later.len() > later {
            self.kept.push(std::mem::take(&mut p.text));
        } else {
            p.text.clear();
        }
        p.strings.clear();
        Ok(())
    }

    /// Every text: the long strings kept for later made now (this may run JavaScript).
    fn finish(mut self, env: &Env, p: &mut PackedRows) -> Result<Vec<Value>> {
        for (t, w, k, a, b) in std::mem::take(&mut self.later) {
            let (v, n) = strings::from_utf8(env, &self.kept[k][a..b], &mut self.own)?;
            p.words[w] |= n as u32;
            self.texts[t] = v;
        }
        Ok(self.texts)
    }
}

/// An argument's name in a `TypeError`: `name`, or `name[i]`.
struct ArgName(&'static str, Option<usize>);

impl std::fmt::Display for ArgName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(i) => write!(f, "{}[{i}]", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// Writes the rows of the input (a raw reply's `cursor` document when `docs` is `None`) into
/// `s`, its texts made into `made` as they fill ([`MadeTexts::flush`]) and at the end.
fn rows_borrowed(
    env: &Env,
    input: Value,
    docs: Option<&DocsArg>,
    shape: Option<&Shape>,
    opts: &RowOptions,
    s: &mut Scratch,
    made: &mut MadeTexts,
) -> std::result::Result<(), Failure> {
    let mut wide = std::mem::take(&mut s.wide);
    let mut each = |s: &mut Scratch, index: usize, start: usize, doc: &[u8]| {
        write_row(s, index, start, doc, shape, opts, false)?;
        if s.packed.text.len() >= FLUSH_TEXT_BYTES {
            made.flush(env, &mut s.packed, &mut wide)?;
        }
        Ok::<(), Failure>(())
    };
    // The argument's bytes: the raw reply, the concatenated documents, or each document.
    let (values, name) = match docs {
        None => (std::slice::from_ref(&input), "cursor"),
        Some(DocsArg::Concatenated(v)) => (std::slice::from_ref(v), "docs"),
        Some(DocsArg::List(values)) => (&values[..], "docs"),
    };
    let listed = matches!(docs, Some(DocsArg::List(_)));
    let mut owned = Vec::with_capacity(values.len());
    for (i, &v) in values.iter().enumerate() {
        let named = ArgName(name, listed.then_some(i));
        #[allow(unsafe_code)]
        // SAFETY: the bytes are dropped when this function returns; until then nothing runs
        // JavaScript: the walk makes no JS value, and `MadeTexts::flush` only flat strings (no
        // property is set, no rope made). The regex check and the result come after.
        let bytes = unsafe { node_api::bytes_of(env, v, &named) };
        owned.push(match docs {
            Some(DocsArg::Concatenated(_)) => bytes.map_err(|_| not_docs(env))?,
            _ => bytes?,
        });
    }
    let r = match docs {
        None => {
            let bytes = &owned[0];
            let mut parts = CursorParts::default();
            cursor_parts(bytes, &mut parts)?;
            parts
                .docs
                .iter()
                .enumerate()
                .try_for_each(|(i, &(a, e))| each(s, i, a, &bytes[a..e]))
        }
        Some(DocsArg::List(_)) => owned
            .iter()
            .enumerate()
            .try_for_each(|(i, d)| each(s, i, 0, d)),
        Some(DocsArg::Concatenated(_)) => {
            let bytes = &owned[0];
            let mut ranges = Vec::new();
            split_concatenated(bytes, &mut ranges)?;
            ranges
                .iter()
                .enumerate()
                .try_for_each(|(i, &(a, e))| each(s, i, a, &bytes[a..e]))
        }
    };
    drop(owned);
    let r = r.and_then(|()| Ok(made.flush(env, &mut s.packed, &mut wide)?));
    s.wide = wide;
    r
}

/// What a [`RowsTask`] holds: documents copied back to back, or the caller's one buffer of
/// concatenated documents or of a raw reply's `cursor` document, split on the pool (a framing
/// error rejects the promise).
enum Input {
    Docs(Vec<(usize, usize)>),
    Concatenated,
    Cursor,
}

/// Rows made on the libuv thread pool from a copy of the input.
pub struct RowsTask {
    data: Vec<u8>,
    input: Input,
    shape: Option<Arc<Shape>>,
    opts: RowOptions,
}

type RowsOutput = std::result::Result<Scratch, RowError>;

/// What a [`RowsTask`] resolves with: its rows, planned on the pool and made into JS values
/// only when JavaScript asks ([`PendingRows::take`]), so that the tasks of a large batch,
/// which the pool may finish together, each make theirs in a turn of the event loop of their
/// own (lib/native/index.js). A failure is thrown by `take` (so it reaches JavaScript the same
/// way in the native and the WASI build).
#[napi]
pub struct PendingRows {
    outcome: Option<RowsOutput>,
}

#[napi]
impl PendingRows {
    /// The rows, packed (`[words, bins | null, ...texts]`), or the failure thrown; once.
    #[napi(ts_return_type = "PackedRows")]
    pub fn take<'env>(&mut self, env: &'env Env) -> Result<Unknown<'env>> {
        let outcome = self.outcome.take().ok_or_else(|| {
            Error::new(
                Status::GenericFailure,
                "bson2json: the rows were taken already".to_owned(),
            )
        })?;
        let v = outcome
            .map_err(Failure::from)
            .and_then(|mut s| finish(env, &mut s, false, Form::Planned));
        Ok(v.map_err(|f| f.throw(env))?.into_unknown(env))
    }
}

impl RowsTask {
    fn rows(&self) -> RowsOutput {
        let mut s = Scratch::default();
        let data = &self.data[..];
        let mut ranges = Vec::new();
        let (ranges, concatenated) = match &self.input {
            Input::Docs(r) => (r, false),
            Input::Concatenated => {
                split_concatenated(data, &mut ranges)?;
                (&ranges, true)
            }
            Input::Cursor => {
                let mut parts = CursorParts::default();
                cursor_parts(data, &mut parts)?;
                ranges = parts.docs;
                (&ranges, true)
            }
        };
        let docs = ranges
            .iter()
            .map(|&(a, e)| (if concatenated { a } else { 0 }, &data[a..e]));
        write_rows(&mut s, docs, self.shape.as_deref(), &self.opts, false)?;
        // The texts' UTF-16 made here too: the JS thread only makes the strings.
        let Scratch {
            packed,
            plans,
            wide,
            ..
        } = &mut s;
        plan_texts(packed, wide, plans, false);
        Ok(s)
    }
}

impl Drop for RowsTask {
    fn drop(&mut self) {
        // the input copy, for the next task (a fresh multi-megabyte buffer faults its pages in)
        spare_put(&SPARE_INPUTS, std::mem::take(&mut self.data));
    }
}

#[napi]
impl Task for RowsTask {
    type Output = RowsOutput;
    type JsValue = PendingRows;

    fn compute(&mut self) -> Result<Self::Output> {
        // A panic here would abort the process (napi-rs calls `compute` from a bare
        // `extern "C"` callback), so it is caught and reported as an error instead.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.rows())).map_err(|_| {
            Error::new(
                Status::GenericFailure,
                "bson2json: internal panic in a worker task (a bug; please report it)".to_owned(),
            )
        })
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(PendingRows {
            outcome: Some(output),
        })
    }
}

/// A [`RowsTask`] not yet on the pool ([`prepare_rows`], [`run_rows`]).
#[napi]
pub struct PreparedRows {
    task: Option<RowsTask>,
}

/// [`transcode_rows`] as a libuv pool task, its input copied now, to run later ([`run_rows`]): a batch's
/// tasks are all copied before `toRowsAsync` returns, and run a few at a time, so that the
/// pool does not take every core from the event loop.
#[napi(
    js_name = "prepareRows",
    catch_unwind,
    ts_args_type = "input: Uint8Array | Uint8Array[], packed: number, maxOutputBytes: number, rowMode: number, cursor: boolean, shaper?: Shaper"
)]
pub fn prepare_rows(
    env: &Env,
    input: Unknown<'_>,
    packed: f64,
    max_output_bytes: f64,
    row_mode: f64,
    cursor: bool,
    shaper: Option<ClassInstance<'_, Shaper>>,
) -> Result<PreparedRows> {
    // the task: the input copied, the options and the shape its own
    let json = options::decode(packed, max_output_bytes)?;
    let opts = row_options(json, row_mode).ok_or_else(options::bad_options)?;
    let shape = shaper.as_ref().map(|s| s.shared_shape());
    let value = Value::of_unknown(&input);
    let (data, input) = if cursor {
        (
            node_api::bytes_copied(env, value, &"cursor")?,
            Input::Cursor,
        )
    } else if node_api::is_array(env, value)? {
        let docs = docs_arg(env, &input)?;
        let copied = with_docs(env, &docs, |docs, _| {
            let mut data = spare_take(&SPARE_INPUTS, docs.iter().map(|d| d.len()).sum());
            let mut ranges = Vec::with_capacity(docs.len());
            for d in docs {
                ranges.push((data.len(), data.len() + d.len()));
                data.extend_from_slice(d);
            }
            (data, ranges)
        })
        .map_err(|f| f.throw(env))?;
        (copied.0, Input::Docs(copied.1))
    } else {
        let data = node_api::with_bytes(env, value, &"docs", |b| {
            let mut data = spare_take(&SPARE_INPUTS, b.len());
            data.extend_from_slice(b);
            data
        })
        .map_err(|_| not_docs(env))?;
        (data, Input::Concatenated)
    };
    Ok(PreparedRows {
        task: Some(RowsTask {
            data,
            input,
            shape,
            opts,
        }),
    })
}

/// Runs a [`PreparedRows`] on the pool; once.
#[napi(
    js_name = "runRows",
    catch_unwind,
    ts_return_type = "Promise<PendingRows>"
)]
pub fn run_rows(prepared: &mut PreparedRows) -> Result<AsyncTask<RowsTask>> {
    let task = prepared.task.take().ok_or_else(|| {
        Error::new(
            Status::GenericFailure,
            "bson2json: the rows were run already".to_owned(),
        )
    })?;
    Ok(AsyncTask::new(task))
}
