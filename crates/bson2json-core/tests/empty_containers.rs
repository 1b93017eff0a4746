//! Empty documents and arrays, which the lean `compat` walk writes whole (`{}`, `[]`) without
//! opening a frame for them. Every input here is held equal, output and error, between
//! [`Transcoder::transcode`] and its plain twin [`Transcoder::transcode_plain`], which opens
//! a frame for each: empty containers as members, in arrays (alone, between numbers, one
//! after another, nested), at the depth limit, at the output limit, and with a bad
//! terminator or length.

use bson2json_core::{Dialect, Error, Options, Transcoder};

mod common;
use common::{doc, member};

const DOC: u8 = 0x03;
const ARRAY: u8 = 0x04;
const INT32: u8 = 0x10;
const DOUBLE: u8 = 0x01;

fn int(name: &str, x: i32) -> Vec<u8> {
    member(INT32, name, &x.to_le_bytes())
}

fn both(input: &[u8], opts: &Options) -> (Result<String, Error>, Result<String, Error>) {
    let run = |lean: bool| {
        let mut out = Vec::new();
        // A new transcoder each time: after a lean walk gives up, the next documents skip it.
        let mut t = Transcoder::new();
        let r = if lean {
            t.transcode(input, opts, &mut out)
        } else {
            t.transcode_plain(input, opts, &mut out)
        };
        r.map(|()| String::from_utf8(out).unwrap())
    };
    (run(true), run(false))
}

fn same(input: &[u8], opts: &Options, what: &str) -> Result<String, Error> {
    let (lean, plain) = both(input, opts);
    assert_eq!(lean, plain, "{what}");
    lean
}

fn compat() -> Options {
    Options::with_dialect(Dialect::Compat)
}

#[test]
fn written_as_the_frame_path_writes_them() {
    let empty = doc(&[]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (doc(&member(ARRAY, "a", &empty)), r#"{"a":[]}"#),
        (doc(&member(DOC, "o", &empty)), r#"{"o":{}}"#),
        (
            doc(&[int("x", 1), member(ARRAY, "a", &empty), int("y", 2)].concat()),
            r#"{"x":1,"a":[],"y":2}"#,
        ),
        (
            doc(&[member(ARRAY, "a", &empty), member(DOC, "b", &empty)].concat()),
            r#"{"a":[],"b":{}}"#,
        ),
        (
            doc(&member(
                ARRAY,
                "a",
                &doc(&[
                    member(ARRAY, "0", &empty),
                    member(DOC, "1", &empty),
                    member(ARRAY, "2", &empty),
                ]
                .concat()),
            )),
            r#"{"a":[[],{},[]]}"#,
        ),
        (
            // between numbers: the array's number loop stops at it and picks up after it
            doc(&member(
                ARRAY,
                "a",
                &doc(&[
                    member(INT32, "0", &1i32.to_le_bytes()),
                    member(ARRAY, "1", &empty),
                    member(DOUBLE, "2", &2.5f64.to_le_bytes()),
                    member(DOC, "3", &empty),
                    member(INT32, "4", &3i32.to_le_bytes()),
                ]
                .concat()),
            )),
            r#"{"a":[1,[],2.5,{},3]}"#,
        ),
        (
            // areas of a citm_catalog.json performance: `{"areaId":…,"blockIds":[]}`
            doc(&member(
                ARRAY,
                "areas",
                &doc(&[
                    member(
                        DOC,
                        "0",
                        &doc(
                            &[int("areaId", 205705999), member(ARRAY, "blockIds", &empty)].concat(),
                        ),
                    ),
                    member(
                        DOC,
                        "1",
                        &doc(
                            &[int("areaId", 205705998), member(ARRAY, "blockIds", &empty)].concat(),
                        ),
                    ),
                ]
                .concat()),
            )),
            r#"{"areas":[{"areaId":205705999,"blockIds":[]},{"areaId":205705998,"blockIds":[]}]}"#,
        ),
        (
            // an empty one inside an empty-looking nest
            doc(&member(DOC, "o", &doc(&member(DOC, "p", &empty)))),
            r#"{"o":{"p":{}}}"#,
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(same(&input, &compat(), expected).unwrap(), expected);
    }
}

#[test]
fn errors_are_the_frame_paths() {
    let empty = doc(&[]);
    // At the depth limit: the top level is depth 1, `o` would be depth 2.
    let nested = doc(&member(DOC, "o", &empty));
    let mut opts = compat();
    opts.max_depth = 1;
    assert!(same(&nested, &opts, "depth").is_err());
    opts.max_depth = 2;
    assert_eq!(same(&nested, &opts, "depth 2").unwrap(), r#"{"o":{}}"#);

    // Output limit: `{"o":{}}` is 8 bytes; every limit below it fails at the same offset.
    for limit in 0..=8 {
        let mut opts = compat();
        opts.max_output_bytes = limit;
        let r = same(&nested, &opts, &format!("limit {limit}"));
        assert_eq!(r.is_ok(), limit >= 8, "limit {limit}");
    }

    // A five-byte container whose last byte is not its terminator, and one whose length
    // runs past its parent or is below five.
    for bad in [
        [5u8, 0, 0, 0, 1],
        [5, 0, 0, 0, 0x10],
        [6, 0, 0, 0, 0],
        [4, 0, 0, 0, 0],
    ] {
        for t in [DOC, ARRAY] {
            let input = doc(&[member(t, "o", &bad), int("x", 1)].concat());
            let (lean, plain) = both(&input, &compat());
            assert_eq!(lean, plain, "{bad:?} as type {t}");
            assert!(
                lean.is_err() || bad == [6, 0, 0, 0, 0],
                "{bad:?} as type {t}: {lean:?}"
            );
        }
    }
}
