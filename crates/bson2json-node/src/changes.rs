//! Change-stream batches: one call per `aggregate`/`getMore` reply. The routing fields of each
//! event are extracted here, in Rust, and the document parts become JSON text in the chosen
//! dialect; nothing is deserialized into JS objects by js-bson on this path.

use std::ptr;

use bson2json_core::batch::{cursor_parts, top_level_elements, CursorParts, RawElement};
use bson2json_core::{Error as CoreError, Options, Transcoder};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::{bytes_of, check, check_regexes, make_string, options, throw_transcode_error};

fn rd_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn rd_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// The content of a string element (type 0x02) whose value starts at `v`.
fn str_at(b: &[u8], v: usize) -> &[u8] {
    let len = rd_i32(b, v).max(1) as usize;
    &b[v + 4..v + 4 + len - 1]
}

fn js_str(env: &Env, s: &[u8]) -> Result<sys::napi_value> {
    let mut v = ptr::null_mut();
    // SAFETY: `s` is valid for `len` reads; valid out-pointer.
    unsafe {
        check(sys::napi_create_string_utf8(
            env.raw(),
            s.as_ptr().cast(),
            s.len() as isize,
            &mut v,
        ))?;
    }
    Ok(v)
}

fn set(
    env: &Env,
    obj: sys::napi_value,
    key: &std::ffi::CStr,
    value: sys::napi_value,
) -> Result<()> {
    // SAFETY: live values of this scope; `key` is NUL-terminated.
    unsafe {
        check(sys::napi_set_named_property(
            env.raw(),
            obj,
            key.as_ptr(),
            value,
        ))
    }
}

/// Property names made once per call: `napi_set_named_property` makes the name's V8 string and
/// looks it up in V8's string table on every call, ten times per event; a name made once is
/// looked up on its first use and reused for every later event of the batch.
#[derive(Default)]
struct Keys {
    made: Vec<(*const std::ffi::c_char, sys::napi_value)>,
}

impl Keys {
    fn set(
        &mut self,
        env: &Env,
        obj: sys::napi_value,
        key: &'static std::ffi::CStr,
        value: sys::napi_value,
    ) -> Result<()> {
        let p = key.as_ptr();
        let k = match self.made.iter().find(|(q, _)| *q == p) {
            Some(&(_, k)) => k,
            None => {
                let k = js_str(env, key.to_bytes())?;
                self.made.push((p, k));
                k
            }
        };
        // SAFETY: `obj`, `k` and `value` are live values of the current call's handle scope
        // (the keys are made in it and dropped with `self` before the call returns).
        unsafe { check(sys::napi_set_property(env.raw(), obj, k, value)) }
    }
}

fn new_object(env: &Env) -> Result<sys::napi_value> {
    let mut o = ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { check(sys::napi_create_object(env.raw(), &mut o))? };
    Ok(o)
}

fn number(env: &Env, x: f64) -> Result<sys::napi_value> {
    let mut v = ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { check(sys::napi_create_double(env.raw(), x, &mut v))? };
    Ok(v)
}

fn null(env: &Env) -> Result<sys::napi_value> {
    let mut v = ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { check(sys::napi_get_null(env.raw(), &mut v))? };
    Ok(v)
}

/// Transcodes `doc` (a complete BSON document) to a JS string through the thread's buffers.
// The thread state is passed split into its fields because it is borrowed once by the caller.
#[allow(clippy::too_many_arguments)]
fn json_value(
    env: &Env,
    tc: &mut Transcoder,
    out: &mut Vec<u8>,
    wide: &mut Vec<u16>,
    regexes: &mut Vec<(Option<usize>, bson2json_core::RegexRecord)>,
    index: usize,
    doc: &[u8],
    opts: &Options,
) -> std::result::Result<sys::napi_value, Either<CoreError, Error>> {
    out.clear();
    tc.transcode(doc, opts, out).map_err(Either::A)?;
    regexes.extend(tc.regexes().iter().cloned().map(|r| (Some(index), r)));
    make_string(env, out, wide).map_err(Either::B)
}

/// A resume token as a JS value: `{ _data: string }` built directly for the format every
/// MongoDB version uses; any other shape as its canonical Extended JSON text (the wrapper
/// parses it with `EJSON.parse`).
fn token_value(
    env: &Env,
    doc: &[u8],
    tc: &mut Transcoder,
    out: &mut Vec<u8>,
    wide: &mut Vec<u16>,
) -> std::result::Result<(sys::napi_value, bool), Either<CoreError, Error>> {
    let mut els = Vec::new();
    top_level_elements(doc, &mut els).map_err(Either::A)?;
    if let [RawElement {
        element_type: 0x02,
        key: b"_data",
        value_start,
        ..
    }] = els[..]
    {
        let o = new_object(env).map_err(Either::B)?;
        let s = js_str(env, str_at(doc, value_start)).map_err(Either::B)?;
        set(env, o, c"_data", s).map_err(Either::B)?;
        return Ok((o, true));
    }
    out.clear();
    tc.transcode(
        doc,
        &Options::with_dialect(bson2json_core::Dialect::Canonical),
        out,
    )
    .map_err(Either::A)?;
    Ok((make_string(env, out, wide).map_err(Either::B)?, false))
}

