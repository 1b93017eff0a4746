//! CSV rows as `mongoexport --type csv` writes them: one line per document, one cell per
//! field of a list of dotted paths (`a.0.b` is element 0 of the array `a`). A missing field,
//! a path through a scalar and `null` are empty cells; the first element of a name wins.
//!
//! Cells are mongoexport's: strings as they are (invalid UTF-8 replaced by U+FFFD), numbers
//! as Go's `%v` prints them (shortest digits, exponent form below 1e-4 and from 1e6:
//! `1e+06`), ObjectId as `ObjectId(hex)`, dates before the year 3001 as
//! `2006-01-02T15:04:05.000Z`, binary as upper-case hex, regexes as `/pattern/options`;
//! embedded documents and arrays as compact JSON of the legacy Extended JSON mongoexport uses
//! there (`{"$numberLong":"5"}`, `{"$date":"…Z"}`, integral doubles with `.0`, strings
//! escaped as Go's `encoding/json` does). Cells are quoted as Go's `encoding/csv` quotes
//! them: when they hold `,`, `"`, CR or LF, start with white space, or are `\.`.

use std::collections::HashMap;

use crate::bytes::{load_i32, load_u32, load_u64};
use crate::decimal128::{write_decimal128, Decimal128Style};
use crate::element::{
    ARRAY, BINARY, BOOLEAN, CODE_WITH_SCOPE, DATE_TIME, DB_POINTER, DECIMAL128, DOCUMENT, DOUBLE,
    INT32, INT64, JAVASCRIPT, MAX_KEY, MIN_KEY, NULL, OBJECT_ID, REGEX, STRING, SYMBOL, TIMESTAMP,
    UNDEFINED,
};
use crate::error::Error;
use crate::number::{write_go_float, write_i64, write_iso_date};
use crate::raw::{Elements, RawElement};
use crate::text::{write_base64, write_hex};

/// Dates from this many ms on (the year 3001) and before year 1 are written as numbers.
const DATE_TEXT_END: i64 = 32_535_215_999_000;
const DATE_TEXT_START: i64 = -62_135_596_800_000;

/// One component of a path: the key, and its value as an array index when it is one.
struct Part {
    key: Vec<u8>,
    index: Option<Vec<u8>>,
}

/// A compiled list of fields: each a dotted path, with the paths grouped by their first key.
pub struct CsvFields {
    paths: Vec<Vec<Part>>,
    by_first: HashMap<Vec<u8>, Vec<usize>>,
}

impl CsvFields {
    /// The fields as given to `--fields` (dotted paths).
    pub fn new<S: AsRef<str>>(fields: &[S]) -> CsvFields {
        let paths: Vec<Vec<Part>> = fields
            .iter()
            .map(|f| f.as_ref().split('.').map(part).collect())
            .collect();
        let mut by_first: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
        for (i, p) in paths.iter().enumerate() {
            by_first.entry(p[0].key.clone()).or_default().push(i);
        }
        CsvFields { paths, by_first }
    }
}

/// `+5`, `-1` and `007` read as indexes as mongoexport reads them; the key an array holds
/// for that index is its decimal text (a negative index finds nothing).
fn part(s: &str) -> Part {
    let b = s.as_bytes();
    let digits = b.strip_prefix(b"+").or(b.strip_prefix(b"-")).unwrap_or(b);
    let index = if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
        if b[0] == b'-' && digits.iter().any(|&c| c != b'0') {
            Some(Vec::new())
        } else {
            let trimmed: Vec<u8> = digits.iter().copied().skip_while(|&c| c == b'0').collect();
            Some(if trimmed.is_empty() {
                b"0".to_vec()
            } else {
                trimmed
            })
        }
    } else {
        None
    };
    Part {
        key: b.to_vec(),
        index,
    }
}

/// The header line: the field names as given, quoted where needed.
pub fn write_header<S: AsRef<str>>(fields: &[S], out: &mut Vec<u8>) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_quoted(out, f.as_ref().as_bytes());
    }
    out.push(b'\n');
}

/// The first element named `key` of the document whose elements are `input[first..end]`.
fn find<'a>(
    input: &'a [u8],
    first: usize,
    end: usize,
    key: &[u8],
) -> Result<Option<RawElement<'a>>, Error> {
    let mut it = Elements::within(input, first, end);
    while it.position() < end {
        let e = it.step()?;
        if e.key == key {
            return Ok(Some(e));
        }
    }
    Ok(None)
}

