//! Hand-written malformed-input suite (docs/reliability.md, test plan rows 3-6).
//!
//! For 21 representative documents covering every BSON type, nesting, code-with-scope,
//! binary subtype 0x02 and strings: every length field set to -1, 0, ±1 off, 1, 4, 5,
//! INT32_MAX and INT32_MIN; truncation at every byte offset (raw, and with the outer length
//! fixed up); every type byte 0x00-0xFF in every element; boolean bytes 2..=255; every
//! single byte replaced by 0x00/0x01/0x7F/0x80/0xFF/+1; a UTF-8 table in strings, keys, regex
//! patterns and options, code, symbol and DBPointer namespaces; Decimal128 edge values.
//!
//! Each input goes through every dialect × UTF-8 mode. The result must be a coded error (kind
//! in `ErrorKind::ALL`, offset ≤ input length, output buffer untouched) or `Ok` output that
//! serde_json parses; never a panic. Strict `relaxed` accept/reject is also compared with the
//! `bson` crate (the only tolerated difference: the crate rejects invalid UTF-8 in *array*
//! element names, which bson2json ignores).

use bson2json_core::{Dialect, Error, ErrorKind, Options, Transcoder, Utf8Mode};

const DIALECTS: [Dialect; 3] = [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical];
const MODES: [Utf8Mode; 2] = [Utf8Mode::Strict, Utf8Mode::Replace];

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

// ---------------------------------------------------------------------------------------------
// A BSON writer that records where length fields, element type bytes and booleans sit.

#[derive(Default, Clone)]
struct W {
    buf: Vec<u8>,
    lengths: Vec<usize>,
    types: Vec<usize>,
    bools: Vec<usize>,
    open: Vec<usize>,
}

impl W {
    fn doc(f: impl FnOnce(&mut W)) -> W {
        let mut w = W::default();
        w.begin();
        f(&mut w);
        w.end();
        w
    }
    fn begin(&mut self) {
        self.lengths.push(self.buf.len());
        self.open.push(self.buf.len());
        self.buf.extend_from_slice(&[0; 4]);
    }
    fn end(&mut self) {
        self.buf.push(0);
        let at = self.open.pop().unwrap();
        let n = (self.buf.len() - at) as i32;
        self.buf[at..at + 4].copy_from_slice(&n.to_le_bytes());
    }
    fn key(&mut self, t: u8, k: &[u8]) -> &mut Self {
        self.types.push(self.buf.len());
        self.buf.push(t);
        self.buf.extend_from_slice(k);
        self.buf.push(0);
        self
    }
    fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }
    fn string(&mut self, s: &[u8]) -> &mut Self {
        self.lengths.push(self.buf.len());
        self.buf
            .extend_from_slice(&(s.len() as i32 + 1).to_le_bytes());
        self.buf.extend_from_slice(s);
        self.buf.push(0);
        self
    }
    fn str_el(&mut self, k: &[u8], s: &[u8]) -> &mut Self {
        self.key(0x02, k).string(s)
    }
    fn i32_el(&mut self, k: &[u8], v: i32) -> &mut Self {
        self.key(0x10, k).raw(&v.to_le_bytes())
    }
    fn bool_el(&mut self, k: &[u8], v: bool) -> &mut Self {
        self.key(0x08, k);
        self.bools.push(self.buf.len());
        self.buf.push(u8::from(v));
        self
    }
    fn sub(&mut self, t: u8, k: &[u8], f: impl FnOnce(&mut W)) -> &mut Self {
        self.key(t, k);
        self.begin();
        f(self);
        self.end();
        self
    }
    fn binary(&mut self, k: &[u8], sub: u8, data: &[u8]) -> &mut Self {
        self.key(0x05, k);
        self.lengths.push(self.buf.len());
        let old = sub == 2;
        let n = data.len() + if old { 4 } else { 0 };
        self.buf.extend_from_slice(&(n as i32).to_le_bytes());
        self.buf.push(sub);
        if old {
            self.lengths.push(self.buf.len());
            self.buf
                .extend_from_slice(&(data.len() as i32).to_le_bytes());
        }
        self.raw(data)
    }
    fn regex(&mut self, k: &[u8], p: &[u8], o: &[u8]) -> &mut Self {
        self.key(0x0B, k).raw(p).raw(&[0]).raw(o).raw(&[0])
    }
    fn cws(&mut self, k: &[u8], code: &[u8], scope: impl FnOnce(&mut W)) -> &mut Self {
        self.key(0x0F, k);
        self.lengths.push(self.buf.len());
        self.open.push(self.buf.len());
        self.buf.extend_from_slice(&[0; 4]);
        self.string(code);
        self.begin();
        scope(self);
        self.end();
        let at = self.open.pop().unwrap();
        let n = (self.buf.len() - at) as i32;
        self.buf[at..at + 4].copy_from_slice(&n.to_le_bytes());
        self
    }
    fn dbpointer(&mut self, k: &[u8], ns: &[u8]) -> &mut Self {
        self.key(0x0C, k).string(ns).raw(&[7; 12])
    }
}

