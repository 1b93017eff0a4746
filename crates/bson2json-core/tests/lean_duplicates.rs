//! Duplicate keys, which `compat` must repair as js-bson's objects do (the last value, in the
//! first key's place): the lean walk finds them from a Bloom filter, reading keys back (small
//! objects) or their hashes (larger ones, when they close), and hands such a document to the
//! recording walk. Every document here is held equal between [`Transcoder::transcode`] and its
//! plain twin [`Transcoder::transcode_plain`], which records every member: objects of 1-70
//! keys, short and long, with one key repeated at many position pairs, at the top level and
//! nested in an object and an array, and the same objects without a repeat.

use bson2json_core::{Dialect, Options, Transcoder};

mod common;
use common::{doc, member};

/// Key `i`: short (`k7`) or long (past the walker's 16-byte read, `a_long_key_name_number_7`).
fn key(i: usize) -> String {
    if i % 3 == 2 {
        format!("a_long_key_name_number_{i}")
    } else {
        format!("k{i}")
    }
}

/// An object of `names`, member `i` an int32 `i`.
fn object(names: &[String]) -> Vec<u8> {
    let mut body = Vec::new();
    for (i, n) in names.iter().enumerate() {
        body.extend(member(0x10, n, &(i as i32).to_le_bytes()));
    }
    doc(&body)
}

fn both(input: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let opts = Options::with_dialect(Dialect::Compat);
    // A new transcoder each time: after a lean walk gives up, the next documents skip it.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    Transcoder::new().transcode(input, &opts, &mut a).unwrap();
    Transcoder::new()
        .transcode_plain(input, &opts, &mut b)
        .unwrap();
    (a, b)
}

fn check(names: &[String], what: &str) {
    let inner = object(names);
    let nested = doc(&[
        member(0x10, "x", &1i32.to_le_bytes()),
        member(0x03, "o", &inner),
    ]
    .concat());
    let in_array = doc(&member(0x04, "a", &doc(&member(0x03, "0", &inner))));
    for (input, place) in [(&inner, "top"), (&nested, "nested"), (&in_array, "array")] {
        let (lean, plain) = both(input);
        assert_eq!(
            String::from_utf8_lossy(&lean),
            String::from_utf8_lossy(&plain),
            "{what}, {place}"
        );
    }
}

#[test]
fn repeated_keys_at_every_size() {
    for n in 1..=70 {
        let names: Vec<String> = (0..n).map(key).collect();
        check(&names, &format!("{n} distinct keys"));
        // One key repeated: every pair in small objects, a spread of pairs in larger ones.
        let step = if n <= 24 { 1 } else { 5 };
        for j in (1..n).step_by(step) {
            for i in (0..j).step_by(step) {
                let mut dup = names.clone();
                dup[j] = names[i].clone();
                check(&dup, &format!("{n} keys, key {j} repeats key {i}"));
            }
        }
    }
}

#[test]
fn a_repeat_is_repaired() {
    // The expected text itself, for a 40-key object (checked when it closes) with key 30
    // repeating key 3: js-bson keeps the first position and the last value.
    let mut names: Vec<String> = (0..40).map(key).collect();
    names[30] = names[3].clone();
    let (lean, _) = both(&object(&names));
    let text = String::from_utf8(lean).unwrap();
    assert!(
        text.starts_with(r#"{"k0":0,"k1":1,"a_long_key_name_number_2":2,"k3":30,"k4":4,"#),
        "{text}"
    );
    assert_eq!(text.matches("\"k3\"").count(), 1, "{text}");
}
