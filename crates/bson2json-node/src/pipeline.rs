//! `dumpFile`: the CLI's `dump` of a regular file as one native pipeline, off the JS thread.
//!
//! ```text
//!  reader ──slots──► N workers ──► writer (the task's thread) ──► output fd
//!    ▲                                  │ in input order
//!    └──────────── free slots ◄─────────┘
//! ```
//!
//! A *slot* is one batch's input and output buffers. A fixed number of slots (two per worker,
//! plus two) travel round the loop, so memory is bounded and a batch's buffers are reused (no
//! page faults on fresh multi-megabyte allocations). The reader fills a slot to [`BATCH_BYTES`]
//! in reads of [`READ_BYTES`], framing each read right after it (core `concat::frame_prefix`,
//! while the bytes are in cache), and keeps the whole documents (an incomplete last document is
//! carried into the next slot); the workers transcode a slot's documents in
//! one pass (core `concat::transcode_concatenated`); the writer writes slots in input order,
//! checks `compat` regexes with V8 (through a thread-safe call of a JS function, once per
//! distinct pattern and flags, the only JavaScript the pipeline runs), and stops at the first
//! fault in input order with the documents before it written.
//!
//! The faults and their words are the transcode stream's (lib/transcode/stream.js): a framing
//! fault (`BSON_BAD_LENGTH`, `BSON_TRUNCATED` at the end of the input) or a document's own, at
//! its stream-wide document index and byte offset. A failed write returns how many documents
//! and bytes (of whole documents) were written; JavaScript truncates the file to them
//! (lib/cli/output.js), so that one implementation does it for both paths.

// The export takes one Rust argument per JS argument, as the batch exports do.
#![allow(clippy::too_many_arguments)]

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Write};
#[cfg(unix)]
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{channel, sync_channel, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};

use bson2json_core::batch::{BatchError, BatchOutput, Layout};
use bson2json_core::concat::{frame_prefix, transcode_concatenated, PrefixEnd};
use bson2json_core::{ErrorKind, Options, Transcoder};
use flate2::{Decompress, FlushDecompress, Status as GzStatus};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::options;

/// BSON bytes read per slot (a document larger than this gets a slot of its own size).
const BATCH_BYTES: usize = 2 << 20;
/// BSON bytes read (or decompressed) at a time into a slot, each framed before the next read.
const READ_BYTES: usize = 128 << 10;
/// A slot's input buffer above this many bytes (grown for a large document) is released.
const KEEP_BYTES: usize = 4 * BATCH_BYTES;
/// Compressed bytes read at a time from a gzip input.
const GZIP_READ_BYTES: usize = 256 << 10;
/// The first four bytes of a mongodump --archive (lib/cli/archive.js `MAGIC`).
const ARCHIVE_MAGIC: [u8; 4] = [0x6d, 0xe2, 0x99, 0x81];
/// How often threads waiting for a slot look at the halt flag (an input that blocks, such as
/// a pipe with no writer, must not keep a cancelled pipeline waiting).
const POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// The counters JavaScript polls and the cancel flag it sets, shared with a running pipeline.
#[derive(Default)]
struct Shared {
    documents: AtomicU64,
    /// The input's bytes read (compressed, for a gzip input).
    bytes_read: AtomicU64,
    /// BSON bytes read (decompressed, for a gzip input).
    bson_read: AtomicU64,
    bytes_written: AtomicU64,
    cancel: AtomicBool,
    /// The writer stopped (a fault, a failed write, a cancel): the reader and workers stop too.
    halted: AtomicBool,
}

/// A running (or finished) `dumpFile`'s progress and its cancel switch.
#[napi]
#[derive(Default)]
pub struct DumpControl {
    shared: Arc<Shared>,
}

#[napi]
impl DumpControl {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    /// `[documents written, input bytes read, JSON bytes written]` so far (three atomic loads;
    /// the input's bytes are the compressed ones for a gzip input).
    #[napi]
    pub fn progress(&self) -> Vec<f64> {
        let s = &self.shared;
        vec![
            s.documents.load(Relaxed) as f64,
            s.bytes_read.load(Relaxed) as f64,
            s.bytes_written.load(Relaxed) as f64,
        ]
    }

    /// Stops the pipeline at the next batch boundary: what is written is whole documents.
    #[napi]
    pub fn cancel(&self) {
        self.shared.cancel.store(true, Relaxed);
    }
}

