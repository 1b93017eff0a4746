//! BSON element types: each type's tag byte as a named constant, and the length of each
//! type's value ([`value_len`]), the one place that knows how to step over a value without
//! decoding it. The walker (`transcode`) decodes every type in its own match arm, keyed by
//! these constants.

use crate::bytes::load_i32;
use crate::error::{Error, ErrorKind};
use crate::scan::find_nul;

/// `double`: an IEEE 754 binary64.
pub(crate) const DOUBLE: u8 = 0x01;

/// `string`: int32 length, UTF-8 bytes, NUL.
pub(crate) const STRING: u8 = 0x02;

/// Embedded document.
pub(crate) const DOCUMENT: u8 = 0x03;

/// Array: a document keyed `"0"`, `"1"`, ….
pub(crate) const ARRAY: u8 = 0x04;

/// Binary: int32 length, subtype byte, bytes.
pub(crate) const BINARY: u8 = 0x05;

/// `undefined` (deprecated): no value bytes.
pub(crate) const UNDEFINED: u8 = 0x06;

/// ObjectId: 12 bytes.
pub(crate) const OBJECT_ID: u8 = 0x07;

/// Boolean: one byte, 0 or 1.
pub(crate) const BOOLEAN: u8 = 0x08;

/// UTC datetime: int64 milliseconds since the epoch.
pub(crate) const DATE_TIME: u8 = 0x09;

/// Null: no value bytes.
pub(crate) const NULL: u8 = 0x0A;

/// Regular expression: pattern cstring, options cstring.
pub(crate) const REGEX: u8 = 0x0B;

/// DBPointer (deprecated): string namespace, 12-byte ObjectId.
pub(crate) const DB_POINTER: u8 = 0x0C;

/// JavaScript code: a string.
pub(crate) const JAVASCRIPT: u8 = 0x0D;

/// Symbol (deprecated): a string.
pub(crate) const SYMBOL: u8 = 0x0E;

/// Code with scope: int32 total length, code string, scope document.
pub(crate) const CODE_WITH_SCOPE: u8 = 0x0F;

/// Int32.
pub(crate) const INT32: u8 = 0x10;

/// Timestamp: uint32 increment, then uint32 seconds.
pub(crate) const TIMESTAMP: u8 = 0x11;

/// Int64.
pub(crate) const INT64: u8 = 0x12;

/// Decimal128: 16 bytes, IEEE 754-2008 BID.
pub(crate) const DECIMAL128: u8 = 0x13;

/// MinKey: no value bytes.
pub(crate) const MIN_KEY: u8 = 0xFF;

/// MaxKey: no value bytes.
pub(crate) const MAX_KEY: u8 = 0x7F;

/// Length in bytes of the value of an element of type `t` starting at `at`, which must lie
/// before `end`, which the value must not pass; `raw::Elements` steps over values with it (for
/// cursor replies, change events, projection, and the lean `compat` walk's key read-back).
pub(crate) fn value_len(input: &[u8], t: u8, at: usize, end: usize) -> Result<usize, Error> {
    let need = |n: usize| -> Result<usize, Error> {
        if at + n > end {
            Err(Error::new(
                ErrorKind::Truncated,
                at,
                "value runs past the end of its document",
            ))
        } else {
            Ok(n)
        }
    };
    let lenpref = |extra: usize, min: i32| -> Result<usize, Error> {
        need(4)?;
        let l = load_i32(input, at);
        if l < min {
            return Err(Error::new(
                ErrorKind::BadLength,
                at,
                "length field below its minimum",
            ));
        }
        need(l as usize + extra)
    };
    match t {
        DOUBLE | DATE_TIME | TIMESTAMP | INT64 => need(8),
        STRING | JAVASCRIPT | SYMBOL => lenpref(4, 1),
        DOCUMENT | ARRAY | CODE_WITH_SCOPE => lenpref(0, 5),
        BINARY => lenpref(5, 0),
        UNDEFINED | NULL | MAX_KEY | MIN_KEY => Ok(0),
        OBJECT_ID => need(12),
        BOOLEAN => need(1),
        REGEX => {
            let p = find_nul(&input[at..end]).ok_or_else(|| {
                Error::new(
                    ErrorKind::Truncated,
                    at,
                    "regex pattern has no NUL terminator",
                )
            })?;
            let f = find_nul(&input[at + p + 1..end]).ok_or_else(|| {
                Error::new(
                    ErrorKind::Truncated,
                    at,
                    "regex flags have no NUL terminator",
                )
            })?;
            Ok(p + f + 2)
        }
        DB_POINTER => need(lenpref(4, 1)? + 12),
        INT32 => need(4),
        DECIMAL128 => need(16),
        _ => Err(Error::new(
            ErrorKind::UnknownType,
            at - 1,
            "unknown BSON element type",
        )),
    }
}
