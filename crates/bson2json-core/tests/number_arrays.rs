//! Arrays of numbers inside an array (GeoJSON's `[x, y]` coordinates), which the lean `compat`
//! walk writes without a frame of their own: every document here is held equal between
//! [`Transcoder::transcode`] and its plain twin [`Transcoder::transcode_plain`] (the same
//! output, or the same error at the same offset), under every output cap, several depth limits
//! and both `promoteLongs` settings, and with each of its bytes replaced.

use bson2json_core::{Dialect, Options, Transcoder};

mod common;
use common::{doc, member};

/// One element value: numbers of every kind the numbers loop writes or leaves to the general
/// path, and a few that are not numbers.
fn value(kind: usize, i: usize) -> (u8, Vec<u8>) {
    let n = i as i32 * 7919 - 40_000;
    match kind % 11 {
        0 => (0x01, (f64::from(n) / 3.0).to_le_bytes().to_vec()),
        1 => (0x10, n.to_le_bytes().to_vec()),
        2 => (0x12, (i64::from(n) * 1_000_003).to_le_bytes().to_vec()),
        // beyond ±2^53: an int64 `compat` does not print as a plain number
        3 => (0x12, ((1i64 << 53) + 1 + i as i64).to_le_bytes().to_vec()),
        4 => (0x01, f64::NAN.to_le_bytes().to_vec()),
        5 => (0x01, (-0.0f64).to_le_bytes().to_vec()),
        6 => (0x01, (1e21 * f64::from(n)).to_le_bytes().to_vec()),
        7 => (0x0A, Vec::new()),
        8 => (0x02, {
            let mut v = 2i32.to_le_bytes().to_vec();
            v.extend_from_slice(b"s\0");
            v
        }),
        9 => (0x04, doc(&member(0x10, "0", &1i32.to_le_bytes()))),
        _ => (0x01, f64::INFINITY.to_le_bytes().to_vec()),
    }
}

/// An array of `pairs` elements; element `i` is an array of the kinds `shape(i)` (empty for
/// an empty list), or, where `shape(i)` is `None`, the plain number `value(0, i)`.
fn array_of_arrays(pairs: usize, shape: impl Fn(usize) -> Option<Vec<usize>>) -> Vec<u8> {
    let mut body = Vec::new();
    for i in 0..pairs {
        match shape(i) {
            Some(kinds) => {
                let mut inner = Vec::new();
                for (j, &k) in kinds.iter().enumerate() {
                    let (t, v) = value(k, i * 3 + j);
                    inner.extend(member(t, j.to_string(), &v));
                }
                body.extend(member(0x04, i.to_string(), &doc(&inner)));
            }
            None => {
                let (t, v) = value(0, i);
                body.extend(member(t, i.to_string(), &v));
            }
        }
    }
    doc(&body)
}

/// `{type: "Polygon", coordinates: [rings...], n: 1}` with the given rings.
fn geo(rings: &[Vec<u8>]) -> Vec<u8> {
    let mut arr = Vec::new();
    for (i, r) in rings.iter().enumerate() {
        arr.extend(member(0x04, i.to_string(), r));
    }
    let mut s = 8i32.to_le_bytes().to_vec();
    s.extend_from_slice(b"Polygon\0");
    let mut body = member(0x02, "type", &s);
    body.extend(member(0x04, "coordinates", &doc(&arr)));
    body.extend(member(0x10, "n", &1i32.to_le_bytes()));
    doc(&body)
}

fn samples() -> Vec<Vec<u8>> {
    let mut out = vec![
        geo(&[array_of_arrays(5, |_| Some(vec![0, 0]))]),
        geo(&[array_of_arrays(0, |_| Some(vec![]))]),
        geo(&[array_of_arrays(4, |_| Some(vec![]))]),
        geo(&[array_of_arrays(6, |i| {
            if i % 3 == 1 {
                None
            } else {
                Some(vec![1, 2, 0])
            }
        })]),
    ];
    // every kind at every position of a three-number array, in the middle of a ring
    for kind in 0..11 {
        for at in 0..3 {
            out.push(geo(&[
                array_of_arrays(4, |i| {
                    let mut k = vec![0, 1, 5];
                    if i == 2 {
                        k[at] = kind;
                    }
                    Some(k)
                }),
                array_of_arrays(2, |_| Some(vec![kind])),
            ]));
        }
    }
    out
}

fn both(input: &[u8], opts: &Options) -> (Result<Vec<u8>, String>, Result<Vec<u8>, String>) {
    let mut tc = Transcoder::new();
    let run = |tc: &mut Transcoder, plain: bool| {
        let mut out = Vec::new();
        let r = if plain {
            tc.transcode_plain(input, opts, &mut out)
        } else {
            tc.transcode(input, opts, &mut out)
        };
        r.map(|()| out).map_err(|e| format!("{e:?}"))
    };
    let lean = run(&mut tc, false);
    let plain = run(&mut tc, true);
    (lean, plain)
}

#[test]
fn coordinates_print_as_the_general_path_prints_them() {
    let opts = Options::with_dialect(Dialect::Compat);
    let mut tc = Transcoder::new();
    let mut out = Vec::new();
    let input = geo(&[array_of_arrays(3, |i| {
        Some(if i == 1 { vec![] } else { vec![0, 1] })
    })]);
    tc.transcode(&input, &opts, &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"type":"Polygon","coordinates":[[[-13333.333333333334,-32081],[],[2504.6666666666665,15433]]],"n":1}"#
    );
}

#[test]
fn lean_equals_plain_under_every_cap_depth_and_promote_longs() {
    for input in samples() {
        for promote_longs in [true, false] {
            let mut opts = Options::with_dialect(Dialect::Compat);
            opts.promote_longs = promote_longs;
            let (lean, plain) = both(&input, &opts);
            assert_eq!(lean, plain, "{input:?}");
            let full = lean.map_or(input.len() * 4, |o| o.len());
            for cap in 0..=full + 1 {
                opts.max_output_bytes = cap;
                let (lean, plain) = both(&input, &opts);
                assert_eq!(lean, plain, "cap {cap}: {input:?}");
            }
            opts.max_output_bytes = usize::MAX;
            for depth in 1..6 {
                opts.max_depth = depth;
                let (lean, plain) = both(&input, &opts);
                assert_eq!(lean, plain, "depth {depth}: {input:?}");
            }
        }
    }
}

#[test]
fn lean_equals_plain_with_any_byte_replaced() {
    let opts = Options::with_dialect(Dialect::Compat);
    for input in samples().into_iter().take(8) {
        for at in 0..input.len() {
            for b in [0x00, 0x01, 0x04, 0x10, 0x7F, 0xFF, input[at] ^ 0x01] {
                let mut bad = input.clone();
                bad[at] = b;
                let (lean, plain) = both(&bad, &opts);
                assert_eq!(lean, plain, "byte {at} = {b:#x}: {bad:?}");
            }
        }
    }
}
