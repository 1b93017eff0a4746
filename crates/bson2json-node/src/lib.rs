//! Node-API bindings for bson2json: argument conversion, string hand-off and error mapping
//! only. All transcoding lives in `bson2json-core`.
//!
//! The exported functions take options already resolved by the JavaScript wrapper
//! (`index.js`) as plain numbers, so a call costs no property lookups:
//! `flags` = dialect (bits 0-1: 0 compat, 1 relaxed, 2 canonical) | utf8 replace (bit 2) |
//! js-bson 6 (bit 3) | `promoteLongs: false` (bit 4) | `promoteBuffers` (bit 5) | `bsonRegExp`
//! (bit 6) | `promoteValues: false` (bit 7).
#![deny(clippy::all)]
// Raw Node-API calls live in `node_api`, the one module allowed `unsafe`.
#![deny(unsafe_code)]
// The exports are only reachable through napi's registration, which test builds leave out.
#![cfg_attr(test, allow(dead_code))]

use std::borrow::Cow;
use std::cell::RefCell;

use bson2json_core::{
    BsonVersion, Dialect, Error as CoreError, ErrorKind, Options, Transcoder, Utf8Mode,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

mod batch;
mod changes;
mod fast;
#[allow(unsafe_code)]
mod node_api;
mod shape;
mod staged;
mod strings;

pub(crate) use node_api::bytes_of;

/// Scratch buffers above this many bytes are released after the call instead of being kept
/// for the next one: large enough to reuse the buffers of 4 MiB batches (fresh allocations of
/// that size cost page faults on every call), small enough to bound what an idle thread holds.
pub(crate) const KEEP_CAPACITY: usize = 32 * 1024 * 1024;

/// Per-thread scratch: every Node thread (main or worker) gets its own.
#[derive(Default)]
pub(crate) struct State {
    pub transcoder: Transcoder,
    pub out: Vec<u8>,
    pub wide: Vec<u16>,
    /// The last synchronous batch's output, kept for the next one (its pages stay mapped and
    /// it does not grow again from empty).
    pub batch: bson2json_core::batch::BatchOutput,
    /// (pattern, flags) pairs V8 has already accepted.
    pub regex_ok: std::collections::HashSet<(String, String)>,
}

thread_local! {
    pub(crate) static STATE: RefCell<State> = RefCell::new(State {
        transcoder: Transcoder::new(),
        out: Vec::new(),
        wide: Vec::new(),
        batch: Default::default(),
        regex_ok: std::collections::HashSet::new(),
    });
}

/// Runs `f` with the thread's scratch moved out of the thread-local slot, for work that
/// creates JS values (and so may run JavaScript: a setter on `Object.prototype`, say) while
/// it uses the scratch. JavaScript that re-enters the addon meanwhile finds an empty state of
/// its own instead of a borrowed one; it is dropped when `f`'s state is put back.
pub(crate) fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut st = STATE.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let r = f(&mut st);
    STATE.with(|s| *s.borrow_mut() = st);
    r
}

/// The bits of every call's `flags` argument. Exported to JavaScript (the generated
/// `binding.d.ts` carries it); `lib/options.js` builds `flags` from its own copy of these numbers,
/// which `__test__/reentry.spec.ts` checks equal to this enum. The two low bits are the dialect.
#[napi]
pub enum OptionFlag {
    /// `dialect: 'relaxed'` (the low two bits: 0 compat, 1 relaxed, 2 canonical).
    Relaxed = 1,
    /// `dialect: 'canonical'`.
    Canonical = 2,
    /// `utf8: 'replace'`.
    Utf8Replace = 4,
    /// `bsonVersion: 6`.
    Bson6 = 8,
    /// `promoteLongs: false`.
    Longs = 16,
    /// `promoteBuffers: true`.
    Buffers = 32,
    /// `bsonRegExp: true`.
    BsonRegExp = 64,
    /// `promoteValues: false`.
    NoPromote = 128,
}

const fn bit(f: OptionFlag) -> u32 {
    f as u32
}

