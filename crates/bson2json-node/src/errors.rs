//! What the binding reports when a call fails: [`Failure`], which every fallible step returns
//! (so `?` works across core, batch and Node-API errors), and the JS errors it becomes.
//!
//! A `TranscodeError` always carries `name`, `code` (`'BSON_…'`), `offset` (a byte offset in
//! the call's input), `detail` (the description, without the position the message adds) and,
//! when the input held several documents or events, `index`. Its message is
//! `code: detail` followed by the position, in the same words for every call.
//!
//! This module sits beside [`node_api`] and only calls down into it.
//!
//! [`node_api`]: crate::node_api

use bson2json_core::batch::BatchError;
use bson2json_core::Error as CoreError;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::node_api::{self, Value};

/// Why a call failed.
pub(crate) enum Failure {
    /// An error in the input; `Some(i)` when it is in the `i`-th event of a change batch (the
    /// offset then counts from the start of the whole input).
    Transcode(CoreError, Option<usize>),
    /// A batch's error: the document's index and start, the offset within the document.
    Batch(BatchError),
    /// A regular expression V8 refuses (`message` is its `SyntaxError` message); `index` is
    /// the document's, in a batch.
    Regex {
        error: CoreError,
        index: Option<usize>,
        message: String,
    },
    /// A Node-API failure, or an exception that is already pending
    /// (`Status::PendingException`: a `TypeError` thrown by [`type_error`], a JS exception).
    Napi(Error),
}

impl From<CoreError> for Failure {
    fn from(e: CoreError) -> Self {
        Failure::Transcode(e, None)
    }
}

impl From<BatchError> for Failure {
    fn from(e: BatchError) -> Self {
        Failure::Batch(e)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Napi(e)
    }
}

/// The properties of a `TranscodeError`, and its message.
struct Report {
    code: &'static str,
    detail: String,
    offset: usize,
    index: Option<usize>,
    message: String,
}

impl Failure {
    /// The `TranscodeError` this failure becomes; `Err` for a Node-API failure.
    fn report(self) -> std::result::Result<Report, Error> {
        Ok(match self {
            Failure::Transcode(e, index) => Report {
                code: e.code(),
                detail: e.detail().to_owned(),
                offset: e.offset(),
                index,
                message: match index {
                    Some(i) => format!("{}: {e} (event {i})", e.code()),
                    None => format!("{}: {e}", e.code()),
                },
            },
            Failure::Batch(b) => Report {
                code: b.error.code(),
                detail: b.error.detail().to_owned(),
                offset: b.doc_offset + b.error.offset(),
                index: Some(b.index),
                message: format!(
                    "{}: {} (document {}, byte {} of the document)",
                    b.error.code(),
                    b.error.detail(),
                    b.index,
                    b.error.offset()
                ),
            },
            Failure::Regex {
                error,
                index,
                message,
            } => Report {
                code: error.code(),
                detail: format!("{} ({message})", error.detail()),
                offset: error.offset(),
                index,
                message: format!("{}: {error} ({message})", error.code()),
            },
            Failure::Napi(e) => return Err(e),
        })
    }

    /// This failure as one in the `index`-th event of a change batch, whose bytes start
    /// `start` bytes into the input.
    pub(crate) fn in_event(self, index: usize, start: usize) -> Self {
        match self {
            Failure::Transcode(e, _) => Failure::Transcode(e.shifted(start), Some(index)),
            f => f,
        }
    }

    /// Throws this failure as a JS exception (a `TranscodeError`, or napi-rs's error for a
    /// Node-API failure) and returns what an export returns for it: the marker error that
    /// tells napi-rs an exception is pending, or the Node-API error for napi-rs to throw.
    pub(crate) fn throw(self, env: &Env) -> Error {
        let r = match self.report() {
            Ok(r) => r,
            Err(e) => return e,
        };
        match error_object(env, &r).and_then(|obj| node_api::throw(env, obj)) {
            Ok(()) => Error::new(Status::PendingException, r.message),
            Err(e) => e,
        }
    }

    /// This failure as a JS value without throwing it (a task's rejection): the
    /// `TranscodeError`, or `Err` for a Node-API failure.
    pub(crate) fn into_value(self, env: &Env) -> Result<Value> {
        error_object(env, &self.report()?)
    }
}

/// Builds (without throwing) the `TranscodeError` of `r`.
fn error_object(env: &Env, r: &Report) -> Result<Value> {
    let err = node_api::error(
        env,
        node_api::string_utf8(env, r.code.as_bytes())?,
        node_api::string_utf8(env, r.message.as_bytes())?,
    )?;
    let name = node_api::string_utf8(env, b"TranscodeError")?;
    node_api::set_named(env, err, c"name", name)?;
    let offset = node_api::number(env, r.offset as f64)?;
    node_api::set_named(env, err, c"offset", offset)?;
    let detail = node_api::string_utf8(env, r.detail.as_bytes())?;
    node_api::set_named(env, err, c"detail", detail)?;
    if let Some(i) = r.index {
        let index = node_api::number(env, i as f64)?;
        node_api::set_named(env, err, c"index", index)?;
    }
    Ok(err)
}

/// Throws a JS `TypeError` (see [`node_api::type_error`]).
pub(crate) use crate::node_api::type_error;

/// Test-only hook (used by the test suite to prove that a panic inside the addon becomes a
/// JS exception instead of aborting the process).
#[napi(js_name = "__panicForTests", catch_unwind)]
pub fn panic_for_tests() {
    panic!("deliberate panic for tests");
}
