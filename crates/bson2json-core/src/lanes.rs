//! Byte-lane classification: which of 8, 16 or 32 bytes need JSON escaping, are NUL or are
//! non-ASCII, as bit masks, the ASCII-to-UTF-16 widening of 16 or 32 bytes, and the SSSE3
//! UTF-8-to-UTF-16 step of 16 bytes. One of the two modules allowed `unsafe` (the other is
//! [`crate::sink`]): the SSE2, SSSE3 and AVX2 intrinsics below and `with_avx2` /
//! `with_ssse3`, the calls into AVX2- and SSSE3-compiled code after the runtime check, each
//! block with its SAFETY argument. Every SSE2 function has a twin built from 64-bit word
//! arithmetic (SWAR) or a plain loop, used on other targets and held equal by unit tests, the
//! property tests and the `swar` fuzz target; the AVX2 escape loop's twin is the SSE2 one.
//!
//! Word lanes: byte `k` of a little-endian load is lane `k` (bits `8k..8k+7`). The SWAR masks
//! set a lane's high bit; a borrow can only flag a lane *above* a truly flagged lane, so the
//! lowest flagged lane is always exact.

use crate::bytes::load_u64;

pub(crate) const LO: u64 = 0x0101_0101_0101_0101;
pub(crate) const HI: u64 = 0x8080_8080_8080_8080;

/// Returns a word with the high bit set in every byte lane of `x` that is zero, and possibly
/// in lanes *above* a zero lane (borrow propagation), never in lanes below the first zero.
/// The lowest set lane is therefore always the first zero byte (Mycroft's `haszero`).
#[inline(always)]
pub(crate) fn zero_lanes(x: u64) -> u64 {
    x.wrapping_sub(LO) & !x & HI
}

/// High bit set in the lane of the first byte of `x` that needs escaping (possibly also in
/// later lanes; never in an earlier one). Lanes: byte k of the little-endian load is lane k.
///
/// - `x < 0x20`: `(x - 0x20) & !x & 0x80` per lane (a borrow only ever flows upward, from a
///   lane that already matched, so the lowest flagged lane is exact);
/// - `x == '"'` / `x == '\\'`: the same zero test on `x ^ 0x22..` / `x ^ 0x5c..`.
#[inline(always)]
pub(crate) fn escape_lanes(x: u64) -> u64 {
    let ctl = x.wrapping_sub(LO * 0x20) & !x;
    let q = x ^ (LO * u64::from(b'"'));
    let q = q.wrapping_sub(LO) & !q;
    let b = x ^ (LO * u64::from(b'\\'));
    let b = b.wrapping_sub(LO) & !b;
    (ctl | q | b) & HI
}

/// True if `buf[from..from + len]` (with `len <= 16` and 16 readable bytes at `from`) is pure
/// ASCII and needs no escaping, decided from two word loads. Lanes past `len` are ignored.
#[inline(always)]
pub fn short_run_is_plain(buf: &[u8], from: usize, len: usize) -> bool {
    let w = &buf[from..from + 16];
    words_are_plain(load_u64(w, 0), load_u64(w, 8), len)
}

/// Three 16-bit lane masks of `block` (bit k for byte k): bytes that are NUL; bytes that need
/// JSON escaping (`< 0x20`, `"`, `\`) or are non-ASCII (`>= 0x80`); and the non-ASCII ones
/// alone. SSE2, which every x86-64 CPU has: a fraction of the instructions the SWAR words need
/// (ARCHITECTURE.md decision 10). Callers drop the masks they do not use (the function is inlined).
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

/// The escape and non-ASCII masks of 32 bytes (bit k for byte k): bytes that need JSON
/// escaping (`< 0x20`, `"`, `\`) or are non-ASCII, and the non-ASCII ones alone. The AVX2
/// width of [`lanes16`]'s last two masks, for `escape::write_escaped_avx2`; callers must have
/// AVX2 (the attribute makes calling it from elsewhere `unsafe`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn lanes32(block: &[u8; 32]) -> (u32, u32) {
    use std::arch::x86_64::{
        _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8,
    };
    // SAFETY: `block` is 32 readable bytes and `_mm256_loadu_si256` has no alignment
    // requirement; this function only runs where AVX2 is enabled (its attribute).
    let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
    // A signed compare: bytes 0x80..=0xFF are negative, so they count as "below 0x20".
    let low = _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v);
    let quote = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8));
    let backslash = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8));
    let special = _mm256_or_si256(low, _mm256_or_si256(quote, backslash));
    (
        _mm256_movemask_epi8(special) as u32,
        _mm256_movemask_epi8(v) as u32,
    )
}

