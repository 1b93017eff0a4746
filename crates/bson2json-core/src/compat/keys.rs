//! `compat`'s key bookkeeping: what a key says about its object (array index, `$` keys), its
//! hash, the per-object Bloom filter that spots possible duplicates, and the checks that
//! settle them: at once from the member records (recording walk) or by reading the object's
//! earlier keys back from the input (lean walk, through `raw`), or exactly when the object
//! closes. Design decision 4 gives the reasons; the thresholds below are measured there.
//!
//! Invariant: equal keys hash equal, from the first sixteen bytes that [`ShortKey`] carries
//! or from the input, so the walker's fast path and the helpers here agree on every key.

use crate::bytes::load_u64;
use crate::compat::{Member, F_DBREF_KEY, F_DOLLAR_OTHER, F_DUP, F_INDEX, F_MAYBE_DUP, SCAN_LIMIT};
use crate::raw::Elements;
use crate::scan::ShortKey;

/// The `F_*` bits a key sets by itself: `F_INDEX` for an array-index key, `F_DBREF_KEY` for
/// `$ref`, `$id` and `$db`, `F_DOLLAR_OTHER` for any other `$` key.
#[inline]
pub(crate) fn key_flags(key: &[u8]) -> u8 {
    match key.first() {
        Some(&c) if c.wrapping_sub(b'0') < 10 && array_index(key).is_some() => F_INDEX,
        Some(&b'$') => {
            if key == b"$ref" || key == b"$id" || key == b"$db" {
                F_DBREF_KEY
            } else {
                F_DOLLAR_OTHER
            }
        }
        _ => 0,
    }
}

/// The hash of a key: from its [`ShortKey`] words when the walker read it in one 16-byte
/// read, else from the input.
#[inline(always)]
pub(crate) fn hash_of(input: &[u8], ks: usize, ke: usize, short: Option<ShortKey>) -> u64 {
    match short {
        Some(ShortKey { lo, hi, len, .. }) => mix_key_hash(lo, hi, 0, len),
        None => key_hash(input, ks, ke - ks),
    }
}

