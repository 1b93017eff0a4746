//! The per-document hot path (`transcode`, `transcodeBuffer`, `transcodeInto`, each with an
//! optional `Shaper`) as plain Node-API callbacks ([`node_api::export_fast`]). napi-rs's
//! generated glue spends a measurable share of a small document's budget on per-call scope
//! bookkeeping (with an allocation), so these three functions skip it; everything else uses
//! the generated bindings.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use std::borrow::Cow;

use bson2json_core::{Options, RegexRecord};

use crate::errors::Failure;
use crate::node_api::{self, bytes_of, Args, Value};
use crate::shape::Shaper;
use crate::{options, regex, strings, State, KEEP_CAPACITY, STATE};

const STRING: u8 = 0;
const BUFFER: u8 = 1;
const INTO: u8 = 2;

struct Transcode;
struct TranscodeBuffer;
struct TranscodeInto;

impl node_api::FastFn for Transcode {
    #[inline(always)]
    fn call(env: &Env, args: &Args) -> Result<Value> {
        call(env, args, STRING)
    }
}

impl node_api::FastFn for TranscodeBuffer {
    #[inline(always)]
    fn call(env: &Env, args: &Args) -> Result<Value> {
        call(env, args, BUFFER)
    }
}

impl node_api::FastFn for TranscodeInto {
    #[inline(always)]
    fn call(env: &Env, args: &Args) -> Result<Value> {
        call(env, args, INTO)
    }
}

fn bad_options() -> Error {
    Error::new(Status::InvalidArg, "invalid resolved options".to_owned())
}

/// Transcodes into the thread's output buffer and hands the bytes to `finish`.
///
/// `bson` (which may borrow JavaScript memory) is read only by the transcoder and dropped
/// right after it, before anything here can run JavaScript: the regex check (which calls the
/// global `RegExp`) and `finish` (which creates JS values) come after. The output buffers are
/// taken out of the thread state for that time, so JavaScript that re-enters the addon
/// meanwhile finds a state of its own and nothing borrowed.
pub(crate) fn with_output<R>(
    env: &Env,
    bson: Cow<'_, [u8]>,
    opts: &Options,
    finish: impl FnOnce(&[u8], &mut Vec<u16>) -> Result<R>,
) -> std::result::Result<R, Failure> {
    let (outcome, held) = transcode_out(&bson, opts);
    drop(bson);
    finish_out(env, outcome, held, finish)
}

/// What the transcoder made of a document: the regexes to check, or its error.
pub(crate) type Outcome = std::result::Result<Vec<RegexRecord>, bson2json_core::Error>;

/// The thread's output buffers while one call holds them: the JSON (`out`) and the UTF-16
/// scratch its string is made from (`wide`). Taken out of the thread state and put back
/// together, with one thread-local access and one `RefCell` borrow each way (each access to
/// the addon's thread-local costs a `__tls_get_addr` call in a shared library).
pub(crate) struct Held {
    out: Vec<u8>,
    wide: Vec<u16>,
}

/// The first half of [`with_output`]: transcodes `bson` into the thread's output buffer, taken
/// out of the thread state (with the UTF-16 scratch) until [`finish_out`]. Runs no JavaScript.
pub(crate) fn transcode_out(bson: &[u8], opts: &Options) -> (Outcome, Held) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let State {
            transcoder,
            out,
            wide,
            ..
        } = &mut *s;
        let mut out = std::mem::take(out);
        let wide = std::mem::take(wide);
        out.clear();
        let outcome = transcoder.transcode(bson, opts, &mut out).map(|()| {
            // Nearly every document has no regex: no copy (or call) for the empty list.
            let regexes = transcoder.regexes();
            if regexes.is_empty() {
                Vec::new()
            } else {
                regexes.to_vec()
            }
        });
        (outcome, Held { out, wide })
    })
}

