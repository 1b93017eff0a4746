//! The rewrite of a closed `compat` object into the order and shape js-bson's value has under
//! `JSON.stringify`: array-index keys first in ascending order, a duplicate key at its first
//! position with its last value, `$ref`/`$id`/`$db` objects as `DBRef`s. It runs only for an
//! object whose flags say so ([`super::needs_fixup`]), from the recording walk's member
//! records, after the object has been written in BSON order (design decision 4).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::compat::keys::array_index;
use crate::compat::{Member, F_DBREF_KEY, F_DOLLAR_OTHER, F_LOSSY, F_NO_DBREF, NONE};
use crate::element as el;
use crate::escape::write_quoted;

/// js-bson's `DBRef` constructor: a namespace that splits on `.` into exactly two parts is
/// `db.collection`; anything else is all collection. Returns `(db, collection)`.
pub(crate) fn split_namespace(ns: &[u8]) -> (Option<&[u8]>, &[u8]) {
    let mut dots = ns.iter().enumerate().filter(|(_, &b)| b == b'.');
    match (dots.next(), dots.next()) {
        (Some((i, _)), None) => (Some(&ns[..i]), &ns[i + 1..]),
        _ => (None, ns),
    }
}

/// A string value (type 0x02 or a symbol, 0x0E, which js-bson promotes to a string) read back
/// from the input, decoded as the walker decoded it.
fn string_at(input: &[u8], at: usize) -> Cow<'_, [u8]> {
    let len = crate::bytes::load_u32(input, at) as i32;
    let s = &input[at + 4..at + 4 + (len as usize - 1)];
    match String::from_utf8_lossy(s) {
        Cow::Borrowed(t) => Cow::Borrowed(t.as_bytes()),
        Cow::Owned(t) => Cow::Owned(t.into_bytes()),
    }
}

/// Whether a value of this type is a JS string: strings, and symbols unless `promoteValues` is
/// off (then a symbol is a `BSONSymbol`, which no `$ref`/`$db` check accepts).
fn is_string(vtype: u8, promote_values: bool) -> bool {
    vtype == el::STRING || (vtype == el::SYMBOL && promote_values)
}

struct Slot {
    /// Member that introduced the key (decides the position).
    first: usize,
    /// Member holding the last value, or `None` if that value is `undefined`.
    value: Option<usize>,
}

