//! JSON string escaping exactly as `JSON.stringify` does it for well-formed strings.
//!
//! Escaped: `"` → `\"`, `\` → `\\`, `\b \f \n \r \t` → their short forms, every other byte below
//! 0x20 → `\u00xx` (lowercase hex). Everything else, DEL, U+2028/U+2029 and all non-ASCII
//! characters included, is copied verbatim (the input is already valid UTF-8).
//!
//! [`write_escaped`] finds the bytes to escape eight at a time (SWAR) and copies the clean runs
//! between them in one go; [`write_escaped_plain`] is its byte-by-byte twin, and tests and a fuzz
//! target hold them equal. Lone surrogates cannot occur: strings are valid UTF-8, and UTF-8 has
//! no encoding for a surrogate.

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

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in the lane of the first byte of `x` that needs escaping (possibly also in
/// later lanes; never in an earlier one). Lanes: byte k of the little-endian load is lane k.
///
/// - `x < 0x20`: `(x - 0x20) & !x & 0x80` per lane (a borrow only ever flows upward, from a
///   lane that already matched, so the lowest flagged lane is exact);
/// - `x == '"'` / `x == '\\'`: the same zero test on `x ^ 0x22..` / `x ^ 0x5c..`.
#[inline(always)]
pub(crate) fn escape_lanes(x: u64) -> u64 {
    let ctl = x.wrapping_sub(LO * 0x20) & !x;
    let q = x ^ (LO * b'"' as u64);
    let q = q.wrapping_sub(LO) & !q;
    let b = x ^ (LO * b'\\' as u64);
    let b = b.wrapping_sub(LO) & !b;
    (ctl | q | b) & HI
}

#[inline(always)]
fn write_escape(out: &mut Vec<u8>, byte: u8) {
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

/// Copies `src[from..to]` to the end of `out`, whose spare capacity must hold `to - from + 16`
/// bytes. Runs of up to 16 bytes are copied as one fixed 16-byte block when `src` has 16
/// readable bytes from `from` (no `memcpy` call for the short keys and strings that dominate
/// documents); only `to - from` bytes are kept. Runs of 16 to 128 bytes are copied as 16-byte
/// blocks, the last one aligned to `to` (overlapping the one before it), so nothing past `to`
/// is read. Longer runs go to `memcpy`.
#[inline(always)]
pub(crate) fn copy_run(out: &mut Vec<u8>, src: &[u8], from: usize, to: usize) {
    let n = to - from;
    let len = out.len();
    assert!(out.capacity() - len >= n + 16 && from <= to && to <= src.len());
    if n <= 16 && from + 16 <= src.len() {
        let mut block = [0u8; 16];
        block.copy_from_slice(&src[from..from + 16]);
        // SAFETY: the assert above guarantees 16 bytes of spare capacity at `len`; the
        // block is a local array, so the regions do not overlap; after the write the first
        // `n` bytes past `len` are initialised, which is all `set_len` exposes.
        unsafe {
            std::ptr::copy_nonoverlapping(block.as_ptr(), out.as_mut_ptr().add(len), 16);
            out.set_len(len + n);
        }
    } else if (16..=128).contains(&n) {
        let mut i = 0;
        loop {
            let at = if i + 16 <= n { i } else { n - 16 };
            let mut block = [0u8; 16];
            block.copy_from_slice(&src[from + at..from + at + 16]);
            // SAFETY: `at + 16 <= n` and the assert guarantees `n + 16` bytes of spare
            // capacity at `len`, so the write stays inside the allocation; the source is a
            // local array (no overlap).
            unsafe {
                std::ptr::copy_nonoverlapping(block.as_ptr(), out.as_mut_ptr().add(len + at), 16);
            }
            i += 16;
            if i >= n {
                break;
            }
        }
        // SAFETY: the blocks written above start at 0, 16, 32, … and the last one ends at
        // exactly `n`, so every byte in `len..len + n` is initialised.
        unsafe {
            out.set_len(len + n);
        }
    } else {
        out.extend_from_slice(&src[from..to]);
    }
}

/// Writes the eight bytes of `word` (little-endian: the low byte first) at the end of `out`
/// and keeps the first `n <= 8` of them. `out` must have 8 bytes of spare capacity (asserted;
/// callers reserve once for several writes).
#[inline(always)]
pub(crate) fn put_word(out: &mut Vec<u8>, word: u64, n: usize) {
    let len = out.len();
    assert!(out.capacity() - len >= 8 && n <= 8);
    // SAFETY: the assert guarantees 8 bytes of spare capacity at `len`, so the unaligned
    // 8-byte write stays inside the allocation; the first `n <= 8` of those bytes are now
    // initialised, which is all `set_len` exposes.
    unsafe {
        out.as_mut_ptr()
            .add(len)
            .cast::<[u8; 8]>()
            .write_unaligned(word.to_le_bytes());
        out.set_len(len + n);
    }
}

/// Appends the escaped contents of `s` (no surrounding quotes). SWAR fast path.
/// Returns true if `s` is pure ASCII (then it is valid UTF-8 and needs no further check).
#[inline]
pub fn write_escaped(out: &mut Vec<u8>, s: &[u8]) -> bool {
    write_escaped_in(out, s, 0, s.len())
}

/// [`write_escaped`] of `buf[from..to]`, where `buf` may extend past `to` (the bytes after it
/// let short runs be copied as whole 16-byte blocks).
#[inline]
pub fn write_escaped_in(out: &mut Vec<u8>, buf: &[u8], from: usize, to: usize) -> bool {
    // Clean runs before an escape are copied with `copy_run` (short ones as one 16-byte block,
    // not a `memcpy` call whose size dispatch mispredicts on text with many escapes: string-
    // heavy documents 1.14-1.17x). It needs the run's length + 16 bytes of spare capacity:
    // this reserve, and the one after each escape, keep the rest of the input + 18.
    out.reserve(to - from + 18);
    let s = &buf[..to];
    let mut start = from; // start of the pending clean run
    let mut i = from;
    let mut high = 0u64; // OR of every byte seen: bit 7 of a lane set ⇔ some byte ≥ 0x80
    #[cfg(target_arch = "x86_64")]
    {
        let mut wide_high = 0u32;
        // SSE2 16 bytes at a time; the 8-byte `escape_lanes` loop below is its twin (it takes
        // every tail, and all input off x86-64).
        while i + 16 <= to {
            let (_, special, non_ascii) = lanes16(crate::scan::block16(s, i));
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
        let word = crate::scan::load_u64(s, i);
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
        let a = crate::scan::load_u32(s, i);
        let b = crate::scan::load_u32(s, to - 4);
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
            write_escape(out, b);
        } else {
            out.push(b);
        }
    }
}

/// True if `buf[from..from + len]` (with `len <= 16` and 16 readable bytes at `from`) is pure
/// ASCII and needs no escaping, decided from two word loads. Lanes past `len` are ignored.
#[inline(always)]
pub fn short_run_is_plain(buf: &[u8], from: usize, len: usize) -> bool {
    let w = &buf[from..from + 16];
    words_are_plain(
        crate::scan::load_u64(w, 0),
        crate::scan::load_u64(w, 8),
        len,
    )
}

/// Three 16-bit lane masks of `block` (bit k for byte k): bytes that are NUL; bytes that need
/// JSON escaping (`< 0x20`, `"`, `\`) or are non-ASCII (`>= 0x80`); and the non-ASCII ones
/// alone. SSE2, which every x86-64 CPU has: about ten instructions for what the SWAR words need
/// some forty for. Callers drop the masks they do not use (the function is inlined).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn lanes16(block: &[u8; 16]) -> (u32, u32, u32) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128,
    };
    // SAFETY: `block` is 16 readable bytes and `_mm_loadu_si128` has no alignment
    // requirement; SSE2 is part of the x86_64 baseline, so every instruction here exists on
    // every CPU this code can run on.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        let nul = _mm_cmpeq_epi8(v, _mm_setzero_si128());
        // A signed compare: bytes 0x80..=0xFF are negative, so they count as "below 0x20".
        let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        let special = _mm_or_si128(low, _mm_or_si128(quote, backslash));
        (
            _mm_movemask_epi8(nul) as u32,
            _mm_movemask_epi8(special) as u32,
            _mm_movemask_epi8(v) as u32,
        )
    }
}

