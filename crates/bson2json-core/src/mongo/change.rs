//! MongoDB change events: the routing fields of one change-stream event (`_id`, `operationType`,
//! `ns`, `clusterTime`, `wallTime`, `splitEvent`, `documentKey`, and where the document parts
//! are), read in place and listed in the event's own field order. The Node binding turns each
//! into a JavaScript value; the document parts are transcoded by [`crate::Transcoder`].
//! `fuzz/fuzz_targets/framing.rs` checks this reader against the `bson` crate.

use std::ops::Range;

use crate::bytes::{load_u32, load_u64};
use crate::element::{DATE_TIME, DOCUMENT, INT32, STRING, TIMESTAMP};
use crate::error::Error;
use crate::raw::{Elements, RawElement};

/// Which document part of an event a [`EventField::Part`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// `fullDocument`.
    FullDocument,
    /// `fullDocumentBeforeChange`.
    FullDocumentBeforeChange,
    /// `updateDescription`.
    UpdateDescription,
}

/// One routing field of a change event. Ranges index the event's bytes; a document range is a
/// complete embedded BSON document, a string range the string's content (without its NUL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventField {
    /// `_id`, the resume token. `data` is its `_data` string when the token is exactly
    /// `{ _data: <string> }` (what every MongoDB version sends); otherwise `None`.
    ResumeToken {
        /// The token document.
        doc: Range<usize>,
        /// Its `_data` string, when that is its only field.
        data: Option<Range<usize>>,
    },
    /// `operationType`, a string.
    OperationType(Range<usize>),
    /// `ns`: its string fields `db` and `coll`, when present.
    Ns {
        /// `ns.db`.
        db: Option<Range<usize>>,
        /// `ns.coll`.
        coll: Option<Range<usize>>,
    },
    /// `clusterTime`, a BSON timestamp.
    ClusterTime {
        /// Seconds.
        t: u32,
        /// Increment.
        i: u32,
    },
    /// `wallTime`, milliseconds since the epoch.
    WallTime(i64),
    /// `splitEvent`: its int32 fields `fragment` and `of`, when present.
    SplitEvent {
        /// `splitEvent.fragment`.
        fragment: Option<i32>,
        /// `splitEvent.of`.
        of: Option<i32>,
    },
    /// `documentKey`, a document.
    DocumentKey(Range<usize>),
    /// A document part: its range when it is a document, `None` when it is anything else
    /// (`null` for a missing pre-image, for example).
    Part(Part, Option<Range<usize>>),
}

/// The content of the string element `e` (its value is `int32 length, bytes, NUL`).
fn string(e: &RawElement<'_>) -> Range<usize> {
    e.value_start + 4..e.value_end - 1
}

/// The `_data` string's content (a range of `token`) when the resume token `token` is exactly
/// `{ _data: <string> }`, the shape every MongoDB version sends; `None` for any other shape.
pub fn resume_token_data(token: &[u8]) -> Result<Option<Range<usize>>, Error> {
    // Every element is read (a broken one fails the token), none is collected.
    let mut only = None;
    for (k, e) in Elements::new(token)?.enumerate() {
        let e = e?;
        only = (k == 0 && e.element_type == STRING && e.key == b"_data").then(|| string(&e));
    }
    Ok(only)
}

/// Lists the routing fields of the change event `ev` (a complete BSON document) into `out`, in
/// the event's field order. Fields of an unexpected type are left out, as are unknown fields.
/// Fails only when the event's framing is broken (the error's offset indexes `ev`).
///
/// One pass over the event: a field's own contents (the token's, `ns`'s, `splitEvent`'s
/// elements) are read as it is met, but an error inside one is held until every element of
/// the event has been stepped over, so that the event's own framing error still comes first.
/// Its output and errors are those of [`change_event_fields_plain`], which tests compare.
pub fn change_event_fields(ev: &[u8], out: &mut Vec<EventField>) -> Result<(), Error> {
    out.clear();
    let mut inner = None;
    for e in Elements::new(ev)? {
        let e = e?;
        if inner.is_some() {
            continue;
        }
        match field_of(ev, &e) {
            Ok(Some(f)) => out.push(f),
            Ok(None) => {}
            Err(x) => inner = Some(x),
        }
    }
    inner.map_or(Ok(()), Err)
}

