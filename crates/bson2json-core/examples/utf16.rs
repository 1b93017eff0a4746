//! The UTF-8 → UTF-16 conversion alone, on the JSON text of twitter.json's 100 statuses (the
//! file `scripts/realworld-data.sh` fetches), for instruction counts:
//!
//!   cargo build --release -p bson2json-core --example utf16
//!   valgrind --tool=callgrind target/release/examples/utf16 MODE 20 [tmp/realworld/twitter.json]
//!
//! MODE: `fast` (`to_utf16`: SSSE3 where the CPU has it), `scalar` (`to_utf16_scalar`),
//! `ascii` (only the `is_ascii` test the addon makes first), `none` (the setup alone, to
//! subtract). Each status is converted REPS times; the printed number is the units written.
use std::hint::black_box;

use bson2json_core::testing::to_utf16_scalar;
use bson2json_core::{to_utf16, UTF16_SLACK};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "fast".to_owned());
    let reps: usize = args
        .next()
        .map_or(20, |r| r.parse().expect("REPS is a number"));
    let path = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tmp/realworld/twitter.json"
        )
        .to_owned()
    });
    let file = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let json: serde_json::Value = serde_json::from_slice(&file).expect("twitter.json");
    let texts: Vec<String> = json["statuses"]
        .as_array()
        .expect("a statuses array")
        .iter()
        .map(|s| serde_json::to_string(s).expect("serialises"))
        .collect();
    let longest = texts.iter().map(String::len).max().unwrap_or(0);
    let mut dst = vec![0u16; longest + UTF16_SLACK];
    let mut units = 0usize;
    for _ in 0..reps {
        for t in &texts {
            let t = black_box(t.as_bytes());
            units += match mode.as_str() {
                "fast" => to_utf16(t, &mut dst),
                "scalar" => to_utf16_scalar(t, &mut dst),
                "ascii" => usize::from(t.is_ascii()),
                _ => 0,
            };
            black_box(&dst);
        }
    }
    println!("{units}");
}
