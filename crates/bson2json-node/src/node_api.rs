//! The raw Node-API calls the binding makes, as safe functions, and the borrows of JavaScript
//! memory: the crate's `unsafe` code. The crate denies `unsafe` everywhere else but in one
//! block of `packed` (tests/layers.rs holds both, and says why).
//!
//! Two invariants make these functions safe to call with any arguments the rest of the crate
//! can produce:
//!
//! - **Environments.** Every `&Env` here is the environment of the Node-API callback that is
//!   running on this thread (napi-rs hands one to each export and task callback; [`fast`]
//!   builds one from its callback's own arguments), and it is used only during that callback.
//! - **Values.** A [`Value`] can only be made in this module, from a handle that Node-API
//!   returned during the current callback. The binding opens no handle scopes and keeps no
//!   `Value` past the callback that made it (none is stored in a static or a task), so every
//!   `Value` passed back in is live.
//!
//! A slice of JavaScript memory is valid only until JavaScript next runs, which the type
//! system cannot see of a slice, but can of a closure: [`with_bytes`], [`with_each_bytes`] and
//! [`with_views`] hand the bytes to a `Send` closure, which holds no environment or handle and
//! so cannot run JavaScript. [`bytes_of`] (over [`borrow_bytes`]) stays an `unsafe fn` for the
//! one caller that makes JS values while it reads (`packed`), whose block states why none of
//! them runs JavaScript.
//!
//! [`fast`]: crate::fast

use std::borrow::Cow;
use std::ffi::{c_void, CStr};
use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;

/// A JavaScript value handle of the current callback (see the module's invariants).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Value(sys::napi_value);

impl Value {
    /// The raw handle, for napi-rs APIs that take one.
    pub(crate) fn raw(self) -> sys::napi_value {
        self.0
    }

    /// The handle of a napi-rs `Unknown` of the current callback.
    pub(crate) fn of_unknown(v: &Unknown<'_>) -> Value {
        Value(v.raw())
    }

    /// This value as the `Unknown<'static>` that napi-rs's `Task::resolve` must return. napi-rs
    /// hands it to the promise within the same resolve callback, so it is not kept past the
    /// callback despite its type.
    pub(crate) fn into_task_result(self, env: &Env) -> Unknown<'static> {
        // SAFETY: `self` is a live handle of the current (resolve) callback in `env` (module
        // invariant), and napi-rs uses the result before that callback returns (above).
        unsafe { Unknown::from_raw_unchecked(env.raw(), self.0) }
    }

    /// This value as a napi-rs `Unknown`, to return to napi-rs glue.
    pub(crate) fn into_unknown<'env>(self, env: &'env Env) -> Unknown<'env> {
        // SAFETY: `self` is a live handle of the current callback in `env` (module invariant);
        // the `Unknown` borrows `env`, so it cannot outlive the callback either.
        unsafe { Unknown::from_raw_unchecked(env.raw(), self.0) }
    }
}

/// `Ok` for `napi_ok`, a generic error otherwise.
pub(crate) fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(
            Status::GenericFailure,
            "Node-API call failed".to_owned(),
        ))
    }
}

/// Runs one Node-API call that writes a value through its last argument.
fn make(call: impl FnOnce(*mut sys::napi_value) -> sys::napi_status) -> Result<Value> {
    let mut v = ptr::null_mut();
    check(call(&mut v))?;
    Ok(Value(v))
}

/// A JS string of ASCII (Latin-1) bytes; `None` if V8 refuses it (too long).
pub(crate) fn string_latin1(env: &Env, bytes: &[u8]) -> Option<Value> {
    // SAFETY: `bytes` is readable for its length (a length above `isize::MAX` cannot exist
    // for a slice); valid out-pointer. Creating a string runs no JavaScript.
    make(|out| unsafe {
        sys::napi_create_string_latin1(env.raw(), bytes.as_ptr().cast(), bytes.len() as isize, out)
    })
    .ok()
}

/// A JS string of UTF-16 code units; `None` if V8 refuses it (too long).
pub(crate) fn string_utf16(env: &Env, units: &[u16]) -> Option<Value> {
    // SAFETY: `units` is readable for its length; valid out-pointer; runs no JavaScript.
    make(|out| unsafe {
        sys::napi_create_string_utf16(env.raw(), units.as_ptr(), units.len() as isize, out)
    })
    .ok()
}

/// A JS string of UTF-8 bytes (invalid sequences become U+FFFD).
pub(crate) fn string_utf8(env: &Env, s: &[u8]) -> Result<Value> {
    // SAFETY: `s` is readable for its length; valid out-pointer; runs no JavaScript.
    make(|out| unsafe {
        sys::napi_create_string_utf8(env.raw(), s.as_ptr().cast(), s.len() as isize, out)
    })
}

/// A new empty object.
pub(crate) fn object(env: &Env) -> Result<Value> {
    // SAFETY: valid out-pointer.
    make(|out| unsafe { sys::napi_create_object(env.raw(), out) })
}