/// Decodes the wrapper's packed option numbers.
pub(crate) fn options(flags: u32, max_depth: u32, max_output_bytes: f64) -> Options {
    Options {
        dialect: match flags & (bit(OptionFlag::Relaxed) | bit(OptionFlag::Canonical)) {
            1 => Dialect::Relaxed,
            2 => Dialect::Canonical,
            _ => Dialect::Compat,
        },
        utf8: if flags & bit(OptionFlag::Utf8Replace) != 0 {
            Utf8Mode::Replace
        } else {
            Utf8Mode::Strict
        },
        max_depth,
        max_output_bytes: if max_output_bytes.is_finite() && max_output_bytes >= 0.0 {
            max_output_bytes as usize
        } else {
            bson2json_core::DEFAULT_MAX_OUTPUT_BYTES
        },
        bson_version: if flags & bit(OptionFlag::Bson6) != 0 {
            BsonVersion::V6
        } else {
            BsonVersion::V7
        },
        promote_longs: flags & bit(OptionFlag::Longs) == 0,
        promote_values: flags & bit(OptionFlag::NoPromote) == 0,
        promote_buffers: flags & bit(OptionFlag::Buffers) != 0,
        bson_regexp: flags & bit(OptionFlag::BsonRegExp) != 0,
    }
}

/// Number of low bits of `packed` (the single-document calls' one number) that hold `flags`;
/// the rest is `maxDepth`.
pub(crate) const FLAG_BITS: u32 = 8;

/// Throws a JS `TypeError` with `msg` and returns the marker error that tells napi-rs an
/// exception is already pending.
pub(crate) fn type_error(env: &Env, msg: &str) -> Error {
    match env.throw_type_error(msg, None) {
        Ok(()) => Error::new(Status::PendingException, msg.to_owned()),
        Err(e) => e,
    }
}

/// Drops an exception a failed Node-API query may have left pending.
pub(crate) fn clear_pending(env: &Env) {
    node_api::take_exception(env);
}

/// Throws a JS `Error` named `TranscodeError` with `code`, `offset` and (for batches) `index`,
/// and returns the marker error that tells napi-rs an exception is already pending.
pub(crate) fn throw_transcode_error(env: &Env, e: &CoreError, index: Option<usize>) -> Error {
    let msg = match index {
        Some(i) => format!("{}: {} (document {i})", e.code(), e),
        None => format!("{}: {}", e.code(), e),
    };
    throw_coded(env, e.code(), &msg, e.offset(), index)
}

pub(crate) fn throw_coded(
    env: &Env,
    code: &str,
    msg: &str,
    offset: usize,
    index: Option<usize>,
) -> Error {
    let thrown =
        error_object(env, code, msg, offset, index).and_then(|obj| node_api::throw(env, obj));
    match thrown {
        Ok(()) => Error::new(Status::PendingException, msg.to_owned()),
        Err(e) => e,
    }
}

/// Builds (without throwing) the JS `Error` bson2json reports: `name` `TranscodeError`,
/// `code`, `offset` and, for batches, `index`.
pub(crate) fn error_object(
    env: &Env,
    code: &str,
    msg: &str,
    offset: usize,
    index: Option<usize>,
) -> Result<node_api::Value> {
    let err = node_api::error(
        env,
        node_api::string_utf8(env, code.as_bytes())?,
        node_api::string_utf8(env, msg.as_bytes())?,
    )?;
    let mut obj = Object::from_raw(env.raw(), err.raw());
    obj.set_named_property("name", "TranscodeError")?;
    obj.set_named_property("offset", offset as f64)?;
    if let Some(i) = index {
        obj.set_named_property("index", i as f64)?;
    }
    Ok(err)
}

/// Creates a JS string from UTF-8 JSON bytes the cheapest way V8 allows: one-byte (Latin-1)
/// strings when every character fits, UTF-16 built here otherwise (V8's own UTF-8 decoding is
/// several times slower as soon as one character is non-ASCII).
pub(crate) fn make_string(env: &Env, bytes: &[u8], wide: &mut Vec<u16>) -> Result<node_api::Value> {
    let value = strings::from_utf8(env, bytes, wide).map(|(v, _)| v);
    if wide.capacity() * 2 > KEEP_CAPACITY {
        *wide = Vec::new();
    }
    value
}