/// How a `dumpFile` ended. `stop` is `'end'`, `'cancelled'`, `'bson'` (a fault in the input:
/// `code`, `detail`, `index`, `offset`), `'gzip'` (the gzip data is truncated or corrupt:
/// zlib's `message`), `'archive'` (the input is a mongodump --archive, which the pipeline does
/// not read: nothing is written, `consumed` holds the input's bytes read), `'read'` or `'write'`
/// (an I/O error: `errno`, `message`). `bytesWritten` is the output's length in whole documents
/// (what a failed write leaves after truncation), `documents` those documents; `bytesRead` the
/// input's bytes read, `bsonRead` the BSON bytes (decompressed), `head` the first four of them,
/// `gzip` whether the input was gzip.
#[napi(object)]
pub struct DumpOutcome {
    pub stop: String,
    pub documents: f64,
    pub bytes_read: f64,
    pub bson_read: f64,
    pub bytes_written: f64,
    pub gzip: bool,
    pub head: Buffer,
    pub consumed: Option<Buffer>,
    pub code: Option<String>,
    pub detail: Option<String>,
    pub index: Option<f64>,
    pub offset: Option<f64>,
    pub errno: Option<i32>,
    pub message: Option<String>,
}

/// Why the pipeline stopped before the end of the input, or [`Stop::End`].
enum Stop {
    End,
    Cancelled,
    Bson {
        code: &'static str,
        detail: String,
        index: u64,
        offset: u64,
    },
    Read(io::Error),
    Write(io::Error),
    /// zlib's message for gzip data that is truncated or corrupt.
    Gzip(String),
    /// The input is a mongodump --archive: its bytes read so far.
    Archive(Vec<u8>),
    /// A worker panicked (a bug): the promise rejects.
    Panicked,
}

/// One batch on its way round the loop.
#[derive(Default)]
struct Slot {
    seq: u64,
    input: Vec<u8>,
    out: BatchOutput,
    /// The stream-wide index and byte offset of the slot's first document.
    first_index: u64,
    first_offset: u64,
    result: Option<std::result::Result<(), BatchError>>,
    /// The worker panicked on this slot (a bug).
    panicked: bool,
    /// A fault found by the reader right after the slot's documents (the last slot).
    stop: Option<Stop>,
}

/// The check a `compat` regex needs: `(pattern, flags)` → V8's SyntaxError message, or null.
type RegexCheck = ThreadsafeFunction<
    FnArgs<(String, String)>,
    Option<String>,
    FnArgs<(String, String)>,
    Status,
    false,
>;

/// The pipeline's task on the libuv pool: its thread is the writer.
pub struct DumpTask {
    shared: Arc<Shared>,
    input: String,
    /// stdin (a duplicate of the caller's descriptor) instead of the file `input`.
    input_file: Option<File>,
    out: Option<File>,
    opts: Options,
    layout: Layout,
    threads: usize,
    max_doc: usize,
    regex: Option<RegexCheck>,
}

/// What `compute` hands to `resolve`.
pub struct Finished {
    stop: Stop,
    documents: u64,
    bytes_written: u64,
    gzip: bool,
    head: Vec<u8>,
}

#[napi]
impl Task for DumpTask {
    type Output = Finished;
    type JsValue = DumpOutcome;

    fn compute(&mut self) -> Result<Self::Output> {
        // A panic here would abort the process (napi-rs calls `compute` from a bare
        // `extern "C"` callback), so it is caught and reported as an error instead.
        let regex = self.regex.take();
        let out = self.out.take();
        let input = self.input_file.take();
        let r =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(input, out, regex)));
        r.map_err(|_| {
            Error::new(
                Status::GenericFailure,
                "bson2json: internal panic in the dump pipeline (a bug; please report it)"
                    .to_owned(),
            )
        })
    }

    fn resolve(&mut self, _env: Env, f: Self::Output) -> Result<Self::JsValue> {
        if matches!(f.stop, Stop::Panicked) {
            return Err(Error::new(
                Status::GenericFailure,
                "bson2json: internal panic in the dump pipeline (a bug; please report it)"
                    .to_owned(),
            ));
        }
        let mut o = DumpOutcome {
            stop: String::new(),
            documents: f.documents as f64,
            bytes_read: self.shared.bytes_read.load(Relaxed) as f64,
            bson_read: self.shared.bson_read.load(Relaxed) as f64,
            bytes_written: f.bytes_written as f64,
            gzip: f.gzip,
            head: f.head.into(),
            consumed: None,
            code: None,
            detail: None,
            index: None,
            offset: None,
            errno: None,
            message: None,
        };
        o.stop = match f.stop {
            Stop::End | Stop::Panicked => "end",
            Stop::Cancelled => "cancelled",
            Stop::Bson {
                code,
                detail,
                index,
                offset,
            } => {
                o.code = Some(code.to_owned());
                o.detail = Some(detail);
                o.index = Some(index as f64);
                o.offset = Some(offset as f64);
                "bson"
            }
            Stop::Read(e) => {
                o.errno = e.raw_os_error();
                o.message = Some(e.to_string());
                "read"
            }
            Stop::Write(e) => {
                o.errno = e.raw_os_error();
                o.message = Some(e.to_string());
                "write"
            }
            Stop::Gzip(message) => {
                o.message = Some(message);
                "gzip"
            }
            Stop::Archive(consumed) => {
                o.consumed = Some(consumed.into());
                "archive"
            }
        }
        .to_owned();
        Ok(o)
    }
}

