//! UTF-8 in and out: validation of the strings that the escaper found to contain non-ASCII
//! bytes (on CPUs without AVX2, and for short strings: with AVX2 the escaper validates as it
//! goes, [`write_quoted_utf8_in`]), and the conversion of finished JSON text to UTF-16
//! for JavaScript engines ([`to_utf16`]).
//!
//! Long strings go to `simdutf8` (AVX2 / SSE4.2, chosen at run time), which hands anything
//! under 64 bytes to `std::str::from_utf8`. Short non-ASCII strings (names, words, tags: most
//! of the non-ASCII text in documents) are instead checked by [`is_valid_short`], a
//! branch-free shift-based DFA: one table load and one shift per byte, no branch that depends
//! on the text, where the standard library's validator branches on every multi-byte sequence
//! and mispredicts on mixed text. `std::str::from_utf8` is the twin that tests (every
//! sequence of up to five bytes over all byte classes, every two-byte sequence, random text)
//! and the `swar` fuzz target hold it equal to.

/// The DFA's states, each stored as its bit offset (6 × index) in a transition row, so that
/// the next state is `row >> state` (the shift count is taken mod 64, so no mask is needed
/// between steps). `ACCEPT` must be 0: a row shifted by it keeps that state's bits lowest.
const ACCEPT: u64 = 0;
const ERROR: u64 = 6;
/// One continuation byte (80-BF) to go.
const CONT1: u64 = 12;
/// Two continuation bytes to go.
const CONT2: u64 = 18;
/// After E0: A0-BF (no overlong three-byte forms), then one more.
const E0: u64 = 24;
/// After ED: 80-9F (no surrogates), then one more.
const ED: u64 = 30;
/// After F0: 90-BF (no overlong four-byte forms), then two more.
const F0: u64 = 36;
/// After F1-F3: three continuation bytes to go.
const CONT3: u64 = 42;
/// After F4: 80-8F (nothing above U+10FFFF), then two more.
const F4: u64 = 48;

/// The next state from every state for byte `b`, as RFC 3629's table of well-formed byte
/// sequences defines them.
const fn row(b: u8) -> u64 {
    // (state, next) for each state; unlisted states go to ERROR.
    let mut next = [ERROR; 9];
    next[(ACCEPT / 6) as usize] = match b {
        0x00..=0x7F => ACCEPT,
        0xC2..=0xDF => CONT1,
        0xE0 => E0,
        0xE1..=0xEC | 0xEE..=0xEF => CONT2,
        0xED => ED,
        0xF0 => F0,
        0xF1..=0xF3 => CONT3,
        0xF4 => F4,
        _ => ERROR,
    };
    let cont = matches!(b, 0x80..=0xBF);
    if cont {
        next[(CONT1 / 6) as usize] = ACCEPT;
        next[(CONT2 / 6) as usize] = CONT1;
        next[(CONT3 / 6) as usize] = CONT2;
    }
    if matches!(b, 0xA0..=0xBF) {
        next[(E0 / 6) as usize] = CONT1;
    }
    if matches!(b, 0x80..=0x9F) {
        next[(ED / 6) as usize] = CONT1;
    }
    if matches!(b, 0x90..=0xBF) {
        next[(F0 / 6) as usize] = CONT2;
    }
    if matches!(b, 0x80..=0x8F) {
        next[(F4 / 6) as usize] = CONT2;
    }
    let mut r = 0u64;
    let mut s = 0;
    while s < 9 {
        r |= next[s] << (6 * s);
        s += 1;
    }
    r
}

static DFA: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = row(b as u8);
        b += 1;
    }
    t
};

/// Whether `s` is well-formed UTF-8, by the shift DFA; meant for short strings (it runs at
/// about one byte per cycle whatever the text). [`is_valid`] picks between it and `simdutf8`.
#[inline]
pub fn is_valid_short(s: &[u8]) -> bool {
    let mut state = ACCEPT;
    for &b in s {
        state = DFA[b as usize] >> (state & 63);
    }
    state & 63 == ACCEPT
}