/// A new array of `len` holes.
pub(crate) fn array(env: &Env, len: usize) -> Result<Value> {
    // SAFETY: valid out-pointer.
    make(|out| unsafe { sys::napi_create_array_with_length(env.raw(), len, out) })
}

/// A number.
pub(crate) fn number(env: &Env, x: f64) -> Result<Value> {
    // SAFETY: valid out-pointer.
    make(|out| unsafe { sys::napi_create_double(env.raw(), x, out) })
}

/// `null`.
pub(crate) fn null(env: &Env) -> Result<Value> {
    // SAFETY: valid out-pointer.
    make(|out| unsafe { sys::napi_get_null(env.raw(), out) })
}

/// `undefined`.
pub(crate) fn undefined(env: &Env) -> Result<Value> {
    // SAFETY: valid out-pointer.
    make(|out| unsafe { sys::napi_get_undefined(env.raw(), out) })
}

/// A `BigInt` of `x`.
pub(crate) fn bigint(env: &Env, x: i64) -> Result<Value> {
    // SAFETY: valid out-pointer.
    make(|out| unsafe { sys::napi_create_bigint_int64(env.raw(), x, out) })
}

/// `obj[i] = v`. May run JavaScript (a setter on `Array.prototype`).
pub(crate) fn set_element(env: &Env, obj: Value, i: u32, v: Value) -> Result<()> {
    // SAFETY: live handles (module invariant).
    check(unsafe { sys::napi_set_element(env.raw(), obj.0, i, v.0) })
}

/// `obj[key] = v` with a key value. May run JavaScript (a setter).
pub(crate) fn set_property(env: &Env, obj: Value, key: Value, v: Value) -> Result<()> {
    // SAFETY: live handles (module invariant).
    check(unsafe { sys::napi_set_property(env.raw(), obj.0, key.0, v.0) })
}

/// `obj[name] = v`. May run JavaScript (a setter).
pub(crate) fn set_named(env: &Env, obj: Value, name: &CStr, v: Value) -> Result<()> {
    // SAFETY: live handles; `name` is NUL-terminated.
    check(unsafe { sys::napi_set_named_property(env.raw(), obj.0, name.as_ptr(), v.0) })
}

/// `obj[name]`; `None` if the read fails. May run JavaScript (a getter).
pub(crate) fn get_named(env: &Env, obj: Value, name: &CStr) -> Option<Value> {
    // SAFETY: live handle; `name` is NUL-terminated; valid out-pointer.
    make(|out| unsafe { sys::napi_get_named_property(env.raw(), obj.0, name.as_ptr(), out) }).ok()
}

/// `globalThis`.
pub(crate) fn global(env: &Env) -> Result<Value> {
    // SAFETY: valid out-pointer.
    make(|out| unsafe { sys::napi_get_global(env.raw(), out) })
}

/// Whether `v` is an array (a `Proxy` of one is not). Runs no JavaScript.
pub(crate) fn is_array(env: &Env, v: Value) -> Result<bool> {
    let mut yes = false;
    // SAFETY: live handle; valid out-pointer.
    check(unsafe { sys::napi_is_array(env.raw(), v.0, &mut yes) })?;
    Ok(yes)
}

/// The length of the array `v`. Runs no JavaScript.
pub(crate) fn array_length(env: &Env, v: Value) -> Result<u32> {
    let mut len = 0;
    // SAFETY: live handle; valid out-pointer.
    check(unsafe { sys::napi_get_array_length(env.raw(), v.0, &mut len) })?;
    Ok(len)
}

/// `v[i]`. May run JavaScript (an accessor on the array or its prototype chain).
pub(crate) fn get_element(env: &Env, v: Value, i: u32) -> Result<Value> {
    // SAFETY: live handle; valid out-pointer.
    make(|out| unsafe { sys::napi_get_element(env.raw(), v.0, i, out) })
}

/// The number `v` holds; `None` if it is not a number. Runs no JavaScript.
pub(crate) fn number_value(env: &Env, v: Value) -> Option<f64> {
    let mut x = 0f64;
    // SAFETY: live handle; valid out-pointer.
    let status = unsafe { sys::napi_get_value_double(env.raw(), v.0, &mut x) };
    (status == sys::Status::napi_ok).then_some(x)
}

