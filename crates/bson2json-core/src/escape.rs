//! JSON string escaping exactly as `JSON.stringify` does it for well-formed strings.
//!
//! Escaped: `"` → `\"`, `\` → `\\`, `\b \f \n \r \t` → their short forms, every other byte below
//! 0x20 → `\u00xx` (lowercase hex). Everything else, DEL, U+2028/U+2029 and all non-ASCII
//! characters included, is copied verbatim (the input is already valid UTF-8).
//!
//! [`write_escaped`] finds the bytes to escape 32 at a time (AVX2, strings of 64 bytes or more
//! on CPUs that have it), 16 at a time (SSE2) or eight at a time (SWAR), and copies the clean
//! runs between them in one go; [`write_escaped_plain`] is its byte-by-byte twin, and tests and
//! a fuzz target hold them equal (the unit tests also hold the AVX2 and the narrower loops
//! equal at every length). Lone surrogates cannot occur: strings are valid UTF-8, and UTF-8 has
//! no encoding for a surrogate.
//!
//! [`write_escaped_utf8_avx2`] also validates the string's UTF-8 while it escapes it, in one
//! AVX2 pass (the UTF-8 check is `lanes::Utf8Avx2`), for `utf8::write_quoted_utf8_in`.

#[cfg(target_arch = "x86_64")]
use crate::bytes::block16;
use crate::bytes::{load_u32, load_u64};
#[cfg(target_arch = "x86_64")]
use crate::lanes::lanes16;
use crate::lanes::{escape_lanes, words_are_plain, words_block, HI};
use crate::sink::{copy_run, put_quoted};

/// For each byte: 0 = copy as is; `b'u'` = `\u00xx`; anything else = backslash plus that byte.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// For each byte: its escape sequence (`\n`, `\u001f`, …) as a little-endian word whose low
/// byte is the sequence's first, and the sequence's length in the top byte (0 for bytes that
/// are copied as is).
static ESCAPE_WORD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let e = ESCAPE[i];
        t[i] = if e == b'u' {
            let hex = (HEX[i >> 4] as u64) << 32 | (HEX[i & 0xf] as u64) << 40;
            0x3030_755c | hex | 6 << 56 // `\u00` + two hex digits
        } else if e != 0 {
            0x5c | (e as u64) << 8 | 2 << 56
        } else {
            0
        };
        i += 1;
    }
    t
};

/// Appends the escape sequence of `byte` (one that needs escaping) as one 8-byte store from
/// [`ESCAPE_WORD`]: no branch on the kind of escape. `out` must have 8 bytes of spare
/// capacity; every caller holds `to - j + 18` at the escape at `j` (the reserve before the
/// loop, or the one after the previous escape, minus the clean run copied since).
#[inline(always)]
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    let w = ESCAPE_WORD[byte as usize];
    crate::sink::put_word(out, w, (w >> 56) as usize);
}

/// The plain twin of [`write_escape`]: the escape sequence spelled out from [`ESCAPE`].
fn write_escape_plain(out: &mut Vec<u8>, byte: u8) {
    let e = ESCAPE[byte as usize];
    if e == b'u' {
        out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[(byte >> 4) as usize],
            HEX[(byte & 0xf) as usize],
        ]);
    } else {
        out.extend_from_slice(&[b'\\', e]);
    }
}

/// Appends the escaped contents of `s` (no surrounding quotes). SWAR fast path.
/// Returns true if `s` is pure ASCII (then it is valid UTF-8 and needs no further check).
#[inline]
pub fn write_escaped(out: &mut Vec<u8>, s: &[u8]) -> bool {
    write_escaped_in(out, s, 0, s.len())
}

/// Strings at least this long take the AVX2 loop when the CPU has AVX2 (below it the 32-byte
/// blocks would mostly be tails, and the runtime check and call are not worth it).
#[cfg(target_arch = "x86_64")]
pub(crate) const AVX2_FROM: usize = 64;

/// [`write_escaped`] of `buf[from..to]`, where `buf` may extend past `to` (the bytes after it
/// let short runs be copied as whole 16-byte blocks).
#[inline]
pub fn write_escaped_in(out: &mut Vec<u8>, buf: &[u8], from: usize, to: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    if to - from >= AVX2_FROM {
        if let Some(ascii) = crate::lanes::with_avx2(write_escaped_avx2, out, buf, from, to) {
            return ascii;
        }
    }
    write_escaped_narrow(out, buf, from, to)
}

