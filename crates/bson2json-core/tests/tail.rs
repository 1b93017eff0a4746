//! Arrays that end within 16 bytes of the input's end: their element names cannot be read
//! with the walk's 16-byte load, so one-digit names take a short check instead (and the
//! numbers loop keeps them). Each document here is held equal to its plain twin: the same
//! document as the first member of a larger one, where every name is 16 bytes from the end.
//! Malformed variants of the last 16 bytes are held equal between the lean `compat` walk and
//! [`Transcoder::transcode_plain`] (same output or same error).

use bson2json_core::{Dialect, Options, Transcoder};

const DIALECTS: [Dialect; 3] = [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical];

/// One array element's type byte and value bytes.
fn element(kind: usize, i: usize) -> (u8, Vec<u8>) {
    let n = i as i32 * 37 - 5;
    match kind {
        0 => (0x10, n.to_le_bytes().to_vec()),
        1 => (0x12, (i64::from(n) * 1_000_003).to_le_bytes().to_vec()),
        2 => (0x01, (f64::from(n) + 0.5).to_le_bytes().to_vec()),
        3 => (0x02, {
            let mut v = 2i32.to_le_bytes().to_vec();
            v.extend_from_slice(b"x\0");
            v
        }),
        4 => (0x0A, Vec::new()),
        5 => (0x08, vec![u8::from(i.is_multiple_of(2))]),
        // a mix: int32, double, int64, null in turn
        _ => element([0, 2, 1, 4][i % 4], i),
    }
}

/// Wraps element bytes (type, name, value) into a document.
mod common;
use common::{doc, member};

/// `{s: "<pad bytes>", a: [k elements of kind], after...}`.
fn sample(pad: usize, k: usize, kind: usize, after: &[u8]) -> Vec<u8> {
    let mut arr = Vec::new();
    for i in 0..k {
        let (t, v) = element(kind, i);
        arr.extend(member(t, i.to_string().as_bytes(), &v));
    }
    let mut s = ((pad + 1) as i32).to_le_bytes().to_vec();
    s.extend(std::iter::repeat_n(b'p', pad));
    s.push(0);
    let mut body = member(0x02, b"s", &s);
    body.extend(member(0x04, b"a", &doc(&arr)));
    body.extend_from_slice(after);
    doc(&body)
}

fn samples() -> Vec<Vec<u8>> {
    let mut all = Vec::new();
    for pad in 0..20 {
        for k in 0..=12 {
            for kind in 0..7 {
                all.push(sample(pad, k, kind, &[]));
                // a short member after the array: the array still ends near the input's end
                all.push(sample(pad, k, kind, &member(0x0A, b"z", &[])));
            }
        }
    }
    all
}

fn run(d: &[u8], opts: &Options, plain: bool) -> Result<Vec<u8>, (String, usize)> {
    let mut out = Vec::new();
    let r = if plain {
        Transcoder::new().transcode_plain(d, opts, &mut out)
    } else {
        Transcoder::new().transcode(d, opts, &mut out)
    };
    r.map(|()| out)
        .map_err(|e| (format!("{:?}", e.kind()), e.offset()))
}

#[test]
fn arrays_at_the_end_match_the_same_arrays_inside() {
    const TAIL: &[u8] = b"zzzzzzzzzzzzzzzzzzzzzzzz";
    for d in samples() {
        let mut z = ((TAIL.len() + 1) as i32).to_le_bytes().to_vec();
        z.extend_from_slice(TAIL);
        z.push(0);
        let mut body = member(0x03, b"w", &d);
        body.extend(member(0x02, b"z", &z));
        let outer = doc(&body);
        for dialect in DIALECTS {
            let opts = Options::with_dialect(dialect);
            let alone = run(&d, &opts, false).expect("valid document");
            let inside = run(&outer, &opts, false).expect("valid document");
            let mut want = b"{\"w\":".to_vec();
            want.extend_from_slice(&alone);
            want.extend_from_slice(b",\"z\":\"");
            want.extend_from_slice(TAIL);
            want.extend_from_slice(b"\"}");
            assert_eq!(
                String::from_utf8_lossy(&inside),
                String::from_utf8_lossy(&want),
                "{dialect:?} {d:02x?}"
            );
        }
    }
}

#[test]
fn malformed_tails_match_the_recording_walk() {
    let opts = Options::with_dialect(Dialect::Compat);
    let mut checked = 0;
    for d in samples().into_iter().step_by(3) {
        for at in d.len().saturating_sub(16)..d.len() {
            for b in [0u8, 1, b'0', b'7', 0x10, 0x12, 0x7F, 0xFF] {
                let mut m = d.clone();
                m[at] = b;
                assert_eq!(run(&m, &opts, false), run(&m, &opts, true), "{m:02x?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000);
}