/// The string `v` holds, up to 512 bytes of its UTF-8; `None` if it is not a string.
pub(crate) fn short_string_value(env: &Env, v: Value) -> Option<String> {
    let mut buf = [0u8; 512];
    let mut n = 0usize;
    // SAFETY: live handle; `buf` is writable for its length; valid out-pointer.
    let status = unsafe {
        sys::napi_get_value_string_utf8(env.raw(), v.0, buf.as_mut_ptr().cast(), buf.len(), &mut n)
    };
    (status == sys::Status::napi_ok).then(|| String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// `new ctor(...args)`; `Err(exception)` if it throws (the exception is cleared), `Err(None)`
/// if it fails without one. Runs JavaScript.
pub(crate) fn construct(
    env: &Env,
    ctor: Value,
    args: &[Value],
) -> std::result::Result<Value, Option<Value>> {
    let raw: Vec<sys::napi_value> = args.iter().map(|a| a.0).collect();
    // SAFETY: live handles; `raw` holds `args.len()` of them; valid out-pointer.
    make(|out| unsafe { sys::napi_new_instance(env.raw(), ctor.0, raw.len(), raw.as_ptr(), out) })
        .map_err(|_| take_exception(env))
}

/// `f.call(recv, ...args)`; `Err(exception)` if it throws (the exception is cleared). Runs
/// JavaScript.
pub(crate) fn call(
    env: &Env,
    recv: Value,
    f: Value,
    args: &[Value],
) -> std::result::Result<Value, Option<Value>> {
    let raw: Vec<sys::napi_value> = args.iter().map(|a| a.0).collect();
    // SAFETY: live handles; `raw` holds `args.len()` of them; valid out-pointer.
    make(|out| unsafe {
        sys::napi_call_function(env.raw(), recv.0, f.0, raw.len(), raw.as_ptr(), out)
    })
    .map_err(|_| take_exception(env))
}

/// Compiles and runs `src` as a script. Runs JavaScript.
pub(crate) fn run_script(env: &Env, src: Value) -> Result<Value> {
    // SAFETY: live handle; valid out-pointer.
    make(|out| unsafe { sys::napi_run_script(env.raw(), src.0, out) })
}

/// The pending JS exception, cleared; `None` if there is none.
pub(crate) fn take_exception(env: &Env) -> Option<Value> {
    let mut pending = false;
    // SAFETY: valid out-pointer.
    let status = unsafe { sys::napi_is_exception_pending(env.raw(), &mut pending) };
    if status != sys::Status::napi_ok || !pending {
        return None;
    }
    // SAFETY: valid out-pointer.
    make(|out| unsafe { sys::napi_get_and_clear_last_exception(env.raw(), out) }).ok()
}

/// Throws `v`.
pub(crate) fn throw(env: &Env, v: Value) -> Result<()> {
    // SAFETY: live handle.
    check(unsafe { sys::napi_throw(env.raw(), v.0) })
}

/// Throws a JS `TypeError` with `msg` and returns the marker error that tells napi-rs an
/// exception is already pending (or the Node-API error if throwing failed).
pub(crate) fn type_error(env: &Env, msg: &str) -> Error {
    let thrown = string_utf8(env, msg.as_bytes()).and_then(|m| {
        // SAFETY: live handle; valid out-pointer; a null code is allowed.
        let e = make(|out| unsafe {
            sys::napi_create_type_error(env.raw(), ptr::null_mut(), m.0, out)
        })?;
        throw(env, e)
    });
    match thrown {
        Ok(()) => Error::new(Status::PendingException, msg.to_owned()),
        Err(e) => e,
    }
}

/// A new `Error` with `code` and `message` (both JS strings).
pub(crate) fn error(env: &Env, code: Value, message: Value) -> Result<Value> {
    // SAFETY: live handles; valid out-pointer.
    make(|out| unsafe { sys::napi_create_error(env.raw(), code.0, message.0, out) })
}

/// A new `Buffer` that owns `bytes` without copying them (natively an external buffer whose
/// finalizer frees them; the WASI build copies, as its external buffers are views of wasm
/// memory).
pub(crate) fn buffer_owned(env: &Env, bytes: Vec<u8>) -> Result<Value> {
    #[cfg(target_family = "wasm")]
    {
        buffer_copy(env, &bytes)
    }
    #[cfg(not(target_family = "wasm"))]
    {
        unsafe extern "C" fn free(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
            // SAFETY: `hint` is the `Box<Vec<u8>>` leaked below, which this one call takes back.
            drop(unsafe { Box::from_raw(hint.cast::<Vec<u8>>()) });
        }
        if bytes.is_empty() {
            return buffer_copy(env, &[]);
        }
        let mut boxed = Box::new(bytes);
        let (data, len) = (boxed.as_mut_ptr(), boxed.len());
        let hint = Box::into_raw(boxed);
        // SAFETY: `data..data + len` is the heap allocation of the boxed vector, which stays
        // put (the box, not the vector, moves) until `free` drops it; valid out-pointer.
        let made = make(|out| unsafe {
            sys::napi_create_external_buffer(
                env.raw(),
                len,
                data.cast(),
                Some(free),
                hint.cast(),
                out,
            )
        });
        if made.is_err() {
            // SAFETY: the buffer was not made, so the finalizer never runs: the box is ours.
            drop(unsafe { Box::from_raw(hint) });
        }
        made
    }
}

/// A new `Buffer` holding a copy of `bytes` (V8-managed memory, never tied to Rust's).
pub(crate) fn buffer_copy(env: &Env, bytes: &[u8]) -> Result<Value> {
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: valid out-pointers.
    let v = make(|out| unsafe { sys::napi_create_buffer(env.raw(), bytes.len(), &mut data, out) })?;
    if !bytes.is_empty() {
        // SAFETY: Node-API allocated `bytes.len()` writable bytes at `data` for the new buffer,
        // which nothing else can reach yet; `bytes` is a distinct Rust allocation.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len()) };
    }
    Ok(v)
}

/// A new typed array of `kind` with `len` elements holding a copy of `bytes` (its whole
/// memory, `len * element size` bytes).
fn typed_array_copy(
    env: &Env,
    kind: sys::napi_typedarray_type,
    bytes: &[u8],
    len: usize,
) -> Result<Value> {
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: valid out-pointers.
    let ab = make(|out| unsafe {
        sys::napi_create_arraybuffer(env.raw(), bytes.len(), &mut data, out)
    })?;
    if !bytes.is_empty() {
        // SAFETY: Node-API allocated `bytes.len()` writable bytes at `data` for the new buffer,
        // which nothing else can reach yet; `bytes` is a distinct Rust allocation.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len()) };
    }
    // SAFETY: `ab` is the live buffer made above, whose whole memory the caller's `len`
    // elements cover; valid out-pointer.
    make(|out| unsafe { sys::napi_create_typedarray(env.raw(), kind, len, ab.0, 0, out) })
}

/// A new `Uint32Array` holding a copy of `units`.
pub(crate) fn uint32_array(env: &Env, units: &[u32]) -> Result<Value> {
    // SAFETY: the units' memory, `size_of_val(units)` initialized bytes (`u32` has no padding),
    // read as bytes for the copy.
    let bytes = unsafe {
        std::slice::from_raw_parts(units.as_ptr().cast::<u8>(), std::mem::size_of_val(units))
    };
    typed_array_copy(env, sys::TypedarrayType::uint32_array, bytes, units.len())
}

/// A new plain `Uint8Array` (not a `Buffer`) holding a copy of `bytes` (not in the WASI build,
/// whose typed arrays over the module's memory lib/native copies at once instead).
#[cfg(not(target_family = "wasm"))]
pub(crate) fn uint8_array(env: &Env, bytes: &[u8]) -> Result<Value> {
    typed_array_copy(env, sys::TypedarrayType::uint8_array, bytes, bytes.len())
}

/// A strong reference to `v`, which keeps it alive across callbacks; read it back with
/// [`reference_value`] in the same environment.
#[derive(Clone, Copy)]
pub(crate) struct Reference(sys::napi_ref);

/// A strong reference to `v`.
pub(crate) fn reference(env: &Env, v: Value) -> Result<Reference> {
    let mut r = ptr::null_mut();
    // SAFETY: live handle; valid out-pointer.
    check(unsafe { sys::napi_create_reference(env.raw(), v.0, 1, &mut r) })?;
    Ok(Reference(r))
}

/// The value `r` refers to. `r` must have been made in `env`: callers key their references by
/// environment ([`env_id`]) and drop them when it is torn down ([`on_teardown`]).
pub(crate) fn reference_value(env: &Env, r: &Reference) -> Option<Value> {
    // SAFETY: `r` is a live strong reference made in `env` (the caller's contract above, kept
    // by `strings.rs`, the only user); valid out-pointer.
    make(|out| unsafe { sys::napi_get_reference_value(env.raw(), r.0, out) })
        .ok()
        .filter(|v| !v.0.is_null())
}

/// An identifier of `env`, for comparisons only (never dereferenced).
pub(crate) fn env_id(env: &Env) -> usize {
    env.raw() as usize
}

/// Runs `hook(env_id(env))` when `env` is torn down (a worker thread exiting).
pub(crate) fn on_teardown(env: &Env, hook: fn(usize)) {
    unsafe extern "C" fn trampoline(arg: *mut c_void) {
        // SAFETY: `arg` is the pointer registered below: a leaked `Box<(fn(usize), usize)>`,
        // which this one call takes back.
        let b = unsafe { Box::from_raw(arg.cast::<(fn(usize), usize)>()) };
        (b.0)(b.1);
    }
    let arg = Box::into_raw(Box::new((hook, env_id(env))));
    // SAFETY: `trampoline` has the hook signature; `arg` stays valid until it runs (or leaks
    // if the environment outlives the process, which is harmless).
    unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(trampoline), arg.cast()) };
}