/// Widens the 16 bytes of `src` to 16 UTF-16 code units in `dst` (each byte zero-extended)
/// and returns the mask of the bytes that are non-ASCII (bit `k` for byte `k`): the ASCII
/// step of [`crate::utf8::to_utf16`], which keeps only the units before the first set bit.
/// SSE2 on x86-64 (one load, two unpacks, two stores, a movemask; the compiler does not find
/// this for the plain loop); [`widen16_plain`] elsewhere and as its twin in tests.
#[inline(always)]
pub fn widen16(src: &[u8; 16], dst: &mut [u16; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_loadu_si128, _mm_movemask_epi8, _mm_setzero_si128, _mm_storeu_si128,
            _mm_unpackhi_epi8, _mm_unpacklo_epi8,
        };
        // SAFETY: `src` is 16 readable bytes and `dst` 32 writable bytes (16 `u16`s, the
        // second store at unit 8 covers units 8..16); unaligned loads and stores have no
        // alignment requirement; SSE2 is in the x86_64 baseline.
        unsafe {
            let v = _mm_loadu_si128(src.as_ptr().cast());
            let z = _mm_setzero_si128();
            let d = dst.as_mut_ptr();
            _mm_storeu_si128(d.cast(), _mm_unpacklo_epi8(v, z));
            _mm_storeu_si128(d.add(8).cast(), _mm_unpackhi_epi8(v, z));
            _mm_movemask_epi8(v) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        widen16_plain(src, dst)
    }
}

