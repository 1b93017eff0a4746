//! [`RowFormat::PowerSync`](super::RowFormat::PowerSync): the values of PowerSync's
//! `bufferToSqlite(bytes, dateRenderMode)` (`@powersync/service-module-mongodb`, its
//! `dist/replication/bufferToSqlite.js` and `JsonBufferWriter.js`), rule for rule:
//!
//! - top level: ObjectId → hex; string, symbol → the string (invalid UTF-8 replaced, as
//!   `Buffer#toString` does); int32, int64, boolean (any non-zero byte is 1), timestamp
//!   (seconds << 32 | increment) and integral doubles (-0 included) → `bigint`; other doubles
//!   (NaN, ±Infinity) → number; date → text in the [`DateMode`]; decimal → js-bson's string;
//!   binary → bytes (subtype 2: its inner payload), a 16-byte UUID (subtype 4) → its text;
//!   undefined, null, min and max keys → null; documents, arrays, regexes, DBPointers, code
//!   and code with scope → JSON text;
//! - nested JSON: documents as objects and arrays as arrays (keys of arrays ignored), at most
//!   20 levels below the top-level field (deeper fails, as PowerSync throws); booleans as
//!   `1`/`0`; doubles as `Number#toString` or `null` when not finite; integers, timestamps as
//!   decimal integers; decimals, ObjectIds (hex), dates (in the mode) as strings; null,
//!   min/max keys as `null`; undefined and every binary but a UUID left out of an object and
//!   `null` in an array; regexes as `{"pattern","options"}` (options as stored); code as
//!   `{"code","scope":null}`, code with scope as `{"code","scope":{…}}`, DBPointers as
//!   `{"collection","oid","db"?,"fields":{}}` (`db` from before the first `.`).
//!
//! A date outside JavaScript's range fails (PowerSync throws `RangeError: Invalid time
//! value`) with `BSON_DATE_OUT_OF_RANGE`. Unlike PowerSync's parser, every length is checked
//! against its enclosing document: malformed BSON fails with a coded error where PowerSync may
//! read on.

use super::{binary_payload, string_bytes, within_limit, DateMode, RowOptions, Text, Value};
use crate::bytes::{load_i32, load_u64};
use crate::decimal128::{write_decimal128, Decimal128Style};
use crate::element as el;
use crate::error::{Error, ErrorKind};
use crate::number::{write_i64, write_iso_date, write_js_number, write_u64, JS_DATE_MAX_MS};
use crate::raw::Elements;
use crate::text::{write_hex, write_uuid};
use crate::utf8::write_quoted_lossy;

/// PowerSync's `NESTED_DEPTH_LIMIT`: a top-level field's document or array is level 0.
pub(crate) const DEPTH_LIMIT: u32 = 20;

/// The value of the top-level element of type `t` whose value is `input[v..end]`.
pub(super) fn value<'a>(
    input: &'a [u8],
    t: u8,
    v: usize,
    end: usize,
    opts: &RowOptions,
    text: &mut Vec<u8>,
) -> Result<Text<'a>, Error> {
    let mode = opts.date_mode;
    Ok(Text::Value(match t {
        el::OBJECT_ID => {
            write_hex(text, &input[v..v + 12]);
            return Ok(Text::Str(0));
        }
        el::STRING | el::SYMBOL => {
            let s = string_bytes(input, v, end)?;
            if crate::lanes::is_ascii(s) || crate::utf8::is_valid(s) {
                Value::Str(s)
            } else {
                text.extend_from_slice(String::from_utf8_lossy(s).as_bytes());
                return Ok(Text::Str(0));
            }
        }
        el::DOCUMENT | el::ARRAY => {
            container(input, v, 0, t == el::ARRAY, opts, text)?;
            within_limit(text.len(), &opts.json, v)?;
            return Ok(Text::Str(0));
        }
        el::BOOLEAN => Value::Int64(i64::from(input[v] != 0)),
        el::DATE_TIME => {
            date(text, load_u64(input, v) as i64, mode, false, v)?;
            return Ok(Text::Str(0));
        }
        el::INT32 => Value::Int64(i64::from(load_i32(input, v))),
        el::TIMESTAMP => Value::UInt64(load_u64(input, v)),
        el::INT64 => Value::Int64(load_u64(input, v) as i64),
        el::DECIMAL128 => {
            decimal(text, input, v);
            return Ok(Text::Str(0));
        }
        el::BINARY => {
            let (sub, data) = binary_payload(input, v, end, false)?;
            if sub == 0x04 && data.len() == 16 {
                uuid(text, data);
                return Ok(Text::Str(0));
            }
            Value::Bytes(data)
        }
        el::REGEX | el::DB_POINTER | el::JAVASCRIPT | el::CODE_WITH_SCOPE => {
            other(input, t, v, end, 0, opts, text)?;
            within_limit(text.len(), &opts.json, v)?;
            return Ok(Text::Str(0));
        }
        el::DOUBLE => {
            let x = f64::from_bits(load_u64(input, v));
            // `Number.isInteger(x) ? BigInt(x) : x`
            if x.is_finite() && x.fract() == 0.0 {
                if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
                    Value::Int64(x as i64)
                } else {
                    Value::BigDouble(x)
                }
            } else {
                Value::Double(x)
            }
        }
        // undefined, null, min and max keys (the element reader rejects unknown types)
        _ => Value::Null,
    }))
}

