//! The WASI build's boundary: input and output in two thread-local regions of wasm memory
//! that JavaScript sees as `Buffer` views (`lib/wasi.js`). Native builds export the same
//! functions (so both builds generate the same `binding.d.ts`), but `stagedInput` and
//! `stagedOutput` throw there and nothing calls them.
//!
//! Through emnapi (the Node-API of the WASI build) the regular exports pay for what a native
//! addon gets free: `napi_get_typedarray_info` copies the input's whole `ArrayBuffer` (an 8 KiB
//! pool slab for a 300-byte `Buffer`) into wasm memory on every call, and
//! `napi_create_string_*` builds the result one `String.fromCharCode` at a time. Here
//! JavaScript copies the input into the staged input region with one `TypedArray#set`, the call returns the output's length, and JavaScript decodes the staged
//! output with `Buffer#utf8Slice` (V8's own UTF-8 decoder) or copies it into a `Buffer`.
//!
//! The views stay valid while their region is not reallocated (a shared wasm memory is never
//! detached when it grows; the old `SharedArrayBuffer` keeps aliasing its first bytes). A call
//! whose output region moved (it grew, was shrunk, or a re-entrant call replaced it) returns
//! `-1 - length` instead of `length`, and the wrapper fetches a new view with
//! `stagedOutput()` before reading.

use std::cell::RefCell;

use bson2json_core::batch::BatchOutput;
use bson2json_core::concat::{split_concatenated, transcode_concatenated};
use bson2json_core::Options;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::{type_error, Failure};
use crate::node_api::{self, Value};
use crate::state::{keeps_wide, KEEP_CAPACITY, STATE};
use crate::{batch, options, regex, strings};
use batch::BatchLayout;

/// The smallest staged input region (most single documents fit; it is allocated once).
const MIN_INPUT: usize = 64 * 1024;

#[derive(Default)]
struct Staged {
    input: Vec<u8>,
    output: Vec<u8>,
    /// Start and capacity of the output region the last `stagedOutput()` view covers.
    view: (usize, usize),
    /// The calls' arguments and result ([`StagedArg`]), written and read by JavaScript through
    /// a `Float64Array` view (`stagedArgs()`): the calls take no JS arguments and return none,
    /// so they make no Node-API call at all on success (each one costs a JS function that
    /// builds a `DataView` of the wasm memory in emnapi, a large share of a small document's cost).
    args: Box<[f64; STAGED_ARGS as usize]>,
}

/// Doubles in the arguments region (`stagedArgs()`).
#[napi]
pub const STAGED_ARGS: u32 = 8;

/// The slots of the arguments region: what the staged calls read (the input's length, the
/// options' pair of options.rs, then each call's own) and write (the output's encoding and
/// length). Exported, so lib/native/wasi.js takes the numbers from here.
#[napi]
#[derive(Clone, Copy)]
pub enum StagedArg {
    /// The input's length: the first bytes of the staged input region.
    Length = 0,
    /// The options' `packed`.
    Packed = 1,
    /// The options' `maxOutputBytes`.
    MaxOutputBytes = 2,
    /// `transcodeStaged`: 1 for a string result, 0 for bytes; `transcodeBatchStaged`: the
    /// `BatchLayout`.
    Kind = 3,
    /// `transcodeBatchStaged`: the threads.
    Threads = 4,
    /// Written by the call: the output's [`StagedEncoding`].
    Encoding = 6,
    /// Written by the call: the output's length, or `-1 - length` when the output region moved
    /// (see the module docs).
    Result = 7,
}

/// The staged output's encoding ([`StagedArg::Encoding`]): UTF-8 (a `Buffer` result, or a
/// list), ASCII (`latin1Slice`: no decoding), UTF-16LE (`ucs2Slice`: V8 copies it; V8's UTF-8
/// decoder is several times slower as soon as one character is not ASCII, see strings.rs).
#[napi]
#[derive(Clone, Copy)]
pub enum StagedEncoding {
    Utf8 = 0,
    Ascii = 1,
    Utf16 = 2,
}

