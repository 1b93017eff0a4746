//! A slot: one batch's input and output buffers on their way round the loop.

use bson2json_core::batch::{BatchError, BatchOutput};

use crate::outcome::Stop;

/// One batch on its way round the loop.
#[derive(Default)]
pub(crate) struct Slot {
    /// Its place in input order.
    pub seq: u64,
    /// Whole documents, concatenated.
    pub input: Vec<u8>,
    pub out: BatchOutput,
    /// The stream-wide index and byte offset of the slot's first document.
    pub first_index: u64,
    pub first_offset: u64,
    /// The worker's result; `None` when the run halted before the worker got to it.
    pub result: Option<Result<(), BatchError>>,
    /// The worker panicked on this slot (a bug).
    pub panicked: bool,
    /// A fault found by the reader right after the slot's documents (the last slot).
    pub stop: Option<Stop>,
}
