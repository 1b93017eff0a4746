//! Finding NUL terminators of BSON cstrings (keys, regex pattern and flags).
//!
//! [`find_nul`] reads eight bytes at a time (SWAR: "SIMD within a register") and is held equal
//! to its plain twin [`find_nul_plain`] by unit tests, property tests and a fuzz target.
//! Both are safe code: the word loads go through `u64::from_le_bytes` on in-bounds slices, so
//! there is no over-read (the RUSTSEC-2019-0008 class) and the result does not depend on the
//! machine's byte order (the loads are explicitly little-endian on every target).

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Returns a word with the high bit set in every byte lane of `x` that is zero, and possibly
/// in lanes *above* a zero lane (borrow propagation), never in lanes below the first zero.
/// The lowest set lane is therefore always the first zero byte (Mycroft's `haszero`).
#[inline(always)]
fn zero_lanes(x: u64) -> u64 {
    x.wrapping_sub(LO) & !x & HI
}

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