/// Re-encodes a text result in place for the cheapest string creation; returns its encoding.
fn encode_text(out: &mut Vec<u8>) -> StagedEncoding {
    if bson2json_core::is_ascii(out) {
        return StagedEncoding::Ascii;
    }
    let mut wide = STATE.with(|s| std::mem::take(&mut s.borrow_mut().wide));
    let dst = strings::utf16_scratch(&mut wide, out.len());
    // `out` is transcoder output, always well-formed UTF-8 (the converter does not validate).
    let n = bson2json_core::to_utf16(out, dst);
    out.clear();
    out.resize(2 * n, 0);
    for (b, u) in out.chunks_exact_mut(2).zip(&wide[..n]) {
        b.copy_from_slice(&u.to_le_bytes());
    }
    if keeps_wide(&wide) {
        STATE.with(|s| s.borrow_mut().wide = wide);
    }
    StagedEncoding::Utf16
}

thread_local! {
    static STAGED: RefCell<Staged> = RefCell::new(Staged::default());
}

/// A `Buffer` view of `len` bytes of wasm memory at `ptr` (emnapi makes
/// `napi_create_external_buffer` a view of its memory, not a copy).
fn view(env: &Env, ptr: *mut u8, len: usize) -> Result<Value> {
    node_api::wasm_view(env, ptr, len)
}

/// The staged input region, grown to at least `min_bytes`; a `Buffer` view of all of it.
#[napi(js_name = "stagedInput", catch_unwind, ts_return_type = "Buffer")]
pub fn staged_input(env: &Env, min_bytes: u32) -> Result<Unknown<'_>> {
    let (ptr, len) = STAGED.with(|s| {
        let mut s = s.borrow_mut();
        let need = (min_bytes as usize).max(MIN_INPUT);
        if s.input.len() < need || (s.input.len() > KEEP_CAPACITY && need <= KEEP_CAPACITY) {
            s.input = vec![0; need.next_power_of_two()];
        }
        (s.input.as_mut_ptr(), s.input.len())
    });
    Ok(view(env, ptr, len)?.into_unknown(env))
}

/// A `Buffer` view of the arguments region (64 bytes, 8-aligned: `new Float64Array(v.buffer,
/// v.byteOffset, 8)`).
#[napi(js_name = "stagedArgs", catch_unwind, ts_return_type = "Buffer")]
pub fn staged_args(env: &Env) -> Result<Unknown<'_>> {
    let ptr = STAGED.with(|s| s.borrow_mut().args.as_mut_ptr().cast::<u8>());
    Ok(view(env, ptr, STAGED_ARGS as usize * 8)?.into_unknown(env))
}

/// A `Buffer` view of the staged output region (its whole capacity; the calls return how
/// many bytes of it hold the result).
#[napi(js_name = "stagedOutput", catch_unwind, ts_return_type = "Buffer")]
pub fn staged_output(env: &Env) -> Result<Unknown<'_>> {
    let (ptr, cap) = STAGED.with(|s| {
        let mut s = s.borrow_mut();
        if s.output.capacity() == 0 {
            s.output.reserve(MIN_INPUT);
        }
        let v = (s.output.as_mut_ptr(), s.output.capacity());
        s.view = (v.0 as usize, v.1);
        v
    });
    Ok(view(env, ptr, cap)?.into_unknown(env))
}

/// Takes the output region out of the thread state (a re-entrant call gets an empty one),
/// emptied, and a fresh one if the last result was larger than what is kept between calls.
fn take_output() -> Vec<u8> {
    STAGED.with(|s| {
        let mut out = std::mem::take(&mut s.borrow_mut().output);
        if out.capacity() > KEEP_CAPACITY {
            out = Vec::new();
        }
        out.clear();
        out
    })
}

