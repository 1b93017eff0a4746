//! Rows: a document's top-level fields as typed values, one per column, for SQL sinks and sync
//! engines. [`RowWriter::write`] walks the top-level elements once and hands each field to a
//! [`RowSink`] as a [`Value`]: a string, an integer for a `bigint`, a double, `null`, bytes, or
//! the JSON text of a nested value. Two formats ([`RowFormat`]):
//!
//! - [`RowFormat::General`] (the default): scalars as the values a SQL driver takes (int32 and
//!   doubles as numbers, int64 and timestamps as `bigint`s, booleans, ObjectIds as hex, dates as
//!   ISO 8601 text, decimals as their string, binary as bytes and UUIDs as text), everything
//!   else (documents, arrays, regexes, code, DBPointers, min/max keys) as its JSON text in the
//!   call's dialect, exactly as the transcoder writes that value inside a document.
//! - [`RowFormat::PowerSync`]: PowerSync's `bufferToSqlite(bytes, dateRenderMode)` value for
//!   value (`powersync` module), with its three date modes ([`DateMode`]).
//!
//! [`packed`] is the sink the Node addon uses: every row of a call as a few flat buffers.

pub mod packed;
mod powersync;

use crate::decimal128::{write_decimal128, Decimal128Style};
use crate::element as el;
use crate::error::{Error, ErrorKind};
use crate::number::{write_iso_date, JS_DATE_MAX_MS};
use crate::options::{Dialect, Options, Utf8Mode};
use crate::raw::Elements;
use crate::text::{write_hex, write_uuid};
use crate::transcode::{RegexRecord, Transcoder};

/// Which rules turn a field into a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RowFormat {
    /// Values for SQL drivers; nested values as JSON text in the call's dialect.
    #[default]
    General,
    /// PowerSync's `bufferToSqlite` (`@powersync/service-module-mongodb`): SQLite values.
    PowerSync,
}

impl RowFormat {
    /// The format numbered `n` (0 general, 1 PowerSync).
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            0 => Some(RowFormat::General),
            1 => Some(RowFormat::PowerSync),
            _ => None,
        }
    }
}

/// PowerSync's `DateRenderMode`: how [`RowFormat::PowerSync`] writes a date.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DateMode {
    /// `2024-01-02 03:04:05.678Z`: a space between date and time (PowerSync's legacy form).
    #[default]
    LegacyMilliseconds = 0,
    /// `2024-01-02T03:04:05.678Z`.
    IsoMilliseconds = 1,
    /// `2024-01-02T03:04:05Z`: milliseconds cut off (not rounded).
    IsoSeconds = 2,
}

impl DateMode {
    /// The mode numbered `n` (PowerSync's numbers: 0, 1, 2).
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            0 => Some(DateMode::LegacyMilliseconds),
            1 => Some(DateMode::IsoMilliseconds),
            2 => Some(DateMode::IsoSeconds),
            _ => None,
        }
    }
}

/// What a row call asks for: the format, PowerSync's date mode, and the transcoding options
/// ([`RowFormat::General`]'s nested JSON; its dialect, UTF-8 handling, limits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowOptions {
    /// The format.
    pub format: RowFormat,
    /// [`RowFormat::PowerSync`]'s date mode.
    pub date_mode: DateMode,
    /// Dialect and js-bson options of the general format's JSON text; `utf8`, `max_depth` and
    /// `max_output_bytes` in both formats (PowerSync's own depth limit of 20 applies too).
    pub json: Options,
}