/// The second half of [`with_output`], once the input is dropped: the regex check, `finish`
/// (both may run JavaScript), and the buffers back into the thread state (each unless it grew
/// past [`KEEP_CAPACITY`]).
pub(crate) fn finish_out<R>(
    env: &Env,
    outcome: Outcome,
    held: Held,
    finish: impl FnOnce(&[u8], &mut Vec<u16>) -> Result<R>,
) -> std::result::Result<R, Failure> {
    let Held { out, mut wide } = held;
    let result = outcome.map_err(Failure::from).and_then(|regexes| {
        if !regexes.is_empty() {
            regex::check(env, regexes.into_iter().map(|r| (None, r)))?;
        }
        Ok(finish(&out, &mut wide)?)
    });
    let keep_out = out.capacity() <= KEEP_CAPACITY;
    let keep_wide = crate::keeps_wide(&wide);
    if keep_out || keep_wide {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            if keep_out {
                s.out = out;
            }
            if keep_wide {
                s.wide = wide;
            }
        });
    }
    result
}

/// Shared body: `(bson[, packed[, maxOutputBytes[, shaper]]])` → string or Buffer; for `INTO`,
/// `(bson, packed, maxOutputBytes, target, offset[, shaper])` → the JSON's length once it is
/// copied into `target` at `offset`, or, when it does not fit there, a new Buffer holding it.
/// With a `shaper` (a projection / redaction) the document is shaped first.
#[inline(always)]
fn call(env: &Env, args: &Args, output: u8) -> Result<Value> {
    // `packed` = flags | maxDepth << FLAG_BITS (exact in a double); `maxOutputBytes` only when
    // it is not the default. Fewer arguments, fewer conversions per call.
    let opts = if args.argc >= 2 {
        let packed = node_api::number_value(env, args.argv[1]).ok_or_else(bad_options)?;
        let max_out = if args.argc >= 3 {
            node_api::number_value(env, args.argv[2]).ok_or_else(bad_options)?
        } else {
            bson2json_core::DEFAULT_MAX_OUTPUT_BYTES as f64
        };
        options::unpack(packed, max_out).ok_or_else(bad_options)?
    } else {
        bson2json_core::Options::default()
    };
    let offset = if output == INTO {
        let o = node_api::number_value(env, args.argv[4]).ok_or_else(bad_options)?;
        if !(0.0..=f64::from(u32::MAX)).contains(&o) || o.fract() != 0.0 {
            return Err(bad_options());
        }
        o as usize
    } else {
        0
    };
    // A projection / redaction, compiled (`Shaper`): the argument after the others.
    let shaper = match args.given(env, if output == INTO { 5 } else { 3 }) {
        Some(v) => Some(node_api::class_instance::<Shaper>(env, v, "shaper")?),
        None => None,
    };
    // Taken after the options (reading numbers runs no JavaScript either, but the input
    // pointer is always the last thing read).
    #[allow(unsafe_code)]
    // SAFETY: nothing runs JavaScript between this line and the read of `bytes` by the
    // transcoder in `with_output` (or by the shaping pass in `Shaper::transcode_one`), which drop them
    // before their first step that can (the regex check, creating the result).
    let bytes = unsafe { bytes_of(env, args.argv[0], &"bson")? };
    let finish = |out: &[u8], wide: &mut Vec<u16>| {
        if output == BUFFER {
            node_api::buffer_copy(env, out)
        } else if output == INTO {
            // The target's memory is looked up at the copy: the regex check before it may
            // have run JavaScript.
            if node_api::copy_into(env, args.argv[3], offset, out) {
                node_api::number(env, out.len() as f64)
            } else {
                node_api::buffer_copy(env, out)
            }
        } else {
            strings::json(env, out, wide)
        }
    };
    match shaper {
        None => with_output(env, bytes, &opts, finish),
        Some(s) => s.transcode_one(env, bytes, &opts, finish),
    }
    .map_err(|f| f.throw(env))
}

/// Adds the hot-path functions to the module's exports: `transcode(bson[, packed[,
/// maxOutputBytes[, shaper]]])`, `transcodeBuffer(...)` and `transcodeInto(bson, packed,
/// maxOutputBytes, target, offset[, shaper])`, where `packed = flags | maxDepth << 8`.
#[napi(module_exports)]
pub fn register_fast_exports(mut exports: Object<'_>, env: Env) -> Result<()> {
    node_api::export_fast::<Transcode>(&env, &mut exports, c"transcode")?;
    node_api::export_fast::<TranscodeBuffer>(&env, &mut exports, c"transcodeBuffer")?;
    node_api::export_fast::<TranscodeInto>(&env, &mut exports, c"transcodeInto")?;
    crate::rows::register(&env, &mut exports)?;
    crate::staged::register(&env, &mut exports)
}
