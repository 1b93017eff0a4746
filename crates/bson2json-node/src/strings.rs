//! Handing JSON text to V8 as a JS string.
//!
//! Short texts become one flat string: one-byte (Latin-1) when every character is ASCII,
//! UTF-16 converted here otherwise (V8's own UTF-8 decoding is several times slower as soon as
//! one character is not ASCII). A text whose V8 payload could exceed V8's largest regular heap
//! object (128 KiB) is instead built the way V8's own `JSON.stringify` returns a long result:
//! as a rope (`ConsString`) of parts that each fit in a regular page, each part one-byte or
//! two-byte on its own and converted while it is hot in the cache. A single
//! flat string that size is allocated in V8's large-object space, on freshly mapped pages,
//! and every one of those pages costs a page fault when it is filled. The parts are joined by
//! a small JS function (`a + b` is the only way to make a rope; Node-API has no call for it),
//! compiled once per environment.

use std::cell::Cell;

use napi::bindgen_prelude::*;

use crate::node_api::{self, Reference, Value};
use crate::state::keeps_wide;

/// The payload above which V8 would put a string in its large-object space:
/// `kMaxRegularHeapObjectSize` (128 KiB) less the string header, with room to spare.
const FLAT_MAX_BYTES: usize = 128 * 1024 - 64;

/// The UTF-8 length up to which a text is always one flat string: at most [`FLAT_MAX_BYTES`]
/// of payload even as UTF-16 (a UTF-16 text never has more code units than its UTF-8 has
/// bytes).
const FLAT_UTF8: usize = FLAT_MAX_BYTES / 2;

/// UTF-8 bytes per part of a rope (at most 64 KiB of payload). Parts near the 128 KiB limit
/// would leave half of each 256 KiB young-generation page empty and double the scavenges.
const PART_UTF8: usize = 32 * 1024;

/// The UTF-8 length above which a flat string is made after all: a rope is only cheaper while
/// its parts, all alive until they are joined, fit in V8's young generation (a 16 MiB
/// semi-space by default, up to twice this as UTF-16). Larger ones are copied and promoted by
/// the scavenges their own allocation triggers, which costs as many page faults as one large
/// object.
const ROPE_MAX_UTF8: usize = 8 * 1024 * 1024;

thread_local! {
    /// The join function of the environment that runs on this thread, kept by a reference
    /// (with that environment's [`node_api::env_id`]).
    static JOINER: Cell<Option<(usize, Reference)>> = const { Cell::new(None) };
}

const JOIN_SRC: &str = "(function bson2jsonJoin(p) { let s = p[0]; \
    for (let i = 1; i < p.length; i++) s += p[i]; return s; })";

/// Forgets the join function when its environment is torn down (a worker exiting).
fn forget_joiner(env: usize) {
    JOINER.with(|j| {
        if matches!(j.get(), Some((e, _)) if e == env) {
            j.set(None);
        }
    });
}

/// The join function for `env`, compiled on first use; `None` if V8 refuses to compile it
/// (the caller then builds one flat string).
fn joiner(env: &Env) -> Option<Value> {
    let id = node_api::env_id(env);
    if let Some((_, r)) = JOINER.with(Cell::get).filter(|&(e, _)| e == id) {
        if let Some(func) = node_api::reference_value(env, &r) {
            return Some(func);
        }
    }
    let made = node_api::string_latin1(env, JOIN_SRC.as_bytes())
        .ok_or(())
        .and_then(|src| node_api::run_script(env, src).map_err(drop))
        .and_then(|func| Ok((func, node_api::reference(env, func).map_err(drop)?)));
    let Ok((func, reference)) = made else {
        node_api::take_exception(env);
        return None;
    };
    if JOINER.with(Cell::get).is_none_or(|(e, _)| e != id) {
        node_api::on_teardown(env, forget_joiner);
    }
    JOINER.with(|j| j.set(Some((id, reference))));
    Some(func)
}

fn too_long() -> Error {
    Error::new(
        Status::GenericFailure,
        "could not create the JSON string (too long for V8?)".to_owned(),
    )
}