impl DumpTask {
    fn run(&self, input: Option<File>, out: Option<File>, regex: Option<RegexCheck>) -> Finished {
        let mut writer = Writer {
            out,
            layout: self.layout,
            shared: &self.shared,
            regex,
            regex_ok: HashSet::new(),
            documents: 0,
            bytes: 0,
            any: false,
        };
        let file = match input {
            Some(f) => f,
            None => match File::open(&self.input) {
                Ok(f) => f,
                Err(e) => return writer.finished(Stop::Read(e), false, Vec::new()),
            },
        };
        // The input's first bytes: gzip or not, and the BSON's first four (an archive's magic
        // number, the hint for text).
        let source = match Source::open(file, &self.shared) {
            Ok(s) => s,
            Err((stop, gzip)) => return writer.finished(stop, gzip, Vec::new()),
        };
        let (gzip, head) = (source.gz.is_some(), source.head());
        if head.len() >= 4 && head[..4] == ARCHIVE_MAGIC {
            return writer.finished(Stop::Archive(source.consumed), gzip, head);
        }
        let slots = self.threads * 2 + 2;
        let (free_tx, free_rx) = sync_channel::<Slot>(slots);
        for _ in 0..slots {
            let _ = free_tx.send(Slot::default());
        }
        let (work_tx, work_rx) = sync_channel::<Slot>(slots);
        let (done_tx, done_rx) = channel::<Slot>();
        let work_rx = Mutex::new(work_rx);
        // The reader is not scoped: a read that blocks (stdin) must not keep a cancelled
        // pipeline from ending; it stops at its next slot.
        {
            let shared = Arc::clone(&self.shared);
            let max_doc = self.max_doc;
            // Named, as the workers, for per-thread CPU times (/proc/PID/task/*/comm).
            let spawned = std::thread::Builder::new()
                .name("bson2json-read".to_owned())
                .spawn(move || read(source, &shared, max_doc, free_rx, work_tx));
            if let Err(e) = spawned {
                return writer.finished(Stop::Read(e), gzip, head);
            }
        }
        let stop = std::thread::scope(|scope| {
            let shared = &*self.shared;
            for _ in 0..self.threads {
                let done_tx = done_tx.clone();
                let work_rx = &work_rx;
                let (opts, layout) = (&self.opts, self.layout);
                let _ = std::thread::Builder::new()
                    .name("bson2json-work".to_owned())
                    .spawn_scoped(scope, move || {
                        transcode(work_rx, done_tx, opts, layout, shared);
                    });
            }
            drop(done_tx);
            let stop = writer.write_in_order(done_rx, free_tx);
            // Whatever stopped the writer stops the reader and the workers.
            self.shared.halted.store(true, Relaxed);
            stop
        });
        writer.finished(stop, gzip, head)
    }
}

/// The input: a file or stdin, plain or gzip (decompressed here; zlib's own rules for what
/// follows a member, as Node's gunzip: another member, or zero bytes of padding to the end).
struct Source {
    file: File,
    gz: Option<Gunzip>,
    /// BSON bytes read ahead of the first slot (at least four, unless the input is shorter).
    carry: Vec<u8>,
    eof: bool,
    /// The last read of a plain input returned less than asked (a pipe with no more for now).
    short: bool,
    /// A regular file (read to the slot's size at once) rather than a pipe or a socket.
    regular: bool,
    /// A pipe's or a socket's reads, copied to the slot.
    scratch: Vec<u8>,
    /// The input's bytes read while looking at its first bytes (an archive is handed back).
    consumed: Vec<u8>,
}

struct Gunzip {
    d: Decompress,
    /// The compressed bytes `raw[pos..len]` are still to decompress (the buffer keeps its
    /// length: it is not zeroed for every read).
    raw: Vec<u8>,
    len: usize,
    pos: usize,
    raw_eof: bool,
    /// The last member ended and nothing but padding follows.
    done: bool,
    /// While looking at the first bytes: every compressed byte read, kept.
    record: Option<Vec<u8>>,
}