/// UTF-8 validation 32 bytes at a time, carried from block to block: the Keiser-Lemire
/// "lookup" algorithm (as `simdutf8` and simdjson implement it, three `pshufb` table lookups
/// on the high and low nibbles of each byte and of the byte before it, plus a check that the
/// bytes two and three after a three- or four-byte lead are continuations). It runs inside
/// `escape::write_escaped_utf8_avx2`, on the same loaded vectors the escape masks come from,
/// so a string with non-ASCII bytes is read once rather than escaped and then validated.
/// All-ASCII blocks skip the lookups (they only fail a sequence left open by the block
/// before). Every method needs AVX2 (their attribute makes calling them from code without
/// it `unsafe`). `std::str::from_utf8` is its twin in tests and the `swar` fuzz target.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Utf8Avx2 {
    /// The previous non-ASCII block (its last three bytes are the context of the next one).
    prev: std::arch::x86_64::__m256i,
    /// Non-zero lanes where the previous block ended inside a multi-byte sequence.
    incomplete: std::arch::x86_64::__m256i,
    /// Non-zero lanes wherever an ill-formed sequence was seen.
    error: std::arch::x86_64::__m256i,
}

/// 32 bytes of 0xFF then 32 of zero: the 32 bytes at `32 - n` keep the first `n` lanes.
#[cfg(target_arch = "x86_64")]
static KEEP_FIRST: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 32 {
        t[i] = 0xFF;
        i += 1;
    }
    t
};

