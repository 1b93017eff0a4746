//! The reader: fills free slots with whole documents, in order, until the input ends, a
//! framing fault, a read error, or the writer halts.

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};

use bson2json_core::concat::{frame_prefix, PrefixEnd};
use bson2json_core::ErrorKind;

use crate::control::{Control, POLL};
use crate::outcome::Stop;
use crate::slot::Slot;
use crate::source::Source;

/// BSON bytes read per slot (a document larger than this gets a slot of its own size).
pub(crate) const BATCH_BYTES: usize = 2 << 20;
/// BSON bytes read (or decompressed) at a time into a slot, each framed before the next read.
pub(crate) const READ_BYTES: usize = 128 << 10;

/// Reads `source` into the slots that come back on `free` and sends them, in order, to `work`.
pub(crate) fn read(
    mut source: Source,
    control: &Control,
    max_doc: usize,
    free: Receiver<Slot>,
    work: SyncSender<Slot>,
) {
    let mut carry: Vec<u8> = std::mem::take(&mut source.carry);
    let (mut index, mut offset, mut seq) = (0u64, 0u64, 0u64);
    let mut eof = source.eof;
    let mut done = false;
    while !done {
        if control.stopping() {
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
                match source.fill(&mut slot.input, upto, control) {
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