impl Source {
    /// Reads the input's first bytes: gzip or not, then the first four BSON bytes. A failure
    /// says whether the input is gzip.
    fn open(mut file: File, shared: &Shared) -> std::result::Result<Self, (Stop, bool)> {
        let mut raw = Vec::with_capacity(GZIP_READ_BYTES);
        let mut raw_eof = false;
        while raw.len() < 4 && !raw_eof {
            let n = read_some(&mut file, &mut raw, GZIP_READ_BYTES)
                .map_err(|e| (Stop::Read(e), false))?;
            shared.bytes_read.fetch_add(n as u64, Relaxed);
            raw_eof = n == 0;
        }
        let consumed = raw.clone();
        let regular = file.metadata().is_ok_and(|m| m.is_file());
        let mut s = if raw.len() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
            Source {
                file,
                gz: Some(Gunzip {
                    d: Decompress::new_gzip(15),
                    len: raw.len(),
                    raw,
                    pos: 0,
                    raw_eof,
                    done: false,
                    record: Some(consumed),
                }),
                carry: Vec::new(),
                eof: false,
                short: false,
                regular,
                scratch: Vec::new(),
                consumed: Vec::new(),
            }
        } else {
            shared.bson_read.fetch_add(raw.len() as u64, Relaxed);
            Source {
                file,
                gz: None,
                short: raw.len() < GZIP_READ_BYTES,
                regular,
                scratch: Vec::new(),
                carry: raw,
                eof: raw_eof,
                consumed,
            }
        };
        if s.gz.is_some() {
            let mut carry = Vec::new();
            while carry.len() < 4 && !s.eof {
                s.eof = s.fill(&mut carry, 4, shared).map_err(|stop| (stop, true))?;
            }
            s.carry = carry;
            if let Some(g) = s.gz.as_mut() {
                s.consumed = g.record.take().unwrap_or_default();
            }
        }
        Ok(s)
    }

    /// The first (up to) four BSON bytes.
    fn head(&self) -> Vec<u8> {
        self.carry[..self.carry.len().min(4)].to_vec()
    }

    /// Appends BSON bytes to `out`, up to `want` bytes (or a little more) or the end of the
    /// input, `Ok(true)` there. A plain input stops after one read (`short` says whether it
    /// returned less than asked).
    fn fill(
        &mut self,
        out: &mut Vec<u8>,
        want: usize,
        shared: &Shared,
    ) -> std::result::Result<bool, Stop> {
        let Some(g) = self.gz.as_mut() else {
            if out.len() >= want {
                return Ok(false);
            }
            let need = want - out.len();
            let n = if self.regular {
                // Into the slot's spare capacity, not zeroed first.
                let n = read_spare(&self.file, out, need).map_err(Stop::Read)?;
                if n < need {
                    // the end of the file (a short read of a regular file is its end)
                    shared.bytes_read.fetch_add(n as u64, Relaxed);
                    shared.bson_read.fetch_add(n as u64, Relaxed);
                    self.short = true;
                    return Ok(true);
                }
                n
            } else {
                self.scratch.resize(GZIP_READ_BYTES, 0);
                let n = read_into(
                    &mut self.file,
                    &mut self.scratch[..need.min(GZIP_READ_BYTES)],
                )
                .map_err(Stop::Read)?;
                out.extend_from_slice(&self.scratch[..n]);
                n
            };
            shared.bytes_read.fetch_add(n as u64, Relaxed);
            shared.bson_read.fetch_add(n as u64, Relaxed);
            self.short = n < need;
            return Ok(n == 0);
        };
        while out.len() < want {
            if g.done {
                return Ok(true);
            }
            if g.pos == g.len && !g.raw_eof {
                g.refill(&mut self.file, shared)?;
            }
            let flush = if g.raw_eof {
                FlushDecompress::Finish
            } else {
                FlushDecompress::None
            };
            out.reserve(want - out.len());
            let (in0, out0) = (g.d.total_in(), out.len());
            let status = g.d.decompress_vec(&g.raw[g.pos..g.len], out, flush);
            g.pos += (g.d.total_in() - in0) as usize;
            let produced = out.len() - out0;
            shared.bson_read.fetch_add(produced as u64, Relaxed);
            match status {
                Ok(GzStatus::StreamEnd) => {
                    // Another member follows, or padding (zero bytes: the rest is ignored).
                    if g.pos == g.len && !g.raw_eof {
                        g.refill(&mut self.file, shared)?;
                    }
                    if g.pos == g.len || g.raw[g.pos] == 0 {
                        g.done = true;
                    } else {
                        g.d = Decompress::new_gzip(15);
                    }
                }
                Ok(_) if produced == 0 && g.raw_eof && g.pos == g.len => {
                    return Err(Stop::Gzip("unexpected end of file".to_owned()));
                }
                Ok(_) => {}
                Err(e) => return Err(Stop::Gzip(e.message().unwrap_or("invalid data").to_owned())),
            }
        }
        Ok(false)
    }
}