/// The plain twin of [`widen16`]: a loop over the bytes.
#[inline]
pub fn widen16_plain(src: &[u8; 16], dst: &mut [u16; 16]) -> u32 {
    let mut high = 0u32;
    for k in 0..16 {
        dst[k] = u16::from(src[k]);
        high |= u32::from(src[k] >> 7) << k;
    }
    high
}

/// [`short_run_is_plain`] with 64-bit word arithmetic only (the SSE2 path's twin in tests and
/// the `swar` fuzz target).
#[inline]
pub fn short_run_is_plain_swar(buf: &[u8], from: usize, len: usize) -> bool {
    let w = &buf[from..from + 16];
    words_are_plain_swar(
        crate::scan::load_u64(w, 0),
        crate::scan::load_u64(w, 8),
        len,
    )
}

/// True if the first `len <= 16` bytes of the little-endian words `w0`, `w1` are pure ASCII
/// and need no escaping. Lanes past `len` are ignored.
#[inline(always)]
fn words_are_plain(w0: u64, w1: u64, len: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let (_, special, _) = lanes16(&words_block(w0, w1));
        special & ((1u32 << len) - 1) == 0 // len <= 16
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        words_are_plain_swar(w0, w1, len)
    }
}

/// [`words_are_plain`] with 64-bit word arithmetic only: the implementation without SSE2, and
/// its twin in tests.
#[inline(always)]
pub(crate) fn words_are_plain_swar(w0: u64, w1: u64, len: usize) -> bool {
    let lanes = |n: usize| {
        if n >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        }
    };
    let (m0, m1) = (lanes(len), lanes(len.saturating_sub(8)));
    let m1 = if len > 8 { m1 } else { 0 };
    // A borrow artefact can only flag a lane above a truly flagged lane, so a flag below
    // `len` always means a real special byte below `len`.
    (((escape_lanes(w0) | (w0 & HI)) & m0) | ((escape_lanes(w1) | (w1 & HI)) & m1)) == 0
}

/// The 16 bytes holding `buf[from..to]` (`to - from <= 16`) as two little-endian words with
/// the run in the low lanes: loaded from `from` when 16 bytes are readable there, else from
/// `to - 16` and shifted down (runs at the very end of a small document). `None` if neither
/// fits (`to < 16`). Lanes past the run hold unrelated bytes or zeros.
#[inline(always)]
fn short_run_words(buf: &[u8], from: usize, to: usize) -> Option<(u64, u64)> {
    if from == to {
        Some((0, 0))
    } else if from + 16 <= buf.len() {
        Some((
            crate::scan::load_u64(buf, from),
            crate::scan::load_u64(buf, from + 8),
        ))
    } else if to >= 16 && to <= buf.len() {
        let at = to - 16;
        let x = u128::from(crate::scan::load_u64(buf, at))
            | (u128::from(crate::scan::load_u64(buf, at + 8)) << 64);
        let x = x >> (8 * (from - at)); // from - at = 16 - len < 16 (len > 0)
        Some((x as u64, (x >> 64) as u64))
    } else {
        None
    }
}