/// Rewrites the just-finished object whose `{` is at `out[out_start]` (its members written in
/// BSON order after it, its `F_*` bits in `flags`) into the order and shape `JSON.stringify` gives the js-bson value, and
/// closes it with `}`. `promote_values` is js-bson's option of that name.
#[inline(never)]
pub(crate) fn fixup(
    out: &mut Vec<u8>,
    input: &[u8],
    out_start: usize,
    flags: u8,
    members: &[Member],
    scratch: &mut Vec<u8>,
    promote_values: bool,
) {
    let body = out_start + 1;
    let close = out.len();
    scratch.clear();
    scratch.extend_from_slice(&out[body..close]);

    // Each written member's `"key":value` span, relative to `body`.
    let n = members.len();
    let mut spans = vec![(0usize, 0usize); n];
    let mut prev: Option<usize> = None;
    for (i, m) in members.iter().enumerate() {
        if m.out_key != NONE {
            if let Some(p) = prev {
                spans[p].1 = m.out_key - 1 - body; // before the comma
            }
            spans[i].0 = m.out_key - body;
            prev = Some(i);
        }
    }
    if let Some(p) = prev {
        spans[p].1 = close - body;
    }

    let lossy = flags & F_LOSSY != 0;
    let keys: Vec<Cow<'_, [u8]>> = members
        .iter()
        .map(|m| {
            let k = &input[m.key_start..m.key_end];
            if lossy {
                match String::from_utf8_lossy(k) {
                    Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
                    Cow::Owned(s) => Cow::Owned(s.into_bytes()),
                }
            } else {
                Cow::Borrowed(k)
            }
        })
        .collect();

    let mut slot_of: HashMap<&[u8], usize> = HashMap::with_capacity(n);
    let mut slots: Vec<Slot> = Vec::with_capacity(n);
    for (i, m) in members.iter().enumerate() {
        let value = (m.out_key != NONE).then_some(i);
        match slot_of.get(&keys[i][..]) {
            Some(&s) => slots[s].value = value,
            None => {
                slot_of.insert(&keys[i][..], slots.len());
                slots.push(Slot { first: i, value });
            }
        }
    }

    // V8 order: array-index keys ascending, then the rest in insertion order.
    let mut index_slots: Vec<(u32, usize)> = Vec::new();
    let mut named_slots: Vec<usize> = Vec::with_capacity(slots.len());
    for (s, slot) in slots.iter().enumerate() {
        match array_index(&keys[slot.first]) {
            Some(ix) => index_slots.push((ix, s)),
            None => named_slots.push(s),
        }
    }
    index_slots.sort_unstable();

    let value_of =
        |key: &[u8]| -> Option<Option<usize>> { slot_of.get(key).map(|&s| slots[s].value) };

    // DBRef promotion (js-bson `isDBRefLike`), judged on the final values.
    let mut dbref = None;
    if flags & F_DBREF_KEY != 0 && flags & (F_DOLLAR_OTHER | F_NO_DBREF) == 0 {
        let r = value_of(b"$ref");
        let id = value_of(b"$id");
        let db = value_of(b"$db");
        let ref_ok = matches!(r, Some(Some(m)) if is_string(members[m].vtype, promote_values));
        let id_ok = matches!(id, Some(Some(m)) if members[m].vtype != el::NULL);
        let db_ok = match db {
            None => true,
            Some(Some(m)) => is_string(members[m].vtype, promote_values),
            Some(None) => false,
        };
        if ref_ok && id_ok && db_ok {
            dbref = Some((
                r.flatten().unwrap_or(0),
                id.flatten().unwrap_or(0),
                db.flatten(),
            ));
        }
    }

    out.truncate(body);
    let mut first = true;
    let mut emit = |out: &mut Vec<u8>, bytes: &[u8]| {
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(bytes);
    };

    match dbref {
        None => {
            for &(_, s) in &index_slots {
                if let Some(m) = slots[s].value {
                    emit(out, &scratch[spans[m].0..spans[m].1]);
                }
            }
            for &s in &named_slots {
                if let Some(m) = slots[s].value {
                    emit(out, &scratch[spans[m].0..spans[m].1]);
                }
            }
        }
        Some((r, id, db_member)) => {
            // Object.assign({$ref, $id}, fields) then `$db` last; `__proto__` is lost to
            // [[Set]], and index keys still sort first.
            let ns = string_at(input, members[r].val_start);
            let (split_db, coll) = split_namespace(&ns);
            let db_text: Option<Cow<'_, [u8]>> = match split_db {
                Some(d) => Some(Cow::Borrowed(d)),
                None => db_member.map(|m| string_at(input, members[m].val_start)),
            };
            let is_field = |s: usize| {
                let k: &[u8] = &keys[slots[s].first];
                k != b"$ref" && k != b"$id" && k != b"$db" && k != b"__proto__"
            };
            for &(_, s) in &index_slots {
                if let Some(m) = slots[s].value {
                    emit(out, &scratch[spans[m].0..spans[m].1]);
                }
            }
            let mut tmp = Vec::with_capacity(coll.len() + 10);
            tmp.extend_from_slice(b"\"$ref\":");
            write_quoted(&mut tmp, coll);
            emit(out, &tmp);
            tmp.clear();
            tmp.extend_from_slice(b"\"$id\":");
            tmp.extend_from_slice(&scratch[members[id].out_val - body..spans[id].1]);
            emit(out, &tmp);
            for &s in &named_slots {
                if is_field(s) {
                    if let Some(m) = slots[s].value {
                        emit(out, &scratch[spans[m].0..spans[m].1]);
                    }
                }
            }
            if let Some(d) = db_text {
                tmp.clear();
                tmp.extend_from_slice(b"\"$db\":");
                write_quoted(&mut tmp, &d);
                emit(out, &tmp);
            }
        }
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces() {
        assert_eq!(
            split_namespace(b"db.coll"),
            (Some(&b"db"[..]), &b"coll"[..])
        );
        assert_eq!(split_namespace(b"coll"), (None, &b"coll"[..]));
        assert_eq!(split_namespace(b"a.b.c"), (None, &b"a.b.c"[..]));
        assert_eq!(split_namespace(b".x"), (Some(&b""[..]), &b"x"[..]));
    }
}