/// A flat JS string of Latin-1 (here always ASCII) bytes.
#[inline]
pub(crate) fn latin1(env: &Env, bytes: &[u8]) -> Result<Value> {
    node_api::string_latin1(env, bytes).ok_or_else(too_long)
}

/// A flat JS string of UTF-16 code units.
#[inline]
pub(crate) fn utf16(env: &Env, units: &[u16]) -> Result<Value> {
    node_api::string_utf16(env, units).ok_or_else(too_long)
}

/// A JS string of the UTF-8 `text` and its length in UTF-16 code units. `wide` is scratch.
#[inline]
pub(crate) fn from_utf8(env: &Env, text: &[u8], wide: &mut Vec<u16>) -> Result<(Value, usize)> {
    match from_utf8_flat(env, text, wide)? {
        Some(made) => Ok(made),
        None => rope(env, text, wide),
    }
}

/// [`from_utf8`]'s string when it is a flat one (making it runs no JavaScript); `None` when it
/// would be a rope.
#[inline]
pub(crate) fn from_utf8_flat(
    env: &Env,
    text: &[u8],
    wide: &mut Vec<u16>,
) -> Result<Option<(Value, usize)>> {
    if text.len() > FLAT_UTF8 && text.len() <= ROPE_MAX_UTF8 {
        if text.len() <= FLAT_MAX_BYTES && bson2json_core::is_ascii(text) {
            return Ok(Some((latin1(env, text)?, text.len())));
        }
        return Ok(None);
    }
    flat(env, text, wide).map(Some)
}

/// One flat string of `text` (one-byte if ASCII, else UTF-16) and its UTF-16 length.
#[inline]
fn flat(env: &Env, text: &[u8], wide: &mut Vec<u16>) -> Result<(Value, usize)> {
    if bson2json_core::is_ascii(text) {
        return Ok((latin1(env, text)?, text.len()));
    }
    let dst = utf16_scratch(wide, text.len());
    // The converter does not validate: `text` is transcoder output, always well-formed UTF-8.
    let n = bson2json_core::to_utf16(text, dst);
    Ok((utf16(env, &wide[..n])?, n))
}

/// The scratch that `utf8::to_utf16` needs for `bytes` of UTF-8: `bytes` units plus its slack.
/// The buffer keeps its length between calls, so it is only zero-filled when it grows.
#[inline]
pub(crate) fn utf16_scratch(wide: &mut Vec<u16>, bytes: usize) -> &mut [u16] {
    let need = bytes + bson2json_core::UTF16_SLACK;
    if wide.len() < need {
        wide.resize(need, 0);
    }
    &mut wide[..need]
}

/// The rope of `text` in parts of at most [`PART_UTF8`] bytes cut between characters, or one
/// flat string if the join function is unavailable.
#[cold]
#[inline(never)]
fn rope(env: &Env, text: &[u8], wide: &mut Vec<u16>) -> Result<(Value, usize)> {
    let Some(join) = joiner(env) else {
        return flat(env, text, wide);
    };
    let parts = node_api::array(env, 0)?;
    let mut units = 0usize;
    let mut at = 0usize;
    let mut i = 0u32;
    while at < text.len() {
        let mut end = (at + PART_UTF8).min(text.len());
        // Back up to the start of a character (a UTF-8 continuation byte is 0b10xx_xxxx).
        while end < text.len() && text[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        let (s, n) = flat(env, &text[at..end], wide)?;
        node_api::set_element(env, parts, i, s)?;
        units += n;
        at = end;
        i += 1;
    }
    let recv = node_api::undefined(env)?;
    // Only V8's string length limit can make `+` throw: report it like a flat string.
    let value = node_api::call(env, recv, join, &[parts]).map_err(|_| too_long())?;
    Ok((value, units))
}

/// A JS string of the UTF-8 JSON `text` ([`from_utf8`]). `wide` is scratch; it is released if
/// this text grew it past [`KEEP_CAPACITY`](crate::state::KEEP_CAPACITY).
pub(crate) fn json(env: &Env, text: &[u8], wide: &mut Vec<u16>) -> Result<Value> {
    let value = from_utf8(env, text, wide).map(|(v, _)| v);
    if !keeps_wide(wide) {
        *wide = Vec::new();
    }
    value
}