/// The little-endian words `w0`, `w1` as 16 bytes (`w0`'s low byte first).
#[inline(always)]
pub(crate) fn words_block(w0: u64, w1: u64) -> [u8; 16] {
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&w0.to_le_bytes());
    block[8..].copy_from_slice(&w1.to_le_bytes());
    block
}

/// Appends `"` + the first `n <= 16` bytes of `block` + `"` with one capacity check and one
/// length update (three stores).
#[inline(always)]
fn put_quoted(out: &mut Vec<u8>, block: [u8; 16], n: usize) {
    out.reserve(18);
    let len = out.len();
    assert!(out.capacity() - len >= 18 && n <= 16);
    // SAFETY: the assert guarantees 18 bytes of spare capacity at `len`: the quote at `len`,
    // the 16-byte block at `len + 1` and the quote at `len + 1 + n <= len + 17` all stay
    // inside the allocation; bytes `len..len + n + 2` are initialised by these writes (the
    // closing quote overwrites the block's lane `n` when `n < 16`), which is all `set_len`
    // exposes.
    unsafe {
        let p = out.as_mut_ptr().add(len);
        p.write(b'"');
        p.add(1).cast::<[u8; 16]>().write_unaligned(block);
        p.add(1 + n).write(b'"');
        out.set_len(len + n + 2);
    }
}

/// Appends the `N` little-endian words `w` (`8 * N` bytes) with one capacity check.
#[inline(always)]
pub(crate) fn put_words<const N: usize>(out: &mut Vec<u8>, w: [u64; N]) {
    out.reserve(8 * N);
    let len = out.len();
    assert!(out.capacity() - len >= 8 * N);
    // SAFETY: the assert guarantees `8 * N` bytes of spare capacity at `len`; word `i` goes to
    // `len + 8 * i`, so bytes `len..len + 8 * N` are all written, which is all `set_len`
    // exposes.
    unsafe {
        let p = out.as_mut_ptr().add(len);
        for (i, x) in w.iter().enumerate() {
            p.add(8 * i)
                .cast::<[u8; 8]>()
                .write_unaligned(x.to_le_bytes());
        }
        out.set_len(len + 8 * N);
    }
}

/// Appends `s` (at most 32 bytes) as two overlapping copies of the largest power-of-two width
/// that fits it: no `memcpy` call, and no staging block reloaded as a vector right after it is
/// stored (which stalls on store forwarding).
#[inline(always)]
pub(crate) fn push_small(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    out.reserve(n);
    let len = out.len();
    assert!(out.capacity() - len >= n && n <= 32);
    let (src, dst) = (s.as_ptr(), out.as_mut_ptr().wrapping_add(len));
    // SAFETY: the assert guarantees `n` bytes of spare capacity at `len`; each branch copies
    // with a width `W <= n` at offsets `0` and `n - W`, inside both regions; the regions are
    // distinct (`s` is borrowed, `out`'s spare capacity is not); bytes `len..len + n` are all
    // written, which is all `set_len` exposes.
    unsafe {
        match n {
            16.. => copy_two::<16>(src, dst, n),
            8..=15 => copy_two::<8>(src, dst, n),
            4..=7 => copy_two::<4>(src, dst, n),
            _ => {
                for i in 0..n {
                    dst.add(i).write(*src.add(i));
                }
            }
        }
        out.set_len(len + n);
    }
}

/// Copies `W` bytes from `s` to `d` at offset 0 and at offset `n - W`.
///
/// # Safety
/// `W <= n`; `s` has `n` readable bytes, `d` has `n` writable bytes, and they do not overlap.
#[inline(always)]
unsafe fn copy_two<const W: usize>(s: *const u8, d: *mut u8, n: usize) {
    // SAFETY: both copies lie in `0..n` of each region (the caller's contract).
    unsafe {
        d.cast::<[u8; W]>()
            .write_unaligned(s.cast::<[u8; W]>().read_unaligned());
        d.add(n - W)
            .cast::<[u8; W]>()
            .write_unaligned(s.add(n - W).cast::<[u8; W]>().read_unaligned());
    }
}