/// Puts the output region back and returns what the call returns: `len`, or `-1 - len` when
/// the wrapper's view no longer covers the region.
fn put_output(out: Vec<u8>) -> f64 {
    let len = out.len();
    STAGED.with(|s| {
        let mut s = s.borrow_mut();
        let same = s.view == (out.as_ptr() as usize, out.capacity());
        s.output = out;
        if same {
            len as f64
        } else {
            -1.0 - len as f64
        }
    })
}

/// Runs `f` on the first `len` bytes of the staged input; `None` if `len` is out of range.
fn with_input<R>(len: u32, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
    STAGED.with(|s| {
        let s = s.borrow();
        s.input.get(..len as usize).map(f)
    })
}

fn bad_length(env: &Env) -> Error {
    type_error(env, "bson2json: staged input length out of range")
}

/// The arguments region's doubles.
fn args() -> [f64; STAGED_ARGS as usize] {
    STAGED.with(|s| *s.borrow().args)
}

/// Writes a call's result (the output's length and encoding) into the arguments region.
fn set_result((len, encoding): (f64, StagedEncoding)) {
    STAGED.with(|s| {
        let mut s = s.borrow_mut();
        s.args[StagedArg::Result as usize] = len;
        s.args[StagedArg::Encoding as usize] = f64::from(encoding as u32);
    });
}

/// An argument that must be a whole number in `0..=u32::MAX`.
fn whole(x: f64) -> Result<u32> {
    if x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&x) {
        Ok(x as u32)
    } else {
        Err(options::bad_options())
    }
}

/// The options of the arguments region's pair.
fn staged_options(a: &[f64; STAGED_ARGS as usize]) -> Result<Options> {
    options::decode(
        a[StagedArg::Packed as usize],
        a[StagedArg::MaxOutputBytes as usize],
    )
}

/// `transcodeStaged()`: [`transcode_staged`] with its arguments from the arguments region.
struct TranscodeStaged;

impl node_api::FastFn for TranscodeStaged {
    const ARGS: bool = false;
    fn call(env: &Env, _args: &node_api::Args) -> Result<Value> {
        let a = args();
        let r = transcode_staged(
            env,
            whole(a[StagedArg::Length as usize])?,
            &staged_options(&a)?,
            a[StagedArg::Kind as usize] != 0.0,
        )?;
        set_result(r);
        Ok(node_api::no_value())
    }
}

/// `transcodeBatchStaged()`: [`transcode_batch_staged`] with its arguments from the region.
struct TranscodeBatchStaged;

impl node_api::FastFn for TranscodeBatchStaged {
    const ARGS: bool = false;
    fn call(env: &Env, _args: &node_api::Args) -> Result<Value> {
        let a = args();
        let layout = BatchLayout::from_number(whole(a[StagedArg::Kind as usize])?);
        let r = transcode_batch_staged(
            env,
            whole(a[StagedArg::Length as usize])?,
            layout.ok_or_else(options::bad_options)?,
            &staged_options(&a)?,
            whole(a[StagedArg::Threads as usize])?,
        )?;
        set_result(r);
        Ok(node_api::no_value())
    }
}

/// Adds `transcodeStaged()` and `transcodeBatchStaged()` to the module's exports (plain
/// Node-API functions without arguments or result: see [`Staged::args`]).
pub(crate) fn register(env: &Env, exports: &mut Object<'_>) -> Result<()> {
    node_api::export_fast::<TranscodeStaged>(env, exports, c"transcodeStaged")?;
    node_api::export_fast::<TranscodeBatchStaged>(env, exports, c"transcodeBatchStaged")
}