/// The bytes of `v` if it is a `Uint8Array` (or `Buffer`): `Ok(Some((bytes, shared)))`, where
/// `shared` is true for a view on a `SharedArrayBuffer`; `Ok(None)` for any other value (the
/// exception Node-API may leave pending is cleared). A detached buffer reads as empty.
///
/// # Safety
/// The slice points into JavaScript memory, which JavaScript can detach, transfer or shrink,
/// and a GC then free: the caller must not let any JavaScript run while it holds the slice
/// (no property read or write on a user object, no call of a user function, no construction
/// of a `RegExp`), and must copy a `shared` slice before reading it twice.
pub(crate) unsafe fn borrow_bytes<'a>(env: &Env, v: Value) -> Option<(&'a [u8], bool)> {
    let (data, len, shared) = uint8_array_memory(env, v)?;
    if len == 0 || data.is_null() {
        return Some((&[], false));
    }
    // SAFETY: Node-API reports `len` readable bytes at `data` for this typed array, and they
    // stay so while no JavaScript runs (the caller's contract).
    let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, len) };
    Some((bytes, shared))
}

/// A typed array of the given `kind`: `(data, length in elements, its buffer)`; `None` for any
/// other value (the exception Node-API may leave pending is cleared). Runs no JavaScript.
fn typed_array_info(
    env: &Env,
    v: Value,
    want: sys::napi_typedarray_type,
) -> Option<(*mut c_void, usize, sys::napi_value)> {
    let mut kind = 0;
    let mut len = 0usize;
    let mut data: *mut c_void = ptr::null_mut();
    let mut ab = ptr::null_mut();
    let mut off = 0usize;
    // SAFETY: live handle; valid out-pointers. Node-API checks that `v` is a typed array and
    // returns an error status otherwise. Runs no JavaScript.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env.raw(),
            v.0,
            &mut kind,
            &mut len,
            &mut data,
            &mut ab,
            &mut off,
        )
    };
    if status != sys::Status::napi_ok || kind != want {
        take_exception(env);
        return None;
    }
    Some((data, len, ab))
}

