//! Depth and output limits (docs/reliability.md, test plan rows 7-8).
//!
//! - Nested single-key documents `{"a":{"a":…{}}}` 10^5 and 2×10^6 levels deep (8 bytes per
//!   level: a 16 MB document at 2×10^6), built iteratively: default `max_depth` → `TooDeep`;
//!   `max_depth: u32::MAX` → `Ok`, on the test thread and inside a thread with a 256 KiB
//!   stack, which proves the walker does not recurse on the input's depth.
//! - Exactly `max_depth` levels pass and `max_depth + 1` fail, for documents, arrays and
//!   code-with-scope scopes.
//! - Output cap: a 16 MB string of 0x01 bytes (6× amplification to `\u0001`) with a 64 MiB
//!   cap → `OutputTooLarge`; with the default 256 MiB cap → `Ok`, ≈ 96 MB of JSON.
//! - A two-million-element array → `Ok` within the cap.

use bson2json_core::{transcode, Dialect, ErrorKind, Options, DEFAULT_MAX_DEPTH};

/// `levels` nested documents around an empty innermost one: depth = levels + 1.
fn nested(levels: usize, t: u8) -> Vec<u8> {
    let total = 5 + 8 * levels;
    let mut b = Vec::with_capacity(total);
    for i in 0..levels {
        let len = (total - 8 * i) as i32;
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(&[t, if t == 4 { b'0' } else { b'a' }, 0]);
    }
    b.extend_from_slice(&[5, 0, 0, 0, 0]);
    b.resize(total, 0);
    assert_eq!(
        i32::from_le_bytes(b[0..4].try_into().unwrap()) as usize,
        b.len()
    );
    b
}

fn unlimited() -> Options {
    Options {
        max_depth: u32::MAX,
        ..Options::default()
    }
}

fn check_nested_output(out: &[u8], levels: usize) {
    let open = b"{\"a\":";
    assert_eq!(out.len(), 1 + levels * (open.len() + 1) + 1);
    assert!(out[..levels * open.len()]
        .chunks(open.len())
        .all(|c| c == open));
    assert_eq!(&out[levels * open.len()..levels * open.len() + 2], b"{}");
    assert!(out[levels * open.len() + 2..].iter().all(|&c| c == b'}'));
}

fn deep(levels: usize) {
    let doc = nested(levels, 3);
    for dialect in [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical] {
        let mut out = Vec::new();
        let e = transcode(&doc, &Options::with_dialect(dialect), &mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooDeep);
        assert!(out.is_empty());
        assert!(e.offset() < doc.len());
    }
    let mut out = Vec::new();
    transcode(&doc, &unlimited(), &mut out).unwrap();
    check_nested_output(&out, levels);
    // In a thread with a 256 KiB stack: a recursive walker would overflow at these depths.
    let doc2 = doc.clone();
    let n = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let mut out = Vec::new();
            transcode(&doc2, &unlimited(), &mut out).unwrap();
            let e = transcode(&doc2, &Options::default(), &mut Vec::new()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::TooDeep);
            out.len()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(n, out.len());
    println!("depth {}: {} bytes of BSON, {} bytes of JSON, Ok with max_depth u32::MAX, TooDeep by default", levels + 1, doc.len(), out.len());
}

#[test]
fn depth_100k() {
    deep(100_000);
}

#[test]
fn depth_2m_16mb() {
    deep(2_000_000);
}