/// Strings from this length on go to `simdutf8`'s SIMD validator (below it, `simdutf8` itself
/// falls back to the standard library).
const SIMD_FROM: usize = 64;

/// Whether `s` is well-formed UTF-8 (exactly `std::str::from_utf8(s).is_ok()`).
#[inline]
pub fn is_valid(s: &[u8]) -> bool {
    if s.len() < SIMD_FROM {
        is_valid_short(s)
    } else {
        simdutf8::basic::from_utf8(s).is_ok()
    }
}

/// Spare `u16`s that [`to_utf16`] needs in `dst` beyond `s.len()`: it stores whole blocks of
/// sixteen code units and keeps only the ones it converted.
pub const UTF16_SLACK: usize = 16;

/// Converts the UTF-8 text `s` to UTF-16 in `dst`, which must hold at least
/// `s.len() + UTF16_SLACK` units (asserted), and returns the number of units written.
///
/// Precondition: `s` is well-formed UTF-8 (it is meant for the transcoder's output, which
/// always is), so it does not validate. Ill-formed input cannot make it panic or write outside
/// `dst`, only produce different units than a validating decoder would (never more units than
/// bytes). With SSSE3 and POPCNT (detected at run time) it converts 16 bytes at a time, ASCII or not
/// ([`to_utf16_ssse3`]); elsewhere it widens ASCII blocks and decodes the other characters one
/// by one ([`to_utf16_scalar`]). [`to_utf16_plain`] (the standard library's `encode_utf16`) is
/// the twin of both in tests and the `swar` fuzz target.
pub fn to_utf16(s: &[u8], dst: &mut [u16]) -> usize {
    // Both paths assert `dst`'s length themselves.
    #[cfg(target_arch = "x86_64")]
    if let Some(n) = crate::lanes::with_ssse3(to_utf16_ssse3, s, dst) {
        return n;
    }
    to_utf16_scalar(s, dst)
}

/// [`to_utf16`] with SSSE3 (and POPCNT): `lanes::utf8_block_to_utf16_ssse3` on each 16 bytes (all of them
/// if ASCII, else the characters of up to three bytes that end in its first 15), the scalar
/// decoder for a four-byte character (a surrogate pair) and the last 0-15 bytes. Called
/// through `lanes::with_ssse3`; `dst` must hold `s.len() + UTF16_SLACK` units.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3,popcnt")]
fn to_utf16_ssse3(s: &[u8], dst: &mut [u16]) -> usize {
    assert!(dst.len() >= s.len() + UTF16_SLACK);
    let n = s.len();
    // Invariant: `j <= i` (no character takes more units than bytes), so `j + 16 <= dst.len()`
    // whenever `i + 16 <= n`, and `j + 32 <= dst.len()` whenever `i + 32 <= n`.
    let (mut i, mut j) = (0usize, 0usize);
    while i < n {
        if i + 16 <= n {
            let block: &[u8; 16] = s[i..i + 16].try_into().unwrap_or_else(|_| unreachable!());
            let d: &mut [u16; 16] = (&mut dst[j..j + 16])
                .try_into()
                .unwrap_or_else(|_| unreachable!());
            let (bytes, units) = crate::lanes::utf8_block_to_utf16_ssse3(block, d);
            if bytes == 16 {
                // An ASCII block: while the ASCII run goes on, widen 32 bytes a step (half
                // the loop's overhead per byte; mixed text never pays for the wider test).
                i += 16;
                j += 16;
                while i + 32 <= n {
                    let src: &[u8; 32] = s[i..i + 32].try_into().unwrap_or_else(|_| unreachable!());
                    let d: &mut [u16; 32] = (&mut dst[j..j + 32])
                        .try_into()
                        .unwrap_or_else(|_| unreachable!());
                    if crate::lanes::widen32(src, d) != 0 {
                        break;
                    }
                    i += 32;
                    j += 32;
                }
                continue;
            }
            if bytes != 0 {
                i += bytes;
                j += units;
                continue;
            }
        }
        // One character: a four-byte one, one in the last 15 bytes, or (ill-formed input
        // only) one the block step could not end.
        if s[i] < 0x80 {
            dst[j] = u16::from(s[i]);
            i += 1;
            j += 1;
        } else {
            let (c, len) = decode_at(s, i);
            j += put_utf16(dst, j, c);
            i += len;
        }
    }
    j
}

