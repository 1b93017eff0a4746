//! The options every export takes, already resolved by the JavaScript layer (`lib/options.js`,
//! passed on by `lib/native`) into plain numbers, so a call costs no property lookups: `flags` (the
//! [`OptionFlag`] bits, the dialect in the two low bits), `maxDepth` and `maxOutputBytes`; the
//! single-document calls pack the first two into one number (`flags | maxDepth << FLAG_BITS`).

use bson2json_core::{BsonVersion, Dialect, Options, Utf8Mode};
use napi_derive::napi;

/// The bits of every call's `flags` argument. Exported to JavaScript (the generated
/// `binding.d.ts` carries it): `lib/options.js` reads its bits from this enum, and
/// `__test__/native/reentry.spec.ts` checks each option sets its bit. The two low bits are the dialect.
#[napi]
pub enum OptionFlag {
    /// `dialect: 'relaxed'` (the low two bits: 0 compat, 1 relaxed, 2 canonical).
    Relaxed = 1,
    /// `dialect: 'canonical'`.
    Canonical = 2,
    /// `utf8: 'replace'`.
    Utf8Replace = 4,
    /// `bsonVersion: 6`.
    Bson6 = 8,
    /// `promoteLongs: false`.
    Longs = 16,
    /// `promoteBuffers: true`.
    Buffers = 32,
    /// `bsonRegExp: true`.
    BsonRegExp = 64,
    /// `promoteValues: false`.
    NoPromote = 128,
}

const fn bit(f: OptionFlag) -> u32 {
    f as u32
}

/// Decodes the wrapper's packed option numbers.
pub(crate) fn decode(flags: u32, max_depth: u32, max_output_bytes: f64) -> Options {
    Options {
        dialect: match flags & (bit(OptionFlag::Relaxed) | bit(OptionFlag::Canonical)) {
            1 => Dialect::Relaxed,
            2 => Dialect::Canonical,
            _ => Dialect::Compat,
        },
        utf8: if flags & bit(OptionFlag::Utf8Replace) != 0 {
            Utf8Mode::Replace
        } else {
            Utf8Mode::Strict
        },
        max_depth,
        max_output_bytes: if max_output_bytes.is_finite() && max_output_bytes >= 0.0 {
            max_output_bytes as usize
        } else {
            bson2json_core::DEFAULT_MAX_OUTPUT_BYTES
        },
        bson_version: if flags & bit(OptionFlag::Bson6) != 0 {
            BsonVersion::V6
        } else {
            BsonVersion::V7
        },
        promote_longs: flags & bit(OptionFlag::Longs) == 0,
        promote_values: flags & bit(OptionFlag::NoPromote) == 0,
        promote_buffers: flags & bit(OptionFlag::Buffers) != 0,
        bson_regexp: flags & bit(OptionFlag::BsonRegExp) != 0,
    }
}

/// Number of low bits of `packed` (the single-document calls' one number) that hold `flags`;
/// the rest is `maxDepth`.
pub(crate) const FLAG_BITS: u32 = 8;

/// The options of `packed` (`flags | maxDepth << FLAG_BITS`, exact in a double) and
/// `maxOutputBytes`; `None` if `packed` is out of range.
#[inline(always)]
pub(crate) fn unpack(packed: f64, max_out: f64) -> Option<Options> {
    if !(0.0..=((1u64 << (32 + FLAG_BITS)) - 1) as f64).contains(&packed) {
        return None;
    }
    let packed = packed as u64;
    Some(decode(
        (packed & ((1 << FLAG_BITS) - 1)) as u32,
        (packed >> FLAG_BITS) as u32,
        max_out,
    ))
}