impl Gunzip {
    /// Reads the next compressed bytes into `raw` (kept while looking at the first bytes).
    fn refill(&mut self, file: &mut File, shared: &Shared) -> std::result::Result<(), Stop> {
        if self.raw.len() < GZIP_READ_BYTES {
            self.raw.resize(GZIP_READ_BYTES, 0);
        }
        let n = read_into(file, &mut self.raw).map_err(Stop::Read)?;
        shared.bytes_read.fetch_add(n as u64, Relaxed);
        (self.pos, self.len, self.raw_eof) = (0, n, n == 0);
        if let Some(r) = self.record.as_mut() {
            r.extend_from_slice(&self.raw[..n]);
        }
        Ok(())
    }
}

/// Appends `need` bytes of `file` to `out` (fewer at the end of the file) in as few `read`s as
/// the kernel allows, straight into `out`'s spare capacity. (`read_to_end` through `take` starts
/// every call at 8 KiB reads and doubles: five `read`s per 128 KiB.)
#[cfg(unix)]
fn read_spare(file: &File, out: &mut Vec<u8>, need: usize) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    out.reserve(need);
    let mut done = 0;
    while done < need {
        let spare = &mut out.spare_capacity_mut()[..need - done];
        #[allow(unsafe_code)]
        // SAFETY: `spare` is `need - done` bytes of `out`'s allocation, owned and not aliased;
        // `read` writes at most that many bytes there and returns how many it wrote, which
        // are then initialized (the only bytes `set_len` adds).
        let r = unsafe {
            libc::read(
                file.as_raw_fd(),
                spare.as_mut_ptr().cast::<libc::c_void>(),
                spare.len(),
            )
        };
        match r {
            0 => break,
            r if r > 0 => {
                let n = r as usize;
                #[allow(unsafe_code)]
                // SAFETY: `read` initialized the `n` bytes after `out.len()`, within capacity.
                unsafe {
                    out.set_len(out.len() + n);
                }
                done += n;
            }
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(done)
}

/// [`read_spare`] elsewhere (Windows; the WASI build, which never runs the pipeline): the
/// standard library's reads, 8 KiB first and doubling.
#[cfg(not(unix))]
fn read_spare(file: &File, out: &mut Vec<u8>, need: usize) -> io::Result<usize> {
    file.take(need as u64).read_to_end(out)
}

/// One `read` of up to `max` bytes appended to `buf`; 0 at the end.
fn read_some(file: &mut File, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let at = buf.len();
    buf.resize(at + max, 0);
    let r = read_into(file, &mut buf[at..]);
    buf.truncate(at + *r.as_ref().unwrap_or(&0));
    r
}

/// One `read` into `buf` (retried when interrupted); 0 at the end.
fn read_into(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // stdin that someone else made non-blocking: wait for data (no poll in std).
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            r => return r,
        }
    }
}

