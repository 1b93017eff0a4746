//! The BSON corpus (mongodb/specifications `source/bson-corpus`, vendored in `spec/`) as the
//! oracle for the Extended JSON dialects: every `valid` case's canonical BSON (and degenerate
//! BSON, where given) must produce the corpus's `canonical_extjson`, and its `relaxed_extjson`
//! where given; every `decodeErrors` case must fail in every dialect.
//!
//! Comparison: both texts are parsed with serde_json keeping key order and the exact text of
//! numbers (`preserve_order`, `arbitrary_precision`), so whitespace and string escapes
//! (`\u00e9` vs a raw `é`) do not matter while key order, types and number text do.

use std::path::PathBuf;

use bson2json_core::{transcode, Dialect, Options, Utf8Mode};
use serde_json::Value;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/bson-corpus/tests")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn run(bson: &[u8], dialect: Dialect) -> Result<String, bson2json_core::Error> {
    let mut out = Vec::new();
    transcode(bson, &Options::with_dialect(dialect), &mut out)?;
    Ok(String::from_utf8(out).expect("output is UTF-8"))
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

struct Tally {
    valid: usize,
    compared: usize,
    decode_errors: usize,
}

fn files() -> Vec<(String, Value)> {
    let mut v: Vec<_> = std::fs::read_dir(corpus_dir())
        .expect("spec/bson-corpus/tests")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, parse(&std::fs::read_to_string(&p).unwrap()))
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn corpus_valid_and_decode_errors() {
    let mut t = Tally {
        valid: 0,
        compared: 0,
        decode_errors: 0,
    };
    let mut failures = Vec::new();
    for (file, suite) in files() {
        for case in suite["valid"].as_array().into_iter().flatten() {
            t.valid += 1;
            let desc = case["description"].as_str().unwrap();
            let mut inputs = vec![(
                "canonical_bson",
                unhex(case["canonical_bson"].as_str().unwrap()),
            )];
            if let Some(d) = case["degenerate_bson"].as_str() {
                inputs.push(("degenerate_bson", unhex(d)));
            }
            let cej = parse(case["canonical_extjson"].as_str().unwrap());
            let rej = case["relaxed_extjson"].as_str().map(parse);
            for (which, bson) in &inputs {
                match run(bson, Dialect::Canonical) {
                    Ok(out) => {
                        t.compared += 1;
                        if parse(&out) != cej {
                            failures.push(format!(
                                "{file} / {desc} / {which} canonical:\n  got  {out}\n  want {cej}"
                            ));
                        }
                    }
                    Err(e) => {
                        failures.push(format!("{file} / {desc} / {which} canonical: error {e}"));
                    }
                }
                match run(bson, Dialect::Relaxed) {
                    Ok(out) => {
                        let got = parse(&out);
                        if let Some(rej) = &rej {
                            t.compared += 1;
                            if &got != rej {
                                failures.push(format!("{file} / {desc} / {which} relaxed:\n  got  {out}\n  want {rej}"));
                            }
                        }
                    }
                    Err(e) => {
                        failures.push(format!("{file} / {desc} / {which} relaxed: error {e}"));
                    }
                }
                match run(bson, Dialect::Compat) {
                    Ok(out) => {
                        parse(&out);
                    }
                    Err(e) => failures.push(format!("{file} / {desc} / {which} compat: error {e}")),
                }
            }
        }
        for case in suite["decodeErrors"].as_array().into_iter().flatten() {
            t.decode_errors += 1;
            let desc = case["description"].as_str().unwrap();
            let bson = unhex(case["bson"].as_str().unwrap());
            for dialect in [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical] {
                for utf8 in [Utf8Mode::Strict, Utf8Mode::Replace] {
                    let mut out = Vec::new();
                    let opts = Options {
                        dialect,
                        utf8,
                        ..Options::default()
                    };
                    let r = transcode(&bson, &opts, &mut out);
                    let utf8_case =
                        desc.contains("UTF-8") || desc.contains("utf-8") || desc.contains("UTF8");
                    if utf8 == Utf8Mode::Replace && utf8_case {
                        // With replacement, invalid UTF-8 is not an error: only check JSON.
                        if r.is_ok() {
                            parse(std::str::from_utf8(&out).unwrap());
                        }
                        continue;
                    }
                    if r.is_ok() {
                        failures.push(format!(
                            "{file} / {desc}: decodeError accepted in {dialect:?}/{utf8:?}: {}",
                            String::from_utf8_lossy(&out)
                        ));
                    }
                    assert!(out.is_empty(), "output must be discarded on error");
                }
            }
        }
    }
    eprintln!(
        "corpus: {} valid cases, {} comparisons, {} decodeErrors",
        t.valid, t.compared, t.decode_errors
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(t.valid, 728);
    assert_eq!(t.decode_errors, 75);
}