/// Writes the code point `c` (at most U+10FFFF, as `decode_at` gives) at `dst[j]` as one
/// UTF-16 unit or a surrogate pair and returns how many units that took.
#[inline(always)]
fn put_utf16(dst: &mut [u16], j: usize, c: u32) -> usize {
    if c < 0x1_0000 {
        dst[j] = c as u16;
        1
    } else {
        let c = c - 0x1_0000;
        dst[j] = 0xD800 | (c >> 10) as u16;
        dst[j + 1] = 0xDC00 | (c & 0x3FF) as u16;
        2
    }
}

/// [`to_utf16`] without SSSE3: sixteen bytes at a time are widened as a block while they are
/// ASCII (SSE2 on x86-64), and runs of non-ASCII characters are decoded one by one. `dst`
/// must hold `s.len() + UTF16_SLACK` units (asserted).
pub fn to_utf16_scalar(s: &[u8], dst: &mut [u16]) -> usize {
    assert!(dst.len() >= s.len() + UTF16_SLACK);
    let n = s.len();
    // Invariant: `j <= i` (no character takes more units than bytes), so `j + 16 <= dst.len()`
    // whenever `i + 16 <= n`.
    let (mut i, mut j) = (0usize, 0usize);
    loop {
        while i + 16 <= n {
            let block: &[u8; 16] = s[i..i + 16].try_into().unwrap_or_else(|_| unreachable!());
            let d: &mut [u16; 16] = (&mut dst[j..j + 16])
                .try_into()
                .unwrap_or_else(|_| unreachable!());
            let high = crate::lanes::widen16(block, d);
            if high == 0 {
                i += 16;
                j += 16;
                continue;
            }
            // Keep the units before the first non-ASCII byte.
            let k = high.trailing_zeros() as usize;
            i += k;
            j += k;
            break;
        }
        if i >= n {
            return j;
        }
        if s[i] < 0x80 {
            // Fewer than sixteen bytes left.
            dst[j] = u16::from(s[i]);
            i += 1;
            j += 1;
            continue;
        }
        while i < n && s[i] >= 0x80 {
            let (c, len) = decode_at(s, i);
            j += put_utf16(dst, j, c);
            i += len;
        }
    }
}

/// The code point of the multi-byte UTF-8 sequence starting at `s[i]` (a byte >= 0x80) and
/// its length. For ill-formed input the result only has to keep [`to_utf16`] in bounds: a
/// stray continuation byte counts as a two-byte lead, a sequence cut off by the end of `s`
/// gives U+FFFD for the bytes left, and four-byte leads stay in the surrogate-pair range. So
/// no sequence yields more UTF-16 units than it has bytes.
#[inline(always)]
fn decode_at(s: &[u8], i: usize) -> (u32, usize) {
    let b0 = u32::from(s[i]);
    let len = 2 + usize::from(b0 >= 0xE0) + usize::from(b0 >= 0xF0);
    let Some(seq) = s.get(i..i + len) else {
        return (0xFFFD, s.len() - i);
    };
    let at = |k: usize| u32::from(seq[k] & 0x3F);
    match len {
        2 => (((b0 & 0x1F) << 6) | at(1), 2),
        3 => (((b0 & 0x0F) << 12) | (at(1) << 6) | at(2), 3),
        _ => {
            let c = ((b0 & 0x07) << 18) | (at(1) << 12) | (at(2) << 6) | at(3);
            (c.clamp(0x1_0000, 0x10_FFFF), 4)
        }
    }
}

/// The plain twin of [`to_utf16`]: the standard library's `encode_utf16` of the text (with
/// U+FFFD for ill-formed sequences, where [`to_utf16`]'s units are unspecified).
pub fn to_utf16_plain(s: &[u8], dst: &mut Vec<u16>) {
    dst.extend(String::from_utf8_lossy(s).encode_utf16());
}

