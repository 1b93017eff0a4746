//! Property tests (proptest):
//! - `find_nul` == `find_nul_plain`, `short_key` == plain scan + escape table, and
//!   `write_escaped`/`write_escaped_in` == `write_escaped_plain` on arbitrary
//!   bytes (biased towards NUL, control characters, quotes, backslashes and high bytes);
//! - the one-pass escaper-validator `write_quoted_utf8_in` == `write_escaped_plain` +
//!   `std::str::from_utf8`, and `write_quoted_lossy` == `write_quoted` of
//!   `String::from_utf8_lossy`, on text built from well-formed characters and every kind of
//!   ill-formed sequence (truncated, overlong, surrogate, above U+10FFFF, stray continuation),
//!   long enough to cross several 16- and 32-byte block edges;
//! - random valid documents (a tree generated with `prop_recursive`, serialized by hand)
//!   always transcode `Ok` in every dialect and mode, and the output parses as JSON;
//! - the lean `compat` walk (`Transcoder::transcode`) equals its recording twin
//!   (`Transcoder::transcode_plain`), output and errors, on valid and mutated documents, with
//!   one transcoder reused across them (so its give-up backoff is exercised too);
//! - strict `relaxed`/`canonical` accept/reject agrees with the `bson` crate on random byte
//!   mutations of valid documents. Documented exceptions: (1) depth: the crate has no limit,
//!   so we use `max_depth: u32::MAX`; (2) array element names: bson2json ignores them and so
//!   never validates their UTF-8, while the crate's keys are `&str`; when we accept and the
//!   crate rejects, the crate's error must be a UTF-8 error.

use bson2json_core::testing::{find_nul, find_nul_plain, short_key};
use bson2json_core::testing::{to_utf16_plain, to_utf16_scalar};
use bson2json_core::testing::{utf8_block_to_utf16, utf8_block_to_utf16_plain};
use bson2json_core::testing::{write_escaped, write_escaped_in, write_escaped_plain};
use bson2json_core::testing::{write_quoted, write_quoted_lossy, write_quoted_utf8_in};
use bson2json_core::{to_utf16, UTF16_SLACK};
use bson2json_core::{transcode, Dialect, Options, Transcoder, Utf8Mode};
use proptest::prelude::*;

fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => any::<u8>(),
        1 => Just(0u8),
        1 => 0x01u8..0x20,
        1 => prop::sample::select(vec![b'"', b'\\', 0x7F, 0x80, 0xFF, 0x20, 0x21]),
    ]
}

/// Pieces of UTF-8 text, well-formed and not: ASCII (escapes included), characters of every
/// length, and every kind of ill-formed sequence.
fn utf8_piece() -> impl Strategy<Value = Vec<u8>> {
    let bad: Vec<Vec<u8>> = [
        &b"\xc3"[..],
        b"\xe2\x82",
        b"\xe2",
        b"\xf0\x9f\x9a",
        b"\xf0\x9f",
        b"\xf0",
        b"\x80",
        b"\xbf",
        b"\xc0\x80",
        b"\xc1\xbf",
        b"\xe0\x80\x80",
        b"\xe0\x9f\xbf",
        b"\xed\xa0\x80",
        b"\xed\xbf\xbf",
        b"\xf0\x80\x80\x80",
        b"\xf0\x8f\xbf\xbf",
        b"\xf4\x90\x80\x80",
        b"\xf5\x80\x80\x80",
        b"\xf8\x88\x80\x80\x80",
        b"\xfe",
        b"\xff",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect();
    prop_oneof![
        6 => prop::collection::vec(0x20u8..0x7F, 1..40),
        2 => any::<char>().prop_map(|c| c.to_string().into_bytes()),
        2 => prop::sample::select(vec!['é', 'ж', '€', '日', '\u{7ff}', '\u{800}', '\u{ffff}', '\u{10000}', '\u{10ffff}', '🚀', '\u{d7ff}', '\u{e000}'])
            .prop_map(|c| c.to_string().into_bytes()),
        1 => prop::sample::select(vec![b'"', b'\\', b'\n', 0u8, 0x1F, 0x7F]).prop_map(|b| vec![b]),
        1 => prop::sample::select(bad),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ]
}

fn utf8_text(max_pieces: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(utf8_piece(), 0..max_pieces).prop_map(|v| v.concat())
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(byte(), 0..max)
}

#[derive(Debug, Clone)]
enum V {
    Double(f64),
    Str(String),
    Doc(Vec<(String, V)>),
    Arr(Vec<V>),
    Bin(u8, Vec<u8>),
    Undefined,
    Oid([u8; 12]),
    Bool(bool),
    Date(i64),
    Null,
    Regex(String, String),
    DbPtr(String),
    Code(String),
    Symbol(String),
    Cws(String, Vec<(String, V)>),
    Int32(i32),
    Ts(u64),
    Int64(i64),
    Dec([u8; 16]),
    Min,
    Max,
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z$._0-9]{0,6}",
        any::<String>(),
        "[\\x00-\\x20\"\\\\\u{80}-\u{7FF}\u{2028}\u{10000}]{0,8}",
    ]
}

