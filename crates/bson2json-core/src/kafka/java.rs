//! BSON as the MongoDB Java driver's `JsonWriter` writes it: the JSON inside the Kafka
//! connectors' records. Three modes ([`JavaMode`]): `Strict` (`JsonMode.STRICT`, the MongoDB
//! connector's `DefaultJson`: `{"$date": millis}`, `{"$numberLong": "…"}` for every int64, legacy
//! `$binary` / `$regex`), `Compact` (STRICT's values with no space after a comma: Debezium's
//! `after` and its key's `id`) and `Relaxed` (`JsonMode.RELAXED`: Debezium's `updatedFields`,
//! int64 as a number, `{"$date": "ISO-8601"}` within years 1970-9999). All with the writer's
//! spacing otherwise (`{"a": 1, "b": [1, 2]}`), its string escapes (a `\uXXXX` for every UTF-16
//! code unit the real writer escapes: the table [`super::java_chars`], generated from it) and
//! Java's `Double.toString` layout for doubles.
//!
//! Read from the BSON in one recursive walk (documents nest at most `max_depth` deep), every
//! element checked as the transcoder checks it (framing, lengths, booleans, UTF-8 per
//! [`Options::utf8`], the output limit). lib/kafka/java-json.js is its plain twin: it writes the
//! same text from the canonical Extended JSON of the same document, and the tests compare them.

use crate::bytes::{load_i32, load_u32, load_u64};
use crate::decimal128::{write_decimal128, Decimal128Style};
use crate::element::{
    ARRAY, BINARY, BOOLEAN, CODE_WITH_SCOPE, DATE_TIME, DB_POINTER, DECIMAL128, DOCUMENT, DOUBLE,
    INT32, INT64, JAVASCRIPT, MAX_KEY, MIN_KEY, NULL, OBJECT_ID, REGEX, STRING, SYMBOL, TIMESTAMP,
    UNDEFINED,
};
use crate::error::{Error, ErrorKind};
use crate::number::{write_iso_date, write_java_double};
use crate::options::{Options, Utf8Mode};
use crate::raw::Elements;
use crate::text::{write_base64, write_hex};

use super::java_chars::KEPT;

/// Which of the Java writer's outputs to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JavaMode {
    /// `JsonMode.STRICT`, `", "` between members.
    Strict,
    /// `JsonMode.STRICT` with `","` between members (indentation on, with empty indent and
    /// newline strings: Debezium's `after`).
    Compact,
    /// `JsonMode.RELAXED`, `", "` between members.
    Relaxed,
}

/// The code units of [`KEPT`] as a bitmap, one bit each.
static KEPT_BITS: [u8; 8192] = kept_bits();

const fn kept_bits() -> [u8; 8192] {
    let mut bits = [0u8; 8192];
    let mut k = 0;
    while k < KEPT.len() {
        let (a, b) = KEPT[k];
        let mut c = a as usize;
        while c <= b as usize {
            bits[c >> 3] |= 1 << (c & 7);
            c += 1;
        }
        k += 1;
    }
    bits
}

/// Whether the Java writer writes the UTF-16 code unit `c` as it is.
#[inline]
fn kept(c: u32) -> bool {
    c < 0x1_0000 && KEPT_BITS[(c >> 3) as usize] & (1 << (c & 7)) != 0
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn escape_unit(out: &mut Vec<u8>, u: u32) {
    out.extend_from_slice(&[
        b'\\',
        b'u',
        HEX[(u >> 12) as usize & 15],
        HEX[(u >> 8) as usize & 15],
        HEX[(u >> 4) as usize & 15],
        HEX[u as usize & 15],
    ]);
}

/// Appends `s` (valid UTF-8) as the Java writer quotes a string: `"`, then each character as it
/// is when the writer keeps it, its short escape (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`), or
/// `\uXXXX` per UTF-16 code unit (a character beyond the BMP: both surrogates), then `"`.
pub fn write_java_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
                i += 1;
                continue;
            }
            out.extend_from_slice(&bytes[run..i]);
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                _ => escape_unit(out, u32::from(b)),
            }
            i += 1;
            run = i;
            continue;
        }
        let (c, n) = decode(&bytes[i..]);
        if kept(c) {
            i += n;
            continue;
        }
        out.extend_from_slice(&bytes[run..i]);
        if c >= 0x1_0000 {
            let v = c - 0x1_0000;
            escape_unit(out, 0xd800 | (v >> 10));
            escape_unit(out, 0xdc00 | (v & 0x3ff));
        } else {
            escape_unit(out, c);
        }
        i += n;
        run = i;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// The code point starting `s` (valid UTF-8, a lead byte of 2-4 bytes) and its length.
