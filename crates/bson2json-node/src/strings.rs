//! Handing JSON text to V8 as a JS string.
//!
//! Short texts become one flat string. A text whose V8 payload would exceed V8's largest
//! regular heap object (128 KiB) is instead built the way V8's own `JSON.stringify` returns a
//! long result: as a rope (`ConsString`) of parts that each fit in a regular page. A single
//! flat string that size is allocated in V8's large-object space, on freshly mapped pages,
//! and every one of those pages costs a page fault when it is filled (measured: ~150,000
//! faults per second, half the time of `toJSON` on 100 KB documents). The parts are joined by
//! a small JS function (`a + b` is the only way to make a rope; Node-API has no call for it),
//! compiled once per environment.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;

use crate::check;

/// The payload above which V8 would put a string in its large-object space:
/// `kMaxRegularHeapObjectSize` (128 KiB) less the string header, with room to spare.
pub(crate) const FLAT_MAX_BYTES: usize = 128 * 1024 - 64;

/// The payload of each part of a rope (bytes). Parts stay regular heap objects.
pub(crate) const PART_BYTES: usize = 64 * 1024;

/// The payload above which a flat string is made after all: a rope is only cheaper while its
/// parts, all alive until they are joined, fit in V8's young generation (a 16 MiB semi-space
/// by default). Larger ones are copied and promoted by the scavenges their own allocation
/// triggers, which costs as many page faults as the large object (measured on a 19 MB text:
/// rope 1.3x slower than flat).
pub(crate) const ROPE_MAX_BYTES: usize = 16 * 1024 * 1024;

thread_local! {
    /// The join function of the environment that runs on this thread, kept by a reference.
    static JOINER: Cell<Option<(sys::napi_env, sys::napi_ref)>> = const { Cell::new(None) };
}

const JOIN_SRC: &str = "(function bson2jsonJoin(p) { let s = p[0]; \
    for (let i = 1; i < p.length; i++) s += p[i]; return s; })";

/// Forgets the join function when its environment is torn down (a worker exiting).
unsafe extern "C" fn forget_joiner(arg: *mut c_void) {
    let env = arg as sys::napi_env;
    JOINER.with(|j| {
        if matches!(j.get(), Some((e, _)) if e == env) {
            j.set(None);
        }
    });
}

/// The join function for `env`, compiled on first use; `None` if V8 refuses to compile it
/// (the caller then builds one flat string).
fn joiner(env: &Env) -> Option<sys::napi_value> {
    let raw = env.raw();
    let mut func = ptr::null_mut();
    if let Some((e, r)) = JOINER.with(Cell::get).filter(|&(e, _)| e == raw) {
        debug_assert_eq!(e, raw);
        // SAFETY: `r` is a live strong reference created in `raw` (the cleanup hook forgets it
        // before the environment goes away); valid out-pointer.
        let status = unsafe { sys::napi_get_reference_value(raw, r, &mut func) };
        if status == sys::Status::napi_ok && !func.is_null() {
            return Some(func);
        }
    }
    let mut src = ptr::null_mut();
    let mut reference = ptr::null_mut();
    // SAFETY: plain Node-API calls on the JS thread with valid pointers; the cleanup hook's
    // argument is the environment pointer itself, only compared, never dereferenced.
    unsafe {
        if sys::napi_create_string_latin1(
            raw,
            JOIN_SRC.as_ptr().cast(),
            JOIN_SRC.len() as isize,
            &mut src,
        ) != sys::Status::napi_ok
            || sys::napi_run_script(raw, src, &mut func) != sys::Status::napi_ok
            || sys::napi_create_reference(raw, func, 1, &mut reference) != sys::Status::napi_ok
        {
            let mut pending = false;
            if sys::napi_is_exception_pending(raw, &mut pending) == sys::Status::napi_ok && pending
            {
                let mut ignored = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(raw, &mut ignored);
            }
            return None;
        }
        if JOINER.with(Cell::get).is_none_or(|(e, _)| e != raw) {
            sys::napi_add_env_cleanup_hook(raw, Some(forget_joiner), raw.cast());
        }
    }
    JOINER.with(|j| j.set(Some((raw, reference))));
    Some(func)
}

