//! Reassembly of the change events that a `$changeStreamSplitLargeEvent` stage splits into
//! fragments, at the BSON level: the fragments' top-level elements are copied as they are,
//! nothing is decoded.

use crate::batch::BatchError;
use crate::raw::{top_level_elements, RawElement};
use crate::{Error, ErrorKind};

/// The largest document length a BSON length field holds.
const MAX_DOCUMENT_BYTES: usize = i32::MAX as usize;

/// Writes into `out` (cleared first) the event that `fragments` (whole BSON documents, in
/// order: fragment 1 of n first) were split from: the `_id` element of the last fragment (its
/// resume token, the event's), then every other top-level element of every fragment in order,
/// leaving out each one's `_id` and `splitEvent`. A fragment without `_id` contributes none;
/// a key several fragments hold is written once per fragment, as the server sent it.
///
/// Fails with the index of the fragment whose framing is broken (the offset is in that
/// fragment), or, with the index of the last fragment, when the event would exceed the
/// largest BSON document.
pub fn merge_fragments(fragments: &[&[u8]], out: &mut Vec<u8>) -> Result<(), BatchError> {
    out.clear();
    let fail = |index: usize, error: Error| BatchError {
        index,
        doc_offset: 0,
        error,
    };
    let mut all: Vec<Vec<RawElement<'_>>> = Vec::with_capacity(fragments.len());
    for (i, f) in fragments.iter().enumerate() {
        let mut els = Vec::new();
        top_level_elements(f, &mut els).map_err(|e| fail(i, e))?;
        all.push(els);
    }
    let whole = |e: &RawElement<'_>| -> std::ops::Range<usize> {
        // The type byte and the key's NUL-terminated bytes come right before the value.
        e.value_start - e.key.len() - 2..e.value_end
    };
    out.extend_from_slice(&[0; 4]);
    if let (Some(last), Some(els)) = (fragments.last(), all.last()) {
        if let Some(id) = els.iter().find(|e| e.key == b"_id") {
            out.extend_from_slice(&last[whole(id)]);
        }
    }
    for (f, els) in fragments.iter().zip(&all) {
        for e in els {
            if e.key != b"_id" && e.key != b"splitEvent" {
                out.extend_from_slice(&f[whole(e)]);
            }
        }
    }
    out.push(0);
    if out.len() > MAX_DOCUMENT_BYTES {
        let at = fragments.len().saturating_sub(1);
        out.clear();
        return Err(fail(
            at,
            Error::new(
                ErrorKind::BadLength,
                0,
                "the reassembled split event exceeds the largest BSON document",
            ),
        ));
    }
    let len = (out.len() as u32).to_le_bytes();
    out[..4].copy_from_slice(&len);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document of `(key, int32)` elements.
    fn doc(els: &[(&str, i32)]) -> Vec<u8> {
        let mut d = vec![0; 4];
        for (k, v) in els {
            d.push(0x10);
            d.extend_from_slice(k.as_bytes());
            d.push(0);
            d.extend_from_slice(&v.to_le_bytes());
        }
        d.push(0);
        let n = d.len() as u32;
        d[..4].copy_from_slice(&n.to_le_bytes());
        d
    }

    #[test]
    fn last_id_first_then_fields_in_order() {
        let a = doc(&[("_id", 1), ("a", 2), ("splitEvent", 9), ("b", 3)]);
        let b = doc(&[("_id", 4), ("c", 5), ("splitEvent", 9)]);
        let mut out = Vec::new();
        merge_fragments(&[&a, &b], &mut out).unwrap();
        assert_eq!(out, doc(&[("_id", 4), ("a", 2), ("b", 3), ("c", 5)]));
    }

    #[test]
    fn no_id_and_no_fragments() {
        let a = doc(&[("a", 2)]);
        let mut out = Vec::new();
        merge_fragments(&[&a], &mut out).unwrap();
        assert_eq!(out, doc(&[("a", 2)]));
        merge_fragments(&[], &mut out).unwrap();
        assert_eq!(out, doc(&[]));
    }

    #[test]
    fn broken_fragment_is_named() {
        let a = doc(&[("a", 2)]);
        let b = &a[..a.len() - 1];
        let mut out = Vec::new();
        let e = merge_fragments(&[&a, b], &mut out).unwrap_err();
        assert_eq!(e.index, 1);
    }
}
