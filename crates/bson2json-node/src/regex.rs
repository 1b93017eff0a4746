//! The regular expressions of a transcoded document, checked the way js-bson checks them: each
//! one is constructed with the global `RegExp`, and one V8 refuses fails the call with
//! `BSON_INVALID_REGEX`.
//!
//! Constructing a `RegExp` runs JavaScript (the global may be patched, and may re-enter the
//! addon), so callers check only after their input is read and dropped, with no borrow of the
//! thread state held.

use bson2json_core::{Error as CoreError, ErrorKind, RegexRecord};
use napi::bindgen_prelude::*;

use crate::errors::Failure;
use crate::node_api;
use crate::state::STATE;

/// Accepted (pattern, flags) pairs kept per thread before the cache is emptied.
const KEPT: usize = 4096;

/// Runs `new RegExp(pattern, flags)` in V8 for every regex the core met (each with its
/// document's index, in a batch); the first one V8 refuses is the failure.
pub(crate) fn check(
    env: &Env,
    regexes: impl IntoIterator<Item = (Option<usize>, RegexRecord)>,
) -> std::result::Result<(), Failure> {
    for (index, r) in regexes {
        let key = (r.pattern, r.flags);
        if STATE.with(|s| s.borrow().regex_ok.contains(&key)) {
            continue;
        }
        match new_regexp(env, &key.0, &key.1)? {
            None => STATE.with(|s| {
                let mut s = s.borrow_mut();
                if s.regex_ok.len() > KEPT {
                    s.regex_ok.clear();
                }
                s.regex_ok.insert(key);
            }),
            Some(message) => {
                return Err(Failure::Regex {
                    error: CoreError::custom(
                        ErrorKind::InvalidRegex,
                        r.offset,
                        "invalid regular expression",
                    ),
                    index,
                    message,
                })
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