/// [`write_escaped_in`] without the AVX2 loop: SSE2 16-byte blocks on x86-64, then 8-byte
/// words, then the tail. The AVX2 loop's twin in tests (and its path on CPUs without AVX2).
#[inline]
pub(crate) fn write_escaped_narrow(out: &mut Vec<u8>, buf: &[u8], from: usize, to: usize) -> bool {
    // Clean runs before an escape are copied with `copy_run` (short ones as one 16-byte block,
    // not a `memcpy` call whose size dispatch mispredicts on text with many escapes: design
    // decision 9). It needs the run's length + 16 bytes of spare capacity:
    // this reserve, and the one after each escape, keep the rest of the input + 18.
    out.reserve(to - from + 18);
    escape_rest(out, buf, from, from, to, 0)
}

/// [`write_escaped_in`] with AVX2: 32-byte blocks while they fit, then [`escape_rest`] (the
/// narrow loops) for the last 0-31 bytes. Called through `lanes::with_avx2` once the CPU is
/// known to have AVX2 (its one precondition); [`write_escaped_narrow`] is its twin in tests.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) fn write_escaped_avx2(out: &mut Vec<u8>, buf: &[u8], from: usize, to: usize) -> bool {
    out.reserve(to - from + 18); // as in `write_escaped_narrow`
    let s = &buf[..to];
    let mut start = from;
    let mut i = from;
    let mut wide_high = 0u32;
    while i + 32 <= to {
        let (special, non_ascii) = crate::lanes::lanes32(block32(s, i));
        let esc = special & !non_ascii;
        wide_high |= non_ascii;
        if esc == 0 {
            i += 32;
            continue;
        }
        let j = i + esc.trailing_zeros() as usize;
        copy_run(out, buf, start, j);
        write_escape(out, s[j]);
        out.reserve(to - j + 18);
        i = j + 1;
        start = i;
    }
    escape_rest(out, buf, start, i, to, if wide_high != 0 { HI } else { 0 })
}

/// Escapes `buf[from..to]` like [`write_escaped_avx2`] and validates it as UTF-8 in the same
/// pass; returns true if it is well-formed. The string is taken in fixed 32-byte blocks from
/// `from` (the last 1-31 bytes as one block padded with zeros), each loaded once: the escape
/// mask comes from it, and blocks with non-ASCII bytes also go through the UTF-8 check of
/// `lanes::Utf8Avx2`, which carries the open sequence from block to block. Clean blocks (all
/// ASCII, nothing to escape) are passed over in a tight loop of one mask each. The escapes of a
/// block are taken from its mask one after the other, each with the clean run before it in one
/// `sink::copy_run_then_word`, after one reserve for the block. Called through
/// `lanes::with_avx2` (AVX2 is its one precondition); [`write_escaped_plain`] with
/// `std::str::from_utf8` is its twin in tests and the `swar` fuzz target (through
/// `utf8::write_quoted_utf8_in`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) fn write_escaped_utf8_avx2(
    out: &mut Vec<u8>,
    buf: &[u8],
    from: usize,
    to: usize,
) -> bool {
    out.reserve(to - from + 18); // as in `write_escaped_narrow`
    let s = &buf[..to];
    let mut utf8 = crate::lanes::Utf8Avx2::new();
    let mut start = from;
    let mut i = from;
    loop {
        // Clean blocks (all ASCII, nothing to escape) in a tight loop: one mask each, no UTF-8
        // lookups, no escape loop.
        while i + 32 <= to && crate::lanes::lanes32(block32(s, i)).0 == 0 {
            utf8.ascii();
            i += 32;
        }
        let (special, non_ascii) = if i + 32 <= to {
            utf8.lanes32(block32(s, i))
        } else if i < to {
            utf8.lanes_tail(buf, i, to - i)
        } else {
            break;
        };
        let mut esc = special & !non_ascii;
        if esc != 0 {
            // Room for the rest of the string + 18 and 5 more bytes (an escape's longest
            // sequence, 6 bytes, for 1 byte of input) for each of the block's up to 32
            // escapes: each escape then still finds `to - j + 18` bytes spare, and the next
            // block too.
            out.reserve(to - start + 18 + 5 * 32);
            while esc != 0 {
                let j = i + esc.trailing_zeros() as usize;
                let w = ESCAPE_WORD[s[j] as usize];
                crate::sink::copy_run_then_word(out, buf, start, j, w, (w >> 56) as usize);
                start = j + 1;
                esc &= esc - 1;
            }
        }
        i += 32;
    }
    copy_run(out, buf, start, to);
    utf8.valid()
}

/// Strings at least this long with something to escape or a non-ASCII byte take
/// [`write_escaped_utf8_avx2`] when the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
pub(crate) const UTF8_AVX2_FROM: usize = 17;