/// Where a `Uint8Array` (or `Buffer`) keeps its bytes now: `(data, len, shared)`, `shared` for a
/// view on a `SharedArrayBuffer`; `None` for any other value (the exception Node-API may leave
/// pending is cleared). A detached buffer has length 0. Runs no JavaScript.
fn uint8_array_memory(env: &Env, v: Value) -> Option<(*mut u8, usize, bool)> {
    let (data, len, ab) = typed_array_info(env, v, sys::TypedarrayType::uint8_array)?;
    if len == 0 || data.is_null() {
        return Some((ptr::null_mut(), 0, false));
    }
    Some((
        data.cast::<u8>(),
        len,
        !is_plain_arraybuffer(env, Value(ab)),
    ))
}

/// Whether `v` is an `ArrayBuffer`: false for a `SharedArrayBuffer` (which Node 24's
/// `napi_get_arraybuffer_info` reads too: another thread may write it while the core reads)
/// and for anything else. Runs no JavaScript.
fn is_plain_arraybuffer(env: &Env, v: Value) -> bool {
    let mut plain = false;
    // SAFETY: live handle; valid out-pointer. Runs no JavaScript.
    let status = unsafe { sys::napi_is_arraybuffer(env.raw(), v.0, &mut plain) };
    status == sys::Status::napi_ok && plain
}

/// Where a plain `ArrayBuffer` keeps its bytes now: `(data, len)`; `None` for any other value
/// (a `SharedArrayBuffer` included). A detached buffer has length 0. Runs no JavaScript.
fn arraybuffer_memory(env: &Env, v: Value) -> Option<(*const u8, usize)> {
    let mut data: *mut c_void = ptr::null_mut();
    let mut len = 0usize;
    if !is_plain_arraybuffer(env, v) {
        return None;
    }
    // SAFETY: live handle (a plain `ArrayBuffer`, checked above); valid out-pointers. Runs no
    // JavaScript.
    let status = unsafe { sys::napi_get_arraybuffer_info(env.raw(), v.0, &mut data, &mut len) };
    if status != sys::Status::napi_ok {
        return None;
    }
    Some((
        data.cast_const().cast::<u8>(),
        if data.is_null() { 0 } else { len },
    ))
}