/// `transcode` on the first `len` bytes of the staged input into the staged output, as the
/// wrapper's `transcode(bson, packed, maxOutputBytes)` (`text`: a string result). Returns the
/// output's length (see the module docs) and encoding.
fn transcode_staged(
    env: &Env,
    len: u32,
    opts: &Options,
    text: bool,
) -> Result<(f64, StagedEncoding)> {
    let mut out = take_output();
    // No JavaScript runs while the input is read: the transcoder neither calls nor allocates JS.
    let outcome = with_input(len, |input| {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            let tc = &mut s.transcoder;
            tc.transcode(input, opts, &mut out)
                .map(|()| tc.regexes().to_vec())
        })
    });
    let checked = match outcome {
        None => Err(bad_length(env)),
        Some(Err(e)) => Err(Failure::from(e).throw(env)),
        Some(Ok(regexes)) if regexes.is_empty() => Ok(()),
        // May run JavaScript (a patched `RegExp` that re-enters): the output is ours, taken.
        Some(Ok(regexes)) => {
            regex::check(env, regexes.into_iter().map(|r| (None, r))).map_err(|f| f.throw(env))
        }
    };
    if let Err(e) = checked {
        out.clear();
        put_output(out);
        return Err(e);
    }
    let encoding = if text {
        encode_text(&mut out)
    } else {
        StagedEncoding::Utf8
    };
    Ok((put_output(out), encoding))
}

/// `transcodeBatch` on concatenated documents (the first `len` bytes of the staged input) into
/// the staged output, for the layouts whose result is one text (`Array`, `NdjsonBuffer`,
/// `NdjsonString`) or a list (`List`): for a list, the output holds the JSON of every
/// document back to back, padded to 4 bytes, then `count + 1` little-endian `u32` byte
/// offsets (where each document starts, and the end), then `count + 1`. Returns the output's length as
/// [`transcode_staged`] does. Errors are thrown as `transcodeBatch` throws them for one
/// concatenated `Uint8Array`.
fn transcode_batch_staged(
    env: &Env,
    len: u32,
    layout: BatchLayout,
    opts: &Options,
    threads: u32,
) -> Result<(f64, StagedEncoding)> {
    let mut r = batch::take_output(len as usize);
    let outcome = with_input(len, |input| {
        if threads <= 1 {
            STATE.with(|s| {
                let tc = &mut s.borrow_mut().transcoder;
                transcode_concatenated(tc, input, opts, layout.core(), &mut r)
            })
        } else {
            let mut ranges = Vec::new();
            split_concatenated(input, &mut ranges)?;
            let docs: Vec<&[u8]> = ranges.iter().map(|&(s, e)| &input[s..e]).collect();
            let starts: Vec<usize> = ranges.iter().map(|r| r.0).collect();
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                batch::run_batch(
                    &docs,
                    Some(&starts),
                    None,
                    opts,
                    layout,
                    threads,
                    &mut s.transcoder,
                    &mut r,
                )
            })
        }
    });
    let result = match outcome {
        None => Err(bad_length(env)),
        Some(Err(e)) => Err(Failure::from(e).throw(env)),
        Some(Ok(())) if r.regexes.is_empty() => Ok(()),
        Some(Ok(())) => regex::check(env, r.regexes.drain(..).map(|(i, x)| (Some(i), x)))
            .map_err(|f| f.throw(env)),
    }
    .map(|()| {
        let mut out = take_output();
        write_batch(&r, layout, &mut out);
        let encoding = match layout {
            BatchLayout::Array | BatchLayout::NdjsonString => encode_text(&mut out),
            _ => StagedEncoding::Utf8,
        };
        (put_output(out), encoding)
    });
    batch::keep_output(r);
    result
}

/// The staged output of a batch: the JSON, and for a list, after padding to 4 bytes, the
/// `count + 1` offsets and then their number (the wrapper reads them from the end).
fn write_batch(r: &BatchOutput, layout: BatchLayout, out: &mut Vec<u8>) {
    out.extend_from_slice(&r.out);
    if matches!(layout, BatchLayout::List) {
        out.resize(out.len().next_multiple_of(4), 0);
        for &o in &r.offsets {
            out.extend_from_slice(&(o as u32).to_le_bytes());
        }
        out.extend_from_slice(&(r.offsets.len() as u32).to_le_bytes());
    }
}