fn dec(hi: u64, lo: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&lo.to_le_bytes());
    b[8..].copy_from_slice(&hi.to_le_bytes());
    b
}

fn seeds() -> Vec<(&'static str, W)> {
    vec![
        ("empty", W::doc(|_| {})),
        (
            "int32",
            W::doc(|w| {
                w.i32_el(b"a", 1);
            }),
        ),
        (
            "string",
            W::doc(|w| {
                w.str_el(b"s", b"hello");
            }),
        ),
        (
            "numbers",
            W::doc(|w| {
                w.key(0x01, b"d").raw(&1.5f64.to_le_bytes());
                w.key(0x12, b"l").raw(&(-7i64).to_le_bytes());
                w.key(0x11, b"t").raw(&((5u64 << 32) | 9).to_le_bytes());
                w.key(0x09, b"dt").raw(&1_700_000_000_000i64.to_le_bytes());
            }),
        ),
        (
            "scalars",
            W::doc(|w| {
                w.key(0x07, b"o").raw(&[0xAB; 12]);
                w.bool_el(b"b", true);
                w.key(0x0A, b"n");
                w.key(0x06, b"u");
                w.key(0xFF, b"mi");
                w.key(0x7F, b"ma");
            }),
        ),
        (
            "binary",
            W::doc(|w| {
                w.binary(b"bin", 0, b"abc");
            }),
        ),
        (
            "binary-old",
            W::doc(|w| {
                w.binary(b"bin2", 2, b"abcd");
            }),
        ),
        (
            "uuid",
            W::doc(|w| {
                w.binary(b"u", 4, &[0x11; 16]);
            }),
        ),
        (
            "regex",
            W::doc(|w| {
                w.regex(b"r", b"ab+c", b"im");
            }),
        ),
        (
            "dbpointer",
            W::doc(|w| {
                w.dbpointer(b"p", b"db.coll");
            }),
        ),
        (
            "code",
            W::doc(|w| {
                w.key(0x0D, b"c").string(b"x = 1");
            }),
        ),
        (
            "symbol",
            W::doc(|w| {
                w.key(0x0E, b"sym").string(b"s");
            }),
        ),
        (
            "cws",
            W::doc(|w| {
                w.cws(b"c", b"f()", |s| {
                    s.i32_el(b"x", 1);
                });
            }),
        ),
        (
            "decimal",
            W::doc(|w| {
                w.key(0x13, b"d").raw(&dec(0x3040_0000_0000_0000, 10));
            }),
        ),
        (
            "nested",
            W::doc(|w| {
                w.sub(3, b"a", |w| {
                    w.sub(3, b"b", |w| {
                        w.sub(4, b"c", |w| {
                            w.i32_el(b"0", 1).str_el(b"1", b"x").sub(3, b"2", |w| {
                                w.key(0x0A, b"d");
                            });
                        });
                    });
                });
            }),
        ),
        (
            "arrays",
            W::doc(|w| {
                w.sub(4, b"a", |w| {
                    w.sub(4, b"0", |w| {
                        w.sub(4, b"0", |_| {});
                    });
                    w.bool_el(b"1", false);
                });
            }),
        ),
        (
            "cws-nested",
            W::doc(|w| {
                w.cws(b"c", b"function(){return y}", |s| {
                    s.sub(3, b"y", |w| {
                        w.str_el(b"z", b"s").cws(b"in", b"g", |_| {});
                    });
                });
            }),
        ),
        (
            "escapes",
            W::doc(|w| {
                w.str_el(
                    "k\u{1}\"\\é".as_bytes(),
                    "é\u{1}\"\\\u{2028}\0end".as_bytes(),
                );
            }),
        ),
        (
            "dup-keys",
            W::doc(|w| {
                w.i32_el(b"a", 1)
                    .i32_el(b"a", 2)
                    .str_el(b"", b"")
                    .i32_el(b"0", 3)
                    .str_el(b"$ref", b"c");
            }),
        ),
        (
            "multi",
            W::doc(|w| {
                w.key(0x01, b"d").raw(&f64::NAN.to_le_bytes());
                w.str_el(b"s", b"str").sub(3, b"doc", |w| {
                    w.binary(b"b", 2, b"");
                });
                w.sub(4, b"arr", |w| {
                    w.regex(b"0", b"", b"").dbpointer(b"1", b"x");
                });
                w.bool_el(b"b", false)
                    .key(0x09, b"dt")
                    .raw(&i64::MIN.to_le_bytes());
                w.key(0x0D, b"c").string(b"").cws(b"cws", b"", |_| {});
                w.key(0x12, b"big").raw(&i64::MAX.to_le_bytes());
                w.key(0x13, b"dec").raw(&dec(0x7C00_0000_0000_0000, 0));
            }),
        ),
        ("deep", {
            let mut w = W::default();
            w.begin();
            for _ in 0..10 {
                w.key(3, b"a");
                w.begin();
            }
            w.i32_el(b"x", 1);
            for _ in 0..11 {
                w.end();
            }
            w
        }),
    ]
}