/// A batch given as a views table (the wrapper's `transcodeBatch` for an array of
/// `Uint8Array`s): `table` is a `Uint32Array` whose first `3 * count` numbers are, per
/// document, the index of its `ArrayBuffer` in `buffers`, its byte offset and its byte length.
/// [`Views::doc`] checks each row against its buffer as the buffer stood when the views were
/// taken. One lookup per distinct buffer instead of two Node-API calls and an element read
/// per document.
pub(crate) struct Views<'a> {
    /// Each buffer's `(data, len)`.
    memory: Vec<(*const u8, usize)>,
    rows: *const u32,
    count: usize,
    bytes: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> Views<'a> {
    /// The views of `table` into `buffers`; `None` unless every buffer is a plain `ArrayBuffer`
    /// and `table` a `Uint32Array` of at least `3 * count` numbers.
    ///
    /// # Safety
    /// As [`borrow_bytes`]: no JavaScript may run while the result, or a slice that
    /// [`Views::doc`] returns, is alive ([`with_views`] holds it so).
    unsafe fn new(env: &Env, buffers: &[Value], table: Value, count: usize) -> Option<Self> {
        let mut memory = Vec::with_capacity(buffers.len());
        for &b in buffers {
            memory.push(arraybuffer_memory(env, b)?);
        }
        let (data, len, _) = typed_array_info(env, table, sys::TypedarrayType::uint32_array)?;
        if count.checked_mul(3).is_none_or(|n| n > len) || (count > 0 && data.is_null()) {
            return None;
        }
        Some(Views {
            memory,
            rows: data.cast_const().cast::<u32>(),
            count,
            bytes: std::marker::PhantomData,
        })
    }

    /// How many documents the table holds.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Document `i`: `None` unless `i < count` and its row holds a buffer index in range and a
    /// non-empty range inside that buffer (a range of a detached or shrunk buffer is not).
    #[inline(always)]
    pub(crate) fn doc(&self, i: usize) -> Option<&'a [u8]> {
        if i >= self.count {
            return None;
        }
        // SAFETY: `3 * count` numbers are readable at `rows` (the table's own length, checked
        // in `new`) and `i < count`; unaligned reads, so no alignment is assumed.
        let [b, o, n] =
            [0, 1, 2].map(|k| unsafe { self.rows.add(3 * i + k).read_unaligned() } as usize);
        let &(base, size) = self.memory.get(b)?;
        // `|`, not `||`: one branch
        if (n == 0) | (o > size) || size - o < n {
            return None;
        }
        // SAFETY: Node-API reported `size` readable bytes at `base` for this `ArrayBuffer`
        // (`n >= 1` and `o + n <= size`, so it is non-empty and `base` is not null), and they
        // stay so while no JavaScript runs (the contract of `new`).
        Some(unsafe { std::slice::from_raw_parts(base.add(o), n) })
    }
}

impl<'a> Views<'a> {
    /// Every document, or `None` if any row is not one ([`Views::doc`]).
    pub(crate) fn all(&self) -> Option<Vec<&'a [u8]>> {
        (0..self.count()).map(|i| self.doc(i)).collect()
    }
}

/// Copies `bytes` into the `Uint8Array` `target` at byte `offset` if they fit: `Ok(true)`;
/// `Ok(false)` when they do not (a detached or shrunk target has no room), or `target` is
/// not a `Uint8Array` on a plain `ArrayBuffer`. The target's memory is looked up here, at the
/// copy, and nothing runs JavaScript between the lookup and the copy.
pub(crate) fn copy_into(env: &Env, target: Value, offset: usize, bytes: &[u8]) -> bool {
    let Some((data, len, false)) = uint8_array_memory(env, target) else {
        return false;
    };
    if offset > len || len - offset < bytes.len() {
        return false;
    }
    if !bytes.is_empty() {
        // SAFETY: Node-API reports `len` writable bytes at `data` (a typed array on a plain
        // `ArrayBuffer`), `offset + bytes.len() <= len`, and `bytes` is a distinct Rust
        // allocation. Nothing runs JavaScript between the lookup and this write.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data.add(offset), bytes.len()) };
    }
    true
}

/// Copies `words` into the `Uint8Array` `target` after their count (one 32-bit word, then the
/// words, each in the machine's byte order, as a `Uint32Array` over the same memory reads
/// them) if they fit: `true`; `false` (nothing written) otherwise, as [`copy_into`].
pub(crate) fn copy_words_into(env: &Env, target: Value, words: &[u32]) -> bool {
    let Some((data, len, false)) = uint8_array_memory(env, target) else {
        return false;
    };
    let Ok(count) = u32::try_from(words.len()) else {
        return false;
    };
    let bytes = std::mem::size_of_val(words);
    if len < 4 || len - 4 < bytes {
        return false;
    }
    // SAFETY: Node-API reports `len` writable bytes at `data` (a typed array on a plain
    // `ArrayBuffer`) and `4 + bytes <= len`; `words` is a distinct Rust allocation of `bytes`
    // initialized bytes (`u32` has no padding). Nothing runs JavaScript between the lookup
    // and these writes.
    unsafe {
        ptr::copy_nonoverlapping(count.to_ne_bytes().as_ptr(), data, 4);
        ptr::copy_nonoverlapping(words.as_ptr().cast::<u8>(), data.add(4), bytes);
    }
    true
}

