//! Split-event reassembly (`mongo::merge_fragments`): on any fragments it returns without
//! panicking; the fragments of a document the `bson` crate reads, split the way
//! `$changeStreamSplitLargeEvent` splits an event (each fragment its own `_id` and a
//! `splitEvent`, the fields spread over the fragments in order), merge back to the document's
//! fields in order after the last fragment's `_id`.
#![no_main]
use bson::raw::{cstr, CStr, RawBsonRef, RawDocument, RawDocumentBuf};
use bson2json_core::mongo::merge_fragments;
use libfuzzer_sys::fuzz_target;

fn token(f: usize) -> RawDocumentBuf {
    let mut id = RawDocumentBuf::new();
    id.append(cstr!("_data"), format!("token {f}").as_str());
    id
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, rest)) = data.split_first() else { return };
    let n = usize::from(seed % 6) + 1;

    // Any bytes, cut into fragments.
    let frags: Vec<&[u8]> = rest.chunks(rest.len() / n + 1).collect();
    let mut out = Vec::new();
    let _ = merge_fragments(&frags, &mut out);

    // A readable document, split.
    let Ok(doc) = RawDocument::from_bytes(rest) else { return };
    let Ok(els) = doc.iter().collect::<Result<Vec<(&CStr, RawBsonRef<'_>)>, _>>() else { return };
    let fields: Vec<_> = els.iter().filter(|(k, _)| k.as_str() != "_id" && k.as_str() != "splitEvent").collect();
    let per = fields.len() / n + 1;
    let mut fragments = Vec::new();
    for f in 0..n {
        let mut split = RawDocumentBuf::new();
        split.append(cstr!("fragment"), (f + 1) as i32);
        split.append(cstr!("of"), n as i32);
        let id = token(f);
        let mut d = RawDocumentBuf::new();
        // `_id` and `splitEvent` first, last or around the fields, as the seed says.
        let first = seed & 0x40 == 0;
        if first {
            d.append(cstr!("_id"), RawBsonRef::Document(&id));
        }
        if seed & 0x80 == 0 {
            d.append(cstr!("splitEvent"), RawBsonRef::Document(&split));
        }
        for (k, v) in fields.iter().skip(f * per).take(per) {
            d.append(*k, *v);
        }
        if seed & 0x80 != 0 {
            d.append(cstr!("splitEvent"), RawBsonRef::Document(&split));
        }
        if !first {
            d.append(cstr!("_id"), RawBsonRef::Document(&id));
        }
        fragments.push(d.into_bytes());
    }
    let refs: Vec<&[u8]> = fragments.iter().map(Vec::as_slice).collect();
    merge_fragments(&refs, &mut out).expect("the fragments of a readable document merge");
    let mut expected = RawDocumentBuf::new();
    let last = token(n - 1);
    expected.append(cstr!("_id"), RawBsonRef::Document(&last));
    for (k, v) in &fields {
        expected.append(*k, *v);
    }
    assert_eq!(out, expected.into_bytes(), "merged fragments differ from the split document");
});