fn cstr() -> impl Strategy<Value = String> {
    text().prop_map(|s| s.replace('\0', "_"))
}

fn leaf() -> impl Strategy<Value = V> {
    prop_oneof![
        any::<f64>().prop_map(V::Double),
        prop::sample::select(vec![f64::NAN, f64::INFINITY, -0.0, 1e300, 5e-324, 0.1])
            .prop_map(V::Double),
        text().prop_map(V::Str),
        (any::<u8>(), bytes(20)).prop_map(|(s, b)| V::Bin(s, b)),
        (Just(4u8), prop::collection::vec(any::<u8>(), 16)).prop_map(|(s, b)| V::Bin(s, b)),
        Just(V::Undefined),
        any::<[u8; 12]>().prop_map(V::Oid),
        any::<bool>().prop_map(V::Bool),
        any::<i64>().prop_map(V::Date),
        (0i64..253_402_300_800_000).prop_map(V::Date),
        Just(V::Null),
        (cstr(), cstr()).prop_map(|(p, f)| V::Regex(p, f)),
        text().prop_map(V::DbPtr),
        text().prop_map(V::Code),
        text().prop_map(V::Symbol),
        any::<i32>().prop_map(V::Int32),
        any::<u64>().prop_map(V::Ts),
        any::<i64>().prop_map(V::Int64),
        any::<[u8; 16]>().prop_map(V::Dec),
        Just(V::Min),
        Just(V::Max),
    ]
}

fn value() -> impl Strategy<Value = V> {
    leaf().prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec((cstr(), inner.clone()), 0..6).prop_map(V::Doc),
            prop::collection::vec(inner.clone(), 0..6).prop_map(V::Arr),
            (text(), prop::collection::vec((cstr(), inner), 0..4)).prop_map(|(c, s)| V::Cws(c, s)),
        ]
    })
}

fn document() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((cstr(), value()), 0..6).prop_map(|els| {
        let mut b = Vec::new();
        write_doc(&mut b, els.iter().map(|(k, v)| (k.as_bytes().to_vec(), v)));
        b
    })
}

fn write_string(b: &mut Vec<u8>, s: &[u8]) {
    b.extend_from_slice(&(s.len() as i32 + 1).to_le_bytes());
    b.extend_from_slice(s);
    b.push(0);
}

fn patch(b: &mut [u8], at: usize) {
    let n = (b.len() - at) as i32;
    b[at..at + 4].copy_from_slice(&n.to_le_bytes());
}

fn write_doc<'a>(b: &mut Vec<u8>, els: impl Iterator<Item = (Vec<u8>, &'a V)>) {
    let at = b.len();
    b.extend_from_slice(&[0; 4]);
    for (k, v) in els {
        write_el(b, &k, v);
    }
    b.push(0);
    patch(b, at);
}