#[inline]
fn decode(s: &[u8]) -> (u32, usize) {
    let b0 = u32::from(s[0]);
    let cont = |k: usize| u32::from(s[k] & 0x3f);
    if b0 < 0xe0 {
        (((b0 & 0x1f) << 6) | cont(1), 2)
    } else if b0 < 0xf0 {
        (((b0 & 0x0f) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (
            ((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        )
    }
}

/// Appends an ISO-8601 UTC instant as java.time writes it (`2023-11-14T22:13:20Z`, a fraction
/// only when not zero and without trailing zeros: `.12`); `ms` within years 1970-9999.
pub fn write_java_iso_date(out: &mut Vec<u8>, ms: i64) {
    let start = out.len();
    write_iso_date(out, ms, false);
    // `…ss.sssZ`: the fraction's trailing zeros go
    let len = out.len();
    if len - start >= 5 && out[len - 5] == b'.' {
        let mut keep = len - 1;
        while out[keep - 1] == b'0' {
            keep -= 1;
        }
        out.truncate(keep);
        out.push(b'Z');
    }
}

/// A Java writer of one document, with the call's options (UTF-8 policy, depth and output
/// limits).
pub struct JavaJson<'o> {
    opts: &'o Options,
    mode: JavaMode,
    /// Where the current call's output starts in `out` (the output limit counts from there).
    base: std::cell::Cell<usize>,
}

/// What a string of the input is: its text (replaced where invalid, when the options allow).
enum Text<'a> {
    Valid(&'a str),
    Replaced(String),
}

impl Text<'_> {
    fn as_str(&self) -> &str {
        match self {
            Text::Valid(s) => s,
            Text::Replaced(s) => s,
        }
    }
}

impl<'o> JavaJson<'o> {
    /// A writer in `mode` under `opts`.
    pub fn new(opts: &'o Options, mode: JavaMode) -> Self {
        JavaJson {
            opts,
            mode,
            base: std::cell::Cell::new(0),
        }
    }

    /// Appends the whole BSON document `doc` (an embedded one is fine: `at` is its offset in
    /// the input, for the offsets of errors) to `out`.
    pub fn document(&self, doc: &[u8], at: usize, out: &mut Vec<u8>) -> Result<(), Error> {
        let start = out.len();
        self.base.set(start);
        let r = self.container(doc, 0, doc.len(), false, 1, out);
        if r.is_err() {
            out.truncate(start);
        }
        r.map_err(|e| e.shifted(at))
    }

    /// Appends the value of type `t` at `v..end` of `input` (an element's value: `end` is the
    /// end of its enclosing document).
    pub fn value(
        &self,
        input: &[u8],
        t: u8,
        v: usize,
        end: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        self.base.set(out.len());
        self.element(input, t, v, end, 1, out)
    }

    fn sep(&self) -> &'static [u8] {
        match self.mode {
            JavaMode::Compact => b",",
            _ => b", ",
        }
    }

    fn limit(&self, out: &[u8]) -> Result<(), Error> {
        if out.len() - self.base.get() > self.opts.max_output_bytes {
            return Err(Error::new(
                ErrorKind::OutputTooLarge,
                0,
                "output exceeds maxOutputBytes",
            ));
        }
        Ok(())
    }

    /// The text of the bytes `s` (at `at` in the input).
    fn text<'a>(&self, s: &'a [u8], at: usize) -> Result<Text<'a>, Error> {
        match std::str::from_utf8(s) {
            Ok(s) => Ok(Text::Valid(s)),
            Err(_) if self.opts.utf8 == Utf8Mode::Replace => {
                Ok(Text::Replaced(String::from_utf8_lossy(s).into_owned()))
            }
            Err(_) => Err(Error::new(
                ErrorKind::InvalidUtf8,
                at,
                "string is not valid UTF-8",
            )),
        }
    }

    /// A BSON string value at `v` (int32 length with its NUL, bytes, NUL), quoted.
    fn string_value(&self, input: &[u8], v: usize, out: &mut Vec<u8>) -> Result<usize, Error> {
        let len = load_i32(input, v) as usize;
        let end = v + 4 + len;
        if input[end - 1] != 0 {
            return Err(Error::new(
                ErrorKind::BadTerminator,
                end - 1,
                "string does not end with a NUL byte",
            ));
        }
        let text = self.text(&input[v + 4..end - 1], v + 4)?;
        write_java_string(out, text.as_str());
        Ok(end)
    }

    /// The document or array whose bytes are `input[start..stop]` (length prefix to NUL).
    fn container(
        &self,
        input: &[u8],
        start: usize,
        stop: usize,
        array: bool,
        depth: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        if depth > self.opts.max_depth {
            return Err(Error::new(
                ErrorKind::TooDeep,
                start,
                "nesting deeper than maxDepth",
            ));
        }
        let elements = if start == 0 && stop == input.len() {
            Elements::new(input)?
        } else {
            if input[stop - 1] != 0 {
                return Err(Error::new(
                    ErrorKind::BadTerminator,
                    stop - 1,
                    "document does not end with a NUL byte",
                ));
            }
            Elements::within(input, start + 4, stop - 1)
        };
        out.push(if array { b'[' } else { b'{' });
        let mut first = true;
        for e in elements {
            let e = e?;
            if !first {
                out.extend_from_slice(self.sep());
            }
            first = false;
            if !array {
                let (ks, _) = e.key_range();
                let key = self.text(e.key, ks)?;
                write_java_string(out, key.as_str());
                out.extend_from_slice(b": ");
            }
            self.element(
                input,
                e.element_type,
                e.value_start,
                e.value_end,
                depth,
                out,
            )?;
            self.limit(out)?;
        }
        out.push(if array { b']' } else { b'}' });
        Ok(())
    }

    /// The value of type `t` at `v` (it ends at `end`, checked by the element iterator).
    fn element(
        &self,
        input: &[u8],
        t: u8,
        v: usize,
        end: usize,
        depth: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let sep = self.sep();
        let relaxed = self.mode == JavaMode::Relaxed;
        match t {
            DOUBLE => {
                let x = f64::from_bits(load_u64(input, v));
                if relaxed && !x.is_finite() {
                    out.extend_from_slice(b"{\"$numberDouble\": \"");
                    write_java_double(out, x);
                    out.extend_from_slice(b"\"}");
                } else {
                    write_java_double(out, x);
                }
            }
            STRING => {
                self.string_value(input, v, out)?;
            }
            DOCUMENT | ARRAY => self.container(input, v, end, t == ARRAY, depth + 1, out)?,
            BINARY => {
                let len = load_i32(input, v);
                if len < 0 {
                    return Err(Error::new(
                        ErrorKind::BadBinary,
                        v,
                        "negative binary length",
                    ));
                }
                let sub = input[v + 4];
                let mut payload = &input[v + 5..end];
                if sub == 0x02 {
                    if payload.len() < 4
                        || i64::from(load_i32(payload, 0)) != payload.len() as i64 - 4
                    {
                        return Err(Error::new(
                            ErrorKind::BadBinary,
                            v + 5,
                            "binary subtype 0x02 inner length disagrees with outer length",
                        ));
                    }
                    payload = &payload[4..];
                }
                let hex = [
                    HEX_UPPER[usize::from(sub >> 4)],
                    HEX_UPPER[usize::from(sub & 15)],
                ];
                if relaxed {
                    out.extend_from_slice(b"{\"$binary\": {\"base64\": \"");
                    write_base64(out, payload);
                    out.extend_from_slice(b"\", \"subType\": \"");
                } else {
                    out.extend_from_slice(b"{\"$binary\": \"");
                    write_base64(out, payload);
                    out.extend_from_slice(b"\"");
                    out.extend_from_slice(sep);
                    out.extend_from_slice(b"\"$type\": \"");
                }
                out.extend_from_slice(&hex);
                out.extend_from_slice(if relaxed { b"\"}}" } else { b"\"}" });
            }
            UNDEFINED => out.extend_from_slice(b"{\"$undefined\": true}"),
            OBJECT_ID => {
                out.extend_from_slice(b"{\"$oid\": \"");
                write_hex(out, &input[v..v + 12]);
                out.extend_from_slice(b"\"}");
            }
            BOOLEAN => match input[v] {
                0 => out.extend_from_slice(b"false"),
                1 => out.extend_from_slice(b"true"),
                _ => {
                    return Err(Error::new(
                        ErrorKind::BadBoolean,
                        v,
                        "boolean byte is neither 0 nor 1",
                    ))
                }
            },
            DATE_TIME => {
                let ms = load_u64(input, v) as i64;
                let mut b = itoa::Buffer::new();
                if !relaxed {
                    out.extend_from_slice(b"{\"$date\": ");
                    out.extend_from_slice(b.format(ms).as_bytes());
                    out.push(b'}');
                } else if (0..=253_402_300_799_999).contains(&ms) {
                    out.extend_from_slice(b"{\"$date\": \"");
                    write_java_iso_date(out, ms);
                    out.extend_from_slice(b"\"}");
                } else {
                    out.extend_from_slice(b"{\"$date\": {\"$numberLong\": \"");
                    out.extend_from_slice(b.format(ms).as_bytes());
                    out.extend_from_slice(b"\"}}");
                }
            }
            NULL => out.extend_from_slice(b"null"),
            REGEX => {
                let plen = input[v..end].iter().position(|&b| b == 0).unwrap_or(0);
                let pattern = self.text(&input[v..v + plen], v)?;
                let fs = v + plen + 1;
                let options = self.text(&input[fs..end - 1], fs)?;
                let mut sorted: Vec<u8> = options.as_str().as_bytes().to_vec();
                sorted.sort_unstable();
                let sorted = String::from_utf8_lossy(&sorted);
                if relaxed {
                    out.extend_from_slice(b"{\"$regularExpression\": {\"pattern\": ");
                    write_java_string(out, pattern.as_str());
                    out.extend_from_slice(b", \"options\": ");
                    write_java_string(out, &sorted);
                    out.extend_from_slice(b"}}");
                } else {
                    out.extend_from_slice(b"{\"$regex\": ");
                    write_java_string(out, pattern.as_str());
                    out.extend_from_slice(sep);
                    out.extend_from_slice(b"\"$options\": ");
                    write_java_string(out, &sorted);
                    out.push(b'}');
                }
            }
            DB_POINTER => {
                let len = load_i32(input, v) as usize;
                let oid = v + 4 + len;
                if input[oid - 1] != 0 {
                    return Err(Error::new(
                        ErrorKind::BadTerminator,
                        oid - 1,
                        "string does not end with a NUL byte",
                    ));
                }
                let ns = self.text(&input[v + 4..oid - 1], v + 4)?;
                if relaxed {
                    out.extend_from_slice(b"{\"$dbPointer\": ");
                }
                out.extend_from_slice(b"{\"$ref\": ");
                write_java_string(out, ns.as_str());
                out.extend_from_slice(if relaxed { b", " } else { sep });
                out.extend_from_slice(b"\"$id\": {\"$oid\": \"");
                write_hex(out, &input[oid..oid + 12]);
                out.extend_from_slice(b"\"}}");
                if relaxed {
                    out.push(b'}');
                }
            }
            JAVASCRIPT | SYMBOL => {
                out.extend_from_slice(if t == SYMBOL {
                    b"{\"$symbol\": "
                } else {
                    b"{\"$code\": "
                });
                self.string_value(input, v, out)?;
                out.push(b'}');
            }
            CODE_WITH_SCOPE => {
                let total = load_i32(input, v);
                if total < 14 || total as usize != end - v {
                    return Err(Error::new(
                        ErrorKind::BadCodeWithScope,
                        v,
                        "code-with-scope length disagrees with its parts",
                    ));
                }
                let slen = load_i32(input, v + 4);
                if slen < 1 || v + 8 + slen as usize + 5 > end {
                    return Err(Error::new(
                        ErrorKind::BadCodeWithScope,
                        v + 4,
                        "code-with-scope string length runs past its scope",
                    ));
                }
                out.extend_from_slice(b"{\"$code\": ");
                let scope = self.string_value(input, v + 4, out)?;
                if load_i32(input, scope) as usize != end - scope {
                    return Err(Error::new(
                        ErrorKind::BadCodeWithScope,
                        scope,
                        "code-with-scope scope length disagrees with its end",
                    ));
                }
                out.extend_from_slice(sep);
                out.extend_from_slice(b"\"$scope\": ");
                self.container(input, scope, end, false, depth + 1, out)?;
                out.push(b'}');
            }
            INT32 => {
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b.format(load_i32(input, v)).as_bytes());
            }
            TIMESTAMP => {
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b"{\"$timestamp\": {\"t\": ");
                out.extend_from_slice(b.format(load_u32(input, v + 4)).as_bytes());
                out.extend_from_slice(sep);
                out.extend_from_slice(b"\"i\": ");
                out.extend_from_slice(b.format(load_u32(input, v)).as_bytes());
                out.extend_from_slice(b"}}");
            }
            INT64 => {
                let mut b = itoa::Buffer::new();
                let n = load_u64(input, v) as i64;
                if relaxed {
                    out.extend_from_slice(b.format(n).as_bytes());
                } else {
                    out.extend_from_slice(b"{\"$numberLong\": \"");
                    out.extend_from_slice(b.format(n).as_bytes());
                    out.extend_from_slice(b"\"}");
                }
            }
            DECIMAL128 => {
                let mut d = [0u8; 16];
                d.copy_from_slice(&input[v..v + 16]);
                out.extend_from_slice(b"{\"$numberDecimal\": \"");
                write_decimal128(&d, Decimal128Style::Spec, out);
                out.extend_from_slice(b"\"}");
            }
            MIN_KEY => out.extend_from_slice(b"{\"$minKey\": 1}"),
            MAX_KEY => out.extend_from_slice(b"{\"$maxKey\": 1}"),
            _ => {
                return Err(Error::new(
                    ErrorKind::UnknownType,
                    v - 1,
                    "unknown BSON element type",
                ))
            }
        }
        Ok(())
    }
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