/// The bytes of a `Uint8Array` (or `Buffer`, a subclass) argument.
///
/// A view on an `ArrayBuffer` is borrowed: the slice stays valid only until JavaScript next
/// runs (a getter, a setter, a patched global, a callback can detach, transfer or shrink the
/// buffer, and a GC may then free it). Every caller takes it after its last step that can run
/// JavaScript and drops it before its next one (see ARCHITECTURE.md, "the native boundary").
/// A view on a `SharedArrayBuffer` is copied: another thread may write it at any time, and
/// the walker must not read bytes that change under it. A detached buffer reads as empty.
/// `name` names the argument in the `TypeError` thrown for anything else.
///
/// # Safety
/// As [`borrow_bytes`]: no JavaScript may run while the result is alive (a borrowed
/// result points into JavaScript memory).
pub(crate) unsafe fn bytes_of<'a>(
    env: &Env,
    value: Value,
    name: &dyn std::fmt::Display,
) -> Result<Cow<'a, [u8]>> {
    // SAFETY: the caller's contract is `borrow_bytes`'s.
    match unsafe { borrow_bytes(env, value) } {
        None => Err(type_error(
            env,
            &format!("bson2json: {name} must be a Uint8Array or Buffer"),
        )),
        Some((bytes, false)) => Ok(Cow::Borrowed(bytes)),
        // Shared memory: copied at once (a byte another thread writes during the copy is
        // either its old or its new value; the walker then reads a stable snapshot).
        Some((bytes, true)) => Ok(Cow::Owned(bytes.to_vec())),
    }
}

/// `f` of the bytes of the `Uint8Array` (or `Buffer`) argument `value`, borrowed (a view on a
/// `SharedArrayBuffer` is copied first, see [`bytes_of`]); a `TypeError` naming `name` for any
/// other value.
///
/// This is the safe way to read JavaScript memory: `f` is `Send`, so it holds no `Env`, no
/// [`Value`] and no napi-rs handle (none of them is `Send`), and without one it cannot make a
/// Node-API call, so no JavaScript runs while it reads the bytes; its result cannot borrow
/// them (`R` is chosen outside `f`'s lifetime). Whatever needs JavaScript (the regex check,
/// making the result) comes after, on what `f` returned.
pub(crate) fn with_bytes<R>(
    env: &Env,
    value: Value,
    name: &dyn std::fmt::Display,
    f: impl FnOnce(&[u8]) -> R + Send,
) -> Result<R> {
    // SAFETY: `bytes` lives until `f` returns, and `f` cannot run JavaScript (above); nothing
    // else runs in between.
    let bytes = unsafe { bytes_of(env, value, name)? };
    Ok(f(&bytes))
}

/// A copy of the bytes of the `Uint8Array` (or `Buffer`) argument `value` ([`with_bytes`]).
pub(crate) fn bytes_copied(
    env: &Env,
    value: Value,
    name: &dyn std::fmt::Display,
) -> Result<Vec<u8>> {
    with_bytes(env, value, name, <[u8]>::to_vec)
}

/// `f` of the bytes of every `Uint8Array` of `values` (read from an array called `name`, which
/// names `name[i]` in the `TypeError` for an element of another kind), as [`with_bytes`] does
/// for one. The caller reads every element before this, since reading one can run JavaScript.
pub(crate) fn with_each_bytes<R>(
    env: &Env,
    values: &[Value],
    name: &str,
    f: impl FnOnce(&[&[u8]]) -> R + Send,
) -> Result<R> {
    let mut owned = Vec::with_capacity(values.len());
    for (i, &v) in values.iter().enumerate() {
        // SAFETY: as in `with_bytes`: every slice lives until `f` returns, and nothing that
        // runs in between (the other lookups, `f`) can run JavaScript.
        owned.push(unsafe { bytes_of(env, v, &format_args!("{name}[{i}]"))? });
    }
    let docs: Vec<&[u8]> = owned.iter().map(|d| &d[..]).collect();
    Ok(f(&docs))
}

/// `f` of the views table `table` into `buffers` ([`Views`]), as [`with_bytes`] does for one
/// array; `None` unless every buffer is a plain `ArrayBuffer` and `table` a `Uint32Array` of at
/// least `3 * count` numbers.
pub(crate) fn with_views<R>(
    env: &Env,
    buffers: &[Value],
    table: Value,
    count: usize,
    f: impl FnOnce(&Views<'_>) -> R + Send,
) -> Option<R> {
    // SAFETY: the views live until `f` returns, and `f` cannot run JavaScript (see
    // `with_bytes`); its result cannot borrow them.
    let views = unsafe { Views::new(env, buffers, table, count)? };
    Some(f(&views))
}

/// The most arguments a plain Node-API callback reads.
const MAX_ARGS: usize = 6;

/// What a plain Node-API callback receives: up to [`MAX_ARGS`] arguments, `undefined` past the
/// ones passed, and how many were passed.
pub(crate) struct Args {
    pub argc: usize,
    pub argv: [Value; MAX_ARGS],
}

impl Args {
    /// Argument `i` when it was passed and is not `undefined`.
    pub(crate) fn given(&self, env: &Env, i: usize) -> Option<Value> {
        let v = *self.argv.get(i)?;
        (i < self.argc && !is_undefined(env, v)).then_some(v)
    }
}

fn is_undefined(env: &Env, v: Value) -> bool {
    let mut t = sys::ValueType::napi_undefined;
    // SAFETY: live handle; valid out-pointer. Runs no JavaScript.
    let status = unsafe { sys::napi_typeof(env.raw(), v.0, &mut t) };
    status == sys::Status::napi_ok && t == sys::ValueType::napi_undefined
}

/// The instance of the `#[napi]` class `T` that `v` wraps, checked to be one (a `TypeError`
/// naming `name` otherwise). Runs no JavaScript.
pub(crate) fn class_instance<'env, T: 'env + MaybeTypeTag>(
    env: &'env Env,
    v: Value,
    name: &str,
) -> Result<ClassInstance<'env, T>> {
    // SAFETY: live handle in this callback's scope. napi-rs unwraps it and checks the class
    // recorded when it was wrapped before it hands out the instance.
    unsafe { ClassInstance::<T>::from_napi_value(env.raw(), v.0) }
        .map_err(|_| type_error(env, &format!("bson2json: {name} must be a Shaper")))
}

