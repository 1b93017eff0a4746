//! The per-thread scratch the exports share: the transcoder and its buffers, taken out of the
//! thread-local slot while JavaScript may run ([`with_state`], [`with_wide`]).

use std::cell::RefCell;
use std::collections::HashSet;

use bson2json_core::batch::BatchOutput;
use bson2json_core::Transcoder;

/// Scratch buffers above this many bytes are released after the call instead of being kept
/// for the next one: large enough to reuse the buffers of 4 MiB batches (fresh allocations of
/// that size cost page faults on every call), small enough to bound what an idle thread holds.
pub(crate) const KEEP_CAPACITY: usize = 32 * 1024 * 1024;

/// Per-thread scratch: every Node thread (main or worker) gets its own.
///
/// A call that can run JavaScript while it uses a buffer (creating JS values, the `RegExp`
/// check) takes the buffer out of the slot first ([`with_state`], `std::mem::take`), so
/// JavaScript that re-enters the addon meanwhile finds an empty buffer of its own and no
/// `RefCell` borrow is ever held across JavaScript. Buffers grown past [`KEEP_CAPACITY`] are
/// not put back.
#[derive(Default)]
pub(crate) struct State {
    pub transcoder: Transcoder,
    pub out: Vec<u8>,
    pub wide: Vec<u16>,
    /// The last synchronous batch's output, kept for the next one (its pages stay mapped and
    /// it does not grow again from empty).
    pub batch: BatchOutput,
    /// (pattern, flags) pairs V8 has already accepted ([`crate::regex::check`]).
    pub regex_ok: HashSet<(String, String)>,
}

thread_local! {
    pub(crate) static STATE: RefCell<State> = RefCell::new(State::default());
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

/// Whether a UTF-16 scratch buffer is small enough to keep for the next call: at most
/// [`KEEP_CAPACITY`] bytes.
#[inline]
pub(crate) fn keeps_wide(wide: &Vec<u16>) -> bool {
    wide.capacity() * 2 <= KEEP_CAPACITY
}

/// Takes the thread's UTF-16 scratch for `f` (which creates JS strings, and so may run
/// JavaScript) and puts it back unless it grew past [`KEEP_CAPACITY`].
pub(crate) fn with_wide<R>(f: impl FnOnce(&mut Vec<u16>) -> R) -> R {
    let mut wide = STATE.with(|s| std::mem::take(&mut s.borrow_mut().wide));
    let r = f(&mut wide);
    if keeps_wide(&wide) {
        STATE.with(|s| s.borrow_mut().wide = wide);
    }
    r
}
