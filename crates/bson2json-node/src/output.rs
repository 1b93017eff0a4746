//! The output protocol of the single-document calls ([`fast`](crate::fast), and each document
//! a [`Shaper`](crate::shape::Shaper) shapes first), in two halves: [`transcode_out`]
//! transcodes into the thread's output buffer while the input is borrowed (inside
//! `node_api::with_bytes`, where no JavaScript can run), and once the input is dropped,
//! [`finish_out`] checks the regexes and makes the result (both may run JavaScript) and puts the
//! buffers back. The buffers are out of the thread state in between, so JavaScript that
//! re-enters the addon meanwhile finds a state of its own and nothing borrowed.

use napi::bindgen_prelude::*;

use bson2json_core::{Options, RegexRecord};

use crate::errors::Failure;
use crate::regex;
use crate::state::{keeps_wide, State, KEEP_CAPACITY, STATE};

/// What the transcoder made of a document: the regexes to check, or its error.
pub(crate) type Outcome = std::result::Result<Vec<RegexRecord>, bson2json_core::Error>;

/// The thread's output buffers while one call holds them: the JSON (`out`) and the UTF-16
/// scratch its string is made from (`wide`). Taken out of the thread state and put back
/// together, with one thread-local access and one `RefCell` borrow each way (each access to
/// the addon's thread-local costs a `__tls_get_addr` call in a shared library).
pub(crate) struct Held {
    out: Vec<u8>,
    wide: Vec<u16>,
}

impl Held {
    /// The buffers, taken out of the thread state, for an outcome that needed no transcoding
    /// (a document the shaping pass refused).
    pub(crate) fn take() -> Held {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            Held {
                out: std::mem::take(&mut s.out),
                wide: std::mem::take(&mut s.wide),
            }
        })
    }
}

/// The first half: transcodes `bson` into the thread's output buffer, taken out of the thread
/// state (with the UTF-16 scratch) until [`finish_out`]. Runs no JavaScript.
pub(crate) fn transcode_out(bson: &[u8], opts: &Options) -> (Outcome, Held) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let State {
            transcoder,
            out,
            wide,
            ..
        } = &mut *s;
        let mut out = std::mem::take(out);
        let wide = std::mem::take(wide);
        out.clear();
        let outcome = transcoder.transcode(bson, opts, &mut out).map(|()| {
            // Nearly every document has no regex: no copy (or call) for the empty list.
            let regexes = transcoder.regexes();
            if regexes.is_empty() {
                Vec::new()
            } else {
                regexes.to_vec()
            }
        });
        (outcome, Held { out, wide })
    })
}

/// The second half, once the input is dropped: the regex check, `finish` (both may run
/// JavaScript), and the buffers back into the thread state (each unless it grew past
/// [`KEEP_CAPACITY`]).
pub(crate) fn finish_out<R>(
    env: &Env,
    outcome: Outcome,
    held: Held,
    finish: impl FnOnce(&[u8], &mut Vec<u16>) -> Result<R>,
) -> std::result::Result<R, Failure> {
    let Held { out, mut wide } = held;
    let result = outcome.map_err(Failure::from).and_then(|regexes| {
        if !regexes.is_empty() {
            regex::check(env, regexes.into_iter().map(|r| (None, r)))?;
        }
        Ok(finish(&out, &mut wide)?)
    });
    let keep_out = out.capacity() <= KEEP_CAPACITY;
    let keep_wide = keeps_wide(&wide);
    if keep_out || keep_wide {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            if keep_out {
                s.out = out;
            }
            if keep_wide {
                s.wide = wide;
            }
        });
    }
    result
}