#[test]
fn depth_limit_is_exact() {
    for t in [3u8, 4] {
        for max in [1u32, 2, 7, 200, DEFAULT_MAX_DEPTH] {
            let opts = Options {
                max_depth: max,
                ..Options::default()
            };
            // depth = levels + 1
            let ok = nested(max as usize - 1, t);
            transcode(&ok, &opts, &mut Vec::new())
                .unwrap_or_else(|e| panic!("depth {max} with max {max}: {e}"));
            let bad = nested(max as usize, t);
            let e = transcode(&bad, &opts, &mut Vec::new()).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::TooDeep,
                "depth {} with max {max}",
                max + 1
            );
        }
    }
    // max_depth 0 rejects even the top-level document.
    let opts = Options {
        max_depth: 0,
        ..Options::default()
    };
    assert_eq!(
        transcode(&[5, 0, 0, 0, 0], &opts, &mut Vec::new())
            .unwrap_err()
            .kind(),
        ErrorKind::TooDeep
    );
    // A code-with-scope scope counts as one level: {c: cws("", {})} is depth 2.
    let mut good = Vec::new();
    // Build it properly: total(4) + string(4+1) + scope(5) = 14.
    let inner: Vec<u8> = [
        14i32.to_le_bytes().to_vec(),
        1i32.to_le_bytes().to_vec(),
        vec![0],
        vec![5, 0, 0, 0, 0],
    ]
    .concat();
    let body: Vec<u8> = [vec![0x0F, b'c', 0], inner, vec![0]].concat();
    good.extend_from_slice(&((body.len() + 4) as i32).to_le_bytes());
    good.extend_from_slice(&body);
    for (max, ok) in [(1u32, false), (2, true)] {
        let opts = Options {
            max_depth: max,
            dialect: Dialect::Relaxed,
            ..Options::default()
        };
        let mut out = Vec::new();
        let r = transcode(&good, &opts, &mut out);
        assert_eq!(r.is_ok(), ok, "cws max_depth {max}: {r:?}");
        if ok {
            assert_eq!(out, br#"{"c":{"$code":"","$scope":{}}}"#);
        } else {
            assert_eq!(r.unwrap_err().kind(), ErrorKind::TooDeep);
        }
    }
}

/// {"s": <16 MB of 0x01>}
fn control_string(n: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(n + 16);
    b.extend_from_slice(&((n + 4 + 3 + 4 + 1 + 1) as i32).to_le_bytes());
    b.extend_from_slice(&[2, b's', 0]);
    b.extend_from_slice(&((n + 1) as i32).to_le_bytes());
    b.resize(b.len() + n, 1);
    b.extend_from_slice(&[0, 0]);
    b
}

/// The cap is checked after every value: a document crossing it in its second string fails
/// at the end of that string (the offset of the next element), in every dialect.
#[test]
fn output_cap_is_checked_after_each_string() {
    let mut body = Vec::new();
    for (key, fill) in [(b'a', b'x'), (b'b', b'y')] {
        body.extend_from_slice(&[2, key, 0]);
        body.extend_from_slice(&101i32.to_le_bytes());
        body.resize(body.len() + 100, fill);
        body.push(0);
    }
    let third = 4 + body.len();
    body.extend_from_slice(&[0x10, b'c', 0, 1, 0, 0, 0]);
    let mut doc = ((body.len() + 5) as i32).to_le_bytes().to_vec();
    doc.extend_from_slice(&body);
    doc.push(0);
    for dialect in [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical] {
        let opts = Options {
            max_output_bytes: 150,
            dialect,
            ..Options::default()
        };
        let mut out = Vec::new();
        let e = transcode(&doc, &opts, &mut out).unwrap_err();
        assert_eq!(
            (e.kind(), e.offset()),
            (ErrorKind::OutputTooLarge, third),
            "{dialect:?}"
        );
        let plain = bson2json_core::Transcoder::new()
            .transcode_plain(&doc, &opts, &mut out)
            .unwrap_err();
        assert_eq!((plain.kind(), plain.offset()), (e.kind(), e.offset()));
        assert!(out.is_empty(), "partial output kept");
        transcode(&doc, &Options::with_dialect(dialect), &mut out).unwrap();
        assert!(out.len() > 200);
    }
}

