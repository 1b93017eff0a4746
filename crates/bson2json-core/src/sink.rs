//! The unchecked output sink: appending to the output `Vec` with fixed-width stores into
//! capacity reserved (and asserted) beforehand, instead of `extend_from_slice`'s length-
//! dependent `memcpy` call. One of the two modules allowed `unsafe` (the other is
//! [`crate::lanes`]); each block states the capacity argument that makes its writes stay inside
//! the allocation and which bytes it initialises before `set_len` exposes them. Each writer is
//! held equal to `extend_from_slice` of the same bytes by the unit tests below.

#[cfg(target_arch = "x86_64")]
use crate::bytes::load_u32;

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

/// Copies `src[from..to]` and then the first `n <= 8` bytes of `word` (little-endian: the low
/// byte first) to the end of `out`, with one capacity check and one length update: a clean run
/// and the escape after it. A run of up to 16 bytes is one 16-byte block (as in [`copy_run`])
/// when `src` has 16 readable bytes from `from`; any other goes to `memcpy`. `out`'s spare
/// capacity must hold `to - from + 16` bytes (the word is written at most 8 bytes past the
/// run). Only the AVX2 escaper-validator (x86-64) writes this way.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn copy_run_then_word(
    out: &mut Vec<u8>,
    src: &[u8],
    from: usize,
    to: usize,
    word: u64,
    n: usize,
) {
    let run = to - from;
    let len = out.len();
    assert!(out.capacity() - len >= run + 16 && from <= to && to <= src.len() && n <= 8);
    if run <= 16 && from + 16 <= src.len() {
        let mut block = [0u8; 16];
        block.copy_from_slice(&src[from..from + 16]);
        // SAFETY: the assert guarantees 16 bytes of spare capacity at `len`; the block is a
        // local array, so the regions do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(block.as_ptr(), out.as_mut_ptr().add(len), 16);
        }
    } else {
        let s = &src[from..to];
        // SAFETY: the assert guarantees `run + 16` bytes of spare capacity at `len`, so the
        // `run` bytes written stay inside the allocation; `s` is borrowed from `src`, not
        // from `out`, so the regions do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), out.as_mut_ptr().add(len), run);
        }
    }
    // SAFETY: `run + 8 <= run + 16` bytes of spare capacity at `len` (the assert), so the
    // unaligned 8-byte write at `len + run` stays inside the allocation; bytes
    // `len..len + run` were written above and `len + run..len + run + n` (`n <= 8`) here,
    // which is all `set_len` exposes.
    unsafe {
        out.as_mut_ptr()
            .add(len + run)
            .cast::<[u8; 8]>()
            .write_unaligned(word.to_le_bytes());
        out.set_len(len + run + n);
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

/// Appends `"` + the first `n <= 16` bytes of `block` + `"` with one capacity check and one
/// length update (three stores).
#[inline(always)]
pub(crate) fn put_quoted(out: &mut Vec<u8>, block: [u8; 16], n: usize) {
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

/// [`put_key`] with the key's sixteen bytes as two little-endian words (`w0`'s low byte
/// first): the same output, written by two 8-byte stores.
#[inline(always)]
pub(crate) fn put_key_words(out: &mut Vec<u8>, comma: bool, w0: u64, w1: u64, n: usize) {
    out.reserve(20);
    let len = out.len();
    assert!(out.capacity() - len >= 20 && n <= 16);
    let c = usize::from(comma);
    // SAFETY: as in `put_key`: the assert guarantees 20 bytes of spare capacity at `len`.
    // Writes: a comma at `len` (overwritten by the quote when `c == 0`), the quote at
    // `len + c`, the two words at `len + c + 1` and `len + c + 9` (16 bytes), and `":` at
    // `len + c + 1 + n`, ending at most at `len + 20`. Bytes `len..len + c + n + 3` are all
    // initialised by them, which is all `set_len` exposes.
    unsafe {
        let p = out.as_mut_ptr().add(len);
        p.write(b',');
        let q = p.add(c);
        q.write(b'"');
        q.add(1).cast::<[u8; 8]>().write_unaligned(w0.to_le_bytes());
        q.add(9).cast::<[u8; 8]>().write_unaligned(w1.to_le_bytes());
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
/// check: on x86-64 the nibbles are split, interleaved and turned into digits by SSE2 (a few
/// vector instructions for all 24; ARCHITECTURE.md decision 11), elsewhere by a plain loop; `text::write_hex_plain` is its
/// twin in tests.
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
        let tail = load_u32(id, 8);
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
        const HEX: &[u8; 16] = b"0123456789abcdef";
        out.push(b'"');
        for &b in id {
            out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
        out.push(b'"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn copy_run_then_word_writes_the_run_and_the_word() {
        // Every run of 0-200 bytes that starts or ends at every place near the source's ends
        // (so each copy path meets a source without 16 bytes after the run), then every word
        // length.
        let src: Vec<u8> = (0..200u8)
            .map(|i| i.wrapping_mul(7).wrapping_add(1))
            .collect();
        let word = u64::from_le_bytes(*b"\\u001fXY");
        // Under miri: runs to two blocks and one past, from two starts and from every place that
        // leaves at most 16 bytes after the run (where a 16-byte load could cross the end).
        let runs: Vec<usize> = if cfg!(miri) {
            (0..=33).chain([40]).collect()
        } else {
            (0..=200).collect()
        };
        let (head, step, tail) = if cfg!(miri) { (4, 3, 17) } else { (20, 1, 20) };
        for run in runs {
            let near =
                |f: &usize| (*f < head && f.is_multiple_of(step)) || *f + run + tail > src.len();
            for from in (0..=src.len() - run).filter(near) {
                let to = from + run;
                for n in [0, 2, 6, 8] {
                    let mut out = vec![b'p'; 3];
                    out.reserve(run + 16);
                    copy_run_then_word(&mut out, &src, from, to, word, n);
                    let mut want = vec![b'p'; 3];
                    want.extend_from_slice(&src[from..to]);
                    want.extend_from_slice(&word.to_le_bytes()[..n]);
                    assert_eq!(out, want, "{from}..{to}, n {n}");
                }
            }
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
    fn put_key_words_writes_what_put_key_writes() {
        let key: Vec<u8> = (0..16u8).map(|i| b'a' + i).collect();
        for n in 0..=16 {
            for comma in [false, true] {
                let mut block = [0xEEu8; 16]; // lanes past `n` must be ignored
                block[..n].copy_from_slice(&key[..n]);
                let w0 = u64::from_le_bytes(block[..8].try_into().unwrap());
                let w1 = u64::from_le_bytes(block[8..].try_into().unwrap());
                let mut out = b"{".to_vec();
                put_key_words(&mut out, comma, w0, w1, n);
                let mut want = b"{".to_vec();
                put_key(&mut want, comma, block, n);
                assert_eq!(out, want, "n {n} comma {comma}");
                let mut plain = b"{".to_vec();
                if comma {
                    plain.push(b',');
                }
                plain.push(b'"');
                plain.extend_from_slice(&key[..n]);
                plain.extend_from_slice(b"\":");
                assert_eq!(out, plain, "n {n} comma {comma}");
            }
        }
    }

    #[test]
    fn quoted_object_id_hex_matches_the_table() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..if cfg!(miri) { 20 } else { 20_000 } {
            let mut id = [0u8; 12];
            for b in &mut id {
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
}