/// A function exported by [`export_fast`]: its body, statically dispatched (no function
/// pointer between the callback and the work, so the body inlines into it).
pub(crate) trait FastFn {
    /// Whether the call reads its arguments (`false`: no `napi_get_cb_info`, `argc` is 0).
    const ARGS: bool = true;
    /// Runs the call.
    fn call(env: &Env, args: &Args) -> Result<Value>;
}

/// Adds `name` to `exports` as a plain Node-API function running `F::call`, without
/// napi-rs's generated glue (its per-call bookkeeping costs a measurable share of a small
/// document's budget). Panics in the body become JS exceptions, as with
/// `#[napi(catch_unwind)]`.
pub(crate) fn export_fast<F: FastFn>(
    env: &Env,
    exports: &mut Object<'_>,
    name: &CStr,
) -> Result<()> {
    let f = make(|out| {
        // SAFETY: `name` is NUL-terminated (length `usize::MAX as isize` = -1, "auto");
        // `fast_trampoline::<F>` has the callback signature; valid out-pointer.
        unsafe {
            sys::napi_create_function(
                env.raw(),
                name.as_ptr(),
                usize::MAX as isize,
                Some(fast_trampoline::<F>),
                ptr::null_mut(),
                out,
            )
        }
    })?;
    exports.set_named_property(name.to_str().unwrap_or("fast"), f.into_unknown(env))
}

unsafe extern "C" fn fast_trampoline<F: FastFn>(
    raw_env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let outcome = std::panic::catch_unwind(|| {
        let env = Env::from_raw(raw_env);
        let mut argc = if F::ARGS { MAX_ARGS } else { 0 };
        let mut argv = [ptr::null_mut(); MAX_ARGS];
        let status = if !F::ARGS {
            sys::Status::napi_ok
        } else {
            // SAFETY: `raw_env` and `info` are this callback's own arguments from Node-API;
            // `argv` has room for `argc` handles; the other out-pointers may be null.
            unsafe {
                sys::napi_get_cb_info(
                    raw_env,
                    info,
                    &mut argc,
                    argv.as_mut_ptr(),
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            }
        };
        if status != sys::Status::napi_ok {
            return Err(Error::new(
                Status::GenericFailure,
                "napi_get_cb_info failed".to_owned(),
            ));
        }
        let args = Args {
            argc,
            argv: argv.map(Value),
        };
        F::call(&env, &args).map(Value::raw)
    });
    let e = match outcome {
        Ok(Ok(v)) => return v,
        Ok(Err(e)) if e.status == Status::PendingException => return ptr::null_mut(),
        Ok(Err(e)) => e,
        Err(_) => Error::new(
            Status::GenericFailure,
            "bson2json: internal panic (a bug; please report it)".to_owned(),
        ),
    };
    // SAFETY: `raw_env` is this callback's live environment.
    unsafe { JsError::from(e).throw_into(raw_env) };
    ptr::null_mut()
}

/// A `Buffer` that views `len` bytes of wasm memory at `ptr` (WASI build only: emnapi's
/// `napi_create_external_buffer` makes a view of its memory, never a copy). The caller keeps
/// the region allocated and treats every earlier view of it as stale once it reallocates it.
#[cfg(target_family = "wasm")]
pub(crate) fn wasm_view(env: &Env, ptr: *mut u8, len: usize) -> Result<Value> {
    // SAFETY: `ptr..ptr + len` is a live Rust allocation (the caller's region); no finalizer,
    // so Node-API never frees it; valid out-pointer. Runs no JavaScript.
    make(|out| unsafe {
        sys::napi_create_external_buffer(env.raw(), len, ptr.cast(), None, ptr::null_mut(), out)
    })
}

/// What a plain Node-API callback returns for `undefined` (a null handle; never passed back to
/// Node-API as an argument).
pub(crate) fn no_value() -> Value {
    Value(ptr::null_mut())
}

/// Native builds have no staged regions: a `Buffer` over Rust memory that JavaScript could keep
/// past a reallocation would be a dangling view.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn wasm_view(_env: &Env, _ptr: *mut u8, _len: usize) -> Result<Value> {
    Err(Error::new(
        Status::GenericFailure,
        "bson2json: staged regions exist in the WASI build only".to_owned(),
    ))
}