/// A cheap 64-bit hash of a key from its first sixteen bytes (zero-padded), its last eight
/// when longer, and its length, mixed by a multiply so the top bits depend on all of them.
/// Equal keys hash equal; collisions are resolved by comparing bytes. [`ShortKey`] carries the
/// same first-sixteen-byte words, so both paths agree.
#[inline(always)]
pub(crate) fn mix_key_hash(lo: u64, mid: u64, tail: u64, n: usize) -> u64 {
    (lo ^ mid.rotate_left(23) ^ tail.rotate_left(47) ^ ((n as u64) << 56))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// [`mix_key_hash`] of `input[ks..ks + n]`: its first sixteen bytes as two word loads with
/// the bytes past the key masked off where sixteen bytes are readable from `ks`, else copied
/// into a zeroed block ([`key_hash_plain`], the twin the tests hold it to).
#[inline]
pub(crate) fn key_hash(input: &[u8], ks: usize, n: usize) -> u64 {
    if ks + 16 > input.len() {
        return key_hash_plain(input, ks, n);
    }
    // The low `bytes` bytes of `w` (little-endian: the first ones), the rest zero.
    let keep = |w: u64, bytes: usize| {
        if bytes >= 8 {
            w
        } else {
            w & ((1u64 << (8 * bytes)) - 1)
        }
    };
    let lo = keep(load_u64(input, ks), n);
    let mid = keep(load_u64(input, ks + 8), n.saturating_sub(8));
    let tail = if n > 16 {
        load_u64(input, ks + n - 8)
    } else {
        0
    };
    mix_key_hash(lo, mid, tail, n)
}

/// [`key_hash`] through a zeroed copy of the key's first sixteen bytes.
#[inline(never)]
pub(crate) fn key_hash_plain(input: &[u8], ks: usize, n: usize) -> u64 {
    let mut words = [0u8; 16];
    let k = n.min(16);
    words[..k].copy_from_slice(&input[ks..ks + k]);
    let (lo, mid) = (load_u64(&words, 0), load_u64(&words, 8));
    let tail = if n > 16 {
        load_u64(input, ks + n - 8)
    } else {
        0
    };
    mix_key_hash(lo, mid, tail, n)
}

/// Adds the key hash `h` to an object's Bloom filter: bit `h >> 58` of the first word and bit
/// `(h >> 52) & 63` of the second. Returns true if both were already set (a possible
/// duplicate). Two bits in two words cut the false hits of one 64-bit word for objects of a
/// dozen keys from about one per object to about one in ten, and a false hit costs a lean walk
/// a scan of the object's earlier keys.
#[inline(always)]
pub(crate) fn bloom_insert(bloom: &mut [u64; 2], h: u64) -> bool {
    let (b0, b1) = (1u64 << (h >> 58), 1u64 << ((h >> 52) & 63));
    let hit = bloom[0] & b0 != 0 && bloom[1] & b1 != 0;
    bloom[0] |= b0;
    bloom[1] |= b1;
    hit
}

/// A key whose Bloom bits are already set in its object: settles small objects with a scan of
/// their hashes (`F_DUP`), and marks larger ones for one exact check when they close.
#[inline(never)]
pub(crate) fn bloom_hit(mine: &[Member], input: &[u8], h: u64, key: &[u8]) -> u8 {
    if mine.len() >= SCAN_LIMIT {
        F_MAYBE_DUP
    } else if mine
        .iter()
        .any(|m| m.hash == h && &input[m.key_start..m.key_end] == key)
    {
        F_DUP
    } else {
        0
    }
}

/// A lean Bloom hit in an object with fewer members reads the earlier keys back at once;
/// larger objects are checked once, when they close. Lower than [`SCAN_LIMIT`]
/// (the recording walk's, whose check scans hashes already in hand): reading keys back from
/// the input costs more per key, and a few rescans of a 30-key object cost more than one
/// pass over all of it (measured on update events, whose `updatedFields` has ~60 keys:
/// design decision 4).
pub(crate) const LEAN_SCAN_LIMIT: usize = 16;

/// Lean `compat`'s answer to a Bloom hit on the key `input[ks..ke]` of the open object whose
/// elements start at `first` (its terminator at `end`), with `count` members so far: objects
/// with fewer than [`LEAN_SCAN_LIMIT`] members read their earlier keys back from the input
/// (`F_DUP` if one is equal), larger ones are marked for one exact check when they close.
/// The earlier elements were walked already, so reading them back cannot fail; if the bytes
/// ever disagreed, `F_DUP` hands the document to the recording walk, which reports whatever
/// the walk reports.
#[inline(never)]
pub(crate) fn lean_bloom_hit(
    input: &[u8],
    first: usize,
    end: usize,
    count: u32,
    ks: usize,
    ke: usize,
) -> u8 {
    if count as usize >= LEAN_SCAN_LIMIT {
        return F_MAYBE_DUP;
    }
    let key = &input[ks..ke];
    // Only the elements before this key's (its value is not checked yet).
    for e in Elements::within(input, first, (ks - 1).min(end)) {
        match e {
            Ok(e) if e.key == key => return F_DUP,
            Ok(_) => {}
            Err(_) => return F_DUP,
        }
    }
    0
}

/// Lean `compat`'s duplicate check of the closed object whose elements run from `first` to its
/// terminator at `end` (marked `F_MAYBE_DUP`): its keys' hashes read back from the input into
/// `hashes` (scratch), then [`equal_hashes`]. True if two are equal, which hands the document
/// to the recording walk: equal keys hash equal, and that walk compares the keys themselves,
/// so a collision of different keys costs only that walk.
#[inline(never)]
pub(crate) fn lean_has_duplicate(
    input: &[u8],
    first: usize,
    end: usize,
    hashes: &mut Vec<u64>,
) -> bool {
    hashes.clear();
    for e in Elements::within(input, first, end) {
        let Ok(e) = e else { return true };
        let (ks, ke) = e.key_range();
        hashes.push(key_hash(input, ks, ke - ks));
    }
    equal_hashes(hashes)
}

/// Whether two of `hashes` are equal: an open-addressing table of the hashes themselves,
/// kept after them in the same vector (0 marks an empty slot; a hash of 0 is tracked apart).
/// O(n); no allocation once warm.
pub(crate) fn equal_hashes(hashes: &mut Vec<u64>) -> bool {
    let n = hashes.len();
    if n < 2 {
        return false;
    }
    let size = (2 * n).next_power_of_two();
    hashes.resize(n + size, 0);
    let (keys, table) = hashes.split_at_mut(n);
    let mask = size - 1;
    let mut zero = false;
    for &h in keys.iter() {
        if h == 0 {
            if zero {
                return true;
            }
            zero = true;
            continue;
        }
        let mut slot = (h >> 32) as usize & mask;
        loop {
            let e = table[slot];
            if e == 0 {
                table[slot] = h;
                break;
            }
            if e == h {
                return true;
            }
            slot = (slot + 1) & mask;
        }
    }
    false
}

/// Exact duplicate check over the raw keys of one object's members, with an open-addressing
/// table of member indices (`table` is reusable scratch). O(n); no allocation once warm.
#[inline(never)]
pub(crate) fn has_duplicate(input: &[u8], members: &[Member], table: &mut Vec<u32>) -> bool {
    let n = members.len();
    if n < 2 {
        return false;
    }
    let size = (n * 2).next_power_of_two();
    table.clear();
    table.resize(size, u32::MAX);
    let mask = size - 1;
    for (i, m) in members.iter().enumerate() {
        let key = &input[m.key_start..m.key_end];
        let mut slot = (m.hash >> 32) as usize & mask;
        loop {
            let e = table[slot];
            if e == u32::MAX {
                table[slot] = i as u32;
                break;
            }
            let o = &members[e as usize];
            if o.hash == m.hash && &input[o.key_start..o.key_end] == key {
                return true;
            }
            slot = (slot + 1) & mask;
        }
    }
    false
}

/// The value of `key` as a V8 array index: canonical decimal (no sign, no leading zeros other
/// than "0" itself) and at most 2^32 - 2.
pub(crate) fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key[0] == b'0' && key.len() > 1) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in key {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    if v <= 4_294_967_294 {
        Some(v as u32)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_indices() {
        assert_eq!(array_index(b"0"), Some(0));
        assert_eq!(array_index(b"10"), Some(10));
        assert_eq!(array_index(b"4294967294"), Some(4_294_967_294));
        for k in [
            &b"4294967295"[..],
            b"01",
            b"-1",
            b"1.5",
            b" 1",
            b"",
            b"9007199254740991",
        ] {
            assert_eq!(array_index(k), None, "{k:?}");
        }
    }

    #[test]
    fn equal_hashes_finds_exactly_the_repeats() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            seed
        };
        for n in 0..80 {
            // Distinct values (including 0 and values that share their slot bits), then the
            // same with each position repeated once somewhere else.
            let mut v: Vec<u64> = (0..n)
                .map(|i| {
                    if i % 7 == 3 {
                        (i as u64) << 40
                    } else {
                        next() | 1
                    }
                })
                .collect();
            if n > 5 {
                v[5] = 0;
            }
            let mut sorted = v.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let distinct = sorted.len() == v.len();
            let mut w = v.clone();
            assert_eq!(equal_hashes(&mut w), !distinct, "n {n}");
            if distinct {
                for i in 0..n {
                    let mut d = v.clone();
                    d.insert((i * 31 + 7) % (n + 1), v[i]);
                    assert!(equal_hashes(&mut d), "n {n} i {i}");
                }
            }
        }
    }

    #[test]
    fn key_hash_matches_its_twin_and_the_short_key() {
        // Every key length 0-40 at every start, with bytes after the key that differ from
        // the zero padding, against the zeroed copy and, for keys the walker reads as a
        // `ShortKey`, against the hash the fast path computes from it.
        let mut input: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) | 0x41).collect();
        input[63] = 0;
        for ks in 0..input.len() {
            for n in 0..=40.min(input.len() - ks) {
                let h = key_hash(&input, ks, n);
                assert_eq!(h, key_hash_plain(&input, ks, n), "ks {ks} n {n}");
                let mut doc = input[ks..ks + n].to_vec();
                if doc.contains(&0) {
                    continue;
                }
                doc.push(0);
                doc.resize(doc.len() + 16, 1);
                if let Some(k) = crate::scan::short_key(&doc, 0).filter(|k| k.len == n) {
                    assert_eq!(h, mix_key_hash(k.lo, k.hi, 0, k.len), "ks {ks} n {n}");
                }
            }
        }
    }
}
