//! Decimal128 formatting against the BSON corpus (spec style) and against
//! vectors produced by js-bson's `Decimal128.prototype.toString()`.

use std::path::{Path, PathBuf};

use bson2json_core::testing::{write_decimal128, Decimal128Style};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/bson-corpus/tests")
}

fn parse_hex(hex: &str) -> Vec<u8> {
    assert!(hex.len().is_multiple_of(2), "odd hex length: {hex}");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn to_array(bytes: &[u8]) -> [u8; 16] {
    bytes.try_into().expect("16 bytes")
}

fn format(bytes: &[u8; 16], style: Decimal128Style) -> String {
    let mut out = Vec::new();
    write_decimal128(bytes, style, &mut out);
    String::from_utf8(out).expect("ASCII output")
}

/// Every `valid` case of `decimal128-*.json`: the `$numberDecimal` string of
/// `canonical_extjson` must be produced from the value bytes of
/// `canonical_bson`, in both styles.
#[test]
fn bson_corpus_valid_cases() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("decimal128-") && name.ends_with(".json")
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 7, "expected decimal128-1..7.json");

    let mut count = 0;
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read corpus file");
        let json: serde_json::Value = serde_json::from_str(&text).expect("corpus JSON");
        let Some(valid) = json.get("valid").and_then(|v| v.as_array()) else {
            continue;
        };
        for case in valid {
            let description = case["description"].as_str().unwrap_or("?");
            let doc = parse_hex(case["canonical_bson"].as_str().expect("canonical_bson"));
            // {d: Decimal128}: int32 length, 0x13, "d\0", 16 value bytes, 0x00.
            assert_eq!(doc.len(), 24, "{description}");
            assert_eq!(&doc[4..7], b"\x13d\0", "{description}");
            let bytes = to_array(&doc[7..23]);
            let extjson: serde_json::Value = serde_json::from_str(
                case["canonical_extjson"]
                    .as_str()
                    .expect("canonical_extjson"),
            )
            .expect("extjson");
            let expected = extjson["d"]["$numberDecimal"]
                .as_str()
                .expect("$numberDecimal");
            for style in [Decimal128Style::Spec, Decimal128Style::JsBson] {
                let actual = format(&bytes, style);
                if actual != expected {
                    failures.push(format!(
                        "{}: {description} ({style:?}): expected {expected}, got {actual}",
                        file.display()
                    ));
                }
            }
            count += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(count, 605, "number of valid decimal128 corpus cases");
}

/// Checks `hex<TAB>string` lines (hex of the 16 bytes in BSON order) against
/// the `JsBson` style; returns the number of lines checked.
fn check_jsbson_vectors(text: &str) -> usize {
    let mut count = 0;
    let mut failures = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (hex, expected) = line.split_once('\t').expect("hex<TAB>string");
        let bytes = to_array(&parse_hex(hex));
        let actual = format(&bytes, Decimal128Style::JsBson);
        if actual != expected {
            failures.push(format!("{hex}: expected {expected}, got {actual}"));
        }
        count += 1;
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    count
}

/// Vectors generated with js-bson 7 (`new Decimal128(bytes).toString()`),
/// covering random bit patterns, NaN/Infinity payloads, the `11` combination
/// form, non-canonical significands and extreme exponents.
#[test]
fn jsbson_vectors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/decimal128_jsbson_vectors.txt");
    let text = std::fs::read_to_string(path).expect("vector file");
    let count = check_jsbson_vectors(&text);
    assert!(count >= 1000, "only {count} vectors");
}

/// Optional larger differential run: set `DECIMAL128_JSBSON_VECTORS` to a
/// file in the same format (e.g. freshly generated with Node and js-bson).
#[test]
fn jsbson_vectors_from_env() {
    if let Some(path) = std::env::var_os("DECIMAL128_JSBSON_VECTORS") {
        let text = std::fs::read_to_string(path).expect("vector file");
        let count = check_jsbson_vectors(&text);
        eprintln!("checked {count} js-bson vectors");
    }
}