/// Runs `new RegExp(pattern, flags)` in V8 for every regex the core met, as js-bson does, and
/// fails with `BSON_INVALID_REGEX` where V8 throws a `SyntaxError`. Called with no borrow of
/// the thread state held, so a patched global `RegExp` that re-enters the addon is harmless.
pub(crate) fn check_regexes(
    env: &Env,
    regexes: impl IntoIterator<Item = (Option<usize>, bson2json_core::RegexRecord)>,
) -> Result<()> {
    for (index, r) in regexes {
        let key = (r.pattern, r.flags);
        if STATE.with(|s| s.borrow().regex_ok.contains(&key)) {
            continue;
        }
        match new_regexp(env, &key.0, &key.1)? {
            None => {
                STATE.with(|s| {
                    let mut s = s.borrow_mut();
                    if s.regex_ok.len() > 4096 {
                        s.regex_ok.clear();
                    }
                    s.regex_ok.insert(key);
                });
            }
            Some(message) => {
                let e = CoreError::custom(
                    ErrorKind::InvalidRegex,
                    r.offset,
                    "invalid regular expression",
                );
                let msg = format!(
                    "{}: {} at byte {} ({message})",
                    e.code(),
                    e.detail(),
                    r.offset
                );
                return Err(throw_coded(env, e.code(), &msg, r.offset, index));
            }
        }
    }
    Ok(())
}

/// `Ok(None)` if V8 accepts the regex, `Ok(Some(message))` with its SyntaxError message if not.
fn new_regexp(env: &Env, pattern: &str, flags: &str) -> Result<Option<String>> {
    let global = node_api::global(env)?;
    let ctor = node_api::get_named(env, global, c"RegExp").ok_or_else(|| {
        node_api::take_exception(env);
        Error::new(Status::GenericFailure, "RegExp is unavailable".to_owned())
    })?;
    let args = [
        node_api::string_utf8(env, pattern.as_bytes())?,
        node_api::string_utf8(env, flags.as_bytes())?,
    ];
    match node_api::construct(env, ctor, &args) {
        Ok(_) => Ok(None),
        Err(None) => Err(Error::new(
            Status::GenericFailure,
            "RegExp construction failed".to_owned(),
        )),
        Err(Some(exc)) => {
            let message = node_api::get_named(env, exc, c"message")
                .and_then(|m| node_api::short_string_value(env, m));
            if message.is_none() {
                node_api::take_exception(env);
            }
            Ok(Some(message.unwrap_or_else(|| "SyntaxError".to_owned())))
        }
    }
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
) -> Result<R> {
    let (outcome, out) = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let State {
            transcoder, out, ..
        } = &mut *s;
        let mut out = std::mem::take(out);
        out.clear();
        let outcome = transcoder
            .transcode(&bson, opts, &mut out)
            .map(|()| transcoder.regexes().to_vec());
        (outcome, out)
    });
    drop(bson);
    let result = match outcome {
        Err(e) => Err(throw_transcode_error(env, &e, None)),
        Ok(regexes) => {
            let checked = if regexes.is_empty() {
                Ok(())
            } else {
                check_regexes(env, regexes.into_iter().map(|r| (None, r)))
            };
            checked.and_then(|()| {
                let mut wide = STATE.with(|s| std::mem::take(&mut s.borrow_mut().wide));
                let r = finish(&out, &mut wide);
                if wide.capacity() * 2 <= KEEP_CAPACITY {
                    STATE.with(|s| s.borrow_mut().wide = wide);
                }
                r
            })
        }
    };
    if out.capacity() <= KEEP_CAPACITY {
        STATE.with(|s| s.borrow_mut().out = out);
    }
    result
}

/// A new V8-managed `Buffer` holding a copy of `bytes` (cheaper than an external buffer with a
/// finalizer for the sizes JSON documents have, and never tied to Rust memory).
pub(crate) fn make_buffer(env: &Env, bytes: &[u8]) -> Result<node_api::Value> {
    node_api::buffer_copy(env, bytes)
}

/// Test-only hook (used by the test suite to prove that a panic inside the addon becomes a
/// JS exception instead of aborting the process).
#[napi(js_name = "__panicForTests", catch_unwind)]
pub fn panic_for_tests() {
    panic!("deliberate panic for tests");
}