/// One field's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// `null`.
    Null,
    /// A boolean (general format).
    Bool(bool),
    /// A 32-bit integer as a number (general format).
    Int32(i32),
    /// A `bigint`.
    Int64(i64),
    /// A `bigint` of an unsigned 64-bit value (a timestamp: seconds << 32 | increment).
    UInt64(u64),
    /// A number.
    Double(f64),
    /// An integral double outside the 64-bit range, as a `bigint` (PowerSync's `BigInt(x)`).
    BigDouble(f64),
    /// A string: well-formed UTF-8 (a string value, or text the writer made: hex, a date, a
    /// decimal, JSON).
    Str(&'a [u8]),
    /// Bytes (a binary value's payload).
    Bytes(&'a [u8]),
}

/// Where [`RowWriter::write`] sends a row's fields.
pub trait RowSink {
    /// One field, in document order (a repeated key comes again). `key` is well-formed UTF-8.
    fn field(&mut self, key: &[u8], value: Value<'_>);
}

/// The fields of a row as owned values, for tests and simple embeddings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields(pub Vec<(String, Owned)>);

/// An owned [`Value`].
#[derive(Clone, Debug, PartialEq)]
pub enum Owned {
    /// See [`Value::Null`].
    Null,
    /// See [`Value::Bool`].
    Bool(bool),
    /// See [`Value::Int32`].
    Int32(i32),
    /// See [`Value::Int64`].
    Int64(i64),
    /// See [`Value::UInt64`].
    UInt64(u64),
    /// See [`Value::Double`].
    Double(f64),
    /// See [`Value::BigDouble`].
    BigDouble(f64),
    /// See [`Value::Str`].
    Str(String),
    /// See [`Value::Bytes`].
    Bytes(Vec<u8>),
}

impl RowSink for Fields {
    fn field(&mut self, key: &[u8], value: Value<'_>) {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let v = match value {
            Value::Null => Owned::Null,
            Value::Bool(b) => Owned::Bool(b),
            Value::Int32(x) => Owned::Int32(x),
            Value::Int64(x) => Owned::Int64(x),
            Value::UInt64(x) => Owned::UInt64(x),
            Value::Double(x) => Owned::Double(x),
            Value::BigDouble(x) => Owned::BigDouble(x),
            Value::Str(s) => Owned::Str(text(s)),
            Value::Bytes(b) => Owned::Bytes(b.to_vec()),
        };
        self.0.push((text(key), v));
    }
}

/// Turns documents into rows; keeps its scratch (and a [`Transcoder`]) between calls.
#[derive(Default)]
pub struct RowWriter {
    transcoder: Transcoder,
    /// A value's text (hex, a date, a decimal, JSON, a string decoded with replacement).
    text: Vec<u8>,
    /// A key decoded with replacement.
    key: Vec<u8>,
    /// The one-element document `{"": value}` the general format transcodes a value in.
    wrap: Vec<u8>,
    regexes: Vec<RegexRecord>,
}

/// `ms` as `Date.prototype.toISOString()` writes it, `None` outside the JavaScript date range.
fn iso_date(out: &mut Vec<u8>, ms: i64) -> bool {
    if ms.unsigned_abs() > JS_DATE_MAX_MS as u64 {
        return false;
    }
    write_iso_date(out, ms, true);
    true
}

/// The payload of a binary value at `v` (its length field), which lies before `end` (checked
/// by the element reader): `(subtype, data)`. Subtype 2's payload is inside its own length,
/// which must agree with the outer one (`strict`, the transcoder's rule) or only fit in it
/// (PowerSync's).
fn binary_payload(input: &[u8], v: usize, end: usize, strict: bool) -> Result<(u8, &[u8]), Error> {
    let len = crate::bytes::load_i32(input, v);
    let data = v + 5;
    if len < 0 || len as usize > end.saturating_sub(data) {
        return Err(Error::new(ErrorKind::BadBinary, v, "bad binary length"));
    }
    let sub = input[v + 4];
    let mut payload = &input[data..data + len as usize];
    if sub == 0x02 {
        let inner = if payload.len() >= 4 {
            i64::from(crate::bytes::load_i32(input, data))
        } else {
            -1
        };
        let outer = payload.len() as i64 - 4;
        if inner < 0 || inner > outer || (strict && inner != outer) {
            return Err(Error::new(
                ErrorKind::BadBinary,
                data,
                "binary subtype 0x02 inner length disagrees with outer length",
            ));
        }
        payload = &payload[4..4 + inner as usize];
    }
    Ok((sub, payload))
}

/// Appends `s` decoded with U+FFFD replacement (as Node's `Buffer#toString('utf8')`) and
/// returns whether it was well-formed (then nothing is appended: use `s` itself).
fn lossy(out: &mut Vec<u8>, s: &[u8]) -> bool {
    if crate::lanes::is_ascii(s) || crate::utf8::is_valid(s) {
        return true;
    }
    out.extend_from_slice(String::from_utf8_lossy(s).as_bytes());
    false
}

/// A string value's bytes (`v` at its length field; the element reader checked the length).
fn string_bytes(input: &[u8], v: usize, end: usize) -> Result<&[u8], Error> {
    if input[end - 1] != 0 {
        return Err(Error::new(
            ErrorKind::BadTerminator,
            end - 1,
            "string does not end with a NUL byte",
        ));
    }
    Ok(&input[v + 4..end - 1])
}

impl RowWriter {
    /// A writer with empty scratch space.
    pub fn new() -> Self {
        Self::default()
    }

    /// The regular expressions the last call's general-format JSON met (`compat`), with
    /// offsets in its document: the embedding checks them as it does the transcoder's.
    pub fn regexes(&self) -> &[RegexRecord] {
        &self.regexes
    }

    /// Walks the top-level elements of the BSON document `doc` (all of it) and hands each
    /// field to `sink`. On an error some fields may have been handed over already; error
    /// offsets are in `doc`.
    pub fn write(
        &mut self,
        doc: &[u8],
        opts: &RowOptions,
        sink: &mut impl RowSink,
    ) -> Result<(), Error> {
        self.regexes.clear();
        for e in Elements::new(doc)? {
            let e = e?;
            let key: &[u8] = if crate::utf8::is_valid(e.key) {
                e.key
            } else {
                self.key.clear();
                lossy(&mut self.key, e.key);
                &self.key
            };
            let (t, v, end) = (e.element_type, e.value_start, e.value_end);
            self.text.clear();
            let value = match opts.format {
                RowFormat::PowerSync => powersync::value(doc, t, v, end, opts, &mut self.text)?,
                RowFormat::General => general(
                    doc,
                    t,
                    v,
                    end,
                    opts,
                    &mut self.text,
                    &mut self.wrap,
                    &mut self.transcoder,
                    &mut self.regexes,
                )?,
            };
            let value = match value {
                Text::Value(v) => v,
                Text::Str(from) => Value::Str(&self.text[from..]),
            };
            sink.field(key, value);
        }
        Ok(())
    }
}

/// A field's value, or a string that was written to the writer's text (from the given index
/// to its end).
pub(crate) enum Text<'a> {
    Value(Value<'a>),
    Str(usize),
}

/// Fails unless a text of `len` bytes is within the call's output limit.
pub(crate) fn within_limit(len: usize, opts: &Options, at: usize) -> Result<(), Error> {
    if len > opts.max_output_bytes {
        return Err(Error::new(
            ErrorKind::OutputTooLarge,
            at,
            "a field's text exceeds maxOutputBytes",
        ));
    }
    Ok(())
}

/// A string value: itself when well-formed, else per the UTF-8 mode (an error, or the
/// replacement text).
fn utf8_value<'a>(
    s: &'a [u8],
    mode: Utf8Mode,
    at: usize,
    text: &mut Vec<u8>,
) -> Result<Text<'a>, Error> {
    if crate::lanes::is_ascii(s) || crate::utf8::is_valid(s) {
        return Ok(Text::Value(Value::Str(s)));
    }
    if mode == Utf8Mode::Strict {
        return Err(Error::new(
            ErrorKind::InvalidUtf8,
            at,
            "invalid UTF-8 in a string",
        ));
    }
    text.extend_from_slice(String::from_utf8_lossy(s).as_bytes());
    Ok(Text::Str(0))
}