#[cfg(target_arch = "x86_64")]
impl Utf8Avx2 {
    /// The state before the first byte of a string.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn new() -> Self {
        use std::arch::x86_64::_mm256_setzero_si256;
        let z = _mm256_setzero_si256();
        Self {
            prev: z,
            incomplete: z,
            error: z,
        }
    }

    /// The escape and non-ASCII masks of `block` (as [`lanes32`]), validating it as the
    /// continuation of the blocks before.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn lanes32(&mut self, block: &[u8; 32]) -> (u32, u32) {
        use std::arch::x86_64::_mm256_loadu_si256;
        // SAFETY: `block` is 32 readable bytes and `_mm256_loadu_si256` has no alignment
        // requirement; this function only runs where AVX2 is enabled (its attribute).
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        self.classify(v)
    }

    /// [`Self::lanes32`] of the last `n < 32` bytes of a string, `buf[at..at + n]`, as if
    /// zeros (ASCII, which ends any open sequence) followed them; the escape mask keeps only
    /// the first `n` lanes. Loads the 32 bytes at `at` when `buf` has them, else copies the
    /// `n` bytes to a zeroed block.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn lanes_tail(&mut self, buf: &[u8], at: usize, n: usize) -> (u32, u32) {
        use std::arch::x86_64::{_mm256_and_si256, _mm256_loadu_si256};
        let v = if let Some(block) = buf.get(at..at + 32) {
            let keep = &KEEP_FIRST[32 - n..64 - n]; // n < 32: in bounds, 32 bytes
                                                    // SAFETY: `block` and `keep` are 32 readable bytes each and unaligned loads have
                                                    // no alignment requirement; AVX2 is enabled (the attribute).
            unsafe {
                _mm256_and_si256(
                    _mm256_loadu_si256(block.as_ptr().cast()),
                    _mm256_loadu_si256(keep.as_ptr().cast()),
                )
            }
        } else {
            let mut block = [0u8; 32];
            block[..n].copy_from_slice(&buf[at..at + n]);
            // SAFETY: as in `lanes32`: a local array of 32 bytes, unaligned load, AVX2.
            unsafe { _mm256_loadu_si256(block.as_ptr().cast()) }
        };
        let (special, non_ascii) = self.classify(v);
        (special & ((1u32 << n) - 1), non_ascii)
    }

    /// Records a block that is all ASCII (from [`lanes32`]'s mask) without classifying it
    /// again: it fails only a sequence left open by the block before, and leaves none open.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn ascii(&mut self) {
        use std::arch::x86_64::{_mm256_or_si256, _mm256_setzero_si256};
        self.error = _mm256_or_si256(self.error, self.incomplete);
        self.incomplete = _mm256_setzero_si256();
    }

    /// True if no block had an ill-formed sequence and the last one ended none open.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn valid(&self) -> bool {
        use std::arch::x86_64::{_mm256_or_si256, _mm256_testz_si256};
        let e = _mm256_or_si256(self.error, self.incomplete);
        _mm256_testz_si256(e, e) != 0
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn classify(&mut self, v: std::arch::x86_64::__m256i) -> (u32, u32) {
        use std::arch::x86_64::{
            _mm256_alignr_epi8, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8,
            _mm256_movemask_epi8, _mm256_or_si256, _mm256_permute2x128_si256, _mm256_set1_epi8,
            _mm256_setr_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16,
            _mm256_subs_epu8, _mm256_xor_si256,
        };
        // The escape masks, as in `lanes32`.
        let low = _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v);
        let quote = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8));
        let backslash = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8));
        let special = _mm256_or_si256(low, _mm256_or_si256(quote, backslash));
        let non_ascii = _mm256_movemask_epi8(v) as u32;
        if non_ascii == 0 {
            self.error = _mm256_or_si256(self.error, self.incomplete);
            return (_mm256_movemask_epi8(special) as u32, 0);
        }
        // The error classes of a byte pair (byte 1 = the byte before, byte 2 = this one);
        // a lane fails if some class is set in all three lookups.
        const TOO_SHORT: i8 = 1 << 0;
        const TOO_LONG: i8 = 1 << 1;
        const OVERLONG_3: i8 = 1 << 2;
        const TOO_LARGE: i8 = 1 << 3;
        const SURROGATE: i8 = 1 << 4;
        const OVERLONG_2: i8 = 1 << 5;
        const TOO_LARGE_1000: i8 = 1 << 6;
        const OVERLONG_4: i8 = 1 << 6;
        const TWO_CONTS: i8 = 1 << 7;
        const CARRY: i8 = TOO_SHORT | TOO_LONG | TWO_CONTS;
        const LARGE: i8 = CARRY | TOO_LARGE | TOO_LARGE_1000;
        const CONT_80: i8 = TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000;
        const CONT_90: i8 = TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE;
        const CONT_A0: i8 = TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE;
        let table = |t: [i8; 16]| {
            _mm256_setr_epi8(
                t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12],
                t[13], t[14], t[15], t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9],
                t[10], t[11], t[12], t[13], t[14], t[15],
            )
        };
        let nib = _mm256_set1_epi8(0x0F);
        let hi4 = |x| _mm256_and_si256(_mm256_srli_epi16::<4>(x), nib);
        // The bytes 1, 2 and 3 places before each lane: this block shifted, with the last
        // bytes of the previous one shifted in.
        let carried = _mm256_permute2x128_si256::<0x21>(self.prev, v);
        let prev1 = _mm256_alignr_epi8::<15>(v, carried);
        let prev2 = _mm256_alignr_epi8::<14>(v, carried);
        let prev3 = _mm256_alignr_epi8::<13>(v, carried);
        let byte_1_high = _mm256_shuffle_epi8(
            table([
                TOO_LONG,
                TOO_LONG,
                TOO_LONG,
                TOO_LONG,
                TOO_LONG,
                TOO_LONG,
                TOO_LONG,
                TOO_LONG,
                TWO_CONTS,
                TWO_CONTS,
                TWO_CONTS,
                TWO_CONTS,
                TOO_SHORT | OVERLONG_2,
                TOO_SHORT,
                TOO_SHORT | OVERLONG_3 | SURROGATE,
                TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
            ]),
            hi4(prev1),
        );
        let byte_1_low = _mm256_shuffle_epi8(
            table([
                CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
                CARRY | OVERLONG_2,
                CARRY,
                CARRY,
                CARRY | TOO_LARGE,
                LARGE,
                LARGE,
                LARGE,
                LARGE,
                LARGE,
                LARGE,
                LARGE,
                LARGE,
                LARGE | SURROGATE,
                LARGE,
                LARGE,
            ]),
            _mm256_and_si256(prev1, nib),
        );
        let byte_2_high = _mm256_shuffle_epi8(
            table([
                TOO_SHORT,
                TOO_SHORT,
                TOO_SHORT,
                TOO_SHORT,
                TOO_SHORT,
                TOO_SHORT,
                TOO_SHORT,
                TOO_SHORT,
                CONT_80 | OVERLONG_4,
                CONT_90,
                CONT_A0,
                CONT_A0,
                TOO_SHORT,
                TOO_SHORT,
                TOO_SHORT,
                TOO_SHORT,
            ]),
            hi4(v),
        );
        let special_cases =
            _mm256_and_si256(_mm256_and_si256(byte_1_high, byte_1_low), byte_2_high);
        // Lanes two after a three-byte lead or three after a four-byte lead must be
        // continuations (0x80 in `special_cases` there, TWO_CONTS); anywhere else they must not.
        let third = _mm256_subs_epu8(prev2, _mm256_set1_epi8(0b1110_0000u8 as i8 - 1));
        let fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8(0b1111_0000u8 as i8 - 1));
        let must23 = _mm256_cmpgt_epi8(_mm256_or_si256(third, fourth), _mm256_setzero_si256());
        let must23_80 = _mm256_and_si256(must23, _mm256_set1_epi8(0x80u8 as i8));
        self.error = _mm256_or_si256(self.error, _mm256_xor_si256(must23_80, special_cases));
        // A lead byte in the last three lanes that needs more bytes than the block has left.
        let max = _mm256_setr_epi8(
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            (0b1111_0000u8 - 1) as i8,
            (0b1110_0000u8 - 1) as i8,
            (0b1100_0000u8 - 1) as i8,
        );
        self.incomplete = _mm256_subs_epu8(v, max);
        self.prev = v;
        (_mm256_movemask_epi8(special) as u32, non_ascii)
    }
}

