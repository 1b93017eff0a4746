//! Reading the input: the one place that turns input bytes into little-endian integers. Every
//! read is a bounds-checked slice copied into an array, which the optimiser turns into a
//! single bounds check and an unaligned load; there is no over-read and the result does not
//! depend on the machine's byte order.

/// The little-endian `u64` at `b[at..at + 8]` as one load (a slice pattern the optimiser turns
/// into a single bounds check and an unaligned load; indexing eight bytes one by one does not).
#[inline(always)]
pub(crate) fn load_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The little-endian `u32` at `b[at..at + 4]` as one load.
#[inline(always)]
pub(crate) fn load_u32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

/// The little-endian `i32` at `b[at..at + 4]` (BSON's lengths and `int32` values).
#[inline(always)]
pub(crate) fn load_i32(b: &[u8], at: usize) -> i32 {
    load_u32(b, at) as i32
}

/// The 16 bytes at `b[at..at + 16]` as an array reference (one bounds check).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn block16(b: &[u8], at: usize) -> &[u8; 16] {
    match b[at..at + 16].try_into() {
        Ok(block) => block,
        Err(_) => unreachable!(),
    }
}
