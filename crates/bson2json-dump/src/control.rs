//! What a run shares with its caller: progress counters, read at any time from any thread, and
//! the cancel switch.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// How often a thread waiting for a slot looks at the halt flag (an input that blocks, such as
/// a pipe with no writer, must not keep a cancelled run waiting).
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// A run's progress and its cancel switch.
#[derive(Debug, Default)]
pub struct Control {
    pub(crate) documents: AtomicU64,
    /// The input's bytes read (compressed, for a gzip input).
    pub(crate) bytes_read: AtomicU64,
    /// BSON bytes read (decompressed, for a gzip input).
    pub(crate) bson_read: AtomicU64,
    pub(crate) bytes_written: AtomicU64,
    cancel: AtomicBool,
    /// The writer stopped (a fault, a failed write, a cancel): the reader and workers stop too.
    halted: AtomicBool,
}

/// The counters of a run so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Whole documents written.
    pub documents: u64,
    /// The input's bytes read (compressed, for a gzip input).
    pub bytes_read: u64,
    /// BSON bytes read (decompressed, for a gzip input).
    pub bson_read: u64,
    /// Output bytes written.
    pub bytes_written: u64,
}

impl Control {
    /// The counters so far (four atomic loads).
    pub fn progress(&self) -> Progress {
        Progress {
            documents: self.documents.load(Relaxed),
            bytes_read: self.bytes_read.load(Relaxed),
            bson_read: self.bson_read.load(Relaxed),
            bytes_written: self.bytes_written.load(Relaxed),
        }
    }

    /// Stops the run at the next batch boundary: what is written is whole documents.
    pub fn cancel(&self) {
        self.cancel.store(true, Relaxed);
    }

    /// Clears an earlier [`Control::cancel`], for a new run with this control.
    pub fn rearm(&self) {
        self.cancel.store(false, Relaxed);
    }

    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.load(Relaxed)
    }

    /// Whether the reader and workers should stop: cancelled, or the writer halted.
    pub(crate) fn stopping(&self) -> bool {
        self.cancel.load(Relaxed) || self.halted.load(Relaxed)
    }

    pub(crate) fn halted(&self) -> bool {
        self.halted.load(Relaxed)
    }

    /// A run starts.
    pub(crate) fn begin(&self) {
        self.halted.store(false, Relaxed);
    }

    /// The writer stopped.
    pub(crate) fn halt(&self) {
        self.halted.store(true, Relaxed);
    }

    pub(crate) fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, Relaxed);
    }

    pub(crate) fn set(counter: &AtomicU64, n: u64) {
        counter.store(n, Relaxed);
    }
}
