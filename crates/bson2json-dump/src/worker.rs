//! A worker: transcodes slots until the reader is done.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Mutex;

use bson2json_core::batch::Layout;
use bson2json_core::concat::transcode_concatenated;
use bson2json_core::{Options, Transcoder};

use crate::control::{Control, POLL};
use crate::slot::Slot;

/// Takes slots from `work`, transcodes their documents in one pass, and hands them to the
/// writer through `done`, until the reader is done or the run halts.
pub(crate) fn transcode(
    work: &Mutex<Receiver<Slot>>,
    done: Sender<Slot>,
    opts: &Options,
    layout: Layout,
    control: &Control,
) {
    let mut tc = Transcoder::new();
    loop {
        let next = match work.lock() {
            Ok(rx) => rx.recv_timeout(POLL),
            Err(_) => return,
        };
        let mut slot = match next {
            Ok(slot) => slot,
            Err(RecvTimeoutError::Timeout) if !control.halted() => continue,
            Err(_) => return,
        };
        slot.out.clear();
        if !control.halted() {
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
