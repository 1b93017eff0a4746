//! The JavaScript object model that `compat` must reproduce when an object is not simply
//! "keys in BSON order": V8 puts array-index keys first in ascending order, a duplicate key keeps
//! its first position but takes the last value (and disappears from the JSON if that value is
//! `undefined`), and js-bson turns `$ref`/`$id`/`$db` documents into `DBRef`s whose `toJSON`
//! reorders them. The walker writes every object in BSON order; only objects that need it (rare
//! in real data) are rewritten here, after they close, from the member records of the
//! recording walk. The lean walk that runs first keeps no records: it only sets the flags
//! below, and gives the document to the recording walk when an object needs a rewrite.
//!
//! The module's parts: the vocabulary below (the `F_*` flags an open object collects, and the
//! member record of the recording walk), `keys` (key hashes, the per-object Bloom filter and
//! the duplicate checks, array-index keys), `repair` (the rewrite of an object that needs it)
//! and `values` (js-bson's value shapes as `JSON.stringify` prints them: `Long`, `Buffer`,
//! `BSONRegExp`). ARCHITECTURE.md, design decision 4, gives the reasons and the rejected
//! alternatives; the walker (`transcode`) calls in here from its loop.

pub(crate) mod keys;
pub(crate) mod repair;
pub(crate) mod values;

/// An array-index key (canonical decimal 0..=4294967294) is present.
pub(crate) const F_INDEX: u8 = 1;
/// A duplicate key is present.
pub(crate) const F_DUP: u8 = 2;
/// One of `$ref`, `$id`, `$db` is present.
pub(crate) const F_DBREF_KEY: u8 = 4;
/// Another `$`-prefixed key is present (so the object can't become a DBRef).
pub(crate) const F_DOLLAR_OTHER: u8 = 8;
/// A key had invalid UTF-8 and was decoded with U+FFFD: duplicates must be judged on the
/// decoded text.
pub(crate) const F_LOSSY: u8 = 16;
/// Two keys share a Bloom filter bit: check for duplicates exactly when the object closes.
pub(crate) const F_MAYBE_DUP: u8 = 32;

/// The object is a code-with-scope scope, which js-bson never promotes to a DBRef.
pub(crate) const F_NO_DBREF: u8 = 64;

/// Objects with fewer members check a Bloom hit by scanning their hashes right away.
pub(crate) const SCAN_LIMIT: usize = 32;

/// `out_key` of a member whose value is `undefined` (nothing was written).
pub(crate) const NONE: usize = usize::MAX;

/// One key/value of an open `compat` object.
pub(crate) struct Member {
    /// Input range of the raw key bytes.
    pub key_start: usize,
    pub key_end: usize,
    /// Output index of the member's `"key":value` text, or [`NONE`] for `undefined`.
    pub out_key: usize,
    /// Output index of the member's value text.
    pub out_val: usize,
    /// Input index of the value bytes.
    pub val_start: usize,
    /// BSON element type of the value.
    pub vtype: u8,
    /// The key's hash ([`keys::key_hash`]).
    pub hash: u64,
}

/// Whether an object with these flags must be rewritten when it closes.
#[inline(always)]
pub(crate) fn needs_fixup(flags: u8) -> bool {
    flags & (F_INDEX | F_DUP | F_LOSSY) != 0
        || (flags & F_DBREF_KEY != 0 && flags & (F_DOLLAR_OTHER | F_NO_DBREF) == 0)
}