fn too_long() -> Error {
    Error::new(
        Status::GenericFailure,
        "could not create the JSON string (too long for V8?)".to_owned(),
    )
}

/// A flat JS string of Latin-1 bytes.
#[inline]
fn flat_latin1(env: &Env, bytes: &[u8]) -> Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    // SAFETY: `bytes` is valid for its length; valid out-pointer.
    let status = unsafe {
        sys::napi_create_string_latin1(
            env.raw(),
            bytes.as_ptr().cast(),
            bytes.len() as isize,
            &mut value,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(too_long());
    }
    Ok(value)
}

/// A flat JS string of UTF-16 code units.
#[inline]
fn flat_utf16(env: &Env, units: &[u16]) -> Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    // SAFETY: `units` is valid for its length; valid out-pointer.
    let status = unsafe {
        sys::napi_create_string_utf16(env.raw(), units.as_ptr(), units.len() as isize, &mut value)
    };
    if status != sys::Status::napi_ok {
        return Err(too_long());
    }
    Ok(value)
}

/// Whether a string of `bytes` of payload is built as a rope.
#[inline]
fn wants_rope(bytes: usize) -> bool {
    bytes > FLAT_MAX_BYTES && bytes <= ROPE_MAX_BYTES
}

/// The rope of `data` cut into [`PART_BYTES`] parts made by `flat`, or one flat string if
/// the join function is unavailable.
#[cold]
#[inline(never)]
fn rope<T>(
    env: &Env,
    data: &[T],
    flat: fn(&Env, &[T]) -> Result<sys::napi_value>,
) -> Result<sys::napi_value> {
    let Some(join) = joiner(env) else {
        return flat(env, data);
    };
    let chunk = PART_BYTES / std::mem::size_of::<T>();
    let raw = env.raw();
    let mut parts = ptr::null_mut();
    // SAFETY: valid out-pointer; every element is set below.
    check(unsafe {
        sys::napi_create_array_with_length(raw, data.len().div_ceil(chunk), &mut parts)
    })?;
    for (i, piece) in data.chunks(chunk).enumerate() {
        let s = flat(env, piece)?;
        // SAFETY: `parts` and `s` are live values of this scope.
        check(unsafe { sys::napi_set_element(raw, parts, i as u32, s) })?;
    }
    let mut recv = ptr::null_mut();
    let mut value = ptr::null_mut();
    // SAFETY: `join` is a live function of this environment taking one array; valid pointers.
    unsafe {
        check(sys::napi_get_undefined(raw, &mut recv))?;
        if sys::napi_call_function(raw, recv, join, 1, &parts, &mut value) != sys::Status::napi_ok {
            // Only V8's string length limit can make `+` throw: report it like a flat string.
            let mut pending = false;
            if sys::napi_is_exception_pending(raw, &mut pending) == sys::Status::napi_ok && pending
            {
                let mut ignored = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(raw, &mut ignored);
            }
            return Err(too_long());
        }
    }
    Ok(value)
}

/// A JS string of Latin-1 (here always ASCII) bytes: flat, or a rope when a flat string would
/// be a large object.
#[inline]
pub(crate) fn latin1(env: &Env, bytes: &[u8]) -> Result<sys::napi_value> {
    if wants_rope(bytes.len()) {
        return rope(env, bytes, flat_latin1);
    }
    flat_latin1(env, bytes)
}

/// A JS string of UTF-16 code units: flat, or a rope when a flat string would be a large
/// object.
#[inline]
pub(crate) fn utf16(env: &Env, units: &[u16]) -> Result<sys::napi_value> {
    if wants_rope(units.len() * 2) {
        return rope(env, units, flat_utf16);
    }
    flat_utf16(env, units)
}