/// Follows `path` from its second part on, from the element `el`.
fn descend<'a>(
    input: &'a [u8],
    mut el: RawElement<'a>,
    path: &[Part],
) -> Result<Option<RawElement<'a>>, Error> {
    for p in &path[1..] {
        let (vs, ve) = (el.value_start, el.value_end);
        let found = match el.element_type {
            DOCUMENT => find(input, vs + 4, ve - 1, &p.key)?,
            ARRAY => match &p.index {
                Some(k) if !k.is_empty() => find(input, vs + 4, ve - 1, k)?,
                _ => None,
            },
            _ => None,
        };
        match found {
            Some(e) => el = e,
            None => return Ok(None),
        }
    }
    Ok(Some(el))
}

/// Appends one CSV line for the BSON document `doc`.
pub fn write_row(doc: &[u8], fields: &CsvFields, out: &mut Vec<u8>) -> Result<(), Error> {
    let n = fields.paths.len();
    // None: not looked for yet; Some(None): missing.
    let mut found: Vec<Option<Option<RawElement<'_>>>> = vec![None; n];
    for e in Elements::new(doc)? {
        let e = e?;
        let Some(hits) = fields.by_first.get(e.key) else {
            continue;
        };
        for &i in hits {
            if found[i].is_none() {
                found[i] = Some(descend(doc, e, &fields.paths[i])?);
            }
        }
    }
    let mut cell = Vec::new();
    for (i, f) in found.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if let Some(Some(el)) = f {
            cell.clear();
            if write_cell(doc, el, &mut cell)? {
                write_quoted(out, &cell);
            }
        }
    }
    out.push(b'\n');
    Ok(())
}

/// The text of a BSON string value at `at` (its length prefix), invalid UTF-8 replaced.
fn text(input: &[u8], at: usize, out: &mut Vec<u8>) {
    let n = load_i32(input, at).max(1) as usize;
    let bytes = input.get(at + 4..at + 3 + n).unwrap_or_default();
    out.extend_from_slice(String::from_utf8_lossy(bytes).as_bytes());
}

/// A C string from `at`: its bytes and the index past its NUL.
fn cstring(input: &[u8], at: usize) -> (&[u8], usize) {
    let rest = input.get(at..).unwrap_or_default();
    let n = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    (&rest[..n], at + n + 1)
}

fn timestamp(input: &[u8], at: usize) -> (u32, u32) {
    (load_u32(input, at + 4), load_u32(input, at))
}

/// Appends the cell text of `el`; false for an empty cell.
fn write_cell(input: &[u8], el: &RawElement<'_>, out: &mut Vec<u8>) -> Result<bool, Error> {
    let at = el.value_start;
    match el.element_type {
        STRING | SYMBOL | JAVASCRIPT => text(input, at, out),
        CODE_WITH_SCOPE => text(input, at + 4, out),
        INT32 => write_i64(out, i64::from(load_i32(input, at))),
        INT64 => write_i64(out, load_u64(input, at) as i64),
        DOUBLE => write_go_float(out, f64::from_bits(load_u64(input, at))),
        DECIMAL128 => decimal(input, at, out),
        BOOLEAN => out.extend_from_slice(if input[at] == 0 { b"false" } else { b"true" }),
        NULL => return Ok(false),
        UNDEFINED => out.extend_from_slice(b"{ \"$undefined\": true }"),
        OBJECT_ID => {
            out.extend_from_slice(b"ObjectId(");
            write_hex(out, &input[at..at + 12]);
            out.push(b')');
        }
        DATE_TIME => {
            let ms = load_u64(input, at) as i64;
            if (DATE_TEXT_START..DATE_TEXT_END).contains(&ms) {
                write_iso_date(out, ms, true);
            } else {
                out.extend_from_slice(b"{ \"$date\": { \"$numberLong\" : \"");
                write_i64(out, ms);
                out.extend_from_slice(b"\" }}");
            }
        }
        TIMESTAMP => {
            let (t, i) = timestamp(input, at);
            out.extend_from_slice(b"{ \"$timestamp\": { \"t\": ");
            write_i64(out, i64::from(t));
            out.extend_from_slice(b", \"i\": ");
            write_i64(out, i64::from(i));
            out.extend_from_slice(b" } }");
        }
        BINARY => {
            let n = load_i32(input, at).max(0) as usize;
            let subtype = input[at + 4];
            let mut data = &input[at + 5..at + 5 + n];
            // Subtype 2 carries its own length (dropped by the driver), then mongoexport
            // drops 4 more bytes.
            if subtype == 0x02 {
                data = &data[data.len().min(8)..];
            }
            let from = out.len();
            write_hex(out, data);
            out[from..].make_ascii_uppercase();
        }
        REGEX => {
            let (pattern, next) = cstring(input, at);
            let (options, _) = cstring(input, next);
            out.push(b'/');
            out.extend_from_slice(String::from_utf8_lossy(pattern).as_bytes());
            out.push(b'/');
            out.extend_from_slice(String::from_utf8_lossy(options).as_bytes());
        }
        DB_POINTER => {
            let n = load_i32(input, at).max(1) as usize;
            out.extend_from_slice(b"{ \"$ref\": \"");
            text(input, at, out);
            out.extend_from_slice(b"\", \"$id\": ObjectID(\"");
            write_hex(out, &input[at + 4 + n..at + 16 + n]);
            out.extend_from_slice(b"\") }");
        }
        MIN_KEY => out.extend_from_slice(b"$MinKey"),
        MAX_KEY => out.extend_from_slice(b"$MaxKey"),
        DOCUMENT | ARRAY => legacy_json(input, el.element_type, at, out)?,
        _ => return Ok(false),
    }
    Ok(true)
}

