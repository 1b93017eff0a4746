//! The CLI's `dump` as one pipeline off the caller's thread: concatenated BSON (mongodump's
//! `.bson`), plain or gzip, from a file, a descriptor or any reader, to NDJSON or one JSON
//! array, transcoded on several threads and written in input order. Pure Rust: the Node
//! binding (`crates/bson2json-node/src/dump.rs`) wraps [`run`] in a napi task.
//!
//! ```text
//!  reader ──slots──► N workers ──► writer (the caller's thread) ──► output
//!    ▲                                  │ in input order
//!    └──────────── free slots ◄─────────┘
//! ```
//!
//! A *slot* is one batch's input and output buffers. A fixed number of slots (two per worker,
//! plus two) travel round the loop, so memory is bounded and a batch's buffers are reused (no
//! page faults on fresh multi-megabyte allocations). The reader ([`reader`]) fills a slot to
//! [`reader::BATCH_BYTES`] in reads of [`reader::READ_BYTES`], framing each read right after it
//! (core `concat::frame_prefix`, while the bytes are in cache), and keeps the whole documents
//! (an incomplete last document is carried into the next slot); the workers ([`worker`])
//! transcode a slot's documents in one pass (core `concat::transcode_concatenated`); the
//! writer ([`writer`]) writes slots in input order, checks `compat` regexes through the
//! caller's [`RegexCheck`] (once per distinct pattern and flags), and stops at the first fault
//! in input order with the documents before it written.
//!
//! The faults and their words are the transcode stream's (lib/transcode/stream.js): a framing
//! fault (`BSON_BAD_LENGTH`, `BSON_TRUNCATED` at the end of the input) or a document's own, at
//! its stream-wide document index and byte offset. A failed write reports how many documents
//! and bytes (of whole documents) were written; the caller truncates the output to them
//! (lib/cli/output.js does, for both of the CLI's paths).
//!
//! Modules, bottom first (tests/layers.rs holds the order): [`sys`] (the operating system calls,
//! the crate's only `unsafe`), [`control`] (progress and cancel), [`outcome`] (how a run ends),
//! [`source`] (the input, gzip), [`slot`], [`reader`], [`worker`], [`writer`].
#![deny(unsafe_code)]

use std::io::Write;
use std::sync::mpsc::{channel, sync_channel};
use std::sync::{Arc, Mutex};

use bson2json_core::Options;

mod control;
mod outcome;
mod reader;
mod slot;
mod source;
#[allow(unsafe_code)]
mod sys;
mod worker;
mod writer;

pub use control::{Control, Progress};
pub use outcome::{Finished, Stop};
pub use source::Input;
pub use sys::duplicate;
pub use writer::RegexCheck;

use slot::Slot;
use source::Source;
use writer::Writer;

/// The first four bytes of a mongodump --archive (lib/cli/archive.js `MAGIC`): such an input
/// is handed back ([`Stop::Archive`]) for the archive reader.
pub const ARCHIVE_MAGIC: [u8; 4] = [0x6d, 0xe2, 0x99, 0x81];

/// The most worker threads a run starts.
pub const MAX_THREADS: usize = 256;

/// What to dump and how.
pub struct Job {
    pub input: Input,
    /// The transcoder's options (dialect, UTF-8 mode, limits).
    pub options: Options,
    /// One JSON array instead of NDJSON.
    pub array: bool,
    /// Transcoding threads (clamped to `1..=`[`MAX_THREADS`]).
    pub threads: usize,
    /// The largest document accepted (a larger length prefix is `BSON_BAD_LENGTH`).
    pub max_document_bytes: usize,
}

/// Runs the pipeline of `job` to its end, a fault, a failed read or write, or a cancel
/// (`control`), writing to `out` on this thread, and says how it ended.
///
/// The reader runs on a thread of its own that is not joined: a read that blocks (stdin, a
/// pipe with no writer) must not keep a cancelled run from returning; it stops at its next
/// slot. The workers are joined before this returns.
pub fn run(
    job: Job,
    out: &mut dyn Write,
    regex: &mut dyn RegexCheck,
    control: &Arc<Control>,
) -> Finished {
    control.begin();
    let layout = if job.array {
        bson2json_core::batch::Layout::Array
    } else {
        bson2json_core::batch::Layout::Lines
    };
    let mut writer = Writer::new(out, layout, control, regex);
    // The input's first bytes: gzip or not, and the BSON's first four (an archive's magic
    // number, the hint for text).
    let source = match Source::open(job.input, control) {
        Ok(s) => s,
        Err((stop, gzip)) => return writer.finished(stop, gzip, Vec::new()),
    };
    let (gzip, head) = (source.is_gzip(), source.head());
    if head.len() >= 4 && head[..4] == ARCHIVE_MAGIC {
        return writer.finished(Stop::Archive(source.into_consumed()), gzip, head);
    }
    let threads = job.threads.clamp(1, MAX_THREADS);
    let max_doc = job.max_document_bytes.clamp(5, i32::MAX as usize);
    let slots = threads * 2 + 2;
    let (free_tx, free_rx) = sync_channel::<Slot>(slots);
    for _ in 0..slots {
        let _ = free_tx.send(Slot::default());
    }
    let (work_tx, work_rx) = sync_channel::<Slot>(slots);
    let (done_tx, done_rx) = channel::<Slot>();
    let work_rx = Mutex::new(work_rx);
    {
        let control = Arc::clone(control);
        // Named, as the workers, for per-thread CPU times (/proc/PID/task/*/comm).
        let spawned = std::thread::Builder::new()
            .name("bson2json-read".to_owned())
            .spawn(move || reader::read(source, &control, max_doc, free_rx, work_tx));
        if let Err(e) = spawned {
            return writer.finished(Stop::Read(e), gzip, head);
        }
    }
    let opts = &job.options;
    let stop = std::thread::scope(|scope| {
        let (mut running, mut failure) = (0, None);
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let work_rx = &work_rx;
            let control = &**control;
            let spawned = std::thread::Builder::new()
                .name("bson2json-work".to_owned())
                .spawn_scoped(scope, move || {
                    worker::transcode(work_rx, done_tx, opts, layout, control);
                });
            match spawned {
                Ok(_) => running += 1,
                Err(e) => failure = Some(e),
            }
        }
        drop(done_tx);
        // Not one worker: the writer would see the end at once, with nothing written.
        let stop = match failure {
            Some(e) if running == 0 => Stop::Read(e),
            _ => writer.write_in_order(done_rx, free_tx),
        };
        // Whatever stopped the writer stops the reader and the workers.
        control.halt();
        stop
    });
    writer.finished(stop, gzip, head)
}
