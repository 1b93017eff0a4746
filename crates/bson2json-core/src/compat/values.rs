//! js-bson's value shapes that `JSON.stringify` prints as plain objects, for `compat`: a
//! `Long` (no `toJSON`: its own fields), a Node `Buffer` under `promoteBuffers`, a
//! `BSONRegExp` under `bsonRegExp`. All rare, so out of line (`#[cold]`).

use crate::error::{Error, ErrorKind};
use crate::number::write_i64;
use crate::options::BsonVersion;
use crate::utf8::write_quoted_lossy;

/// A js-bson `Long` as `JSON.stringify` prints it: it has no `toJSON`, so its own fields, in
/// the order the class creates them (js-bson 7 declares `high` first; js-bson 6 assigns `low`
/// first in its constructor).
#[cold]
pub(crate) fn write_long(out: &mut Vec<u8>, n: i64, version: BsonVersion) {
    let (high, low) = (i64::from((n >> 32) as i32), i64::from(n as i32));
    match version {
        BsonVersion::V7 => {
            out.extend_from_slice(b"{\"high\":");
            write_i64(out, high);
            out.extend_from_slice(b",\"low\":");
            write_i64(out, low);
        }
        BsonVersion::V6 => {
            out.extend_from_slice(b"{\"low\":");
            write_i64(out, low);
            out.extend_from_slice(b",\"high\":");
            write_i64(out, high);
        }
    }
    out.extend_from_slice(b",\"unsigned\":false}");
}

/// A binary value under js-bson's `promoteBuffers`: a Node `Buffer`, whose `toJSON` gives
/// `{"type":"Buffer","data":[…bytes]}`.
#[cold]
pub(crate) fn write_node_buffer(out: &mut Vec<u8>, payload: &[u8]) {
    out.reserve(payload.len() * 4 + 26);
    out.extend_from_slice(b"{\"type\":\"Buffer\",\"data\":[");
    for (i, &b) in payload.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_i64(out, i64::from(b));
    }
    out.extend_from_slice(b"]}");
}

/// A regex under js-bson's `bsonRegExp`: a `BSONRegExp`, printed as its own fields
/// `{"pattern":…,"options":…}`. Both are decoded with U+FFFD replacement (js-bson does not
/// validate them); the options are sorted (by UTF-16 code unit, which for the only options
/// that pass, ASCII letters, is byte order), and the constructor throws a `BSONError` for any
/// option outside `imxlsu`, reported here as [`ErrorKind::InvalidRegex`] at the option.
#[cold]
pub(crate) fn write_bson_regexp(
    out: &mut Vec<u8>,
    input: &[u8],
    from: usize,
    to: usize,
    flags: &[u8],
    flags_at: usize,
) -> Result<(), Error> {
    if let Some(i) = flags
        .iter()
        .position(|c| !matches!(c, b'i' | b'm' | b'x' | b'l' | b's' | b'u'))
    {
        return Err(Error::new(
            ErrorKind::InvalidRegex,
            flags_at + i,
            "regex option outside imxlsu (js-bson's BSONRegExp rejects it)",
        ));
    }
    out.extend_from_slice(b"{\"pattern\":");
    write_quoted_lossy(out, input, from, to);
    out.extend_from_slice(b",\"options\":\"");
    let mut sorted = flags.to_vec();
    sorted.sort_unstable();
    out.extend_from_slice(&sorted);
    out.extend_from_slice(b"\"}");
    Ok(())
}