/// Appends `"` + escaped `buf[from..to]` + `"` and returns true if it is well-formed UTF-8
/// (`std::str::from_utf8` would accept it). On an ill-formed string the output is still the
/// escaped bytes, for the caller to truncate. One pass with AVX2 (`escape::write_escaped_utf8_avx2`);
/// elsewhere `escape::write_quoted_in` and, for a string with non-ASCII bytes, [`is_valid`]:
/// the two-pass twin ([`write_quoted_utf8_two_pass`]).
#[inline(always)]
pub fn write_quoted_utf8_in(out: &mut Vec<u8>, buf: &[u8], from: usize, to: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let len = to - from;
        // `escape::write_quoted_in`'s one-block test, which the two-pass path below repeats
        // for short strings with something to escape or a high byte. Left to that path alone,
        // the walker is compiled differently and runs more instructions in both dialects
        // (callgrind, `throughput FILE DIALECT x1`; ARCHITECTURE.md decision 9).
        if len <= 16 && from + 16 <= buf.len() {
            let block = *crate::bytes::block16(buf, from);
            let (_, special, _) = crate::lanes::lanes16(&block);
            if special & ((1u32 << len) - 1) == 0 {
                crate::sink::put_quoted(out, block, len);
                return true;
            }
        }
        // 17-32 bytes (long keys, URLs, names): the same test on two blocks, before the AVX2
        // call, whose fixed costs (the call, the UTF-8 state, the masked tail block) outweigh
        // the work on a string of this length.
        if len <= 32 && from + 32 <= buf.len() {
            let (_, lo, _) = crate::lanes::lanes16(crate::bytes::block16(buf, from));
            let (_, hi, _) = crate::lanes::lanes16(crate::bytes::block16(buf, from + 16));
            if (u64::from(lo) | u64::from(hi) << 16) & ((1u64 << len) - 1) == 0 {
                out.reserve(len + 18);
                out.push(b'"');
                crate::sink::copy_run(out, buf, from, to);
                out.push(b'"');
                return true;
            }
        }
        if len >= crate::escape::UTF8_AVX2_FROM {
            out.push(b'"');
            if let Some(valid) =
                crate::lanes::with_avx2(crate::escape::write_escaped_utf8_avx2, out, buf, from, to)
            {
                out.push(b'"');
                return valid;
            }
            out.pop();
        }
    }
    write_quoted_utf8_two_pass(out, buf, from, to)
}

/// [`write_quoted_utf8_in`] in two passes: escape, then validate strings with non-ASCII
/// bytes. Its path without AVX2, and its twin in tests.
#[inline(always)]
pub fn write_quoted_utf8_two_pass(out: &mut Vec<u8>, buf: &[u8], from: usize, to: usize) -> bool {
    crate::escape::write_quoted_in(out, buf, from, to) || is_valid(&buf[from..to])
}