fn write_el(b: &mut Vec<u8>, k: &[u8], v: &V) {
    let t: u8 = match v {
        V::Double(_) => 1,
        V::Str(_) => 2,
        V::Doc(_) => 3,
        V::Arr(_) => 4,
        V::Bin(..) => 5,
        V::Undefined => 6,
        V::Oid(_) => 7,
        V::Bool(_) => 8,
        V::Date(_) => 9,
        V::Null => 0x0A,
        V::Regex(..) => 0x0B,
        V::DbPtr(_) => 0x0C,
        V::Code(_) => 0x0D,
        V::Symbol(_) => 0x0E,
        V::Cws(..) => 0x0F,
        V::Int32(_) => 0x10,
        V::Ts(_) => 0x11,
        V::Int64(_) => 0x12,
        V::Dec(_) => 0x13,
        V::Min => 0xFF,
        V::Max => 0x7F,
    };
    b.push(t);
    b.extend_from_slice(k);
    b.push(0);
    match v {
        V::Double(x) => b.extend_from_slice(&x.to_le_bytes()),
        V::Str(s) | V::Code(s) | V::Symbol(s) => write_string(b, s.as_bytes()),
        V::Doc(els) => write_doc(b, els.iter().map(|(k, v)| (k.as_bytes().to_vec(), v))),
        V::Arr(items) => write_doc(
            b,
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string().into_bytes(), v)),
        ),
        V::Bin(sub, data) => {
            let old = *sub == 2;
            let n = data.len() + if old { 4 } else { 0 };
            b.extend_from_slice(&(n as i32).to_le_bytes());
            b.push(*sub);
            if old {
                b.extend_from_slice(&(data.len() as i32).to_le_bytes());
            }
            b.extend_from_slice(data);
        }
        V::Undefined | V::Null | V::Min | V::Max => {}
        V::Oid(o) => b.extend_from_slice(o),
        V::Bool(x) => b.push(u8::from(*x)),
        V::Date(x) | V::Int64(x) => b.extend_from_slice(&x.to_le_bytes()),
        V::Regex(p, f) => {
            b.extend_from_slice(p.as_bytes());
            b.push(0);
            b.extend_from_slice(f.as_bytes());
            b.push(0);
        }
        V::DbPtr(ns) => {
            write_string(b, ns.as_bytes());
            b.extend_from_slice(&[9; 12]);
        }
        V::Cws(code, scope) => {
            let at = b.len();
            b.extend_from_slice(&[0; 4]);
            write_string(b, code.as_bytes());
            write_doc(b, scope.iter().map(|(k, v)| (k.as_bytes().to_vec(), v)));
            patch(b, at);
        }
        V::Int32(x) => b.extend_from_slice(&x.to_le_bytes()),
        V::Ts(x) => b.extend_from_slice(&x.to_le_bytes()),
        V::Dec(d) => b.extend_from_slice(d),
    }
}

fn bson_crate_accepts(input: &[u8]) -> Result<(), bson::error::Error> {
    use bson::raw::{RawBsonRef, RawDocument};
    let mut stack = vec![RawDocument::from_bytes(input)?];
    while let Some(doc) = stack.pop() {
        for item in doc {
            match item?.1 {
                RawBsonRef::Document(d) => stack.push(d),
                RawBsonRef::Array(a) => stack.push(RawDocument::from_bytes(a.as_bytes())?),
                RawBsonRef::JavaScriptCodeWithScope(c) => stack.push(c.scope),
                _ => {}
            }
        }
    }
    Ok(())
}

fn opts(dialect: Dialect, utf8: Utf8Mode) -> Options {
    Options {
        dialect,
        utf8,
        max_depth: u32::MAX,
        ..Options::default()
    }
}