/// A routine compiled for AVX2 (`#[target_feature(enable = "avx2")]`) that writes into `out`
/// from `buf[from..to]`: such a function coerces to this pointer type, and calling it is
/// `unsafe` only because the CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
pub(crate) type Avx2Writer = unsafe fn(&mut Vec<u8>, &[u8], usize, usize) -> bool;

/// `f(out, buf, from, to)` if this CPU has AVX2 (std caches the answer after the first call:
/// one load and a bit test), else `None`. `f` must be a safe function with AVX2 as its only
/// `target_feature` (as `escape::write_escaped_avx2` is), so that AVX2 is its one
/// precondition; this keeps the `unsafe` call here, with the check that makes it sound.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn with_avx2(
    f: Avx2Writer,
    out: &mut Vec<u8>,
    buf: &[u8],
    from: usize,
    to: usize,
) -> Option<bool> {
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `f`'s only requirement (its `target_feature`, by this function's contract)
        // is that the CPU has AVX2, which was just detected at run time.
        Some(unsafe { f(out, buf, from, to) })
    } else {
        None
    }
}

/// True if every byte of `s` is ASCII (below `0x80`): whether the addon can hand a JSON text
/// to V8 as a one-byte string. On x86-64 the bytes are ORed 16 at a time with SSE2 (the last
/// block overlapping the one before it, so no byte is read twice one by one), with an early
/// answer every 64 bytes; inputs under 16 bytes take two overlapping word loads. The standard
/// library's `is_ascii` checks up to 63 trailing bytes one at a time, most of its cost on the
/// short texts of small documents (ARCHITECTURE.md decision 13). [`is_ascii_swar`] is the twin on
/// other targets; tests and the `swar` fuzz target hold both equal to `<[u8]>::is_ascii`.
#[inline]
pub fn is_ascii(s: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
        let n = s.len();
        if n < 16 {
            return is_ascii_short(s);
        }
        let load = |block: &[u8; 16]| {
            // SAFETY: `block` is 16 readable bytes; an unaligned load has no alignment
            // requirement; SSE2 is in the x86_64 baseline.
            unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
        };
        let (wide, rest) = s.as_chunks::<64>();
        for c in wide {
            let (c, _) = c.as_chunks::<16>();
            // SAFETY: `_mm_or_si128` and `_mm_movemask_epi8` work on registers only; SSE2 is
            // in the x86_64 baseline.
            let any = unsafe {
                _mm_movemask_epi8(_mm_or_si128(
                    _mm_or_si128(load(&c[0]), load(&c[1])),
                    _mm_or_si128(load(&c[2]), load(&c[3])),
                ))
            };
            if any != 0 {
                return false;
            }
        }
        // The last 16 bytes of `s` (overlapping the blocks before them), then the whole
        // blocks of the rest.
        let mut acc = load(crate::bytes::block16(s, n - 16));
        for c in rest.as_chunks::<16>().0 {
            // SAFETY: a register-only SSE2 intrinsic, in the x86_64 baseline.
            acc = unsafe { _mm_or_si128(acc, load(c)) };
        }
        // SAFETY: a register-only SSE2 intrinsic, in the x86_64 baseline.
        unsafe { _mm_movemask_epi8(acc) == 0 }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        is_ascii_swar(s)
    }
}

