//! Rows (`row`): each BSON type's value in the general and PowerSync formats, PowerSync's
//! nested JSON, date modes and depth limit, its errors, and the packed form decoded back
//! (it must give the same fields as the writer hands a plain sink, on generated documents).
//! The differential test against PowerSync's own converter is __test__/rows-powersync.spec.ts.
mod common;

use bson::{doc, spec::BinarySubtype, Binary, Bson, Document, JavaScriptCodeWithScope, Regex};
use bson2json_core::row::packed::{PackedRows, Tag};
use bson2json_core::row::{DateMode, Fields, Owned, RowFormat, RowOptions, RowWriter};
use bson2json_core::{Dialect, ErrorKind, Options, Utf8Mode};
use common::{doc as raw_doc, member};
use proptest::prelude::*;

fn bytes(d: &Document) -> Vec<u8> {
    let mut out = Vec::new();
    d.to_writer(&mut out).unwrap();
    out
}

fn opts(format: RowFormat, mode: u32) -> RowOptions {
    RowOptions {
        format,
        date_mode: DateMode::from_number(mode).unwrap(),
        json: Options::default(),
    }
}

fn row(doc: &[u8], o: &RowOptions) -> Result<Vec<(String, Owned)>, bson2json_core::Error> {
    let mut f = Fields::default();
    RowWriter::new().write(doc, o, &mut f)?;
    Ok(f.0)
}

fn ps(doc: &[u8], mode: u32) -> Vec<(String, Owned)> {
    row(doc, &opts(RowFormat::PowerSync, mode)).unwrap()
}

fn general(doc: &[u8]) -> Vec<(String, Owned)> {
    row(doc, &opts(RowFormat::General, 0)).unwrap()
}

fn s(x: &str) -> Owned {
    Owned::Str(x.to_owned())
}

fn oid() -> bson::oid::ObjectId {
    bson::oid::ObjectId::parse_str("0123456789abcdef01234567").unwrap()
}

fn uuid_bin() -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Uuid,
        bytes: (0..16).collect(),
    })
}

/// A document with one field of every type, in this order.
fn every_type() -> Document {
    doc! {
        "double": 1.5,
        "integral": 3.0,
        "string": "héllo",
        "doc": { "a": 1 },
        "array": [1, "x"],
        "bin": Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2, 3] }),
        "uuid": uuid_bin(),
        "undefined": Bson::Undefined,
        "oid": oid(),
        "true": true,
        "false": false,
        "date": bson::DateTime::from_millis(1_700_000_000_123),
        "null": Bson::Null,
        "regex": Regex { pattern: "a.b".try_into().unwrap(), options: "ix".try_into().unwrap() },
        "code": Bson::JavaScriptCode("f()".into()),
        "symbol": Bson::Symbol("sym".into()),
        "cws": JavaScriptCodeWithScope { code: "g()".into(), scope: doc! { "x": 1 } },
        "int32": -7,
        "ts": Bson::Timestamp(bson::Timestamp { time: 2, increment: 3 }),
        "int64": i64::MIN,
        "dec": Bson::Decimal128("1.50".parse().unwrap()),
        "min": Bson::MinKey,
        "max": Bson::MaxKey,
    }
}

