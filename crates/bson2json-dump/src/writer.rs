//! The writer: writes slots in input order, checks `compat` regexes through the caller's
//! [`RegexCheck`], and stops at the first fault in input order with the documents before it
//! written.

use std::collections::{BTreeMap, HashSet};
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};

use bson2json_core::batch::{BatchOutput, Layout};
use bson2json_core::ErrorKind;

use crate::control::{Control, POLL};
use crate::outcome::{Finished, Stop};
use crate::reader::BATCH_BYTES;
use crate::slot::Slot;

/// A slot's input buffer above this many bytes (grown for a large document) is released.
const KEEP_BYTES: usize = 4 * BATCH_BYTES;

/// The check a `compat` regex needs, asked once per distinct (pattern, flags), on the writer's
/// thread: `Ok(None)` if the regex is accepted, `Ok(Some(message))` with the engine's message
/// if it is refused (a fault at its document), `Err(why)` if it could not be checked (a fault
/// too). The Node binding asks V8 through a thread-safe call of a JS function.
pub trait RegexCheck {
    fn check(&mut self, pattern: &str, flags: &str) -> Result<Option<String>, String>;
}

impl<F: FnMut(&str, &str) -> Result<Option<String>, String>> RegexCheck for F {
    fn check(&mut self, pattern: &str, flags: &str) -> Result<Option<String>, String> {
        self(pattern, flags)
    }
}

/// The writer's state: the output and what has been written to it.
pub(crate) struct Writer<'a> {
    out: &'a mut dyn Write,
    layout: Layout,
    control: &'a Control,
    regex: &'a mut dyn RegexCheck,
    /// (pattern, flags) pairs the check has accepted.
    regex_ok: HashSet<(String, String)>,
    /// Whole documents written, and the output's length in whole documents.
    documents: u64,
    bytes: u64,
    /// Whether a document has been written (the array's `[` is out).
    any: bool,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(
        out: &'a mut dyn Write,
        layout: Layout,
        control: &'a Control,
        regex: &'a mut dyn RegexCheck,
    ) -> Self {
        Writer {
            out,
            layout,
            control,
            regex,
            regex_ok: HashSet::new(),
            documents: 0,
            bytes: 0,
            any: false,
        }
    }

    /// Writes the slots in input order until one stops the run or the input ends.
    pub(crate) fn write_in_order(&mut self, done: Receiver<Slot>, free: SyncSender<Slot>) -> Stop {
        let mut pending: BTreeMap<u64, Slot> = BTreeMap::new();
        let mut next = 0u64;
        loop {
            let slot = match done.recv_timeout(POLL) {
                Ok(slot) => slot,
                // The reader may be waiting for input (stdin) while a signal cancels.
                Err(RecvTimeoutError::Timeout) if self.control.cancelled() => {
                    return Stop::Cancelled
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            pending.insert(slot.seq, slot);
            while let Some(mut slot) = pending.remove(&next) {
                next += 1;
                if self.control.cancelled() {
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
        if self.control.cancelled() {
            return Stop::Cancelled;
        }
        if self.layout == Layout::Array {
            let close: &[u8] = if self.any { b"]\n" } else { b"[]\n" };
            if let Err((e, _)) = self.write(close) {
                return Stop::Write(e);
            }
            self.bytes += close.len() as u64;
            Control::set(&self.control.bytes_written, self.bytes);
        }
        Stop::End
    }

    /// Writes one slot's documents up to its first fault; `Some` when the run stops here.
    fn write_slot(&mut self, slot: &mut Slot) -> Option<Stop> {
        let result = slot.result.take()?;
        let total = slot.out.offsets.len().saturating_sub(1);
        // The regexes of the documents before a fault (the fault's own document recorded
        // none), in order: one the check refuses is a fault at its document.
        let mut fault = None;
        for (i, r) in std::mem::take(&mut slot.out.regexes) {
            let key = (r.pattern, r.flags);
            if self.regex_ok.contains(&key) {
                continue;
            }
            let (detail, offset) = match self.regex.check(&key.0, &key.1) {
                Ok(None) => {
                    self.regex_ok.insert(key);
                    continue;
                }
                // `transcode_concatenated` gives the offset in the slot's input.
                Ok(Some(message)) => (format!("invalid regular expression ({message})"), r.offset),
                Err(e) => (
                    format!("the regular expression could not be checked ({e})"),
                    doc_start(&slot.input, i),
                ),
            };
            fault = Some((
                i,
                Stop::Bson {
                    code: ErrorKind::InvalidRegex.code(),
                    detail,
                    index: slot.first_index + i as u64,
                    offset: slot.first_offset + offset as u64,
                },
            ));
            break;
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
                Control::set(&self.control.documents, self.documents);
                Control::set(&self.control.bytes_written, self.bytes);
                Ok(())
            }
            Err((e, written)) => {
                // The whole documents within what was written count; the caller truncates
                // the output to them.
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
    fn write(&mut self, buf: &[u8]) -> Result<(), (io::Error, usize)> {
        let mut done = 0;
        while done < buf.len() {
            match self.out.write(&buf[done..]) {
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

    /// How the run ended, with what it wrote and read.
    pub(crate) fn finished(self, stop: Stop, gzip: bool, head: Vec<u8>) -> Finished {
        let p = self.control.progress();
        Finished {
            stop,
            documents: self.documents,
            bytes_written: self.bytes,
            bytes_read: p.bytes_read,
            bson_read: p.bson_read,
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
