//! The per-document hot path (`transcode`, `transcodeBuffer`) as plain Node-API callbacks
//! ([`node_api::export_fast`]). napi-rs's generated glue spends a measurable share of a small
//! document's budget on per-call scope bookkeeping (profiled: ~20 % of a `{_id, a}` call,
//! with an allocation), so these two functions skip it; everything else uses the generated
//! bindings.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::node_api::{self, Args, Value};
use crate::{bytes_of, make_buffer, make_string, options, with_output};

const STRING: u8 = 0;
const BUFFER: u8 = 1;

struct Transcode;
struct TranscodeBuffer;

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

fn bad_options() -> Error {
    Error::new(Status::InvalidArg, "invalid resolved options".to_owned())
}

/// The options of `packed` (= flags | maxDepth << FLAG_BITS, exact in a double) and
/// `maxOutputBytes`; `None` if `packed` is out of range.
#[inline(always)]
pub(crate) fn unpack(packed: f64, max_out: f64) -> Option<bson2json_core::Options> {
    if !(0.0..=((1u64 << (32 + crate::FLAG_BITS)) - 1) as f64).contains(&packed) {
        return None;
    }
    let packed = packed as u64;
    Some(options(
        (packed & ((1 << crate::FLAG_BITS) - 1)) as u32,
        (packed >> crate::FLAG_BITS) as u32,
        max_out,
    ))
}

/// Shared body: `(bson[, packed[, maxOutputBytes]])` → string or Buffer.
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
        unpack(packed, max_out).ok_or_else(bad_options)?
    } else {
        bson2json_core::Options::default()
    };
    // Taken after the options (reading numbers runs no JavaScript either, but the input
    // pointer is always the last thing read).
    #[allow(unsafe_code)]
    // SAFETY: nothing runs JavaScript between this line and the transcoder's read of `bytes`
    // in `with_output`, which drops them before its first step that can (the regex check,
    // creating the result).
    let bytes = unsafe { bytes_of(env, args.argv[0], &"bson")? };
    with_output(env, bytes, &opts, |out, wide| {
        if output == BUFFER {
            make_buffer(env, out)
        } else {
            make_string(env, out, wide)
        }
    })
}

/// Adds the hot-path functions to the module's exports: `transcode(bson[, packed[,
/// maxOutputBytes]])` and `transcodeBuffer(...)`, where `packed = flags | maxDepth << 8`.
#[napi(module_exports)]
pub fn register_fast_exports(mut exports: Object<'_>, env: Env) -> Result<()> {
    node_api::export_fast::<Transcode>(&env, &mut exports, c"transcode")?;
    node_api::export_fast::<TranscodeBuffer>(&env, &mut exports, c"transcodeBuffer")?;
    crate::staged::register(&env, &mut exports)
}
