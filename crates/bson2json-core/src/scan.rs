//! Finding NUL terminators of BSON cstrings (keys, regex pattern and flags).
//!
//! [`find_nul`] reads eight bytes at a time (SWAR: "SIMD within a register") and is held equal
//! to its plain twin [`find_nul_plain`] by unit tests, property tests and a fuzz target.
//! Both are safe code: the word loads go through `u64::from_le_bytes` on in-bounds slices, so
//! there is no over-read (the RUSTSEC-2019-0008 class) and the result does not depend on the
//! machine's byte order (the loads are explicitly little-endian on every target).

#[cfg(target_arch = "x86_64")]
use crate::bytes::block16;
use crate::bytes::load_u64;
#[cfg(target_arch = "x86_64")]
use crate::lanes::lanes16;
use crate::lanes::{escape_lanes, zero_lanes, HI};

/// Index (relative to `bytes`) of the first NUL byte, or `None`. SWAR version.
#[inline]
pub fn find_nul(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        // `chunks_exact(8)` yields 8-byte slices, so the conversion cannot fail.
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([1; 8]));
        let m = zero_lanes(word);
        if m != 0 {
            // Little-endian load: byte k of the slice is lane k (bits 8k..8k+7).
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == 0)
        .map(|p| i + p)
}

/// A key (cstring) of at most 15 bytes read in one go: two little-endian words from its first
/// byte, with the lanes at and after the NUL cleared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortKey {
    /// Key length in bytes (0..=15).
    pub len: usize,
    /// Bytes 0..8 of the key (zero past its end).
    pub lo: u64,
    /// Bytes 8..16 of the key (zero past its end).
    pub hi: u64,
    /// True if no byte of the key needs JSON escaping or is non-ASCII: then the key's JSON
    /// text is the raw bytes between quotes, and it is valid UTF-8.
    pub plain: bool,
}

/// Reads the cstring starting at `at` when its NUL lies among the 16 bytes `at..at + 16`
/// (which must be in bounds): one pass finds the NUL, checks for bytes that need escaping or
/// are non-ASCII, and keeps the key's bytes for hashing. `None` for longer keys. Held equal to
/// [`find_nul_plain`] and the escape table by tests and the `swar` fuzz target.
#[inline(always)]
pub fn short_key(bytes: &[u8], at: usize) -> Option<ShortKey> {
    #[cfg(target_arch = "x86_64")]
    {
        let block: &[u8; 16] = block16(bytes, at);
        let (nul, special, _) = lanes16(block);
        short_key_masks(nul, special, load_u64(block, 0), load_u64(block, 8))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        short_key_swar(bytes, at)
    }
}

/// Index of the first NUL among the 16 bytes `bytes[at..at + 16]` (which must be in bounds),
/// or `None`: one vector compare on x86-64, [`find_nul`] elsewhere (its twin in tests).
#[inline(always)]
pub fn nul_in_16(bytes: &[u8], at: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let (nul, _, _) = lanes16(block16(bytes, at));
        if nul == 0 {
            None
        } else {
            Some(nul.trailing_zeros() as usize)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        find_nul(&bytes[at..at + 16])
    }
}

/// [`short_key`] computed with 64-bit word arithmetic only (SWAR): the implementation on
/// targets without the SSE2 path, and its twin in tests and the `swar` fuzz target.
#[inline(always)]
pub fn short_key_swar(bytes: &[u8], at: usize) -> Option<ShortKey> {
    let w = &bytes[at..at + 16];
    short_key_words(load_u64(w, 0), load_u64(w, 8))
}

/// A [`ShortKey`] from the NUL and special lane masks of 16 bytes and the same bytes as two
/// little-endian words (lanes past the NUL are cleared here).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn short_key_masks(nul: u32, special: u32, w0: u64, w1: u64) -> Option<ShortKey> {
    if nul == 0 {
        return None;
    }
    let len = nul.trailing_zeros() as usize; // <= 15
    let keep = &KEEP[len];
    Some(ShortKey {
        len,
        lo: w0 & keep[0],
        hi: w1 & keep[1],
        // No special lane before the NUL: the first special lane (lane 16 if none, so the
        // count never sees zero and needs no fix-up) is at or after it.
        plain: (special | 1 << 16).trailing_zeros() as usize >= len,
    })
}

/// `KEEP[n]`: masks keeping the first `n` byte lanes of two little-endian words (a table
/// lookup is cheaper than the variable 128-bit shift that builds them).
#[cfg(target_arch = "x86_64")]
static KEEP: [[u64; 2]; 17] = {
    let mut t = [[0u64; 2]; 17];
    let mut n = 0;
    while n <= 16 {
        let mut lane = 0;
        while lane < n {
            t[n][lane / 8] |= 0xFF << (8 * (lane % 8));
            lane += 1;
        }
        n += 1;
    }
    t
};