/// The reader: fills free slots with whole documents, in order, until the input ends, a
/// framing fault, a read error, or the writer halts.
fn read(
    mut source: Source,
    shared: &Shared,
    max_doc: usize,
    free: Receiver<Slot>,
    work: SyncSender<Slot>,
) {
    let mut carry: Vec<u8> = std::mem::take(&mut source.carry);
    let (mut index, mut offset, mut seq) = (0u64, 0u64, 0u64);
    let mut eof = source.eof;
    let mut done = false;
    while !done {
        if shared.cancel.load(Relaxed) || shared.halted.load(Relaxed) {
            return;
        }
        let mut slot = match free.recv_timeout(POLL) {
            Ok(slot) => slot,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        slot.input.clear();
        slot.input.extend_from_slice(&carry);
        carry.clear();
        slot.stop = None;
        slot.result = None;
        slot.panicked = false;
        let mut want = BATCH_BYTES;
        // The whole documents framed so far: each read is framed right after it, while its
        // bytes are still in this core's cache (framing a whole slot after one read of it
        // missed the cache on every length prefix).
        let (mut framed_end, mut framed_count) = (0usize, 0usize);
        let (end, count, why) = loop {
            let (p, c, why) = frame_prefix(&slot.input[framed_end..], max_doc);
            (framed_end, framed_count) = (framed_end + p, framed_count + c);
            let framed = (framed_end, framed_count, why);
            // A slot is filled to `want`, unless the input has no more for now (a pipe) and
            // the slot already holds whole documents: they go out without waiting.
            if !eof && slot.input.len() < want && (framed.1 == 0 || !source.short) {
                let upto = want.min(slot.input.len() + READ_BYTES);
                match source.fill(&mut slot.input, upto, shared) {
                    Ok(e) => eof = e,
                    Err(stop) => {
                        slot.stop = Some(stop);
                        eof = true;
                    }
                }
                continue;
            }
            match framed.2 {
                // a document larger than a block: read until it is whole
                PrefixEnd::Partial(len) if framed.1 == 0 && !eof => want = want.max(len),
                // not one whole document yet
                PrefixEnd::Short if framed.1 == 0 && !eof => {}
                _ => break framed,
            }
        };
        done = eof;
        let rest = slot.input.len() - end;
        let (at_index, at_offset) = (index + count as u64, offset + end as u64);
        let fault = |code, detail| Stop::Bson {
            code,
            detail,
            index: at_index,
            offset: at_offset,
        };
        match why {
            _ if slot.stop.is_some() => {}
            PrefixEnd::BadLength(len) => {
                let detail = if len < 5 {
                    format!("document length {len} is less than 5")
                } else {
                    format!("document length {len} exceeds maxDocumentBytes {max_doc}")
                };
                slot.stop = Some(fault(ErrorKind::BadLength.code(), detail));
                done = true;
            }
            PrefixEnd::Short | PrefixEnd::Partial(_) if eof && rest > 0 => {
                let need = match why {
                    PrefixEnd::Partial(len) => format!("{len} bytes"),
                    _ => "its length prefix".to_owned(),
                };
                let detail = format!("input ends inside a document ({rest} bytes of {need})");
                slot.stop = Some(fault(ErrorKind::Truncated.code(), detail));
            }
            _ => carry.extend_from_slice(&slot.input[end..]),
        }
        slot.input.truncate(end);
        slot.seq = seq;
        slot.first_index = index;
        slot.first_offset = offset;
        seq += 1;
        index += count as u64;
        offset += end as u64;
        if work.send(slot).is_err() {
            return;
        }
    }
}

/// A worker: transcodes slots until the reader is done.
fn transcode(
    work: &Mutex<Receiver<Slot>>,
    done: Sender<Slot>,
    opts: &Options,
    layout: Layout,
    shared: &Shared,
) {
    let mut tc = Transcoder::new();
    loop {
        let next = match work.lock() {
            Ok(rx) => rx.recv_timeout(POLL),
            Err(_) => return,
        };
        let mut slot = match next {
            Ok(slot) => slot,
            Err(RecvTimeoutError::Timeout) if !shared.halted.load(Relaxed) => continue,
            Err(_) => return,
        };
        slot.out.clear();
        if !shared.halted.load(Relaxed) {
            // A panic is a bug; caught, so that the writer reports it instead of waiting
            // forever for this slot.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                transcode_concatenated(&mut tc, &slot.input, opts, layout, &mut slot.out)
            }));
            match r {
                Ok(r) => slot.result = Some(r),
                Err(_) => {
                    slot.panicked = true;
                    tc = Transcoder::new();
                }
            }
        }
        if done.send(slot).is_err() {
            return;
        }
    }
}

/// The writer's state: the output and what has been written to it.
struct Writer<'a> {
    out: Option<File>,
    layout: Layout,
    shared: &'a Shared,
    regex: Option<RegexCheck>,
    /// (pattern, flags) pairs V8 has accepted.
    regex_ok: HashSet<(String, String)>,
    /// Whole documents written, and the output's length in whole documents.
    documents: u64,
    bytes: u64,
    /// Whether a document has been written (the array's `[` is out).
    any: bool,
}

