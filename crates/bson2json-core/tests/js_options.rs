//! js-bson's deserialize options and majors in `compat` (the differential tests against js-bson
//! itself are in `__test__/transcode/options.spec.ts`; these pin the named cases in the core alone, for both
//! walks: the lean one and its recording twin).

use bson2json_core::{transcode, BsonVersion, Dialect, ErrorKind, Options, Transcoder};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn both(input: &[u8], opts: &Options) -> Result<String, ErrorKind> {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let ra = Transcoder::new().transcode(input, opts, &mut a);
    let rb = Transcoder::new().transcode_plain(input, opts, &mut b);
    assert_eq!(ra, rb, "lean and recording walks disagree");
    assert_eq!(a, b, "lean and recording walks disagree");
    ra.map(|_| String::from_utf8(a).unwrap())
        .map_err(|e| e.kind())
}

fn v6() -> Options {
    Options {
        bson_version: BsonVersion::V6,
        ..Options::default()
    }
}

#[test]
fn long_field_order_per_major() {
    let big = hex("10000000126100010000000000200000");
    assert_eq!(
        both(&big, &Options::default()).unwrap(),
        r#"{"a":{"high":2097152,"low":1,"unsigned":false}}"#
    );
    assert_eq!(
        both(&big, &v6()).unwrap(),
        r#"{"a":{"low":1,"high":2097152,"unsigned":false}}"#
    );
}

#[test]
fn code_w_scope_dbref_scope_promoted_in_6_only() {
    let cws = hex(
        "2c0000000f6100240000000200000078001a0000001024696400010000000224726566000200000063000000",
    );
    assert_eq!(
        both(&cws, &Options::default()).unwrap(),
        r#"{"a":{"code":"x","scope":{"$id":1,"$ref":"c"}}}"#
    );
    assert_eq!(
        both(&cws, &v6()).unwrap(),
        r#"{"a":{"code":"x","scope":{"$ref":"c","$id":1}}}"#
    );
}

#[test]
fn promote_longs_off_makes_every_int64_a_long_in_arrays_too() {
    // {a: [Long(0), Long(-42)], i: 7}
    let mut d = vec![0u8; 4];
    d.extend_from_slice(&[0x04, b'a', 0]);
    let mut arr = vec![0u8; 4];
    arr.extend_from_slice(&[0x12, b'0', 0]);
    arr.extend_from_slice(&0i64.to_le_bytes());
    arr.extend_from_slice(&[0x12, b'1', 0]);
    arr.extend_from_slice(&(-42i64).to_le_bytes());
    arr.push(0);
    let n = arr.len() as i32;
    arr[..4].copy_from_slice(&n.to_le_bytes());
    d.extend_from_slice(&arr);
    d.extend_from_slice(&[0x10, b'i', 0, 7, 0, 0, 0, 0]);
    let n = d.len() as i32;
    d[..4].copy_from_slice(&n.to_le_bytes());
    assert_eq!(
        both(&d, &Options::default()).unwrap(),
        r#"{"a":[0,-42],"i":7}"#
    );
    for opts in [
        Options {
            promote_longs: false,
            ..Options::default()
        },
        Options {
            promote_values: false,
            ..Options::default()
        },
    ] {
        assert_eq!(
            both(&d, &opts).unwrap(),
            r#"{"a":[{"high":0,"low":0,"unsigned":false},{"high":-1,"low":-42,"unsigned":false}],"i":7}"#
        );
    }
}

#[test]
fn promote_buffers() {
    // {b: Binary([1, 2], subtype 2 with inner length), u: 16-byte UUID}
    let mut d = vec![0u8; 4];
    d.extend_from_slice(&[0x05, b'b', 0, 6, 0, 0, 0, 2, 2, 0, 0, 0, 1, 2]);
    d.extend_from_slice(&[0x05, b'u', 0, 16, 0, 0, 0, 4]);
    d.extend(1..=16u8);
    d.push(0);
    let n = d.len() as i32;
    d[..4].copy_from_slice(&n.to_le_bytes());
    let on = Options {
        promote_buffers: true,
        ..Options::default()
    };
    assert_eq!(
        both(&d, &on).unwrap(),
        r#"{"b":{"type":"Buffer","data":[1,2]},"u":{"type":"Buffer","data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}}"#
    );
    let off = Options {
        promote_values: false,
        ..on
    };
    assert_eq!(
        both(&d, &off).unwrap(),
        both(&d, &Options::default()).unwrap()
    );
}

fn regex_doc(pattern: &[u8], flags: &[u8]) -> Vec<u8> {
    let mut d = vec![0u8; 4];
    d.extend_from_slice(&[0x0B, b'r', 0]);
    d.extend_from_slice(pattern);
    d.push(0);
    d.extend_from_slice(flags);
    d.extend_from_slice(&[0, 0]);
    let n = d.len() as i32;
    d[..4].copy_from_slice(&n.to_le_bytes());
    d
}

#[test]
fn bson_regexp() {
    let on = Options {
        bson_regexp: true,
        ..Options::default()
    };
    assert_eq!(
        both(&regex_doc(b"a\"(", b"xsmi"), &on).unwrap(),
        r#"{"r":{"pattern":"a\"(","options":"imsx"}}"#
    );
    assert_eq!(
        both(&regex_doc(b"a\xff", b""), &on).unwrap(),
        "{\"r\":{\"pattern\":\"a\u{FFFD}\",\"options\":\"\"}}"
    );
    let d = regex_doc(b"a", b"mg");
    let mut out = Vec::new();
    let e = transcode(&d, &on, &mut out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRegex);
    assert_eq!(e.offset(), 10);
    assert!(out.is_empty());
    // without the option the core records the regex for the engine and prints {}
    let mut t = Transcoder::new();
    let mut out = Vec::new();
    t.transcode(&d, &Options::default(), &mut out).unwrap();
    assert_eq!(out, br#"{"r":{}}"#);
    assert_eq!(t.regexes().len(), 1);
    t.transcode(&regex_doc(b"a", b"m"), &on, &mut Vec::new())
        .unwrap();
    assert!(t.regexes().is_empty());
}

#[test]
fn symbol_ref_is_no_dbref_without_promote_values() {
    // {$id: 1, $ref: Symbol("c")}
    let mut d = vec![0u8; 4];
    d.extend_from_slice(&[0x10, b'$', b'i', b'd', 0, 1, 0, 0, 0]);
    d.extend_from_slice(&[0x0E, b'$', b'r', b'e', b'f', 0, 2, 0, 0, 0, b'c', 0]);
    d.push(0);
    let n = d.len() as i32;
    d[..4].copy_from_slice(&n.to_le_bytes());
    assert_eq!(
        both(&d, &Options::default()).unwrap(),
        r#"{"$ref":"c","$id":1}"#
    );
    let off = Options {
        promote_values: false,
        ..Options::default()
    };
    assert_eq!(both(&d, &off).unwrap(), r#"{"$id":1,"$ref":"c"}"#);
}

#[test]
fn extended_json_ignores_the_js_bson_options() {
    let big = hex("10000000126100010000000000200000");
    for dialect in [Dialect::Relaxed, Dialect::Canonical] {
        let plain = Options::with_dialect(dialect);
        let odd = Options {
            bson_version: BsonVersion::V6,
            promote_longs: false,
            promote_values: false,
            promote_buffers: true,
            bson_regexp: true,
            ..plain
        };
        assert_eq!(both(&big, &plain), both(&big, &odd));
    }
}
