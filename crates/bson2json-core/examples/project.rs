//! The projection/redaction pass (`project::Shape`) alone and followed by the transcoder, beside
//! the transcoder alone, over every document of a concatenated `.bson` file: µs per document.
//!
//! `cargo run --release -p bson2json-core --example project -- FILE`
//! (fields as in benchmark/projection.mjs: an exclusion of 2 fields, an HMAC redaction of 5).
use std::time::Instant;

use bson2json_core::concat::split_concatenated;
use bson2json_core::project::{Projection, RedactWith, Redaction, Shape};
use bson2json_core::{Options, Transcoder};

fn main() {
    let path = std::env::args().nth(1).expect("usage: project FILE");
    let data = std::fs::read(path).expect("read");
    let mut ranges = Vec::new();
    split_concatenated(&data, &mut ranges).expect("framing");
    let docs: Vec<&[u8]> = ranges.iter().map(|&(s, e)| &data[s..e]).collect();
    let red = [
        "orderNo",
        "customer.name",
        "customer.email",
        "customer.address.street",
        "customer.address.zip",
    ];
    let shapes = [
        (
            "exclude2",
            Shape::new(
                Projection::new(&[("customer.email", false), ("paid", false)]).unwrap(),
                None,
            ),
        ),
        (
            "redact5 hmac",
            Shape::new(
                None,
                Redaction::new(&red, RedactWith::HmacSha256(b"k".to_vec())).unwrap(),
            ),
        ),
        (
            "redact5 null",
            Shape::new(None, Redaction::new(&red, RedactWith::Null).unwrap()),
        ),
        (
            "project3",
            Shape::new(
                Projection::new(&[("orderNo", true), ("status", true), ("total", true)]).unwrap(),
                None,
            ),
        ),
    ];
    let opts = Options::default();
    let mut tc = Transcoder::new();
    let (mut out, mut shaped, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    // SKEW=n: the shaped document starts n bytes into its buffer (address effects).
    let skew: usize = std::env::var("SKEW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let time = |f: &mut dyn FnMut()| {
        let mut best = f64::INFINITY;
        for _ in 0..15 {
            let t = Instant::now();
            for _ in 0..20 {
                f();
            }
            best = best.min(t.elapsed().as_secs_f64() * 1e6 / (20 * docs.len()) as f64);
        }
        best
    };
    let whole = time(&mut || {
        for d in &docs {
            out.clear();
            tc.transcode(d, &opts, &mut out).unwrap();
        }
    });
    println!("transcode alone           {whole:6.2} µs/doc");
    for (name, s) in &shapes {
        let pass = time(&mut || {
            for d in &docs {
                shaped.clear();
                s.document(d, &mut shaped, &mut scratch).unwrap();
            }
        });
        let both = time(&mut || {
            for d in &docs {
                shaped.clear();
                shaped.resize(skew, 0);
                s.document(d, &mut shaped, &mut scratch).unwrap();
                out.clear();
                tc.transcode(&shaped[skew..], &opts, &mut out).unwrap();
            }
        });
        println!(
            "{name:<13} pass {pass:6.2}, pass + transcode {both:6.2} µs/doc ({:.2}x)",
            both / whole
        );
    }
}