/// Appends `,"key":` (the comma only if `comma`) for a key of `n <= 16` bytes that needs no
/// escaping, the first `n` bytes of `block` (the rest is ignored), with one capacity check and
/// one length update.
#[inline(always)]
pub(crate) fn put_key(out: &mut Vec<u8>, comma: bool, block: [u8; 16], n: usize) {
    out.reserve(20);
    let len = out.len();
    assert!(out.capacity() - len >= 20 && n <= 16);
    let c = usize::from(comma);
    // SAFETY: the assert guarantees 20 bytes of spare capacity at `len`. Writes: a comma at
    // `len` (overwritten by the quote when `c == 0`), the quote at `len + c`, 16 bytes at
    // `len + c + 1`, and `":` at `len + c + 1 + n`, ending at most at `len + 1 + 1 + 16 + 2 =
    // len + 20`. Bytes `len..len + c + n + 3` are all initialised by them, which is all
    // `set_len` exposes.
    unsafe {
        let p = out.as_mut_ptr().add(len);
        p.write(b',');
        let q = p.add(c);
        q.write(b'"');
        q.add(1).cast::<[u8; 16]>().write_unaligned(block);
        q.add(1 + n).cast::<[u8; 2]>().write_unaligned(*b"\":");
        out.set_len(len + c + n + 3);
    }
}

/// Appends `-` if `neg`, then the first `n <= 8` bytes of `word` (little-endian: the low byte
/// first), then the first `k <= 8` bytes of `tail = (word, k)` if given, with one capacity
/// check and one length update.
#[inline(always)]
pub(crate) fn put_signed_words(
    out: &mut Vec<u8>,
    neg: bool,
    word: u64,
    n: usize,
    tail: Option<(u64, usize)>,
) {
    out.reserve(17);
    let len = out.len();
    assert!(out.capacity() - len >= 17 && n <= 8 && tail.is_none_or(|(_, k)| k <= 8));
    let s = usize::from(neg);
    // SAFETY: the assert guarantees 17 bytes of spare capacity at `len`: the sign at `len`
    // (overwritten by the word when `s == 0`), the 8-byte word at `len + s <= len + 1` and
    // the 8-byte tail at `len + s + n <= len + 9` stay inside the allocation; bytes
    // `len..len + s + n (+ k)` are initialised by them, which is all `set_len` exposes.
    unsafe {
        let p = out.as_mut_ptr().add(len);
        p.write(b'-');
        p.add(s)
            .cast::<[u8; 8]>()
            .write_unaligned(word.to_le_bytes());
        let mut end = len + s + n;
        if let Some((t, k)) = tail {
            p.add(s + n)
                .cast::<[u8; 8]>()
                .write_unaligned(t.to_le_bytes());
            end += k;
        }
        out.set_len(end);
    }
}

