//! Raw bytes through every dialect × UTF-8 mode (plus tight depth and output limits).
//! Invariants: no panic; `Ok` output is one JSON text; on `Err` the output buffer is exactly
//! what it was before the call and the error has a known kind and an in-bounds offset;
//! `strict` accepting implies `replace` accepting with the same output; in `replace` mode the
//! three dialects agree on accept/reject (only UTF-8 handling differs between dialects);
//! `relaxed` and `canonical` agree on accept/reject in both modes.
#![no_main]
use bson2json_core::{BsonVersion, Dialect, Options, Transcoder, Utf8Mode};
use bson2json_fuzz::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut tc = Transcoder::new();
    let mut results = Vec::new();
    for dialect in DIALECTS {
        for utf8 in UTF8_MODES {
            let opts = Options { dialect, utf8, ..Options::default() };
            results.push(((dialect, utf8), checked_transcode(&mut tc, data, &opts)));
        }
    }
    let get = |d: Dialect, u: Utf8Mode| &results.iter().find(|r| r.0 == (d, u)).unwrap().1;
    for d in DIALECTS {
        if let Ok(strict) = get(d, Utf8Mode::Strict) {
            let replace = get(d, Utf8Mode::Replace)
                .as_ref()
                .unwrap_or_else(|e| panic!("{d:?}: strict Ok but replace Err {e} for {}", hex(data)));
            assert_eq!(strict, replace, "{d:?}: strict and replace outputs differ for valid UTF-8");
        }
    }
    let ok = |d, u| get(d, u).is_ok();
    for u in UTF8_MODES {
        assert_eq!(ok(Dialect::Relaxed, u), ok(Dialect::Canonical, u), "relaxed vs canonical {u:?}: {}", hex(data));
    }
    assert_eq!(ok(Dialect::Compat, Utf8Mode::Replace), ok(Dialect::Relaxed, Utf8Mode::Replace), "compat vs relaxed (replace): {}", hex(data));
    // Strict relaxed validates keys and regexes too; compat decodes those lossily.
    if ok(Dialect::Relaxed, Utf8Mode::Strict) {
        assert!(ok(Dialect::Compat, Utf8Mode::Strict), "relaxed strict Ok but compat strict Err: {}", hex(data));
    }

    // Tight limits and js-bson's deserialize options, chosen from the input so the fuzzer can
    // steer them (the options change only `compat`).
    let k = data.last().copied().unwrap_or(0) as usize;
    for dialect in DIALECTS {
        let opts = Options {
            dialect,
            utf8: Utf8Mode::Replace,
            max_depth: (k % 8) as u32,
            max_output_bytes: data.len() * (k % 4),
            bson_version: if k & 8 != 0 { BsonVersion::V6 } else { BsonVersion::V7 },
            promote_longs: k & 16 == 0,
            promote_values: k & 32 == 0,
            promote_buffers: k & 64 != 0,
            bson_regexp: k & 128 != 0,
        };
        let r = checked_transcode(&mut tc, data, &opts);
        if let Ok(out) = &r {
            assert!(out.len() <= opts.max_output_bytes, "output {} over cap {}", out.len(), opts.max_output_bytes);
        }
    }
});
