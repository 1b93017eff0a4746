//! Change-event framing (`framing::change_event_fields`) against the `bson` crate: on any
//! input it returns without panicking; on a document the `bson` crate reads, it succeeds, and
//! every routing field it lists (and the ones it leaves out) agrees with the `bson` crate's
//! reading of the same field: type, string content, timestamp, date, int32s, document bytes;
//! on every input it agrees with its two-pass twin `change_event_fields_plain`.
#![no_main]
use bson::raw::{RawBsonRef, RawDocument};
use bson2json_core::mongo::{
    change_event_fields, change_event_fields_plain, resume_token_data, EventField, Part,
};
use libfuzzer_sys::fuzz_target;

/// The `bson` crate's reading of `doc`, or `None` if any element of it (recursively) is unreadable.
fn readable(doc: &RawDocument) -> bool {
    doc.iter().all(|e| match e {
        Ok((_, RawBsonRef::Document(d))) => readable(d),
        Ok((_, RawBsonRef::Array(a))) => RawDocument::from_bytes(a.as_bytes())
            .map(readable)
            .unwrap_or(false),
        Ok(_) => true,
        Err(_) => false,
    })
}

fn str_of(ev: &[u8], r: &std::ops::Range<usize>) -> Vec<u8> {
    ev[r.clone()].to_vec()
}

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    let result = change_event_fields(data, &mut out);
    // The one-pass reader and its two-pass twin: the same fields, the same error.
    let mut plain = Vec::new();
    let plain_result = change_event_fields_plain(data, &mut plain);
    assert_eq!(
        result, plain_result,
        "change_event_fields vs its plain twin"
    );
    if result.is_ok() {
        assert_eq!(out, plain, "change_event_fields vs its plain twin");
    }
    let _ = resume_token_data(data);
    let Ok(doc) = RawDocument::from_bytes(data) else {
        return;
    };
    if !readable(doc) {
        return;
    }
    // The bson crate reads every element, so the framing must too.
    assert!(
        result.is_ok(),
        "framing rejected a document the bson crate reads: {result:?}"
    );
    // The first element of each routing key, as the bson crate sees it (ours reads every
    // element in order; a duplicated key gives one field per occurrence, so compare in order).
    let mut expected = Vec::new();
    for e in doc.iter() {
        let (k, v) = e.unwrap();
        let k = k.as_str();
        let f = match (k, v) {
            ("_id", RawBsonRef::Document(d)) => {
                let els: Vec<_> = d
                    .iter()
                    .map(|e| e.map(|(k, v)| (k.as_str(), v)))
                    .collect::<Result<_, _>>()
                    .unwrap();
                let data = match els[..] {
                    [("_data", RawBsonRef::String(s))] => Some(s.as_bytes().to_vec()),
                    _ => None,
                };
                Some(("_id", data, d.as_bytes().to_vec()))
            }
            ("operationType", RawBsonRef::String(s)) => {
                Some(("operationType", Some(s.as_bytes().to_vec()), vec![]))
            }
            ("ns", RawBsonRef::Document(_)) => Some(("ns", None, vec![])),
            ("clusterTime", RawBsonRef::Timestamp(t)) => Some((
                "clusterTime",
                None,
                [t.time.to_le_bytes(), t.increment.to_le_bytes()].concat(),
            )),
            ("wallTime", RawBsonRef::DateTime(d)) => Some((
                "wallTime",
                None,
                d.timestamp_millis().to_le_bytes().to_vec(),
            )),
            ("splitEvent", RawBsonRef::Document(_)) => Some(("splitEvent", None, vec![])),
            ("documentKey", RawBsonRef::Document(d)) => {
                Some(("documentKey", None, d.as_bytes().to_vec()))
            }
            ("fullDocument" | "fullDocumentBeforeChange" | "updateDescription", v) => Some((
                k,
                None,
                if let RawBsonRef::Document(d) = v {
                    d.as_bytes().to_vec()
                } else {
                    vec![0xff]
                },
            )),
            _ => None,
        };
        if let Some(f) = f {
            expected.push(f);
        }
    }
    assert_eq!(out.len(), expected.len(), "{out:?}");
    for (f, (k, s, bytes)) in out.iter().zip(&expected) {
        match f {
            EventField::ResumeToken { doc: d, data: t } => {
                assert_eq!(*k, "_id");
                assert_eq!(&str_of(data, d), bytes);
                assert_eq!(t.as_ref().map(|r| str_of(data, r)), *s);
            }
            EventField::OperationType(r) => {
                assert_eq!(*k, "operationType");
                assert_eq!(Some(str_of(data, r)), *s);
            }
            EventField::Ns { .. } => assert_eq!(*k, "ns"),
            EventField::ClusterTime { t, i } => {
                assert_eq!(*k, "clusterTime");
                assert_eq!([t.to_le_bytes(), i.to_le_bytes()].concat(), *bytes);
            }
            EventField::WallTime(ms) => {
                assert_eq!(*k, "wallTime");
                assert_eq!(ms.to_le_bytes().to_vec(), *bytes);
            }
            EventField::SplitEvent { .. } => assert_eq!(*k, "splitEvent"),
            EventField::DocumentKey(r) => {
                assert_eq!(*k, "documentKey");
                assert_eq!(&str_of(data, r), bytes);
            }
            EventField::Part(p, r) => {
                let name = match p {
                    Part::FullDocument => "fullDocument",
                    Part::FullDocumentBeforeChange => "fullDocumentBeforeChange",
                    Part::UpdateDescription => "updateDescription",
                };
                assert_eq!(*k, name);
                assert_eq!(
                    r.as_ref().map(|r| str_of(data, r)).unwrap_or(vec![0xff]),
                    *bytes
                );
            }
        }
    }
});