/// The general format's value of the element of type `t` whose value is `input[v..end]`.
#[allow(clippy::too_many_arguments)]
fn general<'a>(
    input: &'a [u8],
    t: u8,
    v: usize,
    end: usize,
    opts: &RowOptions,
    text: &mut Vec<u8>,
    wrap: &mut Vec<u8>,
    transcoder: &mut Transcoder,
    regexes: &mut Vec<RegexRecord>,
) -> Result<Text<'a>, Error> {
    let o = &opts.json;
    let load_u64 = |at| crate::bytes::load_u64(input, at);
    Ok(Text::Value(match t {
        el::DOUBLE => Value::Double(f64::from_bits(load_u64(v))),
        el::STRING | el::SYMBOL => {
            return utf8_value(string_bytes(input, v, end)?, o.utf8, v + 4, text)
        }
        el::OBJECT_ID => {
            write_hex(text, &input[v..v + 12]);
            return Ok(Text::Str(0));
        }
        el::BOOLEAN => match input[v] {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            _ => {
                return Err(Error::new(
                    ErrorKind::BadBoolean,
                    v,
                    "boolean byte is not 0 or 1",
                ))
            }
        },
        el::DATE_TIME => {
            if !iso_date(text, load_u64(v) as i64) {
                return Ok(Text::Value(Value::Null));
            }
            return Ok(Text::Str(0));
        }
        el::NULL | el::UNDEFINED => Value::Null,
        el::INT32 => Value::Int32(crate::bytes::load_i32(input, v)),
        el::INT64 => Value::Int64(load_u64(v) as i64),
        el::TIMESTAMP => Value::UInt64(load_u64(v)),
        el::DECIMAL128 => {
            let mut d = [0u8; 16];
            d.copy_from_slice(&input[v..v + 16]);
            let style = if o.dialect == Dialect::Compat {
                Decimal128Style::JsBson
            } else {
                Decimal128Style::Spec
            };
            write_decimal128(&d, style, text);
            return Ok(Text::Str(0));
        }
        el::BINARY => {
            let (sub, data) = binary_payload(input, v, end, true)?;
            if sub == 0x04 && data.len() == 16 {
                let mut u = [0u8; 16];
                u.copy_from_slice(data);
                write_uuid(text, &u);
                return Ok(Text::Str(0));
            }
            Value::Bytes(data)
        }
        _ => {
            // Documents, arrays and the rest: the value's JSON text as the transcoder writes
            // it inside a document, from `{"": value}`.
            let start = v - 2; // the element's type byte, then the empty key's NUL
            wrap.clear();
            let size = (end - v + 7) as u32;
            wrap.extend_from_slice(&size.to_le_bytes());
            wrap.extend_from_slice(&[t, 0]);
            wrap.extend_from_slice(&input[v..end]);
            wrap.push(0);
            // An offset in `wrap` as one in `input`: the value's bytes follow 6 bytes of header.
            let back = |at: usize| if at >= 6 { at - 6 + v } else { start };
            transcoder
                .transcode(wrap, o, text)
                .map_err(|e| Error::new(e.kind(), back(e.offset()), e.detail()))?;
            regexes.extend(transcoder.regexes().iter().map(|r| RegexRecord {
                offset: back(r.offset),
                ..r.clone()
            }));
            // `{"":` … `}`
            text.truncate(text.len() - 1);
            return Ok(Text::Str(4));
        }
    }))
}