/// [`is_ascii`] from 64-bit words: eight bytes at a time, the last word overlapping the one
/// before it. The implementation on targets other than x86-64, and a twin in tests there.
#[inline]
pub fn is_ascii_swar(s: &[u8]) -> bool {
    let n = s.len();
    if n < 16 {
        return is_ascii_short(s);
    }
    let mut acc = load_u64(s, n - 8);
    let mut at = 0;
    while at + 8 <= n {
        acc |= load_u64(s, at);
        if at % 64 == 56 && acc & HI != 0 {
            return false;
        }
        at += 8;
    }
    acc & HI == 0
}

/// [`is_ascii`] of fewer than 16 bytes: two overlapping loads of 8 or 4 bytes, or the bytes
/// themselves under 4.
#[inline(always)]
fn is_ascii_short(s: &[u8]) -> bool {
    let n = s.len();
    debug_assert!(n < 16);
    if n >= 8 {
        (load_u64(s, 0) | load_u64(s, n - 8)) & HI == 0
    } else if n >= 4 {
        (crate::bytes::load_u32(s, 0) | crate::bytes::load_u32(s, n - 4)) & 0x8080_8080 == 0
    } else {
        s.iter().fold(0, |a, &b| a | b) < 0x80
    }
}

/// Widens the 16 bytes of `src` to 16 UTF-16 code units in `dst` (each byte zero-extended)
/// and returns the mask of the bytes that are non-ASCII (bit `k` for byte `k`): the ASCII
/// step of `utf8::to_utf16`, which keeps only the units before the first set bit.
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

/// [`widen16`] of 32 bytes: widens both halves of `src` into `dst` and returns the mask of the
/// non-ASCII bytes (bit `k` for byte `k`). [`widen32_plain`] is its twin in tests.
#[cfg(any(target_arch = "x86_64", test))]
#[inline(always)]
pub(crate) fn widen32(src: &[u8; 32], dst: &mut [u16; 32]) -> u32 {
    let (s0, s1) = src.split_at(16);
    let (d0, d1) = dst.split_at_mut(16);
    let (s0, s1): (&[u8; 16], &[u8; 16]) = (
        s0.try_into().unwrap_or_else(|_| unreachable!()),
        s1.try_into().unwrap_or_else(|_| unreachable!()),
    );
    let (d0, d1): (&mut [u16; 16], &mut [u16; 16]) = (
        d0.try_into().unwrap_or_else(|_| unreachable!()),
        d1.try_into().unwrap_or_else(|_| unreachable!()),
    );
    widen16(s0, d0) | widen16(s1, d1) << 16
}

/// The plain twin of [`widen32`]: a loop over the bytes.
#[cfg(test)]
fn widen32_plain(src: &[u8; 32], dst: &mut [u16; 32]) -> u32 {
    let mut high = 0u32;
    for k in 0..32 {
        dst[k] = u16::from(src[k]);
        high |= u32::from(src[k] >> 7) << k;
    }
    high
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

/// The `pshufb` control that packs the 16-bit lanes of an 8-lane vector whose bits are set in
/// the index (lane `l` for bit `l`) to the front, in order; the other bytes are zeroed.
#[cfg(target_arch = "x86_64")]
static PACK16: [[u8; 16]; 256] = {
    let mut t = [[0x80u8; 16]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut l, mut out) = (0, 0);
        while l < 8 {
            if m & (1 << l) != 0 {
                t[m][2 * out] = 2 * l as u8;
                t[m][2 * out + 1] = 2 * l as u8 + 1;
                out += 1;
            }
            l += 1;
        }
        m += 1;
    }
    t
};