/// The 32 bytes at `b[at..at + 32]` as an array reference (one bounds check).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block32(b: &[u8], at: usize) -> &[u8; 32] {
    match b[at..at + 32].try_into() {
        Ok(block) => block,
        Err(_) => unreachable!(),
    }
}

/// Escapes `buf[i..to]` with the clean run `start..i` still pending and `high` the OR of the
/// bytes already read (bit 7 of a lane set if any was non-ASCII); `out` has `to - start + 18`
/// bytes of spare capacity. Returns true if everything from the first call on was ASCII.
#[inline(always)]
fn escape_rest(
    out: &mut Vec<u8>,
    buf: &[u8],
    mut start: usize,
    mut i: usize,
    to: usize,
    mut high: u64,
) -> bool {
    let s = &buf[..to];
    #[cfg(target_arch = "x86_64")]
    {
        let mut wide_high = 0u32;
        // SSE2 16 bytes at a time; the 8-byte `escape_lanes` loop below is its twin (it takes
        // every tail, and all input off x86-64).
        while i + 16 <= to {
            let (_, special, non_ascii) = lanes16(block16(s, i));
            let esc = special & !non_ascii;
            wide_high |= non_ascii;
            if esc == 0 {
                i += 16;
                continue;
            }
            let j = i + esc.trailing_zeros() as usize;
            copy_run(out, buf, start, j);
            write_escape(out, s[j]);
            out.reserve(to - j + 18);
            i = j + 1;
            start = i;
        }
        if wide_high != 0 {
            high = HI;
        }
    }
    while i + 8 <= to {
        let word = load_u64(s, i);
        high |= word;
        let m = escape_lanes(word);
        if m == 0 {
            i += 8;
            continue;
        }
        let j = i + (m.trailing_zeros() / 8) as usize;
        copy_run(out, buf, start, j);
        write_escape(out, s[j]);
        out.reserve(to - j + 18);
        i = j + 1;
        start = i;
    }
    // Fewer than 8 bytes left: check them as one word when possible (two overlapping 4-byte
    // loads), and fall back to bytes only if something needs escaping.
    if to - i >= 4 {
        let a = load_u32(s, i);
        let b = load_u32(s, to - 4);
        let word = u64::from(a) | (u64::from(b) << 32);
        high |= word;
        if escape_lanes(word) == 0 {
            copy_run(out, buf, start, to);
            return high & HI == 0;
        }
    }
    while i < to {
        let b = s[i];
        high |= u64::from(b);
        if ESCAPE[b as usize] != 0 {
            copy_run(out, buf, start, i);
            write_escape(out, b);
            out.reserve(to - i + 18);
            start = i + 1;
        }
        i += 1;
    }
    copy_run(out, buf, start, to);
    high & HI == 0
}

/// Appends the escaped contents of `s`: the plain byte-by-byte twin of [`write_escaped`].
pub fn write_escaped_plain(out: &mut Vec<u8>, s: &[u8]) {
    for &b in s {
        if ESCAPE[b as usize] != 0 {
            write_escape_plain(out, b);
        } else {
            out.push(b);
        }
    }
}

/// the run in the low lanes: loaded from `from` when 16 bytes are readable there, else from
/// `to - 16` and shifted down (runs at the very end of a small document). `None` if neither
/// fits (`to < 16`). Lanes past the run hold unrelated bytes or zeros.
#[inline(always)]
fn short_run_words(buf: &[u8], from: usize, to: usize) -> Option<(u64, u64)> {
    if from == to {
        Some((0, 0))
    } else if from + 16 <= buf.len() {
        Some((load_u64(buf, from), load_u64(buf, from + 8)))
    } else if to >= 16 && to <= buf.len() {
        let at = to - 16;
        let x = u128::from(load_u64(buf, at)) | (u128::from(load_u64(buf, at + 8)) << 64);
        let x = x >> (8 * (from - at)); // from - at = 16 - len < 16 (len > 0)
        Some((x as u64, (x >> 64) as u64))
    } else {
        None
    }
}

/// Appends `"` + escaped `buf[from..to]` + `"`; returns true if it is pure ASCII. Bytes of
/// `buf` around `from..to` may be read (not written) to handle short runs as whole words.
#[inline(always)]
pub fn write_quoted_in(out: &mut Vec<u8>, buf: &[u8], from: usize, to: usize) -> bool {
    let len = to - from;
    if len <= 16 {
        #[cfg(target_arch = "x86_64")]
        if from + 16 <= buf.len() {
            // The common case, straight from the input: one vector load classifies it.
            let block = *block16(buf, from);
            let (_, special, _) = lanes16(&block);
            if special & ((1u32 << len) - 1) == 0 {
                put_quoted(out, block, len);
                return true;
            }
        }
        if let Some((w0, w1)) = short_run_words(buf, from, to) {
            if words_are_plain(w0, w1, len) {
                put_quoted(out, words_block(w0, w1), len);
                return true;
            }
        }
    }
    out.push(b'"');
    let ascii = write_escaped_in(out, buf, from, to);
    out.push(b'"');
    ascii
}