fn decimal(input: &[u8], at: usize, out: &mut Vec<u8>) {
    let mut b = [0u8; 16];
    b.copy_from_slice(&input[at..at + 16]);
    write_decimal128(&b, Decimal128Style::Spec, out);
}

/// A Go `encoding/json` string: `\u00XX` for controls other than LF and CR, and for `<`,
/// `>` and `&`; `\u2028`, `\u2029`.
fn go_string(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let text = String::from_utf8_lossy(bytes);
    out.push(b'"');
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\u{2028}' => out.extend_from_slice(b"\\u2028"),
            '\u{2029}' => out.extend_from_slice(b"\\u2029"),
            c if (c as u32) < 0x20 || c == '<' || c == '>' || c == '&' => {
                let v = c as usize;
                out.extend_from_slice(b"\\u00");
                out.push(HEX[v >> 4]);
                out.push(HEX[v & 15]);
            }
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// strconv.FormatFloat(x, 'g', -1, 64) with `.0` on integral values, as mongoexport writes
/// doubles inside documents.
fn legacy_float(x: f64, out: &mut Vec<u8>) {
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"+Infinity" } else { b"-Infinity" });
        return;
    }
    let from = out.len();
    write_go_float(out, x);
    if x.is_finite() && x.fract() == 0.0 && !out[from..].contains(&b'e') {
        out.extend_from_slice(b".0");
    }
}