// ---------------------------------------------------------------------------------------------
// The checker.

#[derive(Default)]
struct Stats {
    inputs: usize,
    calls: usize,
    ok: usize,
    errors: usize,
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

/// Runs `input` through every dialect and mode; returns the results in DIALECTS × MODES order.
fn check(tc: &mut Transcoder, st: &mut Stats, input: &[u8]) -> Vec<Result<Vec<u8>, Error>> {
    st.inputs += 1;
    let mut results = Vec::with_capacity(6);
    for dialect in DIALECTS {
        for utf8 in MODES {
            let opts = Options {
                dialect,
                utf8,
                max_depth: u32::MAX,
                ..Options::default()
            };
            let mut out = b"[0,".to_vec();
            st.calls += 1;
            let r = tc.transcode(input, &opts, &mut out);
            match r {
                Ok(()) => {
                    st.ok += 1;
                    assert!(out.starts_with(b"[0,"));
                    let json = out.split_off(3);
                    if let Err(e) = serde_json::from_slice::<serde_json::Value>(&json) {
                        panic!(
                            "invalid JSON ({e}) {dialect:?}/{utf8:?}\ninput {}\noutput {}",
                            hex(input),
                            String::from_utf8_lossy(&json)
                        );
                    }
                    results.push(Ok(json));
                }
                Err(e) => {
                    st.errors += 1;
                    assert_eq!(out, b"[0,", "output changed on error for {}", hex(input));
                    assert!(ErrorKind::ALL.contains(&e.kind()));
                    assert!(
                        e.offset() <= input.len(),
                        "offset {} > len {} ({e}) {dialect:?}/{utf8:?} input {}",
                        e.offset(),
                        input.len(),
                        hex(input)
                    );
                    results.push(Err(e));
                }
            }
        }
    }
    // Strict relaxed vs the bson crate.
    let ours = results[2].is_ok();
    match bson_crate_accepts(input) {
        Ok(()) => assert!(
            ours,
            "bson crate accepts, relaxed strict rejects ({:?}): {}",
            results[2].as_ref().err(),
            hex(input)
        ),
        Err(e) => assert!(
            !ours || matches!(e.kind, bson::error::ErrorKind::Utf8Encoding { .. }),
            "relaxed strict accepts, bson crate rejects ({e}): {}",
            hex(input)
        ),
    }
    results
}

fn with_i32(b: &[u8], at: usize, v: i32) -> Vec<u8> {
    let mut b = b.to_vec();
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    b
}

#[test]
fn malformed_inputs_never_panic_and_fail_with_codes() {
    let mut tc = Transcoder::new();
    let mut st = Stats::default();
    for (name, w) in seeds() {
        let doc = &w.buf;
        // The seed itself is valid everywhere.
        for r in check(&mut tc, &mut st, doc) {
            r.unwrap_or_else(|e| panic!("seed {name} rejected: {e}"));
        }
        // Length lies.
        for &at in &w.lengths {
            let orig = i32::from_le_bytes(doc[at..at + 4].try_into().unwrap());
            for v in [
                -1,
                0,
                1,
                4,
                5,
                orig - 1,
                orig + 1,
                i32::MAX,
                i32::MIN,
                i32::MAX - 3,
            ] {
                if v != orig {
                    let bad = with_i32(doc, at, v);
                    let r = check(&mut tc, &mut st, &bad);
                    // Growing or shrinking the outer length can never be accepted.
                    if at == 0 {
                        assert!(
                            r.iter().all(std::result::Result::is_err),
                            "{name}: outer length {v} accepted"
                        );
                    }
                }
            }
        }
        // Truncation at every offset: raw, and with the outer length patched to match (and a
        // NUL appended so only the inner structure is broken).
        for k in 0..doc.len() {
            let r = check(&mut tc, &mut st, &doc[..k]);
            assert!(
                r.iter().all(std::result::Result::is_err),
                "{name}: prefix {k} accepted"
            );
            if k >= 4 {
                let mut t = doc[..k].to_vec();
                t.push(0);
                let n = t.len() as i32;
                t[0..4].copy_from_slice(&n.to_le_bytes());
                check(&mut tc, &mut st, &t);
            }
        }
        // Every type byte in every element.
        for &at in &w.types {
            for t in 0..=255u8 {
                let mut b = doc.clone();
                b[at] = t;
                let r = check(&mut tc, &mut st, &b);
                let defined = matches!(t, 0x01..=0x13 | 0x7F | 0xFF);
                if !defined {
                    assert!(
                        r.iter().all(std::result::Result::is_err),
                        "{name}: type {t:#04x} accepted"
                    );
                    for e in r.iter().filter_map(|x| x.as_ref().err()) {
                        if t != 0 {
                            assert_eq!(e.kind(), ErrorKind::UnknownType, "{name} type {t:#x}");
                        }
                    }
                }
            }
        }
        // Boolean bytes.
        for &at in &w.bools {
            for v in 2..=255u8 {
                let mut b = doc.clone();
                b[at] = v;
                for r in check(&mut tc, &mut st, &b) {
                    assert_eq!(r.unwrap_err().kind(), ErrorKind::BadBoolean);
                }
            }
        }
        // Every single byte replaced.
        for i in 0..doc.len() {
            for v in [0x00, 0x01, 0x7F, 0x80, 0xFF, doc[i].wrapping_add(1)] {
                if v != doc[i] {
                    let mut b = doc.clone();
                    b[i] = v;
                    check(&mut tc, &mut st, &b);
                }
            }
        }
    }
    println!(
        "malformed: {} bad inputs tried ({} transcode calls: {} ok + {} coded errors); 0 panics, 0 invalid JSON",
        st.inputs, st.calls, st.ok, st.errors
    );
    assert!(st.inputs >= 10_000, "only {} inputs", st.inputs);
}

/// The UTF-8 table from docs/reliability.md §3.4, placed in every string-like slot.
const BAD_UTF8: &[(&str, &[u8])] = &[
    ("overlong C0 80", &[0xC0, 0x80]),
    ("overlong C1 BF", &[0xC1, 0xBF]),
    ("overlong E0 80 AF", &[0xE0, 0x80, 0xAF]),
    ("overlong F0 80 80 80", &[0xF0, 0x80, 0x80, 0x80]),
    ("surrogate ED A0 80", &[0xED, 0xA0, 0x80]),
    ("surrogate ED AF BF", &[0xED, 0xAF, 0xBF]),
    ("surrogate ED B0 80", &[0xED, 0xB0, 0x80]),
    ("surrogate ED BF BF", &[0xED, 0xBF, 0xBF]),
    ("CESU-8 pair", &[0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]),
    ("above U+10FFFF F4 90 80 80", &[0xF4, 0x90, 0x80, 0x80]),
    ("F5 lead", &[0xF5, 0x80, 0x80, 0x80]),
    ("FF", &[0xFF]),
    ("truncated 2-byte", &[0xC3]),
    ("truncated 3-byte", &[0xE2, 0x82]),
    ("truncated 4-byte", &[0xF0, 0x9F, 0x98]),
    ("stray continuation", &[0x80]),
    ("stray continuations", &[0xBF, 0x80, 0x80]),
    ("truncated 2-byte then ASCII", &[0xC3, b'a']),
];

#[test]
fn utf8_table_in_every_string_slot() {
    let mut tc = Transcoder::new();
    let mut st = Stats::default();
    let wrap = |bad: &[u8]| [b"x".as_slice(), bad, b"y"].concat();
    for (name, bad) in BAD_UTF8 {
        let s = wrap(bad);
        // (slot, document, compat strict must reject)
        let cases: Vec<(&str, W, bool)> = vec![
            (
                "string",
                W::doc(|w| {
                    w.str_el(b"k", &s);
                }),
                true,
            ),
            (
                "key",
                W::doc(|w| {
                    w.i32_el(&s, 1);
                }),
                false,
            ),
            (
                "nested key",
                W::doc(|w| {
                    w.sub(3, b"d", |w| {
                        w.i32_el(&s, 1);
                    });
                }),
                false,
            ),
            (
                "regex pattern",
                W::doc(|w| {
                    w.regex(b"r", &s, b"i");
                }),
                false,
            ),
            (
                "regex options",
                W::doc(|w| {
                    w.regex(b"r", b"a", &s);
                }),
                false,
            ),
            (
                "code",
                W::doc(|w| {
                    w.key(0x0D, b"c").string(&s);
                }),
                true,
            ),
            (
                "symbol",
                W::doc(|w| {
                    w.key(0x0E, b"c").string(&s);
                }),
                true,
            ),
            (
                "cws code",
                W::doc(|w| {
                    w.cws(b"c", &s, |_| {});
                }),
                true,
            ),
            (
                "cws scope string",
                W::doc(|w| {
                    w.cws(b"c", b"f", |w| {
                        w.str_el(b"v", &s);
                    });
                }),
                true,
            ),
            (
                "dbpointer ns",
                W::doc(|w| {
                    w.dbpointer(b"p", &s);
                }),
                true,
            ),
        ];
        for (slot, w, compat_rejects) in cases {
            let r = check(&mut tc, &mut st, &w.buf);
            let what = format!("{name} in {slot}: {}", hex(&w.buf));
            // [compat strict, compat replace, relaxed strict, relaxed replace, canonical ×2]
            assert_eq!(r[0].is_err(), compat_rejects, "compat strict, {what}");
            for i in [2, 4] {
                let e = r[i].as_ref().expect_err(&what);
                assert_eq!(e.kind(), ErrorKind::InvalidUtf8, "{what}");
                assert!(e.offset() < w.buf.len());
            }
            let is_regex = slot.starts_with("regex");
            for i in [1, 3, 5] {
                if i == 1 && is_regex {
                    // compat writes a RegExp as `{}` (JSON.stringify of a RegExp).
                    continue;
                }
                let out = r[i]
                    .as_ref()
                    .unwrap_or_else(|e| panic!("replace mode: {e}, {what}"));
                let text = std::str::from_utf8(out).unwrap();
                assert!(text.contains('\u{FFFD}'), "no U+FFFD: {text} ({what})");
            }
            if !compat_rejects && !is_regex {
                assert!(std::str::from_utf8(r[0].as_ref().unwrap())
                    .unwrap()
                    .contains('\u{FFFD}'));
            }
        }
    }
    // Valid edge characters are accepted verbatim everywhere.
    for ok in [
        "\u{7F}",
        "\u{80}",
        "\u{7FF}",
        "\u{800}",
        "\u{FFFF}",
        "\u{10000}",
        "\u{10FFFF}",
        "\u{2028}\u{2029}",
        "\0",
    ] {
        let w = W::doc(|w| {
            w.str_el(ok.trim_end_matches('\0').as_bytes(), ok.as_bytes());
        });
        let key = ok.trim_end_matches('\0');
        for r in check(&mut tc, &mut st, &w.buf) {
            let out = r.unwrap();
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(
                v.as_object().unwrap().get(key).and_then(|x| x.as_str()),
                Some(ok)
            );
        }
    }
    println!("utf8 table: {} inputs, {} calls", st.inputs, st.calls);
}

#[test]
fn decimal128_edges_are_json() {
    let mut tc = Transcoder::new();
    let mut st = Stats::default();
    let max_coeff: u128 = 10u128.pow(34) - 1;
    let mut vals: Vec<[u8; 16]> = vec![
        dec(0x7C00_0000_0000_0000, 0),        // NaN
        dec(0xFC00_0000_0000_0000, 0),        // -NaN
        dec(0x7E00_0000_0000_0000, 0),        // sNaN
        dec(0x7C00_0000_0000_0000, 12),       // NaN with payload
        dec(0x7800_0000_0000_0000, 0),        // +Inf
        dec(0xF800_0000_0000_0000, 0),        // -Inf
        dec(0x7800_0000_0000_0000, u64::MAX), // Inf with junk
        dec(0x3040_0000_0000_0000, 0),        // 0
        dec(0xB040_0000_0000_0000, 0),        // -0
        dec(0, 0),                            // 0E-6176
        dec(0x5FFE_0000_0000_0000, 0),        // 0E+6111
        dec(0x0000_0000_0000_0000, 1),        // 1E-6176
        dec(0x5FFE_0000_0000_0000, 1),        // 1E+6111
        dec(u64::MAX, u64::MAX),
        dec(0x6000_0000_0000_0000, 0), // 11-prefix combination field
        dec(0x6C10_0000_0000_0000, 0), // non-canonical coefficient
        dec(0x77FF_FFFF_FFFF_FFFF, u64::MAX), // 11-prefix, max bits
        dec(0x3041_ED09_BEAD_87C0, 0x378D_8E63_FFFF_FFFF), // 10^34-1 (exp +0)
        dec(0x3041_ED09_BEAD_87C0, 0x378D_8E64_0000_0000), // 10^34: non-canonical → 0
        dec(0x0001_FFFF_FFFF_FFFF, u64::MAX), // max 113-bit coefficient: non-canonical
    ];
    for e in [0u64, 1, 6143, 6144, 6176, 6177, 12287] {
        let c = max_coeff;
        let hi = (e << 49) | (c >> 64) as u64;
        vals.push(dec(hi, c as u64));
        vals.push(dec(hi | (1 << 63), 1));
    }
    for d in &vals {
        let w = W::doc(|w| {
            w.key(0x13, b"d").raw(d);
        });
        for (i, r) in check(&mut tc, &mut st, &w.buf).into_iter().enumerate() {
            let out = r.unwrap_or_else(|e| panic!("decimal {} rejected: {e}", hex(d)));
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            let s = v["d"]["$numberDecimal"]
                .as_str()
                .unwrap_or_else(|| panic!("{i}: {v}"));
            assert!(!s.is_empty() && s.is_ascii(), "{s}");
        }
    }
    println!("decimal128 edges: {} values", vals.len());
}

/// Errors come in input order: a container's terminator is checked when the walk reaches it,
/// so a problem inside the container is reported before a bad terminator after it, and a
/// bad terminator alone is reported at the terminator with the container's kind.
#[test]
fn terminators_are_checked_where_the_walk_reaches_them() {
    let mut tc = Transcoder::new();
    let run = |tc: &mut Transcoder, b: &[u8], d: Dialect| {
        let mut out = Vec::new();
        tc.transcode(b, &Options::with_dialect(d), &mut out)
    };
    // A document holding one child of type `t` (object or array) followed by another member.
    let child = |t: u8| {
        W::doc(|w| {
            w.sub(t, b"o", |w| {
                w.bool_el(b"0", true);
            })
            .i32_el(b"z", 2);
        })
    };
    let cases: [(&str, W, &str); 4] = [
        (
            "document",
            W::doc(|w| {
                w.i32_el(b"a", 1);
            }),
            "document does not end",
        ),
        (
            "embedded document",
            child(0x03),
            "embedded document does not end",
        ),
        ("array", child(0x04), "embedded document does not end"),
        (
            "scope",
            W::doc(|w| {
                w.cws(b"c", b"f()", |w| {
                    w.bool_el(b"b", true);
                });
            }),
            "code-with-scope scope does not end",
        ),
    ];
    for (name, w, detail) in cases {
        // The last length written is that of the container under test (the top-level one
        // for "document"); its terminator is its last byte.
        let open = *w.lengths.last().unwrap();
        let len = i32::from_le_bytes(w.buf[open..open + 4].try_into().unwrap()) as usize;
        let term = open + len - 1;
        for d in DIALECTS {
            let mut bad = w.buf.clone();
            bad[term] = 0x01;
            let e = run(&mut tc, &bad, d).expect_err(name);
            assert_eq!(
                (e.kind(), e.offset()),
                (ErrorKind::BadTerminator, term),
                "{name} {d:?}"
            );
            assert!(e.to_string().contains(detail), "{name}: {e}");
            // A problem inside the container comes first in input order and wins.
            let mut both = bad.clone();
            both[*w.bools.last().unwrap_or(&0)] = 7;
            if !w.bools.is_empty() {
                let e = run(&mut tc, &both, d).expect_err(name);
                assert_eq!(e.kind(), ErrorKind::BadBoolean, "{name} {d:?}");
            }
        }
    }
}

/// An int32 with a long element name that ends an array at the very end of the input: the
/// array fast path must read only its four bytes (a regression: it read eight, past the end).
#[test]
fn array_number_at_the_end_of_the_input() {
    // {"a": [7]}, the element named "123456789012" (names in arrays are ignored).
    let elem: Vec<u8> = [&[0x10][..], b"123456789012\0", &7i32.to_le_bytes()].concat();
    let arr: Vec<u8> = [&((elem.len() + 5) as i32).to_le_bytes()[..], &elem, &[0]].concat();
    let body: Vec<u8> = [&[0x04, b'a', 0][..], &arr, &[0]].concat();
    let doc: Vec<u8> = [&((body.len() + 4) as i32).to_le_bytes()[..], &body].concat();
    for d in [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical] {
        let mut out = Vec::new();
        let opts = Options::with_dialect(d);
        Transcoder::new().transcode(&doc, &opts, &mut out).unwrap();
        let want: &[u8] = if d == Dialect::Canonical {
            br#"{"a":[{"$numberInt":"7"}]}"#
        } else {
            br#"{"a":[7]}"#
        };
        assert_eq!(out, want, "{d:?}");
    }
}