/// [`change_event_fields`] in two passes: the event's own framing first, whole (its first
/// error is the one reported, before any error inside a field), then its elements again. The
/// plain twin the single pass is tested against.
pub fn change_event_fields_plain(ev: &[u8], out: &mut Vec<EventField>) -> Result<(), Error> {
    out.clear();
    for e in Elements::new(ev)? {
        e?;
    }
    for e in Elements::new(ev)? {
        if let Some(f) = field_of(ev, &e?)? {
            out.push(f);
        }
    }
    Ok(())
}

/// The routing field of the event `ev`'s element `e`, `None` for an element that is not one
/// (an unknown key, or a known one of an unexpected type). Fails when the contents of `_id`,
/// `ns` or `splitEvent` are broken (the offset indexes `ev`).
#[inline(always)]
fn field_of(ev: &[u8], e: &RawElement<'_>) -> Result<Option<EventField>, Error> {
    let v = e.value_start;
    let value = v..e.value_end;
    Ok(Some(match (e.key, e.element_type) {
        (b"_id", DOCUMENT) => {
            let data = resume_token_data(&ev[value.clone()])
                .map_err(|x| x.shifted(v))?
                .map(|d| v + d.start..v + d.end);
            EventField::ResumeToken { doc: value, data }
        }
        (b"operationType", STRING) => EventField::OperationType(string(e)),
        (b"ns", DOCUMENT) => {
            let (mut db, mut coll) = (None, None);
            for n in Elements::new(&ev[value.clone()]).map_err(|x| x.shifted(v))? {
                let n = n.map_err(|x| x.shifted(v))?;
                if n.element_type != STRING {
                    continue;
                }
                let s = string(&n);
                match n.key {
                    b"db" => db = Some(v + s.start..v + s.end),
                    b"coll" => coll = Some(v + s.start..v + s.end),
                    _ => {}
                }
            }
            EventField::Ns { db, coll }
        }
        (b"clusterTime", TIMESTAMP) => {
            let ts = load_u64(ev, v);
            EventField::ClusterTime {
                t: (ts >> 32) as u32,
                i: ts as u32,
            }
        }
        (b"wallTime", DATE_TIME) => EventField::WallTime(load_u64(ev, v) as i64),
        (b"splitEvent", DOCUMENT) => {
            let doc = &ev[value.clone()];
            let (mut fragment, mut of) = (None, None);
            for n in Elements::new(doc).map_err(|x| x.shifted(v))? {
                let n = n.map_err(|x| x.shifted(v))?;
                if n.element_type != INT32 {
                    continue;
                }
                let x = load_u32(doc, n.value_start) as i32;
                match n.key {
                    b"fragment" => fragment = Some(x),
                    b"of" => of = Some(x),
                    _ => {}
                }
            }
            EventField::SplitEvent { fragment, of }
        }
        (b"documentKey", DOCUMENT) => EventField::DocumentKey(value),
        (b"fullDocument", t) => {
            EventField::Part(Part::FullDocument, (t == DOCUMENT).then_some(value))
        }
        (b"fullDocumentBeforeChange", t) => EventField::Part(
            Part::FullDocumentBeforeChange,
            (t == DOCUMENT).then_some(value),
        ),
        (b"updateDescription", t) => {
            EventField::Part(Part::UpdateDescription, (t == DOCUMENT).then_some(value))
        }
        _ => return Ok(None),
    }))
}