/// An embedded document or array in a cell: compact JSON of its legacy Extended JSON.
fn legacy_json(input: &[u8], t: u8, at: usize, out: &mut Vec<u8>) -> Result<(), Error> {
    match t {
        DOCUMENT | ARRAY => {
            let len = load_i32(input, at).max(5) as usize;
            out.push(if t == ARRAY { b'[' } else { b'{' });
            let mut first = true;
            for e in Elements::within(input, at + 4, at + len - 1) {
                let e = e?;
                if !first {
                    out.push(b',');
                }
                first = false;
                if t == DOCUMENT {
                    go_string(e.key, out);
                    out.push(b':');
                }
                legacy_json(input, e.element_type, e.value_start, out)?;
            }
            out.push(if t == ARRAY { b']' } else { b'}' });
        }
        STRING | SYMBOL => {
            let n = load_i32(input, at).max(1) as usize;
            go_string(input.get(at + 4..at + 3 + n).unwrap_or_default(), out);
        }
        INT32 => write_i64(out, i64::from(load_i32(input, at))),
        INT64 => {
            out.extend_from_slice(b"{\"$numberLong\":\"");
            write_i64(out, load_u64(input, at) as i64);
            out.extend_from_slice(b"\"}");
        }
        DOUBLE => legacy_float(f64::from_bits(load_u64(input, at)), out),
        DECIMAL128 => {
            out.extend_from_slice(b"{\"$numberDecimal\":\"");
            decimal(input, at, out);
            out.extend_from_slice(b"\"}");
        }
        BOOLEAN => out.extend_from_slice(if input[at] == 0 { b"false" } else { b"true" }),
        NULL => out.extend_from_slice(b"null"),
        UNDEFINED => out.extend_from_slice(b"{\"$undefined\":true}"),
        OBJECT_ID => {
            out.extend_from_slice(b"{\"$oid\":\"");
            write_hex(out, &input[at..at + 12]);
            out.extend_from_slice(b"\"}");
        }
        DATE_TIME => {
            let ms = load_u64(input, at) as i64;
            if (DATE_TEXT_START..DATE_TEXT_END).contains(&ms) {
                out.extend_from_slice(b"{\"$date\":\"");
                write_iso_date(out, ms, true);
                out.extend_from_slice(b"\"}");
            } else {
                out.extend_from_slice(b"{\"$date\":{\"$numberLong\":\"");
                write_i64(out, ms);
                out.extend_from_slice(b"\"}}");
            }
        }
        TIMESTAMP => {
            let (t, i) = timestamp(input, at);
            out.extend_from_slice(b"{\"$timestamp\":{\"t\":");
            write_i64(out, i64::from(t));
            out.extend_from_slice(b",\"i\":");
            write_i64(out, i64::from(i));
            out.extend_from_slice(b"}}");
        }
        BINARY => {
            let n = load_i32(input, at).max(0) as usize;
            let subtype = input[at + 4];
            let mut data = &input[at + 5..at + 5 + n];
            if subtype == 0x02 && data.len() >= 4 {
                data = &data[4..];
            }
            out.extend_from_slice(b"{\"$binary\":\"");
            write_base64(out, data);
            out.extend_from_slice(b"\",\"$type\":\"");
            write_hex(out, &[subtype]);
            out.extend_from_slice(b"\"}");
        }
        REGEX => {
            let (pattern, next) = cstring(input, at);
            let (options, _) = cstring(input, next);
            out.extend_from_slice(b"{\"$regex\":");
            go_string(pattern, out);
            out.extend_from_slice(b",\"$options\":\"");
            out.extend_from_slice(String::from_utf8_lossy(options).as_bytes());
            out.extend_from_slice(b"\"}");
        }
        JAVASCRIPT => {
            out.extend_from_slice(b"{\"$code\":");
            let n = load_i32(input, at).max(1) as usize;
            go_string(input.get(at + 4..at + 3 + n).unwrap_or_default(), out);
            out.push(b'}');
        }
        CODE_WITH_SCOPE => {
            let n = load_i32(input, at + 4).max(1) as usize;
            out.extend_from_slice(b"{\"$code\":");
            go_string(input.get(at + 8..at + 7 + n).unwrap_or_default(), out);
            out.extend_from_slice(b",\"$scope\":");
            legacy_json(input, DOCUMENT, at + 8 + n, out)?;
            out.push(b'}');
        }
        DB_POINTER => {
            let n = load_i32(input, at).max(1) as usize;
            out.extend_from_slice(b"{\"$ref\":");
            go_string(input.get(at + 4..at + 3 + n).unwrap_or_default(), out);
            out.extend_from_slice(b",\"$id\":{\"$oid\":\"");
            write_hex(out, &input[at + 4 + n..at + 16 + n]);
            out.extend_from_slice(b"\"}}");
        }
        MIN_KEY => out.extend_from_slice(b"{\"$minKey\":1}"),
        MAX_KEY => out.extend_from_slice(b"{\"$maxKey\":1}"),
        _ => out.extend_from_slice(b"null"),
    }
    Ok(())
}

/// Go `encoding/csv`'s quoting of one field.
fn write_quoted(out: &mut Vec<u8>, s: &[u8]) {
    let needs = !s.is_empty()
        && (s == b"\\."
            || s.iter().any(|&c| matches!(c, b',' | b'"' | b'\r' | b'\n'))
            || starts_with_space(s));
    if !needs {
        out.extend_from_slice(s);
        return;
    }
    out.push(b'"');
    for &c in s {
        if c == b'"' {
            out.push(b'"');
        }
        out.push(c);
    }
    out.push(b'"');
}

/// Whether the first character is white space to Go's `unicode.IsSpace`.
fn starts_with_space(s: &[u8]) -> bool {
    let head = &s[..s.len().min(4)];
    let c = match std::str::from_utf8(head) {
        Ok(t) => t.chars().next(),
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()])
            .ok()
            .and_then(|t| t.chars().next()),
    };
    matches!(
        c,
        Some(
            '\t' | '\n'
                | '\u{0b}'
                | '\u{0c}'
                | '\r'
                | ' '
                | '\u{85}'
                | '\u{a0}'
                | '\u{1680}'
                | '\u{2000}'
                ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
        )
    )
}