/// [`short_key`] for a key that starts within the last 16 bytes of `bytes` (which must be at
/// least 16 long): the 16 bytes ending at `bytes.len()` are read and shifted down so the key
/// starts in lane 0; the lanes past the end read as NUL. A NUL found there is not a real
/// terminator, so callers must check that the key ends before the end of its document.
#[inline(always)]
pub fn short_key_tail(bytes: &[u8], at: usize) -> Option<ShortKey> {
    let from = bytes.len() - 16;
    debug_assert!(at >= from);
    let x = u128::from(load_u64(bytes, from)) | (u128::from(load_u64(bytes, from + 8)) << 64);
    let shift = at - from; // < 16
    let x = x >> (8 * shift);
    #[cfg(target_arch = "x86_64")]
    {
        let (nul, special, _) = lanes16(block16(bytes, from));
        // Lanes shifted in from past the end read as NUL (and not special).
        let past_end = (0xFFFF_0000u32 >> shift) & 0xFFFF;
        short_key_masks(
            (nul >> shift) | past_end,
            special >> shift,
            x as u64,
            (x >> 64) as u64,
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        short_key_words(x as u64, (x >> 64) as u64)
    }
}

#[inline(always)]
fn short_key_words(w0: u64, w1: u64) -> Option<ShortKey> {
    let z0 = zero_lanes(w0);
    let len = if z0 != 0 {
        (z0.trailing_zeros() / 8) as usize
    } else {
        let z1 = zero_lanes(w1);
        if z1 == 0 {
            return None;
        }
        8 + (z1.trailing_zeros() / 8) as usize
    };
    // Masks keeping the lanes before the NUL. A flag in a lane above a flagged lane may be a
    // borrow artefact, but the NUL lane itself is always flagged (0 < 0x20), so lanes below
    // the NUL are exact.
    let (m0, m1) = if len >= 8 {
        (u64::MAX, (1u64 << (8 * (len - 8))) - 1)
    } else {
        ((1u64 << (8 * len)) - 1, 0)
    };
    let special = ((escape_lanes(w0) | (w0 & HI)) & m0) | ((escape_lanes(w1) | (w1 & HI)) & m1);
    Some(ShortKey {
        len,
        lo: w0 & m0,
        hi: w1 & m1,
        plain: special == 0,
    })
}

/// Index of the first NUL byte, or `None`: the plain byte-by-byte twin of [`find_nul`].
#[inline]
pub fn find_nul_plain(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_plain_on_every_position_and_length() {
        for len in 0..40 {
            for nul in 0..=len {
                let mut v = vec![b'a'; len];
                if nul < len {
                    v[nul] = 0;
                }
                assert_eq!(find_nul(&v), find_nul_plain(&v), "len {len} nul {nul}");
            }
        }
    }

    #[test]
    fn short_key_tail_reads_as_zero_padded() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for len in 16..48 {
            for _ in 0..if cfg!(miri) { 1 } else { 2_000 } {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        [0u8, b'a', b'"', 0x80, 0x1f, b'z'][(seed % 6) as usize]
                    })
                    .collect();
                for at in len - 16..len {
                    let mut padded = bytes[at..].to_vec();
                    padded.resize(16, 0);
                    assert_eq!(
                        short_key_tail(&bytes, at),
                        short_key(&padded, 0),
                        "{bytes:?} at {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn short_key_agrees_with_plain_scans() {
        let specials = [
            0u8, 1, 0x1f, b'"', b'\\', 0x7f, 0x80, 0xc3, 0xff, b'a', b'0',
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..if cfg!(miri) { 200 } else { 200_000 } {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut buf = [b'k'; 16];
            for (i, b) in buf.iter_mut().enumerate() {
                let r = (seed >> (i * 4)) & 15;
                if r < specials.len() as u64 {
                    *b = specials[r as usize];
                }
            }
            let plain = find_nul_plain(&buf);
            assert_eq!(short_key(&buf, 0), short_key_swar(&buf, 0), "{buf:?}");
            assert_eq!(nul_in_16(&buf, 0), plain, "{buf:?}");
            match short_key(&buf, 0) {
                None => assert_eq!(plain, None, "{buf:?}"),
                Some(k) => {
                    assert_eq!(Some(k.len), plain, "{buf:?}");
                    let key = &buf[..k.len];
                    let want_plain = key
                        .iter()
                        .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\');
                    assert_eq!(k.plain, want_plain, "{buf:?}");
                    let mut lo = [0u8; 8];
                    let mut hi = [0u8; 8];
                    for (i, &b) in key.iter().enumerate() {
                        if i < 8 {
                            lo[i] = b;
                        } else {
                            hi[i - 8] = b;
                        }
                    }
                    assert_eq!(
                        (k.lo, k.hi),
                        (u64::from_le_bytes(lo), u64::from_le_bytes(hi))
                    );
                }
            }
        }
    }

    #[test]
    fn high_bytes_are_not_zero() {
        // 0x80 and 0x01 lanes are the classic false-positive traps for has-zero tricks.
        let v = [0x80, 0x01, 0xff, 0x80, 0x01, 0x7f, 0x81, 0x80, 0x00, 0x01];
        assert_eq!(find_nul(&v), Some(8));
        let v = [0x01u8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00];
        assert_eq!(find_nul(&v), Some(1));
        let v = [0x00u8, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01];
        assert_eq!(find_nul(&v), Some(0));
    }
}