/// Converts the UTF-8 characters at the front of the 16 bytes `src` to UTF-16 in `dst` and
/// returns `(bytes, units)`: the bytes it consumed and the units it wrote (the rest of `dst`
/// is scratch). The step of `utf8::to_utf16` on CPUs with SSSE3, for well-formed UTF-8 that
/// starts at a character:
///
/// - all 16 bytes ASCII: all of them, widened (16, 16);
/// - else the characters of one to three bytes that end at byte 14 or before, and before the
///   first byte `>= 0xF0` (a four-byte lead: its surrogate pair is left to the scalar
///   decoder); `(0, 0)` if there is none.
///
/// A character ends at byte `k` when byte `k + 1` is not a continuation (`0b10xx_xxxx`); its
/// code point is computed in every 16-bit lane from the byte and the two before it and the
/// lanes of the ends are packed with `pshufb` ([`PACK16`], eight lanes at a time), as in
/// Lemire and Keiser's "Transcoding billions of Unicode characters per second with SIMD
/// instructions" without their tables of whole-block patterns. The byte before byte 0 reads
/// as zero. The result is defined for any bytes (ill-formed input gives other units, never
/// more units than bytes); [`utf8_block_to_utf16_plain`] computes exactly the same and is its
/// twin in tests and the `swar` fuzz target.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3,popcnt")]
#[inline]
pub(crate) fn utf8_block_to_utf16_ssse3(src: &[u8; 16], dst: &mut [u16; 16]) -> (usize, usize) {
    use std::arch::x86_64::{
        _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8, _mm_setzero_si128, _mm_shuffle_epi8, _mm_slli_epi16,
        _mm_slli_si128, _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpacklo_epi8, _mm_xor_si128,
    };
    // SAFETY: `src` is 16 readable bytes; unaligned loads have no alignment requirement.
    let v = unsafe { _mm_loadu_si128(src.as_ptr().cast()) };
    let z = _mm_setzero_si128();
    let d = dst.as_mut_ptr();
    let high = _mm_movemask_epi8(v) as u32;
    if high == 0 {
        // SAFETY: `dst` is 32 writable bytes; the second store at unit 8 covers units 8..16.
        unsafe {
            _mm_storeu_si128(d.cast(), _mm_unpacklo_epi8(v, z));
            _mm_storeu_si128(d.add(8).cast(), _mm_unpackhi_epi8(v, z));
        }
        return (16, 16);
    }
    let f0 = _mm_set1_epi8(0xF0u8 as i8);
    let four = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, f0), v)) as u32;
    let cont = _mm_cmpeq_epi8(
        _mm_and_si128(v, _mm_set1_epi8(0xC0u8 as i8)),
        _mm_set1_epi8(0x80u8 as i8),
    );
    let cont_bits = _mm_movemask_epi8(cont) as u32;
    // Ends at bytes 0..=14 (byte 15's follower is unknown), before the first four-byte lead.
    let before_four = (1u32 << (four | 0x1_0000).trailing_zeros()) - 1;
    let ends = !(cont_bits >> 1) & 0x7FFF & before_four;
    if ends == 0 {
        return (0, 0);
    }
    // Payload bits per byte: 7 of an ASCII byte, 6 of a continuation; of the byte before a
    // continuation, 5 (a two-byte lead) or 6 (another continuation); 4 of a three-byte lead.
    let c0 = _mm_and_si128(
        v,
        _mm_xor_si128(
            _mm_set1_epi8(0x7F),
            _mm_and_si128(cont, _mm_set1_epi8(0x40)),
        ),
    );
    let v1 = _mm_slli_si128::<1>(v);
    let cont1 = _mm_slli_si128::<1>(cont);
    let m1 = _mm_and_si128(
        cont,
        _mm_and_si128(
            v1,
            _mm_or_si128(
                _mm_set1_epi8(0x1F),
                _mm_and_si128(cont1, _mm_set1_epi8(0x20)),
            ),
        ),
    );
    let m2 = _mm_and_si128(
        _mm_and_si128(cont, cont1),
        _mm_and_si128(_mm_slli_si128::<2>(v), _mm_set1_epi8(0x0F)),
    );
    // Bytes `<= 0x0F` shifted by 4 stay in their byte: `m2 << 4` is the high byte of `m2 << 12`.
    let m2 = _mm_slli_epi16::<4>(m2);
    let lo = _mm_or_si128(
        _mm_unpacklo_epi8(c0, m2),
        _mm_slli_epi16::<6>(_mm_unpacklo_epi8(m1, z)),
    );
    let hi = _mm_or_si128(
        _mm_unpackhi_epi8(c0, m2),
        _mm_slli_epi16::<6>(_mm_unpackhi_epi8(m1, z)),
    );
    let (ends_lo, ends_hi) = ((ends & 0xFF) as usize, (ends >> 8) as usize);
    let at = ends_lo.count_ones() as usize;
    // SAFETY: the `PACK16` rows are 16 readable bytes; `dst` is 32 writable bytes and
    // `at <= 8`, so the second store (units `at..at + 8`) ends within it.
    unsafe {
        let p_lo = _mm_loadu_si128(PACK16[ends_lo].as_ptr().cast());
        let p_hi = _mm_loadu_si128(PACK16[ends_hi].as_ptr().cast());
        _mm_storeu_si128(d.cast(), _mm_shuffle_epi8(lo, p_lo));
        _mm_storeu_si128(d.add(at).cast(), _mm_shuffle_epi8(hi, p_hi));
    }
    (
        (32 - ends.leading_zeros()) as usize,
        ends.count_ones() as usize,
    )
}