/// Appends `"` + escaped `s` + `"`; returns true if `s` is pure ASCII.
#[inline]
pub fn write_quoted(out: &mut Vec<u8>, s: &[u8]) -> bool {
    write_quoted_in(out, s, 0, s.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::{short_run_is_plain, short_run_is_plain_swar};

    fn both(s: &[u8]) -> Vec<u8> {
        let mut a = Vec::new();
        let ascii = write_escaped(&mut a, s);
        assert_eq!(ascii, s.is_ascii(), "ascii flag for {s:?}");
        let mut b = Vec::new();
        write_escaped_plain(&mut b, s);
        assert_eq!(a, b, "input {s:?}");
        // The narrow loops alone, and the AVX2 loop at every length (the dispatch gives it
        // only strings of `AVX2_FROM` bytes or more).
        let mut n = Vec::new();
        assert_eq!(write_escaped_narrow(&mut n, s, 0, s.len()), s.is_ascii());
        assert_eq!(n, b, "narrow, input {s:?}");
        #[cfg(target_arch = "x86_64")]
        {
            let mut w = Vec::new();
            if let Some(ascii) = crate::lanes::with_avx2(write_escaped_avx2, &mut w, s, 0, s.len())
            {
                assert_eq!(ascii, s.is_ascii(), "AVX2 ascii flag for {s:?}");
                assert_eq!(w, b, "AVX2, input {s:?}");
            }
        }
        a
    }

    #[test]
    fn avx2_blocks_and_tails() {
        // Several 32-byte blocks and every tail length: each byte class at every position of
        // strings of 64-100 bytes, so the AVX2 loop, the SSE2 loop, the word loop and the byte
        // tail all meet an escape, a high byte or a clean end.
        let classes = [0u8, 0x1f, 0x20, b'"', b'\\', b'a', 0x7f, 0x80, 0xc3, 0xff];
        let lens = if cfg!(miri) { 64..66 } else { 64..101 };
        for len in lens {
            for &c in &classes {
                for pos in 0..len {
                    if cfg!(miri) && pos % 13 != 0 {
                        continue;
                    }
                    let mut s = vec![b'x'; len];
                    s[pos] = c;
                    both(&s);
                    s[len - 1 - pos / 2] = b'"'; // a second special after it
                    both(&s);
                }
            }
        }
        // Long runs with a random mix, through the public dispatch (which takes AVX2 here).
        let specials = [0u8, 0x1f, b'"', b'\\', 0x80, 0xc3, 0xa9];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..if cfg!(miri) { 5 } else { 5_000 } {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = 64 + (seed % 400) as usize;
            let every = 3 + (seed >> 20) % 200; // from escape-dense to mostly clean
            let s: Vec<u8> = (0..len)
                .map(|i| {
                    let r = seed.rotate_left(i as u32 * 7) ^ (i as u64).wrapping_mul(0x2545_F491);
                    if r.is_multiple_of(every) {
                        specials[(r >> 8) as usize % specials.len()]
                    } else {
                        b'a' + (r >> 16) as u8 % 26
                    }
                })
                .collect();
            both(&s);
        }
    }

    #[test]
    fn short_runs_at_every_position_near_the_end() {
        // Every run of 0..=40 bytes ending anywhere in a buffer, empty runs included
        // (regression: an empty run near the end once shifted a u128 by 128), so the one-block
        // path (up to 16 bytes) and the loops meet the buffer's end.
        let buf: Vec<u8> = (0..40u8)
            .map(|i| if i % 7 == 3 { b'"' } else { b'a' + i % 26 })
            .collect();
        // Under miri, the runs of up to 16 bytes ending in the buffer's last 20 bytes only.
        let first_end = if cfg!(miri) { buf.len() - 20 } else { 0 };
        let longest = if cfg!(miri) { 16 } else { 40 };
        for to in first_end..=buf.len() {
            for from in to.saturating_sub(longest)..=to {
                let mut a = Vec::new();
                write_quoted_in(&mut a, &buf, from, to);
                let mut b = b"\"".to_vec();
                write_escaped_plain(&mut b, &buf[from..to]);
                b.push(b'"');
                assert_eq!(a, b, "{from}..{to}");
            }
        }
    }

    #[test]
    fn runs_of_17_to_32_bytes_with_every_byte_in_every_lane() {
        // Quoted runs of 17-32 bytes (just past the one-block path of `write_quoted_in`), each
        // byte value at each position, with bytes after the run that must not matter. Under miri,
        // every eighth byte value per length, at one position: the start rotates with the length,
        // so every byte value meets two of the lengths.
        let step = if cfg!(miri) { 8 } else { 1 };
        for len in 17..=32 {
            for b in ((len * 5 % step)..256).step_by(step) {
                let b = u8::try_from(b).unwrap();
                let positions = if cfg!(miri) {
                    usize::from(b) % len..usize::from(b) % len + 1
                } else {
                    0..len
                };
                for pos in positions {
                    let mut buf = vec![b'x'; len + 8];
                    buf[len] = b'"'; // right after the run: must be ignored
                    buf[pos] = b;
                    let mut a = Vec::new();
                    let ascii = write_quoted_in(&mut a, &buf, 0, len);
                    let mut p = b"\"".to_vec();
                    write_escaped_plain(&mut p, &buf[..len]);
                    p.push(b'"');
                    assert_eq!(a, p, "byte {b} at {pos}, len {len}");
                    assert_eq!(ascii, buf[..len].is_ascii(), "byte {b} at {pos}, len {len}");
                }
            }
        }
    }

    #[test]
    fn json_stringify_escapes() {
        let s = b"\x00\x01\x1f\x7f\"\\/\x08\x0c\x0a\x0d\x09";
        assert_eq!(
            both(s),
            b"\\u0000\\u0001\\u001f\x7f\\\"\\\\/\\b\\f\\n\\r\\t".to_vec()
        );
    }

    #[test]
    fn every_byte_in_every_lane() {
        for b in 0..=255u8 {
            // Under miri, each byte in two lanes (rotating, so every lane meets every class).
            let lanes: Vec<usize> = if cfg!(miri) {
                vec![usize::from(b) % 17, (usize::from(b) + 8) % 17]
            } else {
                (0..17).collect()
            };
            for pos in lanes {
                let mut s = vec![b'x'; 17];
                s[pos] = b;
                both(&s);
            }
        }
    }

    #[test]
    fn short_plain_runs_agree_with_the_table() {
        for b in 0..=255u8 {
            for len in 0..=16 {
                for pos in 0..16 {
                    let mut buf = [b'x'; 24];
                    buf[pos] = b;
                    let plain = buf[..len]
                        .iter()
                        .all(|&c| c < 0x80 && ESCAPE[c as usize] == 0);
                    assert_eq!(
                        short_run_is_plain(&buf, 0, len),
                        plain,
                        "byte {b} at {pos}, len {len}"
                    );
                    assert_eq!(
                        short_run_is_plain_swar(&buf, 0, len),
                        plain,
                        "SWAR: byte {b} at {pos}, len {len}"
                    );
                    let mut a = Vec::new();
                    let mut p = Vec::new();
                    write_quoted_in(&mut a, &buf, 0, len);
                    p.push(b'"');
                    write_escaped_plain(&mut p, &buf[..len]);
                    p.push(b'"');
                    assert_eq!(a, p);
                }
            }
        }
    }

    #[test]
    fn long_runs_with_specials_anywhere() {
        // Several 16-byte blocks plus a tail: every byte value at every position, then random
        // mixes of specials, so the wide loop, the 8-byte loop and the byte loop all meet them.
        for b in 0..=255u8 {
            // Under miri, each byte at one position (rotating over all 40).
            let positions = if cfg!(miri) {
                usize::from(b) % 40..usize::from(b) % 40 + 1
            } else {
                0..40
            };
            for pos in positions {
                let mut s = vec![b'x'; 40];
                s[pos] = b;
                both(&s);
            }
        }
        let specials = [0u8, 0x1f, 0x20, b'"', b'\\', 0x7f, 0x80, 0xc3, 0xa9, 0xff];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..if cfg!(miri) { 20 } else { 20_000 } {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 100) as usize;
            let s: Vec<u8> = (0..len)
                .map(|i| {
                    let r = (seed.rotate_left(i as u32 * 5) % 23) as usize;
                    specials.get(r).copied().unwrap_or(b'a' + r as u8)
                })
                .collect();
            both(&s);
        }
    }

    #[test]
    fn adjacent_specials() {
        for n in 0..20 {
            let s: Vec<u8> = (0..n)
                .map(|i| [b'"', 0x1f, b'\\', b'a', 0x20, 0x21][i % 6])
                .collect();
            both(&s);
        }
    }
}
