//! Arbitrary tree of BSON values (built from a flat `Op` program with an explicit stack), written
//! as valid BSON by hand: must transcode `Ok` in every dialect and mode, and the `bson` crate
//! must accept it too (a check on the writer). Then one length field, chosen by the fuzzer, is
//! set to a lie: no panic, and `Ok` output (if any) must still be JSON.
#![no_main]
use arbitrary::Arbitrary;
use bson2json_core::Transcoder;
use bson2json_fuzz::*;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    ops: Vec<Op>,
    which: u16,
    lie: Lie,
}

#[derive(Arbitrary, Debug)]
enum Lie {
    Minus1,
    Zero,
    PlusOne,
    MinusOne,
    Max,
    Min,
    Value(i32),
    Delta(i8),
}

fuzz_target!(|input: Input| {
    let w = build(&input.ops);
    let doc = &w.buf;
    bson_crate_accepts(doc).unwrap_or_else(|e| panic!("writer produced invalid BSON ({e}): {}", hex(doc)));
    let mut tc = Transcoder::new();
    for d in DIALECTS {
        for u in UTF8_MODES {
            checked_transcode(&mut tc, doc, &unlimited(d, u))
                .unwrap_or_else(|e| panic!("valid doc rejected {d:?}/{u:?}: {e} {}", hex(doc)));
        }
    }
    if w.lengths.is_empty() {
        return;
    }
    let at = w.lengths[input.which as usize % w.lengths.len()];
    let orig = i32::from_le_bytes(doc[at..at + 4].try_into().unwrap());
    let v = match input.lie {
        Lie::Minus1 => -1,
        Lie::Zero => 0,
        Lie::PlusOne => orig.wrapping_add(1),
        Lie::MinusOne => orig.wrapping_sub(1),
        Lie::Max => i32::MAX,
        Lie::Min => i32::MIN,
        Lie::Value(v) => v,
        Lie::Delta(d) => orig.wrapping_add(i32::from(d)),
    };
    let mut bad = doc.clone();
    bad[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let oracle = bson_crate_accepts(&bad);
    for d in DIALECTS {
        for u in UTF8_MODES {
            let r = checked_transcode(&mut tc, &bad, &unlimited(d, u));
            if v != orig && d != bson2json_core::Dialect::Compat && u == bson2json_core::Utf8Mode::Strict {
                // The lie is visible to the bson crate iff it is visible to us, except that a
                // lie can turn value bytes into an *array* element name with invalid UTF-8,
                // which we ignore (array names are never read) and the crate rejects.
                let utf8_only = matches!(&oracle, Err(e) if is_utf8_error(e));
                if oracle.is_ok() != r.is_ok() && !(r.is_ok() && utf8_only) {
                    panic!("lie {v} (was {orig}) at {at}: bson crate {:?}, ours {:?}, {}", oracle.as_ref().err().map(|e| e.to_string()), r.as_ref().err(), hex(&bad));
                }
            }
        }
    }
});
