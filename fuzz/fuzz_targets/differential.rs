//! Accept/reject against the `bson` crate (3.x), plus JSON validity of every `Ok` output.
//!
//! Direction checked: if the `bson` crate accepts the document (`RawDocument::from_bytes` and a
//! full walk of every nested element with `RawElement::value()`, which validates UTF-8 in
//! strings, keys, regex pattern and options, code, symbol and DBPointer namespace), then our
//! strict `relaxed` and `canonical` transcodes must succeed. Legitimate differences:
//! - Depth: the `bson` crate has no depth limit; ours defaults to 1000. We compare with
//!   `max_depth: u32::MAX` (the walk here and ours are both iterative).
//! - Output cap: irrelevant at fuzz sizes (≤ 64 KiB input × 6.5 ≪ 256 MiB).
//! - Array element names: we ignore them (degenerate_bson has "non-0,1,2" keys), so an array
//!   key with invalid UTF-8 is accepted by us and rejected by the crate (its keys are `&str`).
//!   That is the reverse direction, which is only checked for non-UTF-8 errors.
//! - `compat` is not compared: it decodes keys and regexes lossily, as js-bson does.
//! Reverse direction: if we accept in strict relaxed, the crate may only reject with a UTF-8
//! error (array keys), never a structural one.
#![no_main]
use bson2json_core::{Dialect, Transcoder, Utf8Mode};
use bson2json_fuzz::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let oracle = bson_crate_accepts(data);
    let mut tc = Transcoder::new();
    for dialect in [Dialect::Relaxed, Dialect::Canonical] {
        let ours = checked_transcode(&mut tc, data, &unlimited(dialect, Utf8Mode::Strict));
        match (&oracle, &ours) {
            (Ok(()), Err(e)) => panic!(
                "bson crate accepts, {dialect:?} rejects with {} ({e}) for {}",
                e.code(),
                hex(data)
            ),
            (Err(b), Ok(_)) if !is_utf8_error(b) => panic!(
                "{dialect:?} accepts, bson crate rejects structurally ({b}) for {}",
                hex(data)
            ),
            _ => {}
        }
    }
    if oracle.is_ok() {
        // Same with lossy UTF-8 and in compat: a valid document is valid everywhere.
        for dialect in DIALECTS {
            for utf8 in UTF8_MODES {
                checked_transcode(&mut tc, data, &unlimited(dialect, utf8))
                    .unwrap_or_else(|e| panic!("{dialect:?}/{utf8:?} rejects ({e}) a bson-valid doc {}", hex(data)));
            }
        }
    }
});