/// Whether this CPU has SSSE3 and POPCNT, the `target_feature`s of the UTF-16 step (std
/// caches the answer: one load and a bit test each).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn has_ssse3() -> bool {
    std::arch::is_x86_feature_detected!("ssse3") && std::arch::is_x86_feature_detected!("popcnt")
}

/// A UTF-8 to UTF-16 converter compiled for SSSE3 and POPCNT
/// (`#[target_feature(enable = "ssse3,popcnt")]`), as `utf8::to_utf16_ssse3`: calling it is
/// `unsafe` only because the CPU must have both.
#[cfg(target_arch = "x86_64")]
pub(crate) type Ssse3Converter = unsafe fn(&[u8], &mut [u16]) -> usize;

/// `f(s, dst)` if this CPU has SSSE3 and POPCNT (every x86-64 CPU since 2008-2009; std caches
/// the answer: one load and a bit test), else `None`. `f` must be a safe function with those
/// two as its only `target_feature`s, so that they are its one precondition (as for
/// [`with_avx2`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn with_ssse3(f: Ssse3Converter, s: &[u8], dst: &mut [u16]) -> Option<usize> {
    if has_ssse3() {
        // SAFETY: `f`'s only requirement (its `target_feature`s, by this function's contract)
        // is that the CPU has SSSE3 and POPCNT, which were just detected at run time.
        Some(unsafe { f(s, dst) })
    } else {
        None
    }
}

/// [`utf8_block_to_utf16_ssse3`] if this CPU has SSSE3 and POPCNT, else `None`: for the tests and the
/// `swar` fuzz target, which hold it equal to [`utf8_block_to_utf16_plain`].
pub fn utf8_block_to_utf16(src: &[u8; 16], dst: &mut [u16; 16]) -> Option<(usize, usize)> {
    #[cfg(target_arch = "x86_64")]
    if has_ssse3() {
        // SAFETY: SSSE3 and POPCNT, the function's only `target_feature`s, were just detected.
        return Some(unsafe { utf8_block_to_utf16_ssse3(src, dst) });
    }
    let _ = (src, dst);
    None
}

/// The plain twin of [`utf8_block_to_utf16_ssse3`]: the same rules, byte by byte.
pub fn utf8_block_to_utf16_plain(src: &[u8; 16], dst: &mut [u16; 16]) -> (usize, usize) {
    if src.is_ascii() {
        for k in 0..16 {
            dst[k] = u16::from(src[k]);
        }
        return (16, 16);
    }
    let is_cont = |k: usize| k < 16 && src[k] & 0xC0 == 0x80;
    let four = src.iter().position(|&b| b >= 0xF0).unwrap_or(16);
    let (mut used, mut units) = (0, 0);
    for k in 0..15.min(four) {
        if is_cont(k + 1) {
            continue;
        }
        let b = |back: usize| k.checked_sub(back).map_or(0, |i| u16::from(src[i]));
        let c1 = k >= 1 && is_cont(k - 1);
        let mut c = b(0) & if is_cont(k) { 0x3F } else { 0x7F };
        if is_cont(k) {
            c |= (b(1) & if c1 { 0x3F } else { 0x1F }) << 6;
            if c1 {
                c |= (b(2) & 0x0F) << 12;
            }
        }
        dst[units] = c;
        units += 1;
        used = k + 1;
    }
    (used, units)
}

/// [`short_run_is_plain`] with 64-bit word arithmetic only (the SSE2 path's twin in tests and
/// the `swar` fuzz target).
#[inline]
pub fn short_run_is_plain_swar(buf: &[u8], from: usize, len: usize) -> bool {
    let w = &buf[from..from + 16];
    words_are_plain_swar(load_u64(w, 0), load_u64(w, 8), len)
}

