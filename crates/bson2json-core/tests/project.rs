//! Projection and redaction (`project::Shape`) on generated documents and paths, the fuzz
//! target's properties (fuzz/fuzz_targets/project.rs) under proptest: the shaped document is
//! valid BSON (the `bson` crate reads it and the transcoder accepts it), shaping it again
//! changes nothing, the kept top-level keys are in the input's order, and an excluded or
//! redacted top-level key never keeps its value.
use bson::{Bson, Document};
use bson2json_core::project::{Projection, RedactWith, Redaction, Shape};
use bson2json_core::{transcode, Dialect, Options};
use proptest::prelude::*;

const KEYS: [&str; 5] = ["a", "b", "c", "_id", "x"];

fn value() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        "[a-z]{0,6}".prop_map(Bson::String),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
        any::<f64>().prop_map(Bson::Double),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Bson::Array),
            prop::collection::vec((prop::sample::select(&KEYS[..]), inner), 0..5).prop_map(|kv| {
                let mut d = Document::new();
                for (k, v) in kv {
                    d.insert(k, v);
                }
                Bson::Document(d)
            }),
        ]
    })
}

fn document() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((prop::sample::select(&KEYS[..]), value()), 0..7).prop_map(|kv| {
        let mut d = Document::new();
        for (k, v) in kv {
            d.insert(k, v);
        }
        let mut out = Vec::new();
        d.to_writer(&mut out).unwrap();
        out
    })
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&KEYS[..]), 1..4).prop_map(|p| p.join("."))
}

fn valid(doc: &[u8]) {
    Document::from_reader(doc).expect("the bson crate reads the shaped document");
    let mut json = Vec::new();
    transcode(doc, &Options::with_dialect(Dialect::Relaxed), &mut json)
        .expect("the transcoder accepts it");
}

fn top_keys(doc: &[u8]) -> Vec<String> {
    Document::from_reader(doc)
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn project_valid_idempotent_ordered(doc in document(), paths in prop::collection::vec(path(), 1..4), inclusion in any::<bool>(), redact in prop::collection::vec(path(), 0..3)) {
        let fields: Vec<(&str, bool)> = paths.iter().map(|p| (p.as_str(), inclusion)).collect();
        let red: Vec<&str> = redact.iter().map(String::as_str).collect();
        let (Ok(projection), Ok(redaction)) = (Projection::new(&fields), Redaction::new(&red, RedactWith::Null)) else {
            return Ok(()); // colliding paths
        };
        let mut scratch = Vec::new();
        let mut both = Vec::new();
        Shape::new(projection.clone(), redaction.clone()).document(&doc, &mut both, &mut scratch).unwrap();
        valid(&both);
        let input_keys = top_keys(&doc);
        for s in [Shape::new(projection, None), Shape::new(None, redaction)] {
            let mut once = Vec::new();
            s.document(&doc, &mut once, &mut scratch).unwrap();
            valid(&once);
            let mut twice = Vec::new();
            s.document(&once, &mut twice, &mut scratch).unwrap();
            prop_assert_eq!(&once, &twice);
            // kept keys: a subsequence of the input's keys
            let mut it = input_keys.iter();
            for k in top_keys(&once) {
                prop_assert!(it.any(|x| *x == k), "key {} out of order", k);
            }
        }
        // top-level paths: excluded keys are gone, redacted ones are null
        let got = Document::from_reader(&both[..]).unwrap();
        for p in paths.iter().filter(|p| !p.contains('.')) {
            if !inclusion && p != "_id" {
                prop_assert!(!got.contains_key(p.as_str()));
            }
        }
        for p in redact.iter().filter(|p| !p.contains('.')) {
            if let Some(v) = got.get(p.as_str()) {
                prop_assert_eq!(v, &Bson::Null);
            }
        }
    }
}

/// The positions of every string value's bytes (length prefix, content, NUL) in the document at
/// `start`, recursively (the generated documents hold only the types of [`value`]).
fn string_bytes(doc: &[u8], start: usize, out: &mut Vec<usize>) {
    let len = i32::from_le_bytes(doc[start..start + 4].try_into().unwrap()) as usize;
    let end = start + len - 1;
    let mut at = start + 4;
    while at < end {
        let t = doc[at];
        at += 1;
        while doc[at] != 0 {
            at += 1;
        }
        at += 1;
        let n = match t {
            0x02 => {
                let n = 4 + i32::from_le_bytes(doc[at..at + 4].try_into().unwrap()) as usize;
                out.extend(at..at + n);
                n
            }
            0x03 | 0x04 => {
                string_bytes(doc, at, out);
                i32::from_le_bytes(doc[at..at + 4].try_into().unwrap()) as usize
            }
            0x01 | 0x12 => 8,
            0x10 => 4,
            0x08 => 1,
            0x0A => 0,
            other => panic!("type {other:#x} not generated"),
        };
        at += n;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// `source_offset` maps every byte of a kept string value (the values the transcoder can
    /// fault on, invalid UTF-8 say) to the same byte of the input, through projection,
    /// redaction and both.
    #[test]
    fn project_source_offsets_point_at_the_input(doc in document(), paths in prop::collection::vec(path(), 1..4), inclusion in any::<bool>(), redact in prop::collection::vec(path(), 0..3)) {
        let fields: Vec<(&str, bool)> = paths.iter().map(|p| (p.as_str(), inclusion)).collect();
        let red: Vec<&str> = redact.iter().map(String::as_str).collect();
        let (Ok(projection), Ok(redaction)) = (Projection::new(&fields), Redaction::new(&red, RedactWith::Null)) else {
            return Ok(());
        };
        for s in [Shape::new(projection.clone(), None), Shape::new(None, redaction.clone()), Shape::new(projection, redaction)] {
            let mut shaped = Vec::new();
            s.document(&doc, &mut shaped, &mut Vec::new()).unwrap();
            let mut at = Vec::new();
            string_bytes(&shaped, 0, &mut at);
            for i in at {
                let o = s.source_offset(&doc, i);
                prop_assert!(o < doc.len());
                prop_assert_eq!(doc[o], shaped[i], "shaped byte {} maps to input byte {}", i, o);
            }
        }
    }
}