fn uuid(out: &mut Vec<u8>, data: &[u8]) {
    let mut u = [0u8; 16];
    u.copy_from_slice(data);
    write_uuid(out, &u);
}

/// js-bson's `Decimal128#toString` of the 16 bytes at `v`.
fn decimal(out: &mut Vec<u8>, input: &[u8], v: usize) {
    let mut d = [0u8; 16];
    d.copy_from_slice(&input[v..v + 16]);
    write_decimal128(&d, Decimal128Style::JsBson, out);
}

/// A date as PowerSync writes it: `toISOString()` (years outside 0-9999 with six digits and a
/// sign), with a space for the `T` in [`DateMode::LegacyMilliseconds`] and without the
/// milliseconds in [`DateMode::IsoSeconds`]; quoted inside JSON.
fn date(out: &mut Vec<u8>, ms: i64, mode: DateMode, quoted: bool, at: usize) -> Result<(), Error> {
    if ms.unsigned_abs() > JS_DATE_MAX_MS as u64 {
        return Err(Error::new(
            ErrorKind::DateOutOfRange,
            at,
            "date outside the JavaScript date range",
        ));
    }
    if quoted {
        out.push(b'"');
    }
    let start = out.len();
    write_iso_date(out, ms, true);
    match mode {
        DateMode::LegacyMilliseconds => {
            // `T` is the first letter: after `YYYY-MM-DD` or `±YYYYYY-MM-DD`
            let t = if out[start].is_ascii_digit() { 10 } else { 13 };
            out[start + t] = b' ';
        }
        DateMode::IsoMilliseconds => {}
        DateMode::IsoSeconds => {
            // `.sssZ` → `Z`
            let n = out.len();
            out.truncate(n - 5);
            out.push(b'Z');
        }
    }
    if quoted {
        out.push(b'"');
    }
    Ok(())
}

/// The document or array whose length field is at `start` (the element reader checked that
/// the length is at least 5 and lies within the enclosing document), at `depth`, as JSON.
fn container(
    input: &[u8],
    start: usize,
    depth: u32,
    array: bool,
    opts: &RowOptions,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    // The top-level document is level 1 of `maxDepth`, a top-level field's value level 2.
    if depth > DEPTH_LIMIT || depth + 2 > opts.json.max_depth {
        return Err(Error::new(
            ErrorKind::TooDeep,
            start,
            "nested deeper than PowerSync's limit of 20 levels (or maxDepth)",
        ));
    }
    let last = start + load_i32(input, start) as usize - 1;
    if input[last] != 0 {
        return Err(Error::new(
            ErrorKind::BadTerminator,
            last,
            "document does not end with a NUL byte",
        ));
    }
    out.push(if array { b'[' } else { b'{' });
    let mut first = true;
    for e in Elements::within(input, start + 4, last) {
        let e = e?;
        let mark = out.len();
        if !first {
            out.push(b',');
        }
        if !array {
            let (ks, ke) = e.key_range();
            write_quoted_lossy(out, input, ks, ke);
            out.push(b':');
        }
        let defined = nested(
            input,
            e.element_type,
            e.value_start,
            e.value_end,
            depth,
            opts,
            out,
        )?;
        if defined {
            first = false;
        } else if array {
            out.extend_from_slice(b"null");
            first = false;
        } else {
            out.truncate(mark);
        }
    }
    out.push(if array { b']' } else { b'}' });
    Ok(())
}

