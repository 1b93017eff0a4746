//! Integers as text: eight digits per step with SWAR multiply-shift arithmetic and a
//! branch-free digit count (ARCHITECTURE.md, design decisions 7 and 8); `itoa` is the plain
//! twin in tests.

pub(crate) static DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// The eight decimal digits of `v < 10^8` as byte values 0-9, most significant digit in the
/// lowest byte (so `to_le_bytes` gives them in reading order). SWAR: split into two 4-digit
/// lanes, each into two 2-digit lanes, each into two digits, with multiply-shift division
/// (`x * 10486 >> 20 == x / 100` for `x < 10^4`, `x * 103 >> 10 == x / 10` for `x < 100`;
/// both checked exhaustively by a test). No lane can carry into its neighbour.
#[inline(always)]
fn eight_digits(v: u32) -> u64 {
    debug_assert!(v < 100_000_000);
    let v = u64::from(v);
    let x = (v / 10_000) | ((v % 10_000) << 32); // [abcd][efgh], 32-bit lanes
    let hundreds = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F; // [ab][ef]
    let y = hundreds | ((x - hundreds * 100) << 16); // [ab][cd][ef][gh], 16-bit lanes
    let tens = ((y * 103) >> 10) & 0x000F_000F_000F_000F; // [a][c][e][g]
    tens | ((y - tens * 10) << 8) // [a][b][c][d][e][f][g][h], 8-bit lanes
}

/// The digits of `v < 10^8` without leading zeros (`0` for zero) as a little-endian word, the
/// first digit in the low byte, and how many there are.
#[inline(always)]
pub(crate) fn digits_word(v: u32) -> (u64, usize) {
    let d = eight_digits(v);
    // Leading zero digits (low bytes), at most seven: the last digit always stays, so zero
    // is `0`. No branch on the number of digits, which varies unpredictably in mixed data.
    let lead = ((d | 1 << 56).trailing_zeros() / 8) as usize;
    ((d + ASCII_ZEROS) >> (8 * lead), 8 - lead)
}

/// Appends the eight digits of `v < 10^8`, leading zeros included; needs 8 bytes of spare
/// capacity.
#[inline(always)]
fn put_digits8(out: &mut Vec<u8>, v: u32) {
    crate::sink::put_word(out, eight_digits(v) + ASCII_ZEROS, 8);
}

/// Appends the decimal digits of `v`: eight digits at a time (SWAR, `eight_digits`) written
/// straight into reserved space. [`write_u64_plain`] is its twin.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    write_digits(out, false, v);
}

/// Appends `-` if `neg`, then the digits of `u`. Up to sixteen digits (every int32, most
/// int64s) take one capacity check: the leading word without its zeros, then eight digits.
#[inline]
fn write_digits(out: &mut Vec<u8>, neg: bool, u: u64) {
    put_digits(out, neg, u);
}

/// The body of [`write_digits`], inlined where it is called: into `write_digits` itself (the
/// out-of-line writer most call sites share) and into the walker's loop over the numbers of
/// an array ([`write_i64_inline`]).
#[inline(always)]
fn put_digits(out: &mut Vec<u8>, neg: bool, u: u64) {
    if u < 100_000_000 {
        let (word, n) = digits_word(u as u32);
        crate::sink::put_signed_words(out, neg, word, n, None);
    } else if u < 10_000_000_000_000_000 {
        let (word, n) = digits_word((u / 100_000_000) as u32);
        let low = eight_digits((u % 100_000_000) as u32) + ASCII_ZEROS;
        crate::sink::put_signed_words(out, neg, word, n, Some((low, 8)));
    } else {
        let rest = u % 10_000_000_000_000_000;
        let (word, n) = digits_word((u / 10_000_000_000_000_000) as u32); // < 1845
        let mid = eight_digits((rest / 100_000_000) as u32) + ASCII_ZEROS;
        crate::sink::put_signed_words(out, neg, word, n, Some((mid, 8)));
        out.reserve(8);
        put_digits8(out, (rest % 100_000_000) as u32);
    }
}

/// The plain twin of [`write_u64`]: two digits at a time from the most significant end.
pub fn write_u64_plain(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends the decimal text of `v` (with a `-` when negative).
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    write_digits(out, v < 0, v.unsigned_abs());
}

/// [`write_i64`] inlined into its caller: for the walker's array-number loop alone, where
/// number-heavy documents spend their time and the call's register saves are a fifth of an
/// integer's cost. Elsewhere the shared out-of-line writer keeps the walker small.
#[inline(always)]
pub(crate) fn write_i64_inline(out: &mut Vec<u8>, v: i64) {
    put_digits(out, v < 0, v.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_match_itoa() {
        let mut seed = 1u64;
        let mut vals = vec![
            0i64,
            1,
            -1,
            9,
            10,
            99,
            100,
            i64::MAX,
            i64::MIN,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
        ];
        for _ in 0..if cfg!(miri) { 100 } else { 100_000 } {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            vals.push((seed as i64) >> (seed % 64));
        }
        for v in vals {
            let mut a = Vec::new();
            write_i64(&mut a, v);
            assert_eq!(a, itoa::Buffer::new().format(v).as_bytes());
            let mut c = b"x".to_vec(); // the inlined instance, after other output
            write_i64_inline(&mut c, v);
            assert_eq!(
                c[1..],
                *itoa::Buffer::new().format(v).as_bytes(),
                "inline {v}"
            );
            let mut b = Vec::new();
            write_u64(&mut b, v as u64);
            assert_eq!(b, itoa::Buffer::new().format(v as u64).as_bytes());
        }
    }

    #[test]
    fn eight_digits_exhaustive() {
        // Every v < 10^8 (a sample under miri): the SWAR digits against division, and
        // write_u64 against its twin.
        let step = if cfg!(miri) { 999_983 } else { 1 };
        for v in (0..100_000_000u32).step_by(step) {
            let d = eight_digits(v).to_le_bytes();
            let mut w = v;
            for i in (0..8).rev() {
                assert_eq!(u32::from(d[i]), w % 10, "{v}");
                w /= 10;
            }
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for v in (0..100_000_000u64)
            .step_by(997 * step)
            .chain([99_999_999, 100_000_000, u64::MAX])
        {
            a.clear();
            b.clear();
            write_u64(&mut a, v);
            write_u64_plain(&mut b, v);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn u64_digit_boundaries() {
        let mut p = 1u64;
        loop {
            for v in [p - 1, p, p + 1] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                write_u64(&mut a, v);
                write_u64_plain(&mut b, v);
                assert_eq!(a, b, "{v}");
                assert_eq!(a, v.to_string().as_bytes());
                if let Ok(i) = i64::try_from(v) {
                    for i in [i, -i] {
                        a.clear();
                        write_i64(&mut a, i);
                        assert_eq!(a, i.to_string().as_bytes(), "{i}");
                    }
                }
            }
            match p.checked_mul(10) {
                Some(q) => p = q,
                None => break,
            }
        }
    }
}