#[test]
fn output_cap_16mb_of_control_chars() {
    let n = 16 * 1024 * 1024 - 32;
    let doc = control_string(n);
    for dialect in [Dialect::Compat, Dialect::Relaxed] {
        let opts = Options {
            max_output_bytes: 64 * 1024 * 1024,
            dialect,
            ..Options::default()
        };
        let mut out = Vec::new();
        let e = transcode(&doc, &opts, &mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::OutputTooLarge);
        assert!(out.is_empty(), "partial output kept");
        let mut out = Vec::new();
        transcode(&doc, &Options::with_dialect(dialect), &mut out).unwrap();
        assert_eq!(out.len(), 6 * n + br#"{"s":""}"#.len());
        assert!(out.len() <= bson2json_core::DEFAULT_MAX_OUTPUT_BYTES);
        assert_eq!(&out[..12], br#"{"s":"\u0001"#);
        println!(
            "16 MB of 0x01: {} bytes of JSON ({dialect:?}); OutputTooLarge at a 64 MiB cap",
            out.len()
        );
    }
}

#[test]
fn two_million_element_arrays() {
    let n = 2_000_000usize;
    for (t, value, json) in [
        (0x0Au8, &[][..], &b"null"[..]),
        (0x10, &[7, 0, 0, 0][..], &b"7"[..]),
    ] {
        let mut arr = vec![0u8; 4];
        let mut key = itoa_buf();
        for i in 0..n {
            arr.push(t);
            arr.extend_from_slice(key.format(i).as_bytes());
            arr.push(0);
            arr.extend_from_slice(value);
        }
        arr.push(0);
        let alen = arr.len() as i32;
        arr[0..4].copy_from_slice(&alen.to_le_bytes());
        let mut doc = vec![0u8; 4];
        doc.extend_from_slice(&[4, b'a', 0]);
        doc.extend_from_slice(&arr);
        doc.push(0);
        let dlen = doc.len() as i32;
        doc[0..4].copy_from_slice(&dlen.to_le_bytes());
        for dialect in [Dialect::Compat, Dialect::Relaxed] {
            let mut out = Vec::new();
            transcode(&doc, &Options::with_dialect(dialect), &mut out).unwrap();
            assert_eq!(out.len(), 6 + n * (json.len() + 1) - 1 + 2);
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(v["a"].as_array().unwrap().len(), n);
        }
        println!(
            "2M-element array of type {t:#04x}: {} bytes of BSON, Ok",
            doc.len()
        );
    }
}

struct Itoa(String);
impl Itoa {
    fn format(&mut self, i: usize) -> &str {
        self.0.clear();
        use std::fmt::Write;
        write!(self.0, "{i}").unwrap();
        &self.0
    }
}
fn itoa_buf() -> Itoa {
    Itoa(String::new())
}

/// `transcode_docs_parallel` promises output identical to `transcode_docs`; with an output cap
/// that bites mid-batch both must fail, and with the same document index.
type BatchRun = Result<(), bson2json_core::batch::BatchError>;

/// `docs` through the sequential and the two-thread batch paths with an output cap of `cap`.
fn sequential_and_parallel(
    docs: &[&[u8]],
    cap: usize,
    layout: bson2json_core::batch::Layout,
) -> (
    BatchRun,
    BatchRun,
    bson2json_core::batch::BatchOutput,
    bson2json_core::batch::BatchOutput,
) {
    use bson2json_core::batch::{transcode_docs, transcode_docs_parallel, BatchOutput};
    use bson2json_core::Transcoder;
    let opts = Options {
        max_output_bytes: cap,
        ..Options::default()
    };
    let (mut s, mut p) = (BatchOutput::default(), BatchOutput::default());
    let rs = transcode_docs(&mut Transcoder::new(), docs, 0, &opts, layout, &mut s);
    let rp = transcode_docs_parallel(&mut Transcoder::new(), docs, &opts, layout, 2, &mut p);
    (rs, rp, s, p)
}

#[test]
fn batch_output_cap_parallel_matches_sequential() {
    use bson2json_core::batch::Layout;
    // 64 documents of ~16 KiB each ({"s": "xxxx…"}): 1 MiB in total, enough for 2 threads.
    let doc = {
        let n = 16 * 1024;
        let mut b = Vec::new();
        b.extend_from_slice(&((n + 4 + 3 + 4 + 1 + 1) as i32).to_le_bytes());
        b.extend_from_slice(&[2, b's', 0]);
        b.extend_from_slice(&((n + 1) as i32).to_le_bytes());
        b.resize(b.len() + n, b'x');
        b.extend_from_slice(&[0, 0]);
        b
    };
    let docs: Vec<&[u8]> = vec![&doc[..]; 64];
    for layout in [Layout::Array, Layout::Lines, Layout::Bare] {
        for cap in [100_000usize, 500_000, 600_000] {
            let (rs, rp, _, _) = sequential_and_parallel(&docs, cap, layout);
            let es = rs.expect_err("sequential must hit the cap");
            let ep = rp.expect_err("parallel must hit the cap");
            assert_eq!(es.error.kind(), ErrorKind::OutputTooLarge);
            assert_eq!(ep.error.kind(), ErrorKind::OutputTooLarge);
            assert_eq!(
                es.index, ep.index,
                "{layout:?} cap {cap}: sequential fails at document {}, parallel at {}",
                es.index, ep.index
            );
        }
    }
}

/// A `compat` document whose duplicate keys make its text shrink when the object is repaired
/// crosses the cap at an element check before the repair: the parallel path must place the
/// error at the same document as the sequential one (found by the `batch` fuzz target).
#[test]
fn batch_output_cap_parallel_matches_sequential_when_repairs_shrink() {
    use bson2json_core::batch::Layout;
    // {"d": "x"*4000, "d": 1}: 4 KiB of text before the repair, `{"d":1}` after it.
    let doc = {
        let n = 4000;
        let mut body = vec![2, b'd', 0];
        body.extend_from_slice(&((n + 1) as i32).to_le_bytes());
        body.resize(body.len() + n, b'x');
        body.extend_from_slice(&[0, 0x10, b'd', 0, 1, 0, 0, 0, 0]);
        let mut b = ((body.len() + 4) as i32).to_le_bytes().to_vec();
        b.extend_from_slice(&body);
        b
    };
    let docs: Vec<&[u8]> = vec![&doc[..]; 160]; // ~640 KiB: two threads
    for layout in [Layout::Array, Layout::Lines, Layout::Bare] {
        // Each document ends as 7 bytes of text but peaks at ~4 KiB before its repair. With
        // caps in 4.6-5.2 KB the sequential run fails in the second half of the batch, where
        // the second worker's own output is still small, so only the stitcher can see it.
        for cap in (100..4_200).step_by(331).chain((4_500..5_400).step_by(37)) {
            let (rs, rp, s, p) = sequential_and_parallel(&docs, cap, layout);
            match (rs, rp) {
                (Err(es), Err(ep)) => assert_eq!(
                    (es.index, es.error.kind()),
                    (ep.index, ep.error.kind()),
                    "{layout:?} cap {cap}"
                ),
                (Ok(()), Ok(())) => assert_eq!(s.out, p.out, "{layout:?} cap {cap}"),
                (a, b) => panic!("{layout:?} cap {cap}: sequential {a:?}, parallel {b:?}"),
            }
        }
    }
}

/// The output cap counts the whole output, the closing `]` of an array batch too: a cap one byte
/// below the output's length fails, on every batch path (sequential, parallel, per-document
/// views, concatenated input), and a cap of exactly its length passes.
#[test]
fn batch_output_cap_counts_the_closing_bracket() {
    use bson2json_core::batch::{transcode_each, BatchOutput, Layout};
    use bson2json_core::concat::transcode_concatenated;
    use bson2json_core::Transcoder;
    // {"s": "ab"} three times: [{"s":"ab"},{"s":"ab"},{"s":"ab"}]
    let doc: Vec<u8> = vec![15, 0, 0, 0, 2, b's', 0, 3, 0, 0, 0, b'a', b'b', 0, 0];
    let docs: Vec<&[u8]> = vec![&doc[..]; 3];
    let concatenated: Vec<u8> = docs.concat();
    for layout in [Layout::Array, Layout::Lines, Layout::Bare] {
        let (rs, _, full, _) = sequential_and_parallel(&docs, usize::MAX, layout);
        rs.unwrap();
        let len = full.out.len();
        for cap in [len - 1, len] {
            let opts = Options {
                max_output_bytes: cap,
                ..Options::default()
            };
            let (rs, rp, s, p) = sequential_and_parallel(&docs, cap, layout);
            let mut e = BatchOutput::default();
            let re = transcode_each(
                &mut Transcoder::new(),
                docs.len(),
                |i| Some(docs[i]),
                &opts,
                layout,
                &mut e,
            );
            let mut c = BatchOutput::default();
            let rc = transcode_concatenated(
                &mut Transcoder::new(),
                &concatenated,
                &opts,
                layout,
                &mut c,
            );
            if cap == len {
                rs.unwrap();
                rp.unwrap();
                assert!(re.unwrap());
                rc.unwrap();
                for out in [&s.out, &p.out, &e.out, &c.out] {
                    assert_eq!(out.len(), len, "{layout:?}");
                }
            } else {
                for (path, r) in [
                    ("sequential", rs),
                    ("parallel", rp),
                    ("each", re.map(|_| ())),
                    ("concatenated", rc),
                ] {
                    let err = r.expect_err(&format!(
                        "{layout:?} {path}: cap {cap} below the output's {len} bytes"
                    ));
                    assert_eq!(
                        err.error.kind(),
                        ErrorKind::OutputTooLarge,
                        "{layout:?} {path}"
                    );
                    assert_eq!(err.index, 2, "{layout:?} {path}");
                }
            }
        }
    }
}