/// A nested value as JSON; `false` (nothing written) for a value PowerSync leaves undefined
/// (undefined, a binary that is not a UUID).
fn nested(
    input: &[u8],
    t: u8,
    v: usize,
    end: usize,
    depth: u32,
    opts: &RowOptions,
    out: &mut Vec<u8>,
) -> Result<bool, Error> {
    match t {
        el::DOUBLE => {
            let x = f64::from_bits(load_u64(input, v));
            if x.is_finite() {
                write_js_number(out, x);
            } else {
                out.extend_from_slice(b"null");
            }
        }
        el::STRING | el::SYMBOL => {
            string_bytes(input, v, end)?;
            write_quoted_lossy(out, input, v + 4, end - 1);
        }
        el::DOCUMENT | el::ARRAY => container(input, v, depth + 1, t == el::ARRAY, opts, out)?,
        el::BINARY => {
            let (sub, data) = binary_payload(input, v, end, false)?;
            if sub != 0x04 || data.len() != 16 {
                return Ok(false);
            }
            out.push(b'"');
            uuid(out, data);
            out.push(b'"');
        }
        el::UNDEFINED => return Ok(false),
        el::OBJECT_ID => {
            out.push(b'"');
            write_hex(out, &input[v..v + 12]);
            out.push(b'"');
        }
        el::BOOLEAN => out.push(if input[v] != 0 { b'1' } else { b'0' }),
        el::DATE_TIME => date(out, load_u64(input, v) as i64, opts.date_mode, true, v)?,
        el::NULL | el::MIN_KEY | el::MAX_KEY => out.extend_from_slice(b"null"),
        el::INT32 => write_i64(out, i64::from(load_i32(input, v))),
        el::TIMESTAMP => write_u64(out, load_u64(input, v)),
        el::INT64 => write_i64(out, load_u64(input, v) as i64),
        el::DECIMAL128 => {
            out.push(b'"');
            decimal(out, input, v);
            out.push(b'"');
        }
        _ => other(input, t, v, end, depth, opts, out)?,
    }
    Ok(true)
}

/// A regex, DBPointer, code or code with scope as JSON (the same at the top level and nested).
fn other(
    input: &[u8],
    t: u8,
    v: usize,
    end: usize,
    depth: u32,
    opts: &RowOptions,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    match t {
        el::REGEX => {
            // The element reader found both NULs before `end`.
            let p = v + input[v..end].iter().position(|&b| b == 0).unwrap_or(0);
            out.extend_from_slice(b"{\"pattern\":");
            write_quoted_lossy(out, input, v, p);
            out.extend_from_slice(b",\"options\":");
            write_quoted_lossy(out, input, p + 1, end - 1);
            out.push(b'}');
        }
        el::DB_POINTER => {
            let s = end - 12; // the string, then 12 bytes of ObjectId
            let ns = string_bytes(input, v, s)?;
            let (from, to) = (v + 4, s - 1);
            let dot = ns.iter().position(|&b| b == b'.');
            out.extend_from_slice(b"{\"collection\":");
            write_quoted_lossy(out, input, dot.map_or(from, |d| from + d + 1), to);
            out.extend_from_slice(b",\"oid\":\"");
            write_hex(out, &input[s..end]);
            out.push(b'"');
            if let Some(d) = dot {
                out.extend_from_slice(b",\"db\":");
                write_quoted_lossy(out, input, from, from + d);
            }
            out.extend_from_slice(b",\"fields\":{}}");
        }
        el::JAVASCRIPT => {
            string_bytes(input, v, end)?;
            out.extend_from_slice(b"{\"code\":");
            write_quoted_lossy(out, input, v + 4, end - 1);
            out.extend_from_slice(b",\"scope\":null}");
        }
        _ => {
            // code with scope: total length, code string, scope document, within `v..end`
            let bad = || {
                Error::new(
                    ErrorKind::BadCodeWithScope,
                    v,
                    "code-with-scope lengths disagree",
                )
            };
            let sl = i64::from(load_i32(input, v + 4));
            let scope = v as i64 + 8 + sl;
            if sl < 1 || scope + 5 > end as i64 {
                return Err(bad());
            }
            let scope = scope as usize;
            let dl = i64::from(load_i32(input, scope));
            if dl < 5 || scope as i64 + dl > end as i64 {
                return Err(bad());
            }
            string_bytes(input, v + 4, scope)?;
            out.extend_from_slice(b"{\"code\":");
            write_quoted_lossy(out, input, v + 8, scope - 1);
            out.extend_from_slice(b",\"scope\":");
            container(input, scope, depth + 1, false, opts, out)?;
            out.push(b'}');
        }
    }
    Ok(())
}