#[cfg(test)]
mod tests {
    use super::*;

    fn string(s: &str) -> String {
        let mut out = Vec::new();
        write_java_string(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_as_the_java_writer_escapes_them() {
        assert_eq!(
            string("a\"\\\t\u{1}é\u{301}😀\u{2028}\u{a0}\u{200b}"),
            "\"a\\\"\\\\\\t\\u0001é\\u0301\\ud83d\\ude00\\u2028\u{a0}\\u200b\""
        );
        // modifier letters are escaped (the long vowel mark, ʰ, 々), other letters are not
        assert_eq!(
            string("\u{30fc}\u{2b0}\u{3005}\u{30a2}"),
            "\"\\u30fc\\u02b0\\u3005\u{30a2}\""
        );
        assert_eq!(string("\u{7f}\u{8}\u{c}\n\r"), "\"\\u007f\\b\\f\\n\\r\"");
    }

    #[test]
    fn iso_dates_without_trailing_zeros() {
        let d = |ms| {
            let mut out = Vec::new();
            write_java_iso_date(&mut out, ms);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(d(1_700_000_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(d(1_700_000_000_120), "2023-11-14T22:13:20.12Z");
        assert_eq!(d(1_700_000_000_001), "2023-11-14T22:13:20.001Z");
        assert_eq!(d(0), "1970-01-01T00:00:00Z");
    }
}