#[test]
fn powersync_every_type() {
    let d = bytes(&every_type());
    let want = vec![
        ("double", Owned::Double(1.5)),
        ("integral", Owned::Int64(3)),
        ("string", s("héllo")),
        ("doc", s(r#"{"a":1}"#)),
        ("array", s(r#"[1,"x"]"#)),
        ("bin", Owned::Bytes(vec![1, 2, 3])),
        ("uuid", s("00010203-0405-0607-0809-0a0b0c0d0e0f")),
        ("undefined", Owned::Null),
        ("oid", s("0123456789abcdef01234567")),
        ("true", Owned::Int64(1)),
        ("false", Owned::Int64(0)),
        ("date", s("2023-11-14 22:13:20.123Z")),
        ("null", Owned::Null),
        ("regex", s(r#"{"pattern":"a.b","options":"ix"}"#)),
        ("code", s(r#"{"code":"f()","scope":null}"#)),
        ("symbol", s("sym")),
        ("cws", s(r#"{"code":"g()","scope":{"x":1}}"#)),
        ("int32", Owned::Int64(-7)),
        ("ts", Owned::UInt64((2 << 32) | 3)),
        ("int64", Owned::Int64(i64::MIN)),
        ("dec", s("1.50")),
        ("min", Owned::Null),
        ("max", Owned::Null),
    ];
    let want: Vec<_> = want.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    assert_eq!(ps(&d, 0), want);
}

#[test]
fn general_every_type() {
    let d = bytes(&every_type());
    let want = vec![
        ("double", Owned::Double(1.5)),
        ("integral", Owned::Double(3.0)),
        ("string", s("héllo")),
        ("doc", s(r#"{"a":1}"#)),
        ("array", s(r#"[1,"x"]"#)),
        ("bin", Owned::Bytes(vec![1, 2, 3])),
        ("uuid", s("00010203-0405-0607-0809-0a0b0c0d0e0f")),
        ("undefined", Owned::Null),
        ("oid", s("0123456789abcdef01234567")),
        ("true", Owned::Bool(true)),
        ("false", Owned::Bool(false)),
        ("date", s("2023-11-14T22:13:20.123Z")),
        ("null", Owned::Null),
        // compat: what JSON.stringify makes of js-bson's values
        ("regex", s("{}")),
        ("code", s(r#"{"code":"f()"}"#)),
        ("symbol", s("sym")),
        ("cws", s(r#"{"code":"g()","scope":{"x":1}}"#)),
        ("int32", Owned::Int32(-7)),
        ("ts", Owned::UInt64((2 << 32) | 3)),
        ("int64", Owned::Int64(i64::MIN)),
        ("dec", s("1.50")),
        ("min", s("{}")),
        ("max", s("{}")),
    ];
    let want: Vec<_> = want.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let got = general(&d);
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "{}", w.0);
    }
}

/// The general format's text of a nested value is the transcoder's text of that value inside
/// the document, in every dialect.
#[test]
fn general_text_is_the_transcoders() {
    let d = bytes(&every_type());
    for dialect in [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical] {
        let o = RowOptions {
            json: Options::with_dialect(dialect),
            ..RowOptions::default()
        };
        let got = row(&d, &o).unwrap();
        let mut json = Vec::new();
        bson2json_core::transcode(&d, &o.json, &mut json).unwrap();
        let whole: serde_json::Value = serde_json::from_slice(&json).unwrap();
        for (k, v) in &got {
            if let ("doc" | "array" | "regex" | "code" | "cws" | "min" | "max", Owned::Str(t)) =
                (k.as_str(), v)
            {
                let mine: serde_json::Value = serde_json::from_str(t).unwrap();
                assert_eq!(mine, whole[k], "{dialect:?} {k}");
            }
        }
    }
}

#[test]
fn powersync_doubles() {
    let cases: [(f64, Owned); 9] = [
        (-0.0, Owned::Int64(0)),
        (f64::NAN, Owned::Double(f64::NAN)),
        (f64::INFINITY, Owned::Double(f64::INFINITY)),
        (f64::NEG_INFINITY, Owned::Double(f64::NEG_INFINITY)),
        (
            9.223_372_036_854_776e18,
            Owned::BigDouble(9.223_372_036_854_776e18),
        ),
        (-9.223_372_036_854_776e18, Owned::Int64(i64::MIN)),
        (1e300, Owned::BigDouble(1e300)),
        (0.1, Owned::Double(0.1)),
        (4_503_599_627_370_497.0, Owned::Int64(4_503_599_627_370_497)),
    ];
    for (x, want) in cases {
        let got = ps(&bytes(&doc! { "x": x }), 0);
        match (&got[0].1, &want) {
            (Owned::Double(a), Owned::Double(b)) if a.is_nan() && b.is_nan() => {}
            (g, w) => assert_eq!(g, w, "{x}"),
        }
        // nested: Number#toString, null when not finite
        let nested = ps(&bytes(&doc! { "a": [x] }), 0);
        let want_text = if x.is_finite() {
            // serde's shortest form is ECMAScript's for these values, up to the exponent form
            format!("[{}]", ryu_js_like(x))
        } else {
            "[null]".to_owned()
        };
        assert_eq!(nested[0].1, Owned::Str(want_text), "{x}");
    }
}

/// `Number#toString` for the values of `powersync_doubles`.
fn ryu_js_like(x: f64) -> String {
    match x {
        0.0 => "0".into(),
        1e300 => "1e+300".into(),
        9.223_372_036_854_776e18 => "9223372036854776000".into(),
        -9.223_372_036_854_776e18 => "-9223372036854776000".into(),
        _ => format!("{x}"),
    }
}

#[test]
fn powersync_nested_json() {
    let inner = doc! {
        "s": "a\"b\\c\n\u{1}é",
        "u": Bson::Undefined,
        "bin": Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes: vec![1] }),
        "uuid": uuid_bin(),
        "t": true,
        "f": false,
        "n": Bson::Null,
        "min": Bson::MinKey,
        "i": 5,
        "l": i64::MAX,
        "ts": Bson::Timestamp(bson::Timestamp { time: u32::MAX, increment: u32::MAX }),
        "d": Bson::Decimal128("NaN".parse().unwrap()),
        "oid": oid(),
        "date": bson::DateTime::from_millis(0),
        "re": Regex { pattern: "\"".try_into().unwrap(), options: "".try_into().unwrap() },
        "dbp": Bson::DbPointer(dbpointer("db.coll.x")),
        "dbp2": Bson::DbPointer(dbpointer("nodot")),
        "code": Bson::JavaScriptCode("x".into()),
        "cws": JavaScriptCodeWithScope { code: "y".into(), scope: doc! { "u": Bson::Undefined } },
        "arr": [Bson::Undefined, Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes: vec![] }), 1.25, "z"],
    };
    let d = bytes(&doc! { "x": inner });
    let want = concat!(
        r#"{"s":"a\"b\\c\n\u0001é","uuid":"00010203-0405-0607-0809-0a0b0c0d0e0f","t":1,"f":0,"n":null,"#,
        r#""min":null,"i":5,"l":9223372036854775807,"ts":18446744073709551615,"d":"NaN","#,
        r#""oid":"0123456789abcdef01234567","date":"1970-01-01T00:00:00.000Z","#,
        r#""re":{"pattern":"\"","options":""},"#,
        r#""dbp":{"collection":"coll.x","oid":"0123456789abcdef01234567","db":"db","fields":{}},"#,
        r#""dbp2":{"collection":"nodot","oid":"0123456789abcdef01234567","fields":{}},"#,
        r#""code":{"code":"x","scope":null},"cws":{"code":"y","scope":{}},"arr":[null,null,1.25,"z"]}"#,
    );
    assert_eq!(ps(&d, 1)[0].1, s(want));
    // a leading undefined leaves no comma behind
    let d = bytes(&doc! { "x": { "u": Bson::Undefined, "a": 1 } });
    assert_eq!(ps(&d, 0)[0].1, s(r#"{"a":1}"#));
}

fn dbpointer(ns: &str) -> bson::DbPointer {
    // The bson crate builds DBPointers only from raw BSON.
    let mut v = ((ns.len() + 1) as i32).to_le_bytes().to_vec();
    v.extend_from_slice(ns.as_bytes());
    v.push(0);
    v.extend_from_slice(&oid().bytes());
    let d = raw_doc(&member(0x0C, "p", &v));
    match Document::from_reader(&d[..]).unwrap().remove("p").unwrap() {
        Bson::DbPointer(p) => p,
        other => panic!("{other:?}"),
    }
}

#[test]
fn powersync_dates() {
    let cases: [(i64, [&str; 3]); 6] = [
        (
            1_700_000_000_123,
            [
                "2023-11-14 22:13:20.123Z",
                "2023-11-14T22:13:20.123Z",
                "2023-11-14T22:13:20Z",
            ],
        ),
        (
            -62_167_219_200_000, // 0000-01-01
            [
                "0000-01-01 00:00:00.000Z",
                "0000-01-01T00:00:00.000Z",
                "0000-01-01T00:00:00Z",
            ],
        ),
        (
            -62_167_219_200_001,
            [
                "-000001-12-31 23:59:59.999Z",
                "-000001-12-31T23:59:59.999Z",
                "-000001-12-31T23:59:59Z",
            ],
        ),
        (
            253_402_300_800_000, // 10000-01-01
            [
                "+010000-01-01 00:00:00.000Z",
                "+010000-01-01T00:00:00.000Z",
                "+010000-01-01T00:00:00Z",
            ],
        ),
        (
            8_640_000_000_000_000,
            [
                "+275760-09-13 00:00:00.000Z",
                "+275760-09-13T00:00:00.000Z",
                "+275760-09-13T00:00:00Z",
            ],
        ),
        (
            -8_640_000_000_000_000,
            [
                "-271821-04-20 00:00:00.000Z",
                "-271821-04-20T00:00:00.000Z",
                "-271821-04-20T00:00:00Z",
            ],
        ),
    ];
    for (ms, want) in cases {
        for (mode, w) in want.iter().enumerate() {
            let d = bytes(
                &doc! { "d": bson::DateTime::from_millis(ms), "n": [bson::DateTime::from_millis(ms)] },
            );
            let got = ps(&d, mode as u32);
            assert_eq!(got[0].1, s(w), "{ms} mode {mode}");
            assert_eq!(
                got[1].1,
                Owned::Str(format!("[\"{w}\"]")),
                "{ms} mode {mode}"
            );
        }
    }
    for ms in [8_640_000_000_000_001, i64::MIN, i64::MAX] {
        for d in [
            doc! { "d": bson::DateTime::from_millis(ms) },
            doc! { "d": { "e": bson::DateTime::from_millis(ms) } },
        ] {
            let e = row(&bytes(&d), &opts(RowFormat::PowerSync, 1)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::DateOutOfRange);
            assert_eq!(e.code(), "BSON_DATE_OUT_OF_RANGE");
        }
        // the general format: null, as compat's JSON has it
        assert_eq!(
            general(&bytes(&doc! { "d": bson::DateTime::from_millis(ms) }))[0].1,
            Owned::Null
        );
    }
}

/// `levels` documents nested inside the top-level field's document.
fn nested(levels: usize, array: bool) -> Vec<u8> {
    let mut v = if array {
        Bson::Array(vec![])
    } else {
        Bson::Document(doc! {})
    };
    for _ in 0..levels {
        v = if array {
            Bson::Array(vec![v])
        } else {
            Bson::Document(doc! { "k": v })
        };
    }
    bytes(&doc! { "x": v })
}

#[test]
fn powersync_depth_limit() {
    for array in [false, true] {
        // PowerSync: the field's own container is level 0; level 20 is the deepest it writes
        let ok = ps(&nested(20, array), 0);
        let Owned::Str(t) = &ok[0].1 else { panic!() };
        assert_eq!(t.matches(if array { '[' } else { '{' }).count(), 21);
        let e = row(&nested(21, array), &opts(RowFormat::PowerSync, 0)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooDeep, "{array}");
        // the general format has only maxDepth
        general(&nested(21, array));
    }
    // code with scope: its scope is one level below
    let mut scope = doc! {};
    for _ in 0..19 {
        scope = doc! { "k": scope };
    }
    let cws = |s: Document| {
        bytes(&doc! { "c": { "w": JavaScriptCodeWithScope { code: "c".into(), scope: s } } })
    };
    ps(&cws(scope.clone()), 0);
    let e = row(&cws(doc! { "k": scope }), &opts(RowFormat::PowerSync, 0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooDeep);
}

#[test]
fn invalid_utf8_and_keys() {
    // a string with a stray continuation byte, under a key with one too
    let mut v = 4i32.to_le_bytes().to_vec();
    v.extend_from_slice(b"a\x80b\0");
    let d = raw_doc(&member(0x02, b"k\xff", &v));
    let got = ps(&d, 0);
    assert_eq!(got, vec![("k\u{fffd}".to_owned(), s("a\u{fffd}b"))]);
    // the general format follows `utf8`
    let e = row(&d, &opts(RowFormat::General, 0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    let mut o = opts(RowFormat::General, 0);
    o.json.utf8 = Utf8Mode::Replace;
    assert_eq!(row(&d, &o).unwrap(), got);
    // nested: replaced inside the JSON text
    let d = raw_doc(&member(0x03, "o", &raw_doc(&member(0x02, b"k\xff", &v))));
    assert_eq!(ps(&d, 0)[0].1, s("{\"k\u{fffd}\":\"a\u{fffd}b\"}"));
}

#[test]
fn powersync_binary_subtypes() {
    for sub in 0u8..=9 {
        for len in [0usize, 15, 16] {
            let mut payload: Vec<u8> = (0..len as u8).collect();
            let mut raw = payload.clone();
            if sub == 2 {
                raw = (len as i32).to_le_bytes().to_vec();
                raw.extend_from_slice(&payload);
            }
            let mut v = (raw.len() as i32).to_le_bytes().to_vec();
            v.push(sub);
            v.extend_from_slice(&raw);
            let d = raw_doc(&member(0x05, "b", &v));
            let got = ps(&d, 0);
            if sub == 4 && len == 16 {
                assert_eq!(got[0].1, s("00010203-0405-0607-0809-0a0b0c0d0e0f"));
            } else {
                assert_eq!(
                    got[0].1,
                    Owned::Bytes(std::mem::take(&mut payload)),
                    "{sub} {len}"
                );
            }
        }
    }
    // subtype 2 whose inner length does not fit
    let mut v = 8i32.to_le_bytes().to_vec();
    v.push(2);
    v.extend_from_slice(&9i32.to_le_bytes());
    v.extend_from_slice(&[0; 4]);
    let e = row(
        &raw_doc(&member(0x05, "b", &v)),
        &opts(RowFormat::PowerSync, 0),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadBinary);
}

#[test]
fn booleans_as_any_byte() {
    let d = raw_doc(&member(0x08, "b", &[2]));
    assert_eq!(ps(&d, 0)[0].1, Owned::Int64(1));
    let d = raw_doc(&member(0x03, "o", &raw_doc(&member(0x08, "b", &[7]))));
    assert_eq!(ps(&d, 0)[0].1, s(r#"{"b":1}"#));
    let e = row(
        &raw_doc(&member(0x08, "b", &[2])),
        &opts(RowFormat::General, 0),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadBoolean);
}

#[test]
fn errors_carry_offsets_in_the_document() {
    // a nested value that fails in the general format's transcoder: offset in the document
    let inner = raw_doc(&member(0x08, "b", &[2]));
    let d = raw_doc(&[member(0x10, "i", &[0; 4]), member(0x03, "o", &inner)].concat());
    let e = row(&d, &opts(RowFormat::General, 0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadBoolean);
    assert_eq!(d[e.offset()], 2);
    let e = row(&d[..d.len() - 1], &opts(RowFormat::PowerSync, 0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadLength);
}

/// The packed form decoded back, as lib/native decodes it.
fn unpack(p: &PackedRows) -> Vec<Vec<(String, Owned)>> {
    let ends: std::collections::HashMap<usize, usize> = p.strings.iter().copied().collect();
    let w = &p.words;
    let (mut k, mut text_at, mut bin_at) = (0usize, 0usize, 0usize);
    let mut shapes: Vec<Vec<String>> = Vec::new();
    let mut rows = Vec::new();
    let mut vals = Vec::new();
    while k < w.len() {
        let (tag, op) = (w[k], w[k + 1]);
        let tag = Tag::ALL.iter().find(|t| t.0 as u32 == tag).unwrap().0;
        let mut string = || {
            let end = ends[&(k + 1)];
            let s = String::from_utf8(p.text[text_at..end].to_vec()).unwrap();
            text_at = end;
            s
        };
        let mut b = [0u8; 8];
        if k + 3 < w.len() {
            b[..4].copy_from_slice(&w[k + 2].to_ne_bytes());
            b[4..].copy_from_slice(&w[k + 3].to_ne_bytes());
        }
        let mut step = 2;
        match tag {
            Tag::Shape | Tag::NewShape => {
                if tag == Tag::NewShape {
                    let mut keys: Vec<String> = string().split('\0').map(str::to_owned).collect();
                    assert_eq!(keys.pop().as_deref(), Some(""));
                    shapes.push(keys);
                }
                let keys = &shapes[if tag == Tag::Shape {
                    op as usize
                } else {
                    shapes.len() - 1
                }];
                assert_eq!(keys.len(), vals.len());
                rows.push(
                    keys.iter()
                        .cloned()
                        .zip(std::mem::take(&mut vals))
                        .collect(),
                );
            }
            Tag::Null => vals.push(Owned::Null),
            Tag::True => vals.push(Owned::Bool(true)),
            Tag::False => vals.push(Owned::Bool(false)),
            Tag::Int32 => vals.push(Owned::Int32(op as i32)),
            Tag::Int64 | Tag::UInt64 | Tag::Double | Tag::BigDouble => {
                step = 4;
                vals.push(match tag {
                    Tag::Int64 => Owned::Int64(i64::from_ne_bytes(b)),
                    Tag::UInt64 => Owned::UInt64(u64::from_ne_bytes(b)),
                    Tag::Double => Owned::Double(f64::from_ne_bytes(b)),
                    _ => Owned::BigDouble(f64::from_ne_bytes(b)),
                });
            }
            Tag::Str => vals.push(Owned::Str(string())),
            Tag::Bytes => {
                vals.push(Owned::Bytes(p.bins[bin_at..op as usize].to_vec()));
                bin_at = op as usize;
            }
        }
        k += step;
    }
    assert!(vals.is_empty(), "a row without its shape slot");
    assert_eq!(
        (text_at, bin_at),
        (p.text.len(), p.bins.len()),
        "every byte read"
    );
    rows
}

/// NaN is not equal to itself: compare doubles by their bits.
fn same(a: &[Vec<(String, Owned)>], b: &[Vec<(String, Owned)>]) -> bool {
    let bits = |v: &Owned| match v {
        Owned::Double(x) | Owned::BigDouble(x) => Some(x.to_bits()),
        _ => None,
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter().zip(y).all(|((k1, v1), (k2, v2))| {
                    k1 == k2 && (v1 == v2 || (bits(v1).is_some() && bits(v1) == bits(v2)))
                })
        })
}

fn value() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        any::<f64>().prop_map(Bson::Double),
        "[a-z\"\\\\é\u{1}]{0,6}".prop_map(Bson::String),
        Just(Bson::Null),
        Just(Bson::Undefined),
        any::<bool>().prop_map(Bson::Boolean),
        (-8_640_000_000_000_000i64..8_640_000_000_000_000)
            .prop_map(|ms| Bson::DateTime(bson::DateTime::from_millis(ms))),
        prop::collection::vec(any::<u8>(), 0..20).prop_map(|bytes| Bson::Binary(Binary {
            subtype: BinarySubtype::Generic,
            bytes
        })),
        Just(uuid_bin()),
        Just(Bson::ObjectId(oid())),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..4)
                .prop_map(|kv| { Bson::Document(kv.into_iter().collect()) }),
        ]
    })
}

fn document() -> impl Strategy<Value = Vec<u8>> {
    // few distinct keys, so that shapes repeat across a batch
    prop::collection::vec(
        (prop::sample::select(vec!["a", "b", "_id", "1"]), value()),
        0..5,
    )
    .prop_map(|kv| {
        let mut d = Document::new();
        for (k, v) in kv {
            d.insert(k, v);
        }
        bytes(&d)
    })
}

proptest! {
    #[test]
    fn packed_rows_are_the_writers(docs in prop::collection::vec(document(), 1..12), format in 0u32..2, mode in 0u32..3) {
        let o = opts(RowFormat::from_number(format).unwrap(), mode);
        let want: Vec<_> = docs.iter().map(|d| row(d, &o).unwrap()).collect();
        let mut p = PackedRows::new();
        let mut w = RowWriter::new();
        for d in &docs {
            p.row(&mut w, d, &o).unwrap();
            // a failing document leaves the batch as it was
            prop_assert!(p.row(&mut w, &d[..d.len() - 1], &o).is_err());
        }
        prop_assert_eq!(p.rows, docs.len());
        prop_assert!(same(&unpack(&p), &want));
    }
}

#[test]
fn shapes_repeat_within_a_batch() {
    let a = bytes(&doc! { "x": 1, "y": 2 });
    let b = bytes(&doc! { "y": 1 });
    let empty = bytes(&doc! {});
    let only_empty_key = bytes(&doc! { "": 1 });
    let mut p = PackedRows::new();
    let mut w = RowWriter::new();
    let o = RowOptions::default();
    for d in [&a, &a, &b, &a, &empty, &only_empty_key, &empty] {
        p.row(&mut w, d, &o).unwrap();
    }
    let ends: Vec<(u32, u32)> = p
        .words
        .chunks(2)
        .filter(|s| s[0] <= Tag::NewShape as u32)
        .map(|s| (s[0], s[1]))
        .collect();
    // a's keys once, b's once, then a again by number; {} and {"": 1} are two shapes
    let new = Tag::NewShape as u32;
    let shape = Tag::Shape as u32;
    let tags: Vec<u32> = ends.iter().map(|e| e.0).collect();
    assert_eq!(tags, [new, shape, new, shape, new, new, shape]);
    assert_eq!(ends[3].1, 0);
    assert_eq!(ends[6].1, 2);
    assert!(same(
        &unpack(&p)[5..6],
        &[vec![("".to_owned(), Owned::Int32(1))]]
    ));
}