const DIALECTS: [Dialect; 3] = [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn find_nul_matches_plain(v in bytes(80), skip in 0usize..8) {
        let s = &v[skip.min(v.len())..];
        prop_assert_eq!(find_nul(s), find_nul_plain(s));
    }

    #[test]
    fn find_nul_no_nul_long(v in prop::collection::vec(1u8..=255, 0..100), nul in any::<prop::sample::Index>()) {
        prop_assert_eq!(find_nul(&v), None);
        let mut w = v.clone();
        if !w.is_empty() {
            let i = nul.index(w.len());
            w[i] = 0;
            prop_assert_eq!(find_nul(&w), Some(i));
        }
    }

    #[test]
    fn short_key_matches_plain(v in prop::collection::vec(byte(), 16..40), at in 0usize..24) {
        let at = at.min(v.len() - 16);
        let w = &v[at..at + 16];
        match short_key(&v, at) {
            None => prop_assert_eq!(find_nul_plain(w), None),
            Some(k) => {
                prop_assert_eq!(Some(k.len), find_nul_plain(w));
                let key = &w[..k.len];
                let plain = key.iter().all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\');
                prop_assert_eq!(k.plain, plain);
                let mut buf = [0u8; 16];
                buf[..k.len].copy_from_slice(key);
                prop_assert_eq!(k.lo, u64::from_le_bytes(buf[..8].try_into().unwrap()));
                prop_assert_eq!(k.hi, u64::from_le_bytes(buf[8..].try_into().unwrap()));
            }
        }
    }

    #[test]
    fn write_escaped_in_matches_plain(v in bytes(80), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>(), cap in 0usize..40) {
        let (mut from, mut to) = (a.index(v.len() + 1), b.index(v.len() + 1));
        if from > to {
            std::mem::swap(&mut from, &mut to);
        }
        let mut x = Vec::with_capacity(cap);
        x.resize(cap / 2, b'#');
        let mut y = x.clone();
        let ascii = write_escaped_in(&mut x, &v, from, to);
        write_escaped_plain(&mut y, &v[from..to]);
        prop_assert_eq!(&x, &y);
        prop_assert_eq!(ascii, v[from..to].is_ascii());
    }

    #[test]
    fn write_quoted_utf8_in_matches_plain(v in utf8_text(24), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>(), cap in 0usize..40) {
        let (mut from, mut to) = (a.index(v.len() + 1), b.index(v.len() + 1));
        if from > to {
            std::mem::swap(&mut from, &mut to);
        }
        for (from, to) in [(0, v.len()), (from, to)] {
            let s = &v[from..to];
            let mut x = Vec::with_capacity(cap);
            x.resize(cap / 2, b'#');
            let mut y = x.clone();
            let valid = write_quoted_utf8_in(&mut x, &v, from, to);
            y.push(b'"');
            write_escaped_plain(&mut y, s);
            y.push(b'"');
            prop_assert_eq!(&x, &y);
            prop_assert_eq!(valid, std::str::from_utf8(s).is_ok());
            // The replacement mode: `String::from_utf8_lossy`, escaped.
            let mut l = b"#".to_vec();
            let mut m = l.clone();
            let lossless = write_quoted_lossy(&mut l, &v, from, to);
            write_quoted(&mut m, String::from_utf8_lossy(s).as_bytes());
            prop_assert_eq!(&l, &m);
            prop_assert_eq!(lossless, valid);
        }
    }

    #[test]
    fn to_utf16_matches_plain(v in utf8_text(30), pad in 0usize..32) {
        // The text after 0-31 ASCII bytes (so that every sequence lands on every offset of a
        // 16- or 32-byte block), as generated (often ill-formed: only bounds are checked) and
        // made well-formed by `from_utf8_lossy`; each at every length up to 100 and whole.
        let lossy = String::from_utf8_lossy(&v).into_owned().into_bytes();
        for text in [v, lossy] {
            let s = [vec![b'a'; pad], text].concat();
            for len in (0..=s.len().min(100)).chain([s.len()]) {
                let s = &s[..len];
                let (mut fast, mut scalar) = (vec![0u16; len + UTF16_SLACK], vec![0u16; len + UTF16_SLACK]);
                let n = to_utf16(s, &mut fast);
                let m = to_utf16_scalar(s, &mut scalar);
                prop_assert!(n <= len && m <= len);
                if std::str::from_utf8(s).is_ok() {
                    let mut plain = Vec::new();
                    to_utf16_plain(s, &mut plain);
                    prop_assert_eq!(&fast[..n], &plain[..]);
                    prop_assert_eq!(&scalar[..m], &plain[..]);
                }
            }
            // The SSSE3 block step equals its plain twin on any 16 bytes.
            for w in s.windows(16) {
                let block: &[u8; 16] = w.try_into().unwrap();
                let (mut a, mut b) = ([0u16; 16], [1u16; 16]);
                let plain = utf8_block_to_utf16_plain(block, &mut b);
                if let Some(got) = utf8_block_to_utf16(block, &mut a) {
                    prop_assert_eq!(got, plain);
                    prop_assert_eq!(&a[..got.1], &b[..plain.1]);
                }
            }
        }
    }

    #[test]
    fn write_escaped_matches_plain(v in bytes(80), skip in 0usize..8) {
        let s = &v[skip.min(v.len())..];
        let (mut a, mut b) = (b"x".to_vec(), b"x".to_vec());
        prop_assert_eq!(write_escaped(&mut a, s), s.is_ascii());
        write_escaped_plain(&mut b, s);
        prop_assert_eq!(&a, &b);
        if let Ok(text) = std::str::from_utf8(s) {
            let quoted = [b"\"".as_slice(), &a[1..], b"\""].concat();
            let back: String = serde_json::from_slice(&quoted).unwrap();
            prop_assert_eq!(back, text);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn valid_documents_always_transcode(doc in document()) {
        prop_assert!(bson_crate_accepts(&doc).is_ok(), "generator wrote invalid BSON");
        for d in DIALECTS {
            for u in [Utf8Mode::Strict, Utf8Mode::Replace] {
                let mut out = Vec::new();
                transcode(&doc, &opts(d, u), &mut out).unwrap_or_else(|e| panic!("{d:?}/{u:?}: {e}"));
                if let Err(e) = serde_json::from_slice::<serde_json::Value>(&out) {
                    panic!("invalid JSON ({e}): {}", String::from_utf8_lossy(&out));
                }
            }
        }
    }

    #[test]
    fn mutations_agree_with_bson_crate(
        doc in document(),
        muts in prop::collection::vec((any::<prop::sample::Index>(), byte()), 1..4),
        cut in any::<Option<prop::sample::Index>>(),
    ) {
        let mut bad = doc.clone();
        for (i, b) in &muts {
            let i = i.index(bad.len());
            bad[i] = *b;
        }
        if let Some(c) = cut {
            bad.truncate(c.index(bad.len() + 1));
        }
        let oracle = bson_crate_accepts(&bad);
        for d in [Dialect::Relaxed, Dialect::Canonical] {
            let mut out = Vec::new();
            let ours = transcode(&bad, &opts(d, Utf8Mode::Strict), &mut out);
            match (&oracle, &ours) {
                (Ok(()), Err(e)) => panic!("bson crate accepts, {d:?} rejects ({e}): {:02X?}", bad),
                (Err(e), Ok(())) => prop_assert!(
                    matches!(e.kind, bson::error::ErrorKind::Utf8Encoding { .. }),
                    "{d:?} accepts, bson crate rejects ({e}): {:02X?}", bad
                ),
                (Ok(()), Ok(())) => {
                    serde_json::from_slice::<serde_json::Value>(&out).unwrap();
                }
                (Err(_), Err(_)) => {}
            }
        }
        // Never a panic in the other modes; Ok output is JSON.
        for d in DIALECTS {
            let mut out = Vec::new();
            if transcode(&bad, &opts(d, Utf8Mode::Replace), &mut out).is_ok() {
                serde_json::from_slice::<serde_json::Value>(&out).unwrap();
            } else {
                prop_assert!(out.is_empty());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn lean_compat_walk_equals_its_recording_twin(
        docs in prop::collection::vec(document(), 1..6),
        muts in prop::collection::vec((any::<prop::sample::Index>(), byte()), 0..3),
    ) {
        let mut docs = docs;
        if let Some(last) = docs.last_mut() {
            for (i, b) in &muts {
                let i = i.index(last.len());
                last[i] = *b;
            }
        }
        let (mut lean, mut plain) = (Transcoder::new(), Transcoder::new());
        for u in [Utf8Mode::Strict, Utf8Mode::Replace] {
            for doc in &docs {
                let (mut a, mut b) = (b"[".to_vec(), b"[".to_vec());
                let ra = lean.transcode(doc, &opts(Dialect::Compat, u), &mut a);
                let rb = plain.transcode_plain(doc, &opts(Dialect::Compat, u), &mut b);
                prop_assert_eq!(&ra, &rb, "{:02X?}", doc);
                prop_assert_eq!(&a, &b, "{:02X?}", doc);
                prop_assert_eq!(lean.regexes(), plain.regexes());
            }
        }
    }
}
