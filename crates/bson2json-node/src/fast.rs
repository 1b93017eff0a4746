//! The per-document hot path (`transcode`, `transcodeBuffer`) as plain
//! Node-API callbacks. napi-rs's generated glue spends a measurable share of a small
//! document's budget on per-call scope bookkeeping (profiled: ~20 % of a `{_id, a}` call, with
//! an allocation), so these few functions are registered directly; everything else uses the
//! generated bindings. Panics are caught here just as `#[napi(catch_unwind)]` would.

use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::{bytes_of, make_buffer, make_string, options, with_output};

const STRING: u8 = 0;
const BUFFER: u8 = 1;

/// Shared body: `(bson[, packed[, maxOutputBytes]])` → string or Buffer.
///
/// # Safety
/// `env` and `info` must be the arguments Node-API passed to a callback on the JS thread.
unsafe fn call(env: sys::napi_env, info: sys::napi_callback_info, output: u8) -> sys::napi_value {
    let outcome = std::panic::catch_unwind(|| {
        let mut argc = 4usize;
        let mut argv = [ptr::null_mut(); 4];
        // SAFETY: `argv` has room for `argc` values; the other out-pointers may be null.
        let status = unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        let env = Env::from_raw(env);
        if status != sys::Status::napi_ok {
            return Err(Error::new(
                Status::GenericFailure,
                "napi_get_cb_info failed".to_owned(),
            ));
        }
        // SAFETY: `argv[0]` is a live value of this callback (undefined if not passed).
        let bson = unsafe { Unknown::from_raw_unchecked(env.raw(), argv[0]) };
        // `packed` = flags | maxDepth << FLAG_BITS (exact in a double); `maxOutputBytes` only when it
        // is not the default. Fewer arguments, fewer conversions per call.
        let mut opts = bson2json_core::Options::default();
        if argc >= 2 {
            let mut packed = 0f64;
            // SAFETY: valid value and out-pointer.
            let ok = unsafe { sys::napi_get_value_double(env.raw(), argv[1], &mut packed) }
                == sys::Status::napi_ok;
            if !ok || !(0.0..=((1u64 << (32 + crate::FLAG_BITS)) - 1) as f64).contains(&packed) {
                return Err(Error::new(
                    Status::InvalidArg,
                    "invalid resolved options".to_owned(),
                ));
            }
            let packed = packed as u64;
            let mut max_out = bson2json_core::DEFAULT_MAX_OUTPUT_BYTES as f64;
            if argc >= 3 {
                // SAFETY: valid value and out-pointer.
                let ok = unsafe { sys::napi_get_value_double(env.raw(), argv[2], &mut max_out) }
                    == sys::Status::napi_ok;
                if !ok {
                    return Err(Error::new(
                        Status::InvalidArg,
                        "invalid resolved options".to_owned(),
                    ));
                }
            }
            opts = options(
                (packed & ((1 << crate::FLAG_BITS) - 1)) as u32,
                (packed >> crate::FLAG_BITS) as u32,
                max_out,
            );
        }
        // Taken after the options (reading numbers runs no JavaScript either, but the input
        // pointer is always the last thing read).
        let bytes = bytes_of(&env, &bson, &"bson")?;
        with_output(&env, &bytes, &opts, |out, wide| {
            if output == BUFFER {
                make_buffer(&env, out)
            } else {
                make_string(&env, out, wide)
            }
        })
    });
    match outcome {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            if e.status != Status::PendingException {
                // SAFETY: `env` is the live callback environment.
                unsafe { JsError::from(e).throw_into(env) };
            }
            ptr::null_mut()
        }
        Err(_) => {
            let e = Error::new(
                Status::GenericFailure,
                "bson2json: internal panic (a bug; please report it)".to_owned(),
            );
            // SAFETY: `env` is the live callback environment.
            unsafe { JsError::from(e).throw_into(env) };
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn transcode_cb(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node-API with its own arguments.
    unsafe { call(env, info, STRING) }
}

unsafe extern "C" fn transcode_buffer_cb(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node-API with its own arguments.
    unsafe { call(env, info, BUFFER) }
}

/// Adds the hot-path functions to the module's exports: `transcode(bson[, packed[,
/// maxOutputBytes]])` and `transcodeBuffer(...)`, where `packed = flags | maxDepth << 8`.
#[napi(module_exports)]
pub fn register_fast_exports(mut exports: Object<'_>, env: Env) -> Result<()> {
    for (name, cb) in [
        (
            c"transcode",
            transcode_cb
                as unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value,
        ),
        (c"transcodeBuffer", transcode_buffer_cb),
    ] {
        let mut f = ptr::null_mut();
        // SAFETY: `name` is NUL-terminated (length -1 = auto); `cb` has the callback signature.
        crate::check(unsafe {
            sys::napi_create_function(
                env.raw(),
                name.as_ptr(),
                usize::MAX as isize,
                Some(cb),
                ptr::null_mut(),
                &mut f,
            )
        })?;
        // SAFETY: `f` is a live function value created above.
        exports.set_named_property(name.to_str().unwrap_or("transcode"), unsafe {
            Unknown::from_raw_unchecked(env.raw(), f)
        })?;
    }
    Ok(())
}
