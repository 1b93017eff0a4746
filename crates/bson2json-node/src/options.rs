//! The one encoding of the options across the boundary. The JavaScript layer resolves the options
//! once (`lib/options.js`) into two numbers, and every export that transcodes takes that pair at
//! the same place and decodes it here ([`decode`]), so a call costs no property lookups:
//!
//! - `packed`: the [`OptionFlag`] bits (the dialect in the two low bits) plus `maxDepth` above
//!   the low [`FLAG_BITS`] bits (`flags + maxDepth * 2 ** FLAG_BITS`, exact in a double);
//! - `maxOutputBytes`.
//!
//! The single-document calls may leave both out, or `maxOutputBytes` alone, for the defaults;
//! the WASI build's staged calls read the pair from their arguments region (`staged.rs`). The
//! numbers JavaScript needs to encode the pair (the flag bits, [`FLAG_BITS`], the defaults)
//! are exported from here (the generated `binding.d.ts` carries them), not restated there.

use bson2json_core::{BsonVersion, Dialect, Options, Utf8Mode};
use napi::{Error, Status};
use napi_derive::napi;

/// The bits of `packed` below `maxDepth`. Exported to JavaScript (`lib/native` reads it).
/// Room for eight more flags: a new [`OptionFlag`] changes neither it nor any call.
#[napi]
pub const FLAG_BITS: u32 = 16;

/// The default maximum nesting depth (the core's), exported to JavaScript.
#[napi]
pub const DEFAULT_MAX_DEPTH: u32 = bson2json_core::DEFAULT_MAX_DEPTH;

/// The default maximum output size in bytes (the core's), exported to JavaScript.
#[napi]
pub const DEFAULT_MAX_OUTPUT_BYTES: u32 = bson2json_core::DEFAULT_MAX_OUTPUT_BYTES as u32;

/// The flag bits of `packed`. Exported to JavaScript (the generated `binding.d.ts` carries
/// it): `lib/options.js` reads its bits from this enum, and `__test__/native/reentry.spec.ts`
/// checks each option sets its bit. The two low bits are the dialect.
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

/// Every flag bit [`decode`] knows: a `packed` with any other bit set is refused.
const KNOWN: u32 = bit(OptionFlag::Relaxed)
    | bit(OptionFlag::Canonical)
    | bit(OptionFlag::Utf8Replace)
    | bit(OptionFlag::Bson6)
    | bit(OptionFlag::Longs)
    | bit(OptionFlag::Buffers)
    | bit(OptionFlag::BsonRegExp)
    | bit(OptionFlag::NoPromote);

const _: () = assert!(KNOWN < 1 << FLAG_BITS, "OptionFlag has outgrown FLAG_BITS");

/// The options of the pair `(packed, maxOutputBytes)`; `None` unless both are whole numbers in
/// range, `packed` holds only known flags and at most one dialect.
#[inline(always)]
pub(crate) fn unpack(packed: f64, max_output_bytes: f64) -> Option<Options> {
    // A whole number in `0..=max` (NaN fails every comparison; `as` saturates). Not `fract`,
    // which is a call into libm on x86-64 without SSE4.1.
    let whole = |x: f64, max: u64| x >= 0.0 && x <= max as f64 && x as u64 as f64 == x;
    if !whole(packed, (1 << (32 + FLAG_BITS)) - 1) || !whole(max_output_bytes, u32::MAX.into()) {
        return None;
    }
    let packed = packed as u64;
    let flags = (packed & ((1 << FLAG_BITS) - 1)) as u32;
    let dialect = match flags & (bit(OptionFlag::Relaxed) | bit(OptionFlag::Canonical)) {
        0 => Dialect::Compat,
        1 => Dialect::Relaxed,
        2 => Dialect::Canonical,
        _ => return None,
    };
    if flags & !KNOWN != 0 {
        return None;
    }
    Some(Options {
        dialect,
        utf8: if flags & bit(OptionFlag::Utf8Replace) != 0 {
            Utf8Mode::Replace
        } else {
            Utf8Mode::Strict
        },
        max_depth: (packed >> FLAG_BITS) as u32,
        max_output_bytes: max_output_bytes as usize,
        bson_version: if flags & bit(OptionFlag::Bson6) != 0 {
            BsonVersion::V6
        } else {
            BsonVersion::V7
        },
        promote_longs: flags & bit(OptionFlag::Longs) == 0,
        promote_values: flags & bit(OptionFlag::NoPromote) == 0,
        promote_buffers: flags & bit(OptionFlag::Buffers) != 0,
        bson_regexp: flags & bit(OptionFlag::BsonRegExp) != 0,
    })
}

/// The error of a pair [`unpack`] refuses (lib/native only passes resolved options: a bug).
pub(crate) fn bad_options() -> Error {
    Error::new(Status::InvalidArg, "invalid resolved options".to_owned())
}

/// [`unpack`], or the error for an export to return.
#[inline(always)]
pub(crate) fn decode(packed: f64, max_output_bytes: f64) -> napi::Result<Options> {
    unpack(packed, max_output_bytes).ok_or_else(bad_options)
}
