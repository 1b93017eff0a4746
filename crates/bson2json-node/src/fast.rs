//! The per-document hot path (`transcode`, `transcodeBuffer`, `transcodeInto`, each with an
//! optional `Shaper`) as plain Node-API callbacks ([`node_api::export_fast`]). napi-rs's
//! generated glue spends a measurable share of a small document's budget on per-call scope
//! bookkeeping (with an allocation), so these three functions skip it; everything else uses
//! the generated bindings.

use napi::bindgen_prelude::*;

use crate::node_api::{self, Args, Value};
use crate::output::{finish_out, transcode_out};
use crate::shape::Shaper;
use crate::{options, strings};

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

/// Shared body: `(bson[, packed[, maxOutputBytes[, shaper]]])` → string or Buffer; for `INTO`,
/// `(bson, packed, maxOutputBytes, target, offset[, shaper])` → the JSON's length once it is
/// copied into `target` at `offset`, or, when it does not fit there, a new Buffer holding it.
/// With a `shaper` (a projection / redaction) the document is shaped first.
#[inline(always)]
fn call(env: &Env, args: &Args, output: u8) -> Result<Value> {
    // The options' pair (options.rs), `maxOutputBytes` only when it is not the default: fewer
    // arguments, fewer conversions per call.
    let opts = if args.argc >= 2 {
        let packed = node_api::number_value(env, args.argv[1]).ok_or_else(options::bad_options)?;
        let max_out = if args.argc >= 3 {
            node_api::number_value(env, args.argv[2]).ok_or_else(options::bad_options)?
        } else {
            bson2json_core::DEFAULT_MAX_OUTPUT_BYTES as f64
        };
        options::decode(packed, max_out)?
    } else {
        bson2json_core::Options::default()
    };
    let offset = if output == INTO {
        let o = node_api::number_value(env, args.argv[4]).ok_or_else(options::bad_options)?;
        if !(0.0..=f64::from(u32::MAX)).contains(&o) || o.fract() != 0.0 {
            return Err(options::bad_options());
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
    // The input is read last (reading numbers runs no JavaScript either, but the input
    // pointer is always the last thing taken), and only while it is transcoded.
    let (outcome, held) = match &shaper {
        None => node_api::with_bytes(env, args.argv[0], &"bson", |b| transcode_out(b, &opts))?,
        Some(s) => {
            let s: &Shaper = s;
            node_api::with_bytes(env, args.argv[0], &"bson", |b| s.shape_out(b, &opts))?
        }
    };
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
    finish_out(env, outcome, held, finish).map_err(|f| f.throw(env))
}

/// Adds the hot-path functions to the module's exports (called by the crate's one
/// registration point): `transcode(bson[, packed[, maxOutputBytes[, shaper]]])`,
/// `transcodeBuffer(...)` and `transcodeInto(bson, packed, maxOutputBytes, target, offset[,
/// shaper])`, with the options' pair of options.rs.
pub(crate) fn register(env: &Env, exports: &mut Object<'_>) -> Result<()> {
    node_api::export_fast::<Transcode>(env, exports, c"transcode")?;
    node_api::export_fast::<TranscodeBuffer>(env, exports, c"transcodeBuffer")?;
    node_api::export_fast::<TranscodeInto>(env, exports, c"transcodeInto")
}
