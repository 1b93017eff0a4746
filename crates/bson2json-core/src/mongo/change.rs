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
pub fn change_event_fields(ev: &[u8], out: &mut Vec<EventField>) -> Result<(), Error> {
    out.clear();
    // The event's own framing first, whole (its first error is the one reported, before any
    // error inside a field), then its elements again; nothing is collected.
    for e in Elements::new(ev)? {
        e?;
    }
    for e in Elements::new(ev)? {
        let e = e?;
        let v = e.value_start;
        let value = v..e.value_end;
        let field = match (e.key, e.element_type) {
            (b"_id", DOCUMENT) => {
                let data = resume_token_data(&ev[value.clone()])
                    .map_err(|x| x.shifted(v))?
                    .map(|d| v + d.start..v + d.end);
                EventField::ResumeToken { doc: value, data }
            }
            (b"operationType", STRING) => EventField::OperationType(string(&e)),
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
            _ => continue,
        };
        out.push(field);
    }
    Ok(())
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

    #[test]
    fn every_routing_field_in_event_order() {
        let ev = doc! {
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
        };
        let (b, f) = fields(&ev);
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
}