impl Writer<'_> {
    /// Writes the slots in input order until one stops the pipeline or the input ends.
    fn write_in_order(&mut self, done: Receiver<Slot>, free: SyncSender<Slot>) -> Stop {
        let mut pending: BTreeMap<u64, Slot> = BTreeMap::new();
        let mut next = 0u64;
        loop {
            let slot = match done.recv_timeout(POLL) {
                Ok(slot) => slot,
                // The reader may be waiting for input (stdin) while a signal cancels.
                Err(RecvTimeoutError::Timeout) if self.shared.cancel.load(Relaxed) => {
                    return Stop::Cancelled
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            pending.insert(slot.seq, slot);
            while let Some(mut slot) = pending.remove(&next) {
                next += 1;
                if self.shared.cancel.load(Relaxed) {
                    return Stop::Cancelled;
                }
                if slot.panicked {
                    return Stop::Panicked;
                }
                if let Some(stop) = self.write_slot(&mut slot) {
                    return stop;
                }
                // A slot that grew for a large document does not keep that memory.
                if slot.input.capacity() > KEEP_BYTES {
                    slot.input = Vec::new();
                }
                if slot.out.out.capacity() > 2 * KEEP_BYTES {
                    slot.out = BatchOutput::default();
                }
                let _ = free.send(slot);
            }
        }
        if self.shared.cancel.load(Relaxed) {
            return Stop::Cancelled;
        }
        if self.layout == Layout::Array {
            let close: &[u8] = if self.any { b"]\n" } else { b"[]\n" };
            if let Err((e, _)) = self.write(close) {
                return Stop::Write(e);
            }
            self.bytes += close.len() as u64;
            self.shared.bytes_written.store(self.bytes, Relaxed);
        }
        Stop::End
    }

    /// Writes one slot's documents up to its first fault; `Some` when the pipeline stops here.
    fn write_slot(&mut self, slot: &mut Slot) -> Option<Stop> {
        let result = slot.result.take()?;
        let total = slot.out.offsets.len().saturating_sub(1);
        // The regexes of the documents before a fault (the fault's own document recorded
        // none), in order: one V8 refuses is a fault at its document.
        let mut fault = None;
        for (i, r) in std::mem::take(&mut slot.out.regexes) {
            let key = (r.pattern, r.flags);
            if self.regex_ok.contains(&key) {
                continue;
            }
            match self.check_regex(&key) {
                Ok(None) => {
                    self.regex_ok.insert(key);
                }
                Ok(Some(message)) => {
                    // `transcode_concatenated` gives the offset in the slot's input.
                    fault = Some((
                        i,
                        Stop::Bson {
                            code: ErrorKind::InvalidRegex.code(),
                            detail: format!("invalid regular expression ({message})"),
                            index: slot.first_index + i as u64,
                            offset: slot.first_offset + r.offset as u64,
                        },
                    ));
                    break;
                }
                Err(e) => {
                    fault = Some((
                        i,
                        Stop::Bson {
                            code: ErrorKind::InvalidRegex.code(),
                            detail: format!("the regular expression could not be checked ({e})"),
                            index: slot.first_index + i as u64,
                            offset: slot.first_offset + doc_start(&slot.input, i) as u64,
                        },
                    ));
                    break;
                }
            }
        }
        let fault = fault.or_else(|| {
            result.err().map(|e| {
                (
                    e.index,
                    Stop::Bson {
                        code: e.error.code(),
                        detail: e.error.detail().to_owned(),
                        index: slot.first_index + e.index as u64,
                        offset: slot.first_offset + (e.doc_offset + e.error.offset()) as u64,
                    },
                )
            })
        });
        let (n, complete) = match &fault {
            Some((i, _)) => (*i, false),
            None => (total, true),
        };
        if let Err(e) = self.write_docs(&mut slot.out, n, complete) {
            return Some(Stop::Write(e));
        }
        match fault {
            Some((_, stop)) => Some(stop),
            None => slot.stop.take(),
        }
    }

    /// Writes the first `n` documents of `out` (`complete`: all of them, as transcoded).
    fn write_docs(&mut self, out: &mut BatchOutput, n: usize, complete: bool) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        let array = self.layout == Layout::Array;
        let total = out.offsets.len() - 1;
        // Where document `k`'s text ends (NDJSON: after its newline; an array: before the
        // comma that follows it, or the batch's `]`).
        let end = |out: &BatchOutput, k: usize| -> usize {
            let last = complete && k + 1 == total;
            match (array, last) {
                (false, true) => out.out.len(),
                (false, false) => out.offsets[k + 1],
                (true, true) => out.out.len() - 1,
                (true, false) => out.offsets[k + 1] - 1,
            }
        };
        let stop = end(out, n - 1);
        if array {
            // The batch's `[` opens the output, or becomes the comma after the last batch.
            out.out[0] = if self.any { b',' } else { b'[' };
        }
        match self.write(&out.out[..stop]) {
            Ok(()) => {
                self.any = true;
                self.documents += n as u64;
                self.bytes += stop as u64;
                self.shared.documents.store(self.documents, Relaxed);
                self.shared.bytes_written.store(self.bytes, Relaxed);
                Ok(())
            }
            Err((e, written)) => {
                // The whole documents within what was written count; JavaScript truncates
                // the file to them.
                let whole = (0..n).take_while(|&k| end(out, k) <= written).count();
                if whole > 0 {
                    self.documents += whole as u64;
                    self.bytes += end(out, whole - 1) as u64;
                }
                Err(e)
            }
        }
    }

    /// Writes all of `buf`, retrying short writes; on failure, the error and the bytes written.
    fn write(&mut self, buf: &[u8]) -> std::result::Result<(), (io::Error, usize)> {
        let Some(out) = self.out.as_mut() else {
            return Err((io::Error::from(io::ErrorKind::BrokenPipe), 0));
        };
        let mut done = 0;
        while done < buf.len() {
            match out.write(&buf[done..]) {
                Ok(0) => return Err((io::Error::from(io::ErrorKind::WriteZero), done)),
                Ok(k) => done += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A pipe someone else made non-blocking: wait for its reader (no poll in std).
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(e) => return Err((e, done)),
            }
        }
        Ok(())
    }

    /// V8's verdict on a regex, asked on the JS thread: `Ok(None)` if it accepts it.
    fn check_regex(
        &self,
        (pattern, flags): &(String, String),
    ) -> std::result::Result<Option<String>, String> {
        let Some(f) = self.regex.as_ref() else {
            return Err("no checker".to_owned());
        };
        let (tx, rx) = channel();
        let status = f.call_with_return_value(
            FnArgs {
                data: (pattern.clone(), flags.clone()),
            },
            ThreadsafeFunctionCallMode::Blocking,
            move |answer: Result<Option<String>>, _env| {
                let _ = tx.send(answer.map_err(|e| e.reason.clone()));
                Ok(())
            },
        );
        if status != Status::Ok {
            return Err(format!("{status:?}"));
        }
        rx.recv().map_err(|e| e.to_string())?
    }

    fn finished(self, stop: Stop, gzip: bool, head: Vec<u8>) -> Finished {
        Finished {
            stop,
            documents: self.documents,
            bytes_written: self.bytes,
            gzip,
            head,
        }
    }
}