/// The range of the last member's value in `json`, the JSON text of an object as
/// [`crate::Transcoder`] writes it (no whitespace), when that member's key is `key` (written
/// as is: `key` needs no escape) and its value is an object; `None` otherwise. For `documentKey`
/// with `whole`: when it is an event's last element, its text inside the event's is the text
/// of its own document, so it is taken from there rather than transcoded again.
///
/// Reads `json` backwards from its end over the value only: a `"` met outside a string closes
/// one, which starts at the nearest `"` before it preceded by an even number of backslashes.
pub fn last_member_object(json: &[u8], key: &[u8]) -> Option<Range<usize>> {
    let n = json.len();
    if n < 4 || json[n - 1] != b'}' || json[n - 2] != b'}' {
        return None;
    }
    let end = n - 1;
    let mut depth = 0usize;
    let mut i = end;
    let start = loop {
        i = i.checked_sub(1)?;
        match json[i] {
            b'}' | b']' => depth += 1,
            b'{' | b'[' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    break i;
                }
            }
            b'"' => loop {
                i = i.checked_sub(1)?;
                if json[i] == b'"' {
                    let slashes = json[..i].iter().rev().take_while(|&&c| c == b'\\').count();
                    if slashes % 2 == 0 {
                        break;
                    }
                }
            },
            _ => {}
        }
    };
    // `"key":` right before the value, after the `,` or `{` that begins a member.
    let quoted = start.checked_sub(key.len() + 3)?;
    let head = &json[quoted.checked_sub(1)?..start];
    let ok = matches!(head[0], b',' | b'{')
        && head[1] == b'"'
        && &head[2..2 + key.len()] == key
        && head[2 + key.len()..] == *b"\":";
    ok.then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, Bson, Timestamp};

    fn fields(d: &bson::Document) -> (Vec<u8>, Vec<EventField>) {
        let bytes = d.to_vec().unwrap();
        let mut out = Vec::new();
        change_event_fields(&bytes, &mut out).unwrap();
        (bytes, out)
    }

    /// An event with every routing field, an unknown one, and a part that is not a document.
    fn every_field() -> bson::Document {
        doc! {
            "_id": { "_data": "8263A1" },
            "operationType": "update",
            "clusterTime": Bson::Timestamp(Timestamp { time: 1_700_000_000, increment: 7 }),
            "wallTime": Bson::DateTime(bson::DateTime::from_millis(-5)),
            "ns": { "db": "shop", "coll": "orders", "x": 1 },
            "documentKey": { "_id": 42 },
            "updateDescription": { "updatedFields": { "a": 1 } },
            "fullDocument": Bson::Null,
            "splitEvent": { "fragment": 2, "of": 3 },
            "unknown": "ignored",
        }
    }

    #[test]
    fn every_routing_field_in_event_order() {
        let (b, f) = fields(&every_field());
        let s = |r: &Range<usize>| std::str::from_utf8(&b[r.clone()]).unwrap().to_owned();
        assert_eq!(f.len(), 9);
        match &f[0] {
            EventField::ResumeToken { data: Some(d), doc } => {
                assert_eq!(s(d), "8263A1");
                assert_eq!(
                    bson::Document::from_reader(&b[doc.clone()]).unwrap(),
                    doc! { "_data": "8263A1" }
                );
            }
            x => panic!("{x:?}"),
        }
        assert!(matches!(&f[1], EventField::OperationType(r) if s(r) == "update"));
        assert_eq!(
            f[2],
            EventField::ClusterTime {
                t: 1_700_000_000,
                i: 7
            }
        );
        assert_eq!(f[3], EventField::WallTime(-5));
        match &f[4] {
            EventField::Ns {
                db: Some(d),
                coll: Some(c),
            } => assert_eq!((s(d), s(c)), ("shop".into(), "orders".into())),
            x => panic!("{x:?}"),
        }
        match &f[5] {
            EventField::DocumentKey(r) => assert_eq!(
                bson::Document::from_reader(&b[r.clone()]).unwrap(),
                doc! { "_id": 42 }
            ),
            x => panic!("{x:?}"),
        }
        assert!(matches!(
            &f[6],
            EventField::Part(Part::UpdateDescription, Some(_))
        ));
        assert_eq!(f[7], EventField::Part(Part::FullDocument, None));
        assert_eq!(
            f[8],
            EventField::SplitEvent {
                fragment: Some(2),
                of: Some(3)
            }
        );
    }

    #[test]
    fn other_token_shapes_and_types_are_left_as_they_are() {
        let (_, f) = fields(
            &doc! { "_id": { "_data": "a", "extra": 1 }, "operationType": 5, "ns": "x", "wallTime": 3 },
        );
        assert_eq!(f.len(), 1);
        assert!(matches!(f[0], EventField::ResumeToken { data: None, .. }));
        let (_, f) = fields(&doc! { "_id": "not a document", "ns": { "db": 1 } });
        assert_eq!(
            f,
            vec![EventField::Ns {
                db: None,
                coll: None
            }]
        );
    }

    #[test]
    fn a_token_is_read_only_in_its_one_shape() {
        let data = |d: bson::Document| {
            let b = d.to_vec().unwrap();
            resume_token_data(&b).unwrap().map(|r| b[r].to_vec())
        };
        assert_eq!(data(doc! { "_data": "8263" }), Some(b"8263".to_vec()));
        assert_eq!(data(doc! { "x": 1, "_data": "8263" }), None);
        assert_eq!(data(doc! { "_data": "8263", "x": 1 }), None);
        assert_eq!(data(doc! { "_data": 5 }), None);
        assert_eq!(data(doc! {}), None);
        // A broken element after the `_data` string fails the token.
        let mut b = doc! { "_data": "8263", "x": "y" }.to_vec().unwrap();
        let at = b.len() - 7; // the length of "y"
        b[at] = 50;
        assert!(resume_token_data(&b).is_err());
    }

    #[test]
    fn the_events_own_framing_is_reported_before_a_field_inside_it() {
        // `_id`'s token broken inside (its `_data` string's length) and the event's last
        // element broken too: the event's own error is the one reported, at its offset.
        let mut b = doc! { "_id": { "_data": "abc" }, "operationType": "insert" }
            .to_vec()
            .unwrap();
        b[4 + 1 + 4 + 4 + 1 + 6] = 60; // `_data`'s string length
        let whole = b.len();
        b[whole - 12] = 90; // `operationType`'s string length
        let mut out = Vec::new();
        let e = change_event_fields(&b, &mut out).unwrap_err();
        assert!(e.offset() > 20, "{e:?}");
    }

    #[test]
    fn broken_framing_is_an_error_at_its_offset() {
        let mut b = doc! { "_id": { "_data": "abc" }, "documentKey": { "_id": 1 } }
            .to_vec()
            .unwrap();
        // the `_id` sub-document's length (at 4 + 1 + 4 = 9) made wrong
        b[9] = 99;
        let mut out = Vec::new();
        let e = change_event_fields(&b, &mut out).unwrap_err();
        assert!(e.offset() <= b.len(), "{e:?}");
        for cut in 0..b.len() {
            let _ = change_event_fields(&b[..cut], &mut out);
        }
    }

    /// The elements of a one-element document `d` (to splice, duplicates included).
    fn el(d: bson::Document) -> Vec<u8> {
        let b = d.to_vec().unwrap();
        b[4..b.len() - 1].to_vec()
    }

    /// A document of the given elements, back to back.
    fn doc_of(els: &[Vec<u8>]) -> Vec<u8> {
        let body = els.concat();
        let mut b = ((body.len() + 5) as i32).to_le_bytes().to_vec();
        b.extend_from_slice(&body);
        b.push(0);
        b
    }

    /// Document keys of many shapes: every BSON type, strings that look like JSON
    /// structure, DBRefs, keys `compat` reorders or repeats, nesting.
    fn document_keys() -> Vec<Vec<u8>> {
        use bson::spec::BinarySubtype;
        use bson::{Binary, Decimal128, JavaScriptCodeWithScope, Regex};
        let tricky = [
            "",
            "\"",
            "\\",
            "\\\"",
            "x\\",
            "}",
            "{",
            "\",\"documentKey\":{\"_id\":0}}",
            "a\u{1}b\ncé☃𝄞",
        ];
        let mut keys: Vec<Vec<u8>> = tricky
            .iter()
            .map(|t| doc! { "_id": *t }.to_vec().unwrap())
            .collect();
        keys.extend(
            [
                doc! {},
                doc! { "_id": 42 },
                doc! { "_id": -7_i64 },
                doc! { "_id": 9_007_199_254_740_993_i64 },
                doc! { "_id": 1.5 },
                doc! { "_id": f64::NAN },
                doc! { "_id": bson::oid::ObjectId::from_bytes([7; 12]) },
                doc! { "_id": { "a": [1, "}", { "b": "\\" }], "c": null } },
                doc! { "sk": 2, "_id": "x" },
                doc! { "_id": bson::DateTime::from_millis(1_700_000_000_000) },
                doc! { "_id": Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2, 255] } },
                doc! { "_id": Binary { subtype: BinarySubtype::Uuid, bytes: vec![9; 16] } },
                doc! { "_id": Decimal128::from_bytes([3; 16]) },
                doc! { "_id": Regex { pattern: "a\"b".to_string().try_into().unwrap(), options: "im".to_string().try_into().unwrap() } },
                doc! { "_id": Bson::Timestamp(Timestamp { time: 1, increment: 2 }) },
                doc! { "_id": Bson::JavaScriptCodeWithScope(JavaScriptCodeWithScope { code: "f()".into(), scope: doc! { "$ref": "c", "$id": 1 } }) },
                doc! { "_id": Bson::MinKey, "m": Bson::MaxKey, "u": Bson::Undefined },
                doc! { "$ref": "coll", "$id": 5 },
                doc! { "$ref": "db.coll", "$id": 5, "$db": "x", "y": 1 },
                doc! { "_id": { "$ref": "c", "$id": 1 } },
                doc! { "b": 1, "2": 2, "1": 1 },
                doc! { "_id": { "9": "z", "a": 1, "0": "y" } },
            ]
            .iter()
            .map(|d| d.to_vec().unwrap()),
        );
        // duplicate keys, at the top and inside
        keys.push(doc_of(&[
            el(doc! { "_id": 1 }),
            el(doc! { "a": 2 }),
            el(doc! { "_id": 3 }),
        ]));
        let inner = doc_of(&[el(doc! { "k": 1 }), el(doc! { "k": "two" })]);
        keys.push(doc_of(&[[&[DOCUMENT][..], b"_id\0", &inner].concat()]));
        keys
    }

    fn option_sets() -> Vec<crate::Options> {
        use crate::{BsonVersion, Dialect, Options};
        let mut v = vec![
            Options::default(),
            Options::with_dialect(Dialect::Relaxed),
            Options::with_dialect(Dialect::Canonical),
        ];
        v.push(Options {
            bson_version: BsonVersion::V6,
            ..Options::default()
        });
        v.push(Options {
            promote_longs: false,
            ..Options::default()
        });
        v.push(Options {
            promote_values: false,
            ..Options::default()
        });
        v.push(Options {
            promote_buffers: true,
            ..Options::default()
        });
        v.push(Options {
            bson_regexp: true,
            ..Options::default()
        });
        v
    }

    #[test]
    fn a_last_document_key_read_from_the_events_text_is_its_own_text() {
        // The twin: the document key transcoded on its own. Before it, elements whose text
        // holds what a backwards reading could stumble on.
        let before = [
            el(doc! { "_id": { "_data": "82\"}" } }),
            el(doc! { "operationType": "insert" }),
            el(doc! { "fullDocument": { "s": "\",\"documentKey\":{\"_id\":1}}\\", "t": "{[" } }),
            el(doc! { "ns": { "db": "d", "coll": "c" } }),
        ];
        let mut t = crate::Transcoder::new();
        let mut reused = 0;
        for o in option_sets() {
            for key in document_keys() {
                let mut alone = Vec::new();
                let alone_ok = t.transcode(&key, &o, &mut alone).is_ok();
                let mut els = before.to_vec();
                els.push([&[DOCUMENT][..], b"documentKey\0", &key].concat());
                let ev = doc_of(&els);
                let mut whole = Vec::new();
                if t.transcode(&ev, &o, &mut whole).is_err() {
                    continue;
                }
                assert!(alone_ok, "{o:?} {key:?}");
                match last_member_object(&whole, b"documentKey") {
                    Some(r) => {
                        assert_eq!(
                            String::from_utf8_lossy(&whole[r]),
                            String::from_utf8_lossy(&alone),
                            "{o:?}"
                        );
                        reused += 1;
                    }
                    None => panic!("{o:?}: {}", String::from_utf8_lossy(&whole)),
                }
            }
        }
        assert!(reused > 200, "{reused}");
    }

    #[test]
    fn a_document_key_that_is_not_the_last_member_is_not_read() {
        let mut t = crate::Transcoder::new();
        let o = crate::Options::default();
        let texts = |d: &[u8]| {
            let mut out = Vec::new();
            t.transcode(d, &o, &mut out).unwrap();
            out
        };
        let mut texts = texts;
        // another element after it, one whose value ends in what a member would
        for last in [
            el(doc! { "x": 1 }),
            el(doc! { "x": { "s": "\",\"documentKey\":{}" } }),
            el(doc! { "x": { "documentKey": { "_id": 1 } } }),
            el(doc! { "x": "documentKey" }),
            el(doc! { "xdocumentKey": {} }),
            el(doc! { "\"documentKey": {} }),
            el(doc! { "documentKey": 5 }),
            el(doc! { "documentKey": [ {} ] }),
        ] {
            let ev = doc_of(&[el(doc! { "documentKey": { "_id": 1 } }), last]);
            let json = texts(&ev);
            assert_eq!(
                last_member_object(&json, b"documentKey"),
                None,
                "{}",
                String::from_utf8_lossy(&json)
            );
        }
        // a repeated key: JavaScript keeps its first place, so the last member is another
        let ev = doc_of(&[
            el(doc! { "documentKey": { "_id": 1 } }),
            el(doc! { "x": 1 }),
            el(doc! { "documentKey": { "_id": 2 } }),
        ]);
        assert_eq!(last_member_object(&texts(&ev), b"documentKey"), None);
        // keys JavaScript orders first (array indexes) leave it last
        let ev = doc_of(&[
            el(doc! { "documentKey": { "_id": 1 } }),
            el(doc! { "7": 1 }),
        ]);
        let json = texts(&ev);
        let r = last_member_object(&json, b"documentKey").unwrap();
        assert_eq!(&json[r], b"{\"_id\":1}");
        // not an object's text, or too short
        for bad in [
            &b""[..],
            b"}",
            b"{}",
            b"}}",
            b"{\"documentKey\":{}",
            b"\"documentKey\":{}}",
            b"{\"documentKey\":}}",
        ] {
            assert_eq!(last_member_object(bad, b"documentKey"), None);
        }
        assert_eq!(
            last_member_object(b"{\"documentKey\":{}}", b"documentKey"),
            Some(15..17)
        );
    }

    #[test]
    fn one_pass_equals_two_passes_on_every_cut_and_broken_byte() {
        let ev = every_field().to_vec().unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut compared = 0;
        let mut check = |bytes: &[u8]| {
            let x = change_event_fields(bytes, &mut a);
            let y = change_event_fields_plain(bytes, &mut b);
            assert_eq!(x, y, "{bytes:?}");
            if x.is_ok() {
                assert_eq!(a, b);
            }
            compared += 1;
        };
        check(&ev);
        for cut in 0..ev.len() {
            check(&ev[..cut]);
        }
        for at in 0..ev.len() {
            for v in [0u8, 1, 2, 3, 5, 0x10, 0x7f, 0xff] {
                let mut m = ev.clone();
                m[at] = v;
                check(&m);
                // and a second byte broken further on
                for at2 in (at + 1..ev.len()).step_by(7) {
                    let mut m2 = m.clone();
                    m2[at2] = 0xff;
                    check(&m2);
                }
            }
        }
        assert!(compared > 10_000, "{compared}");
    }
}