/// Appends `"` + the 24 lowercase hex digits of the ObjectId `id` + `"` with one capacity
/// check: on x86-64 the nibbles are split, interleaved and turned into digits by SSE2 (about
/// fifteen instructions for all 24), elsewhere by [`crate::text::write_hex`], which is also
/// its twin in tests.
#[inline(always)]
pub(crate) fn put_quoted_hex12(out: &mut Vec<u8>, id: &[u8; 12]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_cvtsi32_si128,
            _mm_loadl_epi64, _mm_set1_epi8, _mm_srli_epi16, _mm_storeu_si128, _mm_unpackhi_epi8,
            _mm_unpacklo_epi64, _mm_unpacklo_epi8,
        };
        out.reserve(34);
        let len = out.len();
        assert!(out.capacity() - len >= 34);
        // The id's 12 bytes go into a vector as an 8-byte and a 4-byte load straight from
        // where they are (copying them into a 16-byte stack block first and reloading it
        // stalls on store forwarding).
        let tail = crate::scan::load_u32(id, 8);
        // SAFETY: `_mm_loadl_epi64` reads 8 bytes at `id`, which has 12; SSE2 is part of the
        // x86_64 baseline. The assert guarantees 34 bytes of spare capacity at `len`: the
        // quote at `len`, 16 bytes at `len + 1`, 16 at `len + 17` (of which 8 are kept) and
        // the quote at `len + 25` stay inside the allocation, and bytes `len..len + 26` are
        // all written, which is all `set_len` exposes.
        unsafe {
            let v = _mm_unpacklo_epi64(
                _mm_loadl_epi64(id.as_ptr().cast()),
                _mm_cvtsi32_si128(tail as i32),
            );
            let low4 = _mm_set1_epi8(0x0f);
            let hi = _mm_and_si128(_mm_srli_epi16(v, 4), low4);
            let lo = _mm_and_si128(v, low4);
            // n -> '0' + n, plus 39 ('a' - '0' - 10) where n > 9.
            let digits = |n: __m128i| {
                let letters = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(39));
                _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)), letters)
            };
            let first = digits(_mm_unpacklo_epi8(hi, lo)); // bytes 0..8, high nibble first
            let second = digits(_mm_unpackhi_epi8(hi, lo)); // bytes 8..16 (8..12 kept)
            let p = out.as_mut_ptr().add(len);
            p.write(b'"');
            _mm_storeu_si128(p.add(1).cast(), first);
            _mm_storeu_si128(p.add(17).cast(), second);
            p.add(25).write(b'"');
            out.set_len(len + 26);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        out.push(b'"');
        crate::text::write_hex(out, id);
        out.push(b'"');
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
            let block = *crate::scan::block16(buf, from);
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

    fn both(s: &[u8]) -> Vec<u8> {
        let mut a = Vec::new();
        let ascii = write_escaped(&mut a, s);
        assert_eq!(ascii, s.is_ascii(), "ascii flag for {s:?}");
        let mut b = Vec::new();
        write_escaped_plain(&mut b, s);
        assert_eq!(a, b, "input {s:?}");
        a
    }

    #[test]
    fn short_runs_at_every_position_near_the_end() {
        // Every run of 0..=16 bytes ending within the last 16 bytes of a buffer, empty runs
        // included (regression: an empty run there once shifted a u128 by 128).
        let buf: Vec<u8> = (0..40u8)
            .map(|i| if i % 7 == 3 { b'"' } else { b'a' + i % 26 })
            .collect();
        for to in 0..=buf.len() {
            for from in to.saturating_sub(16)..=to {
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
            for pos in 0..17 {
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
            for pos in 0..if cfg!(miri) { 3 } else { 40 } {
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
    fn push_small_copies_every_length() {
        let src: Vec<u8> = (0..32u8).map(|i| b'A' + i).collect();
        for n in 0..=32 {
            for pre in [0usize, 1, 7] {
                let mut out = vec![b'x'; pre];
                push_small(&mut out, &src[..n]);
                let mut want = vec![b'x'; pre];
                want.extend_from_slice(&src[..n]);
                assert_eq!(out, want, "n {n} pre {pre}");
            }
        }
    }

    #[test]
    fn put_key_writes_comma_quotes_key_and_colon() {
        let key: Vec<u8> = (0..16u8).map(|i| b'a' + i).collect();
        for n in 0..=16 {
            for comma in [false, true] {
                let mut block = [0xEEu8; 16]; // lanes past `n` must be ignored
                block[..n].copy_from_slice(&key[..n]);
                let mut out = b"{".to_vec();
                put_key(&mut out, comma, block, n);
                let mut want = b"{".to_vec();
                if comma {
                    want.push(b',');
                }
                want.push(b'"');
                want.extend_from_slice(&key[..n]);
                want.extend_from_slice(b"\":");
                assert_eq!(out, want, "n {n} comma {comma}");
            }
        }
    }

    #[test]
    fn quoted_object_id_hex_matches_the_table() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..if cfg!(miri) { 20 } else { 20_000 } {
            let mut id = [0u8; 12];
            for b in id.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *b = seed as u8;
            }
            if round < 256 {
                id = [round as u8; 12]; // every byte value in every position
            }
            let mut a = b"x".to_vec();
            put_quoted_hex12(&mut a, &id);
            let mut b = b"x\"".to_vec();
            crate::text::write_hex_plain(&mut b, &id);
            b.push(b'"');
            assert_eq!(a, b, "{id:02x?}");
        }
    }

    #[test]
    fn widen16_matches_its_plain_twin() {
        let mut x = 0x243F_6A88_85A3_08D3u64;
        for round in 0..20_000 {
            let mut src = [0u8; 16];
            for b in src.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly ASCII, sometimes high bytes, so masks of every density come up.
                *b = if round % 3 == 0 {
                    x as u8
                } else {
                    (x as u8) & 0x7F | ((x >> 60) as u8 & 0x80)
                };
            }
            let (mut a, mut b) = ([7u16; 16], [9u16; 16]);
            assert_eq!(
                widen16(&src, &mut a),
                widen16_plain(&src, &mut b),
                "{src:02X?}"
            );
            assert_eq!(a, b);
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
