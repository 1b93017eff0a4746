//! A MongoDB cursor reply's `cursor` document (`{id, ns, firstBatch|nextBatch,
//! postBatchResumeToken}`, from `find`, `aggregate` and `getMore`), read in place: its fields'
//! ranges and the ranges of its batch's documents, which are transcoded where they lie.

use crate::bytes::load_i32;
use crate::element as el;
use crate::error::{Error, ErrorKind};
use crate::raw::top_level_elements;

/// Where the parts of a cursor reply (`{id, ns, firstBatch|nextBatch, postBatchResumeToken}`,
/// the `cursor` field of a `find`/`aggregate`/`getMore` reply) lie in its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CursorParts {
    /// The cursor id (0 when the cursor is exhausted).
    pub id: i64,
    /// Byte range of the `ns` string's content, if present.
    pub ns: Option<(usize, usize)>,
    /// Byte range of the `postBatchResumeToken` document, if present.
    pub post_batch_resume_token: Option<(usize, usize)>,
    /// Byte ranges of the batch's documents, in order.
    pub docs: Vec<(usize, usize)>,
}

/// Reads a cursor reply document in place: the top-level fields it needs, and the ranges of
/// the documents in its `firstBatch` or `nextBatch` array (each must be an embedded document).
///
/// A document without an `id` (int64 or int32) or without a `firstBatch`/`nextBatch` array is
/// not a cursor: [`ErrorKind::NotACursor`] at offset 0 (after any framing error).
pub fn cursor_parts(cursor: &[u8], parts: &mut CursorParts) -> Result<(), Error> {
    parts.docs.clear();
    parts.ns = None;
    parts.post_batch_resume_token = None;
    parts.id = 0;
    let mut fields = Vec::new();
    top_level_elements(cursor, &mut fields)?;
    let mut items = Vec::new();
    let (mut has_id, mut has_batch) = (false, false);
    for f in &fields {
        let (v, e) = (f.value_start, f.value_end);
        match (f.key, f.element_type) {
            (b"id", el::INT64) => {
                has_id = true;
                parts.id = i64::from_le_bytes(cursor[v..v + 8].try_into().unwrap_or([0; 8]));
            }
            (b"id", el::INT32) => {
                has_id = true;
                parts.id = i64::from(load_i32(cursor, v));
            }
            (b"ns", el::STRING) => parts.ns = Some((v + 4, e - 1)),
            (b"postBatchResumeToken", el::DOCUMENT) => parts.post_batch_resume_token = Some((v, e)),
            (b"firstBatch" | b"nextBatch", el::ARRAY) => {
                has_batch = true;
                top_level_elements(&cursor[v..e], &mut items).map_err(|x| x.shifted(v))?;
                for it in &items {
                    if it.element_type != el::DOCUMENT {
                        return Err(Error::new(
                            ErrorKind::UnknownType,
                            v + it.start(),
                            "batch element is not a document",
                        ));
                    }
                    parts.docs.push((v + it.value_start, v + it.value_end));
                }
            }
            _ => {}
        }
    }
    if !(has_id && has_batch) {
        parts.docs.clear();
        return Err(Error::new(
            ErrorKind::NotACursor,
            0,
            "not a cursor document (no id or no firstBatch/nextBatch array; pass the reply's \
             cursor field)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A1: [u8; 12] = [12, 0, 0, 0, 0x10, b'a', 0, 1, 0, 0, 0, 0];

    /// A BSON document of `(type, key, value bytes)` elements.
    fn doc(elements: &[(u8, &str, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (t, k, v) in elements {
            body.push(*t);
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v);
        }
        let mut d = ((body.len() + 5) as i32).to_le_bytes().to_vec();
        d.extend_from_slice(&body);
        d.push(0);
        d
    }

    #[test]
    fn cursor_parts_reads_a_cursor_and_rejects_what_is_not_one() {
        let batch = doc(&[(0x03, "0", &A1), (0x03, "1", &A1)]);
        let ns = [&6i32.to_le_bytes()[..], b"db.co\0"].concat();
        let id = 7i64.to_le_bytes();
        let token = doc(&[(0x02, "_data", &[&2i32.to_le_bytes()[..], b"x\0"].concat())]);
        let cursor = doc(&[
            (0x04, "firstBatch", &batch),
            (0x12, "id", &id),
            (0x02, "ns", &ns),
            (0x03, "postBatchResumeToken", &token),
        ]);
        let mut parts = CursorParts::default();
        cursor_parts(&cursor, &mut parts).unwrap();
        assert_eq!(parts.id, 7);
        let (s, e) = parts.ns.unwrap();
        assert_eq!(&cursor[s..e], b"db.co");
        let (s, e) = parts.post_batch_resume_token.unwrap();
        assert_eq!(&cursor[s..e], &token[..]);
        assert_eq!(parts.docs.len(), 2);
        for &(s, e) in &parts.docs {
            assert_eq!(&cursor[s..e], &A1[..]);
        }
        // An int32 id and an empty nextBatch are a cursor too.
        let small = doc(&[
            (0x10, "id", &0i32.to_le_bytes()),
            (0x04, "nextBatch", &doc(&[])),
        ]);
        cursor_parts(&small, &mut parts).unwrap();
        assert_eq!((parts.id, parts.docs.len()), (0, 0));
        // The whole reply ({cursor: {...}, ok: 1}), no id, no batch, a batch of the wrong
        // type, an empty document: not a cursor.
        let reply = doc(&[(0x03, "cursor", &cursor), (0x01, "ok", &1f64.to_le_bytes())]);
        let no_id = doc(&[(0x04, "firstBatch", &batch)]);
        let no_batch = doc(&[(0x12, "id", &id)]);
        let wrong_batch = doc(&[(0x12, "id", &id), (0x03, "firstBatch", &batch)]);
        let string_id = doc(&[(0x02, "id", &ns), (0x04, "firstBatch", &batch)]);
        for bad in [reply, no_id, no_batch, wrong_batch, string_id, doc(&[])] {
            let e = cursor_parts(&bad, &mut parts).unwrap_err();
            assert_eq!(
                (e.kind(), e.offset(), e.code()),
                (ErrorKind::NotACursor, 0, "BSON_NOT_A_CURSOR")
            );
            assert!(parts.docs.is_empty());
        }
        // A framing error comes first.
        let e = cursor_parts(&cursor[..cursor.len() - 1], &mut parts).unwrap_err();
        assert_ne!(e.kind(), ErrorKind::NotACursor);
    }
}