/// One raw change-stream reply's `cursor` document → `{ id, ns, postBatchResumeToken,
/// events }`. With `whole`, each event also carries `json`, the whole event as one JSON string
/// (in `compat` exactly `JSON.stringify` of what the driver's own `watch()` yields).
#[napi(js_name = "transcodeChangeBatch", catch_unwind)]
pub fn transcode_change_batch<'env>(
    env: &'env Env,
    cursor: Unknown<'env>,
    whole: bool,
    flags: u32,
    max_depth: u32,
    max_output_bytes: f64,
) -> Result<Unknown<'env>> {
    let opts = options(flags, max_depth, max_output_bytes);
    // Copied: the events are read while their JS objects are built, and setting a property
    // can run JavaScript (a setter on `Object.prototype`) that could detach a borrowed input.
    // (A reply is one network round trip's worth of data; the copy is small beside it.)
    let bytes = bytes_of(env, &cursor, &"cursor")?.into_owned();
    let bytes = &bytes[..];
    let mut parts = CursorParts::default();
    if let Err(e) = cursor_parts(bytes, &mut parts) {
        return Err(throw_transcode_error(env, &e, None));
    }
    let mut regexes = Vec::new();
    let built = crate::with_state(
        |st| -> std::result::Result<sys::napi_value, Either<(usize, CoreError), Error>> {
            let (tc, out, wide) = (&mut st.transcoder, &mut st.out, &mut st.wide);
            let result = new_object(env).map_err(Either::B)?;
            let id = BigInt::from(parts.id);
            // SAFETY: converts into a live value of this scope.
            let idv = unsafe { BigInt::to_napi_value(env.raw(), id) }.map_err(Either::B)?;
            set(env, result, c"id", idv).map_err(Either::B)?;
            let nsv = match parts.ns {
                Some((a, b)) => js_str(env, &bytes[a..b]),
                None => null(env),
            }
            .map_err(Either::B)?;
            set(env, result, c"ns", nsv).map_err(Either::B)?;
            let pbrt = match parts.post_batch_resume_token {
                Some((a, b)) => {
                    let (v, plain) = token_value(env, &bytes[a..b], tc, out, wide)
                        .map_err(|e| e.map_a(|x| (0, x)))?;
                    if !plain {
                        set(env, result, c"postBatchResumeTokenEJSON", v).map_err(Either::B)?;
                        null(env).map_err(Either::B)?
                    } else {
                        v
                    }
                }
                None => null(env).map_err(Either::B)?,
            };
            set(env, result, c"postBatchResumeToken", pbrt).map_err(Either::B)?;

            let mut arr = ptr::null_mut();
            // SAFETY: valid out-pointer.
            unsafe {
                check(sys::napi_create_array_with_length(
                    env.raw(),
                    parts.docs.len(),
                    &mut arr,
                ))
            }
            .map_err(Either::B)?;
            let mut els = Vec::new();
            let mut keys = Keys::default();
            for (i, &(a, b)) in parts.docs.iter().enumerate() {
                let ev = &bytes[a..b];
                let wrap = |e: Either<CoreError, Error>| e.map_a(|x| (i, x.shifted(a)));
                let wrap_sub = |v: usize| {
                    move |e: Either<CoreError, Error>| e.map_a(|x| (i, x.shifted(a + v)))
                };
                top_level_elements(ev, &mut els).map_err(|e| Either::A((i, e.shifted(a))))?;
                let o = new_object(env).map_err(Either::B)?;
                for el in &els {
                    let v = el.value_start;
                    let sub = &ev[v..el.value_end];
                    let (key, value): (&std::ffi::CStr, sys::napi_value) =
                        match (el.key, el.element_type) {
                            (b"_id", 0x03) => {
                                let (tv, plain) =
                                    token_value(env, sub, tc, out, wide).map_err(wrap_sub(v))?;
                                (
                                    if plain {
                                        c"resumeToken"
                                    } else {
                                        c"resumeTokenEJSON"
                                    },
                                    tv,
                                )
                            }
                            (b"operationType", 0x02) => (
                                c"operationType",
                                js_str(env, str_at(ev, v)).map_err(Either::B)?,
                            ),
                            (b"ns", 0x03) => {
                                let nso = new_object(env).map_err(Either::B)?;
                                let mut nels = Vec::new();
                                top_level_elements(sub, &mut nels)
                                    .map_err(|e| Either::A((i, e.shifted(a + v))))?;
                                for n in &nels {
                                    if n.element_type == 0x02
                                        && (n.key == b"db" || n.key == b"coll")
                                    {
                                        let sv = js_str(env, str_at(sub, n.value_start))
                                            .map_err(Either::B)?;
                                        keys.set(
                                            env,
                                            nso,
                                            if n.key == b"db" { c"db" } else { c"coll" },
                                            sv,
                                        )
                                        .map_err(Either::B)?;
                                    }
                                }
                                (c"ns", nso)
                            }
                            (b"clusterTime", 0x11) => {
                                let ts = rd_u64(ev, v);
                                let t = new_object(env).map_err(Either::B)?;
                                keys.set(
                                    env,
                                    t,
                                    c"t",
                                    number(env, (ts >> 32) as f64).map_err(Either::B)?,
                                )
                                .map_err(Either::B)?;
                                keys.set(
                                    env,
                                    t,
                                    c"i",
                                    number(env, (ts & 0xffff_ffff) as f64).map_err(Either::B)?,
                                )
                                .map_err(Either::B)?;
                                (c"clusterTime", t)
                            }
                            (b"wallTime", 0x09) => {
                                let ms = rd_u64(ev, v) as i64;
                                let mut d = ptr::null_mut();
                                // SAFETY: valid out-pointer.
                                unsafe {
                                    check(sys::napi_create_date(env.raw(), ms as f64, &mut d))
                                }
                                .map_err(Either::B)?;
                                (c"wallTime", d)
                            }
                            (b"splitEvent", 0x03) => {
                                let so = new_object(env).map_err(Either::B)?;
                                let mut sels = Vec::new();
                                top_level_elements(sub, &mut sels)
                                    .map_err(|e| Either::A((i, e.shifted(a + v))))?;
                                for n in &sels {
                                    if n.element_type == 0x10
                                        && (n.key == b"fragment" || n.key == b"of")
                                    {
                                        let x = number(env, f64::from(rd_i32(sub, n.value_start)))
                                            .map_err(Either::B)?;
                                        keys.set(
                                            env,
                                            so,
                                            if n.key == b"fragment" {
                                                c"fragment"
                                            } else {
                                                c"of"
                                            },
                                            x,
                                        )
                                        .map_err(Either::B)?;
                                    }
                                }
                                (c"splitEvent", so)
                            }
                            (b"documentKey", 0x03) => (
                                c"documentKey",
                                json_value(env, tc, out, wide, &mut regexes, i, sub, &opts)
                                    .map_err(wrap_sub(v))?,
                            ),
                            (
                                b"fullDocument"
                                | b"fullDocumentBeforeChange"
                                | b"updateDescription",
                                t,
                            ) if !whole => {
                                let key = match el.key {
                                    b"fullDocument" => c"fullDocument",
                                    b"fullDocumentBeforeChange" => c"fullDocumentBeforeChange",
                                    _ => c"updateDescription",
                                };
                                let value = if t == 0x03 {
                                    json_value(env, tc, out, wide, &mut regexes, i, sub, &opts)
                                        .map_err(wrap_sub(v))?
                                } else {
                                    null(env).map_err(Either::B)?
                                };
                                (key, value)
                            }
                            _ => continue,
                        };
                    keys.set(env, o, key, value).map_err(Either::B)?;
                }
                if whole {
                    let j =
                        json_value(env, tc, out, wide, &mut regexes, i, ev, &opts).map_err(wrap)?;
                    keys.set(env, o, c"json", j).map_err(Either::B)?;
                }
                // SAFETY: `arr` is a live array with room for index `i`.
                unsafe { check(sys::napi_set_element(env.raw(), arr, i as u32, o)) }
                    .map_err(Either::B)?;
            }
            set(env, result, c"events", arr).map_err(Either::B)?;
            Ok(result)
        },
    );
    let value = match built {
        Ok(v) => v,
        Err(Either::A((i, e))) => {
            let msg = format!("{}: {} (event {i})", e.code(), e);
            return Err(crate::throw_coded(env, e.code(), &msg, e.offset(), Some(i)));
        }
        Err(Either::B(e)) => return Err(e),
    };
    if !regexes.is_empty() {
        check_regexes(env, regexes)?;
    }
    // SAFETY: `value` is a live value of this call.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}

trait MapA<A, B> {
    fn map_a<C>(self, f: impl FnOnce(A) -> C) -> Either<C, B>;
}

impl<A, B> MapA<A, B> for Either<A, B> {
    fn map_a<C>(self, f: impl FnOnce(A) -> C) -> Either<C, B> {
        match self {
            Either::A(a) => Either::A(f(a)),
            Either::B(b) => Either::B(b),
        }
    }
}