/// Appends `input[from..to]` quoted, decoding invalid UTF-8 with U+FFFD replacement. Returns
/// false if a replacement happened. Well-formed strings are escaped and validated in one pass
/// ([`write_quoted_utf8_in`]); an ill-formed one is written again from
/// `String::from_utf8_lossy`, which is also its twin in tests and the `swar` fuzz target.
#[inline(always)]
pub fn write_quoted_lossy(out: &mut Vec<u8>, input: &[u8], from: usize, to: usize) -> bool {
    let mark = out.len();
    let s = &input[from..to];
    if write_quoted_utf8_in(out, input, from, to) {
        true
    } else {
        out.truncate(mark);
        crate::escape::write_quoted(out, String::from_utf8_lossy(s).as_bytes());
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte of every class the DFA distinguishes, at both ends of each range.
    const CLASSES: [u8; 24] = [
        0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
        0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
    ];

    fn check(s: &[u8]) {
        let want = std::str::from_utf8(s).is_ok();
        assert_eq!(is_valid_short(s), want, "{s:02X?}");
        assert_eq!(is_valid(s), want, "{s:02X?}");
    }

    /// The one-pass escaper-validator against its twins on `buf[from..to]`: the escaped bytes
    /// of `write_escaped_plain`, the verdict of `std::str::from_utf8`, and the two-pass path.
    fn utf8_both(buf: &[u8], from: usize, to: usize) {
        let s = &buf[from..to];
        let want_valid = std::str::from_utf8(s).is_ok();
        let mut want = b"\"".to_vec();
        crate::escape::write_escaped_plain(&mut want, s);
        want.push(b'"');
        let mut a = Vec::new();
        let valid = write_quoted_utf8_in(&mut a, buf, from, to);
        assert_eq!(valid, want_valid, "valid, {from}..{to} of {buf:02X?}");
        assert_eq!(a, want, "{from}..{to} of {buf:02X?}");
        // Not under miri with AVX2 compiled in (`RUSTFLAGS="-C target-feature=+avx2"`, to check
        // the one-pass loop): simdutf8 0.1.5's AVX2 validator, in the two-pass path, offsets its
        // prefetch pointer past the end of the string, which miri reports.
        if !cfg!(all(miri, target_feature = "avx2")) {
            let mut b = Vec::new();
            assert_eq!(
                write_quoted_utf8_two_pass(&mut b, buf, from, to),
                want_valid
            );
            assert_eq!(b, want, "two-pass, {from}..{to}");
        }
        #[cfg(target_arch = "x86_64")]
        {
            // The AVX2 one-pass loop at every length (the dispatch skips short plain runs).
            let mut w = Vec::new();
            if let Some(v) = crate::lanes::with_avx2(
                crate::escape::write_escaped_utf8_avx2,
                &mut w,
                buf,
                from,
                to,
            ) {
                assert_eq!(v, want_valid, "AVX2 valid, {from}..{to} of {buf:02X?}");
                assert_eq!(w, want[1..want.len() - 1], "AVX2, {from}..{to}");
            }
        }
    }

    /// Well-formed and ill-formed sequences: every lead with too few, enough and too many
    /// continuations, overlong forms, surrogates, values above U+10FFFF, stray continuations.
    const SEQUENCES: &[&[u8]] = &[
        b"a",
        b"\"",
        b"\x1f",
        b"\xc3\xa9",
        b"\xe2\x82\xac",
        b"\xf0\x9f\x9a\x80",
        b"\xf4\x8f\xbf\xbf",
        b"\xc3",
        b"\xe2\x82",
        b"\xe2",
        b"\xf0\x9f\x9a",
        b"\xf0\x9f",
        b"\xf0",
        b"\x80",
        b"\xbf",
        b"\xc0\x80",
        b"\xc1\xbf",
        b"\xe0\x80\x80",
        b"\xe0\x9f\xbf",
        b"\xe0\xa0\x80",
        b"\xed\x9f\xbf",
        b"\xed\xa0\x80",
        b"\xed\xbf\xbf",
        b"\xf0\x80\x80\x80",
        b"\xf0\x8f\xbf\xbf",
        b"\xf0\x90\x80\x80",
        b"\xf4\x90\x80\x80",
        b"\xf5\x80\x80\x80",
        b"\xff",
        b"\xfe",
        b"\xc3\xa9\xa9",
        b"\xe2\x82\xac\x80",
        b"\xf0\x9f\x9a\x80\x80",
        b"\xef\xbf\xbf",
        b"\xf3\xbf\xbf\xbf",
    ];

    #[test]
    fn utf8_one_pass_sequences_across_block_edges() {
        // Each sequence, alone or followed by another, at every offset around the 16- and
        // 32-byte block edges (and a string end), in ASCII text with and without escapes.
        let offsets: Vec<usize> = if cfg!(miri) {
            vec![0, 14, 31, 33]
        } else {
            (0..70).collect()
        };
        for (k, &a) in SEQUENCES.iter().enumerate() {
            for (m, &b) in SEQUENCES.iter().enumerate() {
                if cfg!(miri) && (k + m) % 7 != 0 {
                    continue;
                }
                for &at in &offsets {
                    let fill = if (k + m + at) % 3 == 0 {
                        b"ab\"c\\d\n"
                    } else {
                        b"abcdefg"
                    };
                    let mut buf: Vec<u8> = (0..at).map(|i| fill[i % fill.len()]).collect();
                    buf.extend_from_slice(a);
                    buf.extend_from_slice(b);
                    let end = buf.len();
                    buf.extend_from_slice(b"xyz\xe2\x82\xac tail bytes past the end \x80\xc3");
                    utf8_both(&buf, 0, end);
                    utf8_both(&buf, 0, buf.len());
                    utf8_both(&buf[..end], 0, end);
                    if at > 0 {
                        utf8_both(&buf, 1, end);
                    }
                }
            }
        }
    }

    #[test]
    fn utf8_one_pass_sequences_before_and_after_clean_blocks() {
        // Each sequence at every offset of a 32-byte block, with clean ASCII (all ASCII,
        // nothing to escape) of 0-100 bytes before and after it: whole clean blocks then take
        // the one-pass loop's skip loop, which must still fail a sequence left open before it,
        // and the block it stops at must be classified as if nothing had been skipped.
        let clean =
            b"plain ASCII text that needs no escaping at all, long enough for three blocks ..";
        let runs: Vec<usize> = if cfg!(miri) {
            vec![0, 32, 65]
        } else {
            (0..=100).filter(|n| n % 16 < 3 || n % 16 > 13).collect()
        };
        for (k, &seq) in SEQUENCES.iter().enumerate() {
            for &before in &runs {
                for &after in &runs {
                    if cfg!(miri) && (k + before + after) % 5 != 0 {
                        continue;
                    }
                    let mut buf: Vec<u8> = clean.iter().cycle().take(before).copied().collect();
                    buf.extend_from_slice(seq);
                    buf.extend(clean.iter().cycle().take(after));
                    let end = buf.len();
                    utf8_both(&buf, 0, end);
                    // A second sequence after the clean run, and a byte to escape there.
                    buf.extend_from_slice(SEQUENCES[(k + 3) % SEQUENCES.len()]);
                    buf.extend_from_slice(b"\"");
                    buf.extend(clean.iter().cycle().take(before));
                    utf8_both(&buf, 0, buf.len());
                    utf8_both(&buf, 0, end + 1);
                }
            }
        }
    }

    #[test]
    fn utf8_one_pass_random_text() {
        // Mixed scripts with escapes, cut anywhere and with single bytes corrupted.
        let text = "Zoë \"Brontë\" 日本語\tПривет 🚀🔥 naïve\\ ﬁnance €uro, plain ASCII for a while, more than thirty-two bytes of it, then 👍🏽 한국어\n\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff} end";
        let b = text.as_bytes();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..if cfg!(miri) { 40 } else { 50_000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut v = b.to_vec();
            if x & 1 == 0 {
                let at = ((x >> 8) % v.len() as u64) as usize;
                v[at] = (x >> 32) as u8;
            }
            let from = ((x >> 16) % v.len() as u64) as usize;
            let to = from + ((x >> 40) % (v.len() - from) as u64) as usize;
            utf8_both(&v, from, to);
        }
    }

    #[test]
    fn every_sequence_of_up_to_five_class_bytes() {
        let mut s = Vec::with_capacity(5);
        fn rec(s: &mut Vec<u8>, depth: usize) {
            check(s);
            if depth == 0 {
                return;
            }
            for &b in &CLASSES {
                s.push(b);
                rec(s, depth - 1);
                s.pop();
            }
        }
        // Under miri (orders of magnitude slower) every sequence of up to two class bytes;
        // the other twins below cover longer ones.
        let depth = if cfg!(miri) {
            2
        } else if cfg!(debug_assertions) {
            4
        } else {
            5
        };
        rec(&mut s, depth);
    }

    #[test]
    fn every_two_byte_sequence_and_prefixed() {
        // Under miri, every pair of class bytes instead of every pair of bytes.
        let bytes: Vec<u8> = if cfg!(miri) {
            CLASSES.to_vec()
        } else {
            (0..=255u8).collect()
        };
        for &a in &bytes {
            for &b in &bytes {
                check(&[a, b]);
                check(&[b'x', a, b, b'y']);
            }
        }
    }

    fn utf16_both(s: &[u8]) {
        let mut plain = Vec::new();
        to_utf16_plain(s, &mut plain);
        let scalar: fn(&[u8], &mut [u16]) -> usize = to_utf16_scalar;
        for (name, f) in [
            ("to_utf16", to_utf16 as fn(&[u8], &mut [u16]) -> usize),
            ("to_utf16_scalar", scalar),
        ] {
            let mut fast = vec![0u16; s.len() + UTF16_SLACK];
            let n = f(s, &mut fast);
            if fast[..n] != plain[..] {
                let at = fast.iter().zip(&plain).take_while(|(a, b)| a == b).count();
                panic!("{name} of {} bytes differs at unit {at}", s.len());
            }
        }
    }

    #[test]
    fn utf16_of_every_slice_of_mixed_text() {
        let text = "Zoë Brontë 日本語 Привет 🚀🔥 naïve ﬁnance €uro; a run of plain ASCII that is longer than sixteen bytes, then 👍🏽 한국어 \u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff} end";
        let b = text.as_bytes();
        // Under miri, slices of up to 24 bytes from every fourth character, and a sample of the
        // scalar values.
        let longest = if cfg!(miri) { 24 } else { b.len() };
        let every = if cfg!(miri) { 4 } else { 1 };
        let starts = (0..b.len()).filter(|&i| text.is_char_boundary(i));
        for from in starts.step_by(every) {
            for to in (from..=b.len().min(from + longest)).filter(|&i| text.is_char_boundary(i)) {
                utf16_both(&b[from..to]);
            }
        }
        // Every scalar value, starting at different characters so that each lands at several
        // offsets of a 16-byte block.
        let step = if cfg!(miri) { 4_099 } else { 1 };
        let all: String = (0..=0x10_FFFFu32)
            .step_by(step)
            .filter_map(char::from_u32)
            .collect();
        for skip in 0..if cfg!(miri) { 3 } else { 20 } {
            let from = all.char_indices().nth(skip * 7).map_or(0, |(i, _)| i);
            utf16_both(&all.as_bytes()[from..]);
        }
    }

    #[test]
    fn utf16_of_ill_formed_bytes_stays_in_bounds() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..if cfg!(miri) { 40 } else { 300 } {
            let mut v: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            // Every lead byte cut off at the end, after the random bytes.
            for lead in [
                None,
                Some(0x80u8),
                Some(0xC3),
                Some(0xE6),
                Some(0xF0),
                Some(0xFF),
            ] {
                if let Some(b) = lead {
                    v.push(b);
                }
                let mut dst = vec![0u16; v.len() + UTF16_SLACK];
                assert!(to_utf16(&v, &mut dst) <= v.len());
                assert!(to_utf16_scalar(&v, &mut dst) <= v.len());
                if lead.is_some() {
                    v.pop();
                }
            }
        }
    }

    #[test]
    fn random_text_short_and_long() {
        // Mixed scripts, cut at every byte (so that truncated sequences come up), plus
        // single-byte corruptions; lengths cross the 64-byte switch to simdutf8.
        let text = "Zoë Brontë 日本語 Привет 🚀🔥 naïve ﬁnance €uro ASCII only, then more: Ærøskøbing 👍🏽 한국어 end";
        let b = text.as_bytes();
        // Under miri, every thirteenth start and 60 corruptions.
        for from in (0..b.len()).step_by(if cfg!(miri) { 13 } else { 1 }) {
            for to in from..=b.len().min(from + 90) {
                check(&b[from..to]);
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..if cfg!(miri) { 60 } else { 20_000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut v = b.to_vec();
            let at = (x % v.len() as u64) as usize;
            v[at] = (x >> 32) as u8;
            let len = ((x >> 40) % v.len() as u64) as usize;
            check(&v[..len]);
        }
    }
}