/// The byte offset of document `i` among the concatenated documents of `input`.
fn doc_start(input: &[u8], i: usize) -> usize {
    let mut at = 0;
    for _ in 0..i {
        let len = input
            .get(at..at + 4)
            .map_or(0, |b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        at += usize::try_from(len).unwrap_or(0);
    }
    at
}

/// The CLI's `dump` of concatenated BSON, plain or gzip, from the file `input` (or, when
/// `inFd` is not -1, that open descriptor: stdin) to the open file descriptor `outFd` (a file,
/// a device, a pipe or a socket), as NDJSON or one JSON array: read, decompressed, framed,
/// transcoded on `threads` threads and written in order, off the JS thread. `checkRegex(pattern, flags)` returns V8's message for
/// a regex it refuses, or null (compat only). Resolves with how it ended ([`DumpOutcome`]).
#[napi(
    js_name = "dumpFile",
    catch_unwind,
    ts_args_type = "control: DumpControl, input: string, inFd: number, outFd: number, array: boolean, flags: number, maxDepth: number, maxOutputBytes: number, threads: number, maxDocumentBytes: number, checkRegex: (pattern: string, flags: string) => string | null",
    ts_return_type = "Promise<DumpOutcome>"
)]
pub fn dump_file(
    control: &DumpControl,
    input: String,
    in_fd: i32,
    out_fd: i32,
    array: bool,
    flags: u32,
    max_depth: u32,
    max_output_bytes: f64,
    threads: u32,
    max_document_bytes: f64,
    check_regex: RegexCheck,
) -> Result<AsyncTask<DumpTask>> {
    let out = duplicate(out_fd)?;
    let input_file = if in_fd == -1 {
        None
    } else {
        Some(duplicate(in_fd)?)
    };
    control.shared.cancel.store(false, Relaxed);
    control.shared.halted.store(false, Relaxed);
    Ok(AsyncTask::new(DumpTask {
        shared: Arc::clone(&control.shared),
        input,
        input_file,
        out: Some(out),
        opts: options::decode(flags, max_depth, max_output_bytes),
        layout: if array { Layout::Array } else { Layout::Lines },
        threads: threads.clamp(1, 256) as usize,
        max_doc: max_document_bytes.clamp(5.0, f64::from(i32::MAX)) as usize,
        regex: Some(check_regex),
    }))
}

/// A duplicate of the caller's open descriptor `fd` (the output, or stdin), owned by the
/// pipeline.
#[cfg(unix)]
fn duplicate(fd: i32) -> Result<File> {
    if fd < 0 {
        return Err(Error::new(
            Status::InvalidArg,
            "bson2json: inFd and outFd must be open file descriptors".to_owned(),
        ));
    }
    #[allow(unsafe_code)]
    // SAFETY: `fd` is the caller's open output descriptor (lib/cli/output.js keeps it open
    // until the returned promise settles) or stdin (open for the process's life); it is only
    // duplicated here, and the pipeline uses its own duplicate, closed when the pipeline ends.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    Ok(File::from(fd.try_clone_to_owned()?))
}

/// Elsewhere (Windows, the WASI build) the CLI takes the transcode stream.
#[cfg(not(unix))]
fn duplicate(_fd: i32) -> Result<File> {
    Err(Error::new(
        Status::GenericFailure,
        "bson2json: the dump pipeline needs a Unix file descriptor".to_owned(),
    ))
}