/// True if the first `len <= 16` bytes of the little-endian words `w0`, `w1` are pure ASCII
/// and need no escaping. Lanes past `len` are ignored.
#[inline(always)]
pub(crate) fn words_are_plain(w0: u64, w1: u64, len: usize) -> bool {
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

/// The little-endian words `w0`, `w1` as 16 bytes (`w0`'s low byte first).
#[inline(always)]
pub(crate) fn words_block(w0: u64, w1: u64) -> [u8; 16] {
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&w0.to_le_bytes());
    block[8..].copy_from_slice(&w1.to_le_bytes());
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_ascii_matches_the_standard_library() {
        // Every length to 300, all ASCII and with one high byte at each position, from offsets
        // 0-3 of a buffer (so the loads are unaligned in every way), then random texts.
        // Under miri: the short forms, one and two 16-byte blocks, and both sides of the
        // 64-byte step, from two offsets, with one high byte value.
        let lengths: Vec<usize> = if cfg!(miri) {
            (0..=20)
                .chain([31, 32, 33, 63, 64, 65, 79, 128, 129])
                .collect()
        } else {
            (0..=300).collect()
        };
        let highs: &[u8] = if cfg!(miri) {
            &[0x80]
        } else {
            &[0x80, 0xC3, 0xFF]
        };
        let mut buf = vec![b'a'; 304];
        for len in lengths {
            for off in 0..if cfg!(miri) { 2 } else { 4 } {
                let s = &mut buf[off..off + len];
                assert!(is_ascii(s) && is_ascii_swar(s), "ascii len {len} off {off}");
                for at in 0..len {
                    for &high in highs {
                        s[at] = high;
                        assert!(!is_ascii(s), "len {len} off {off}: 0x{high:x} at {at}");
                        assert!(
                            !is_ascii_swar(s),
                            "swar len {len} off {off}: 0x{high:x} at {at}"
                        );
                        s[at] = 0x7F;
                        assert!(is_ascii(s) && is_ascii_swar(s), "0x7f at {at}, len {len}");
                        s[at] = b'a';
                    }
                }
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..if cfg!(miri) { 50 } else { 20_000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 700) as usize;
            let s: Vec<u8> = (0..len)
                .map(|k| {
                    let r = x.rotate_left(k as u32 % 64) as u8;
                    // One round in four has high bytes now and then, the rest none.
                    if round % 4 == 0 && k % 97 == 13 {
                        r | 0x80
                    } else {
                        r & 0x7F
                    }
                })
                .collect();
            assert_eq!(is_ascii(&s), s.is_ascii(), "round {round}, len {len}");
            assert_eq!(
                is_ascii_swar(&s),
                s.is_ascii(),
                "swar round {round}, len {len}"
            );
        }
    }

    #[test]
    fn widen16_matches_its_plain_twin() {
        let mut x = 0x243F_6A88_85A3_08D3u64;
        for round in 0..if cfg!(miri) { 300 } else { 20_000 } {
            let mut src = [0u8; 16];
            for b in &mut src {
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
            let mut src32 = [0u8; 32];
            src32[..16].copy_from_slice(&src);
            src32[16..].copy_from_slice(&[src, [0x41; 16]][round % 2]);
            src32.rotate_left(round % 32);
            let (mut a, mut b) = ([7u16; 32], [9u16; 32]);
            assert_eq!(
                widen32(&src32, &mut a),
                widen32_plain(&src32, &mut b),
                "{src32:02X?}"
            );
            assert_eq!(a, b);
        }
    }

    /// Checks the SSSE3 block step against its plain twin (where the CPU has SSSE3): the
    /// same `(bytes, units)` and the same first `units` units.
    fn block_both(src: &[u8; 16]) {
        let (mut a, mut b) = ([7u16; 16], [9u16; 16]);
        let plain = utf8_block_to_utf16_plain(src, &mut b);
        assert!(plain.1 <= plain.0, "{src:02X?}");
        if let Some(fast) = utf8_block_to_utf16(src, &mut a) {
            assert_eq!(fast, plain, "{src:02X?}");
            assert_eq!(a[..fast.1], b[..plain.1], "{src:02X?}");
        }
    }

    #[test]
    fn utf8_block_to_utf16_matches_its_plain_twin() {
        // Bytes from every class (ASCII, continuation, two-, three- and four-byte leads, bytes
        // no UTF-8 has), so that ill-formed blocks come up too, and blocks of well-formed text
        // at every byte offset.
        const CLASS: [u8; 12] = [
            0x00, 0x41, 0x7F, 0x80, 0x9F, 0xBF, 0xC2, 0xDF, 0xE3, 0xEF, 0xF0, 0xFF,
        ];
        let mut x = 0x1319_8A2E_0370_7344u64;
        for round in 0..if cfg!(miri) { 200 } else { 50_000 } {
            let mut src = [0u8; 16];
            for b in &mut src {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = if round % 2 == 0 {
                    CLASS[(x % CLASS.len() as u64) as usize]
                } else {
                    x as u8
                };
            }
            block_both(&src);
        }
        let text = "Zoë 日本語 Привет 🚀 naïve €uro ASCII then 👍🏽 한국어 \u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000} end, and more ASCII";
        let b = text.as_bytes();
        for from in 0..b.len() - 16 {
            block_both(b[from..from + 16].try_into().unwrap());
        }
    }
}
