//! Formatting of BSON Decimal128 values (IEEE 754-2008 decimal128, BID
//! encoding) as strings.
//!
//! Two flavours are supported, see [`Decimal128Style`]. They only differ for
//! non-canonical significands (greater than `10^34 - 1`); every canonical
//! value (and NaN/Infinity) is formatted identically by both.
//!
//! The formatter never allocates beyond appending to the output `Vec`, never
//! panics and uses no `unsafe`.

/// Largest canonical decimal128 significand: `10^34 - 1`.
const MAX_SIGNIFICAND: u128 = 10u128.pow(34) - 1;

/// Exponent bias of decimal128.
const EXPONENT_BIAS: i32 = 6176;

/// `10^19`, the largest power of ten that fits in a `u64`.
const TEN_POW_19: u64 = 10_000_000_000_000_000_000;

/// Which rules to follow for non-canonical significands (> 10^34 - 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decimal128Style {
    /// The BSON Decimal128 specification's to-string conversion (IEEE 754
    /// to-scientific-string): a non-canonical significand — including every
    /// value whose combination field starts with `11` and is not NaN or
    /// Infinity — is treated as zero with the encoded exponent.
    Spec,
    /// Byte-for-byte compatible with js-bson's
    /// `Decimal128.prototype.toString()` (js-bson 7). It prints the digits of
    /// a non-canonical significand when the value would be printed in plain
    /// (non-exponent) notation, i.e. for exponents `-40..=-1`, and prints a
    /// zero with the encoded exponent otherwise.
    JsBson,
}

/// Appends the string form of the Decimal128 `bytes` (as stored in BSON,
/// little-endian) to `out`.
///
/// NaN (of any sign or payload, including signalling NaN) is written as
/// `NaN`, infinities as `Infinity` / `-Infinity`. Finite values use the
/// IEEE 754 to-scientific-string rules: exponent notation (`1.5E+3`,
/// `1E-7`) when the exponent is positive or the adjusted exponent is below
/// `-6`, plain notation (`0.0015`, `-0.00`) otherwise. Negative zero keeps
/// its sign. How non-canonical significands are printed is selected by
/// `style`.
pub fn write_decimal128(bytes: &[u8; 16], style: Decimal128Style, out: &mut Vec<u8>) {
    let bits = u128::from_le_bytes(*bytes);
    let negative = (bits >> 127) != 0;
    let high = (bits >> 96) as u32;
    let combination = (high >> 26) & 0x1f;

    let (biased_exponent, significand) = if combination >> 3 == 0b11 {
        match combination {
            0b11111 => {
                out.extend_from_slice(b"NaN");
                return;
            }
            0b11110 => {
                out.extend_from_slice(if negative { b"-Infinity" } else { b"Infinity" });
                return;
            }
            _ => {
                // "11" form: the exponent follows the two leading bits and
                // the significand is `100` followed by the low 111 bits, so it
                // is always >= 2^113 > 10^34 - 1 (non-canonical).
                let exponent = (high >> 15) & 0x3fff;
                let significand = (1u128 << 113) | (bits & ((1u128 << 111) - 1));
                (exponent, significand)
            }
        }
    } else {
        let exponent = (high >> 17) & 0x3fff;
        let significand = bits & ((1u128 << 113) - 1);
        (exponent, significand)
    };
    // At most 14 bits, so the cast and subtraction cannot overflow.
    let exponent = biased_exponent as i32 - EXPONENT_BIAS;

    if negative {
        out.push(b'-');
    }

    if significand > MAX_SIGNIFICAND {
        // A non-canonical significand always has 35 decimal digits (it is in
        // [10^34, 2^114)), so its adjusted exponent is `34 + exponent`.
        // js-bson switches to exponent notation (and then prints a zero) when
        // that is >= 34 or <= -7, or when the exponent is positive; otherwise
        // it prints the digits in plain notation.
        let js_plain = style == Decimal128Style::JsBson && (-40..=-1).contains(&exponent);
        if !js_plain {
            // Zero with the given exponent; identical for both styles.
            write_finite(b"0", exponent, out);
            return;
        }
    }

    let mut buf = [0u8; 40];
    let start = significand_digits(significand, &mut buf);
    // `start` is always < buf.len(), see `significand_digits`.
    let digits = buf.get(start..).unwrap_or(b"0");
    write_finite(digits, exponent, out);
}

/// Writes the decimal digits of `value` right-aligned into `buf` and returns
/// the index of the first digit (`value == 0` gives a single `0`).
///
/// Any `u128` has at most 39 digits, so the result is always `< 40`.
#[inline]
fn significand_digits(value: u128, buf: &mut [u8; 40]) -> usize {
    let mut pos = buf.len();
    if let Ok(small) = u64::try_from(value) {
        return write_u64_digits(small, buf, pos);
    }
    // value >= 2^64: split into the low 19 digits and the rest. Both halves
    // fit a u64 for any significand (< 2^114 < 10^19 * 2^64).
    let ten19 = u128::from(TEN_POW_19);
    let mut rest = value;
    loop {
        let quotient = rest / ten19;
        // Remainder without a second 128-bit division; always < 10^19.
        let low = (rest - quotient * ten19) as u64;
        rest = quotient;
        pos = write_u64_fixed19(low, buf, pos);
        if let Ok(head) = u64::try_from(rest) {
            return write_u64_digits(head, buf, pos);
        }
    }
}

/// Writes all digits of `value` (at least one) ending just before `end`;
/// returns the new start index.
#[inline]
fn write_u64_digits(mut value: u64, buf: &mut [u8; 40], mut end: usize) -> usize {
    loop {
        if end == 0 {
            return 0;
        }
        end -= 1;
        buf[end] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return end;
        }
    }
}

/// Writes exactly 19 digits of `value` (< 10^19, zero padded) ending just
/// before `end`; returns the new start index.
#[inline]
fn write_u64_fixed19(mut value: u64, buf: &mut [u8; 40], mut end: usize) -> usize {
    for _ in 0..19 {
        if end == 0 {
            return 0;
        }
        end -= 1;
        buf[end] = b'0' + (value % 10) as u8;
        value /= 10;
    }
    end
}

/// Writes a finite value given its significand `digits` (no leading zeros
/// unless the value is zero) and unbiased `exponent`, following the
/// to-scientific-string rules. The sign has already been written.
fn write_finite(digits: &[u8], exponent: i32, out: &mut Vec<u8>) {
    let n = digits.len() as i32; // at most 40
    let adjusted = n - 1 + exponent;
    if exponent > 0 || !(-6..34).contains(&adjusted) {
        // Scientific notation: d[.ddd]E(+|-)x
        if let Some((first, rest)) = digits.split_first() {
            out.push(*first);
            if !rest.is_empty() {
                out.push(b'.');
                out.extend_from_slice(rest);
            }
        }
        out.push(b'E');
        if adjusted >= 0 {
            out.push(b'+');
        }
        write_i32(adjusted, out);
    } else if exponent == 0 {
        out.extend_from_slice(digits);
    } else {
        // exponent in -(n + 6)..=-1: plain notation with a decimal point.
        let radix = n + exponent;
        if radix > 0 {
            let (int_part, frac_part) = digits.split_at((radix as usize).min(digits.len()));
            out.extend_from_slice(int_part);
            out.push(b'.');
            out.extend_from_slice(frac_part);
        } else {
            out.extend_from_slice(b"0.");
            // -radix <= 6 leading zeros
            for _ in radix..0 {
                out.push(b'0');
            }
            out.extend_from_slice(digits);
        }
    }
}

/// Writes a small signed integer in decimal.
fn write_i32(value: i32, out: &mut Vec<u8>) {
    if value < 0 {
        out.push(b'-');
    }
    let mut v = value.unsigned_abs();
    let mut buf = [0u8; 10];
    let mut pos = buf.len();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 || pos == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[pos..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds the little-endian bytes from the big-endian (human) bit pattern.
    fn le(bits: u128) -> [u8; 16] {
        bits.to_le_bytes()
    }

    /// Bytes for a finite value in the normal (non-"11") encoding.
    fn finite(negative: bool, biased_exponent: u32, significand: u128) -> [u8; 16] {
        let sign = if negative { 1u128 << 127 } else { 0 };
        le(sign | (u128::from(biased_exponent & 0x3fff) << 113) | (significand & ((1 << 113) - 1)))
    }

    /// Bytes for the "11" combination form.
    fn form11(negative: bool, biased_exponent: u32, low111: u128) -> [u8; 16] {
        let sign = if negative { 1u128 << 127 } else { 0 };
        le(sign
            | (0b11u128 << 125)
            | (u128::from(biased_exponent & 0x3fff) << 111)
            | (low111 & ((1 << 111) - 1)))
    }

    fn fmt(bytes: &[u8; 16], style: Decimal128Style) -> String {
        let mut out = Vec::new();
        write_decimal128(bytes, style, &mut out);
        String::from_utf8(out).expect("ASCII output")
    }

    fn both(bytes: &[u8; 16]) -> String {
        let spec = fmt(bytes, Decimal128Style::Spec);
        let js = fmt(bytes, Decimal128Style::JsBson);
        assert_eq!(spec, js, "styles differ for {bytes:02x?}");
        spec
    }

    fn hex_bytes(hex: &str) -> [u8; 16] {
        let mut b = [0u8; 16];
        for (i, out) in b.iter_mut().enumerate() {
            *out = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
        }
        b
    }

    #[test]
    fn nan_and_infinity() {
        // Canonical NaN, negative NaN, sNaN, negative sNaN, payloads.
        assert_eq!(both(&le(0x7c00u128 << 112)), "NaN");
        assert_eq!(both(&le(0xfc00u128 << 112)), "NaN");
        assert_eq!(both(&le(0x7e00u128 << 112)), "NaN");
        assert_eq!(both(&le(0xfe00u128 << 112)), "NaN");
        assert_eq!(both(&le((0x7c00u128 << 112) | 12)), "NaN");
        assert_eq!(both(&le((0x7e00u128 << 112) | 12)), "NaN");
        assert_eq!(both(&le(u128::MAX)), "NaN");
        assert_eq!(both(&le(u128::MAX >> 1)), "NaN");
        // Infinity, including with payload bits set.
        assert_eq!(both(&le(0x7800u128 << 112)), "Infinity");
        assert_eq!(both(&le(0xf800u128 << 112)), "-Infinity");
        assert_eq!(both(&le((0x7800u128 << 112) | 12)), "Infinity");
        assert_eq!(both(&le((0xfbffu128 << 112) | 0xffff)), "-Infinity");
    }

    #[test]
    fn zeros() {
        assert_eq!(both(&finite(false, 6176, 0)), "0");
        assert_eq!(both(&finite(true, 6176, 0)), "-0");
        assert_eq!(both(&finite(false, 6176 - 2, 0)), "0.00");
        assert_eq!(both(&finite(true, 6176 - 2, 0)), "-0.00");
        assert_eq!(both(&finite(true, 6176 - 6, 0)), "-0.000000");
        assert_eq!(both(&finite(true, 6176 - 7, 0)), "-0E-7");
        assert_eq!(both(&finite(true, 6176 - 8, 0)), "-0E-8");
        assert_eq!(both(&finite(false, 6176 + 3, 0)), "0E+3");
        assert_eq!(both(&finite(true, 6176 + 3, 0)), "-0E+3");
        assert_eq!(both(&finite(false, 0, 0)), "0E-6176");
        assert_eq!(both(&finite(true, 12287, 0)), "-0E+6111");
    }

    #[test]
    fn ordinary_values() {
        assert_eq!(both(&finite(false, 6176, 1)), "1");
        assert_eq!(both(&finite(true, 6176, 1)), "-1");
        assert_eq!(both(&finite(false, 6176 - 1, 15)), "1.5");
        assert_eq!(both(&finite(false, 6176 - 4, 15)), "0.0015");
        assert_eq!(both(&finite(false, 6176 - 7, 15)), "0.0000015");
        assert_eq!(both(&finite(false, 6176 - 8, 15)), "1.5E-7");
        assert_eq!(both(&finite(false, 6176 + 1, 15)), "1.5E+2");
        assert_eq!(both(&finite(false, 6176 + 1, 1)), "1E+1");
        assert_eq!(both(&finite(false, 6176 - 3, 1_234_567)), "1234.567");
        assert_eq!(
            both(&finite(false, 6176 - 1, u128::from(u64::MAX))),
            "1844674407370955161.5"
        );
        assert_eq!(
            both(&finite(false, 6176 - 19, 1u128 << 64)),
            "1.8446744073709551616"
        );
    }

    #[test]
    fn extreme_exponents_and_significands() {
        // Largest finite value and smallest subnormal.
        assert_eq!(
            both(&finite(false, 12287, MAX_SIGNIFICAND)),
            "9.999999999999999999999999999999999E+6144"
        );
        assert_eq!(
            both(&finite(true, 12287, MAX_SIGNIFICAND)),
            "-9.999999999999999999999999999999999E+6144"
        );
        assert_eq!(both(&finite(false, 0, 1)), "1E-6176");
        assert_eq!(both(&finite(true, 0, 1)), "-1E-6176");
        assert_eq!(
            both(&finite(false, 0, MAX_SIGNIFICAND)),
            "9.999999999999999999999999999999999E-6143"
        );
        assert_eq!(
            both(&finite(false, 6176, MAX_SIGNIFICAND)),
            "9999999999999999999999999999999999"
        );
        assert_eq!(
            both(&finite(false, 6176 - 34, MAX_SIGNIFICAND)),
            "0.9999999999999999999999999999999999"
        );
        assert_eq!(
            both(&finite(false, 6176 - 40, MAX_SIGNIFICAND)),
            "9.999999999999999999999999999999999E-7"
        );
        // 12287 is the largest biased exponent of the normal encoding (its
        // two top bits cannot both be set, that would be the "11" form).
        assert_eq!(both(&finite(false, 12287, 1)), "1E+6111");
    }

    #[test]
    fn non_canonical_normal_form() {
        let max = (1u128 << 113) - 1;
        let ten34 = MAX_SIGNIFICAND + 1;
        let spec = |b: &[u8; 16]| fmt(b, Decimal128Style::Spec);
        let js = |b: &[u8; 16]| fmt(b, Decimal128Style::JsBson);

        let b = hex_bytes("ffffffffffffffffffffffffffff3f30");
        assert_eq!(b, finite(false, 6175, max));
        assert_eq!(spec(&b), "0.0");
        assert_eq!(js(&b), "1038459371706965525706099265844019.1");

        // exponent 0 / positive / very negative: both print a zero.
        assert_eq!(both(&finite(false, 6176, max)), "0");
        assert_eq!(both(&finite(true, 6176, ten34)), "-0");
        assert_eq!(both(&finite(false, 6176 + 5, ten34)), "0E+5");
        assert_eq!(both(&finite(true, 6176 - 41, ten34)), "-0E-41");
        assert_eq!(both(&finite(false, 0, max)), "0E-6176");
        assert_eq!(both(&finite(false, 12287, max)), "0E+6111");

        // -40..=-1: js-bson prints the (non-canonical) digits.
        assert_eq!(spec(&finite(false, 6176 - 40, ten34)), "0E-40");
        assert_eq!(
            js(&finite(false, 6176 - 40, ten34)),
            "0.0000010000000000000000000000000000000000"
        );
        assert_eq!(spec(&finite(true, 6176 - 6, max)), "-0.000000");
        assert_eq!(
            js(&finite(true, 6176 - 6, max)),
            "-10384593717069655257060992658.440191"
        );
        assert_eq!(spec(&finite(true, 6176 - 35, ten34)), "-0E-35");
        assert_eq!(
            js(&finite(true, 6176 - 35, ten34)),
            "-0.10000000000000000000000000000000000"
        );
    }

    #[test]
    fn non_canonical_11_form() {
        let spec = |b: &[u8; 16]| fmt(b, Decimal128Style::Spec);
        let js = |b: &[u8; 16]| fmt(b, Decimal128Style::JsBson);
        // Corpus-style: 11 form with exponent 0 and various payloads is zero.
        assert_eq!(both(&form11(false, 6176, 0)), "0");
        assert_eq!(both(&form11(true, 6176, 12345)), "-0");
        assert_eq!(both(&form11(false, 6176 + 1, 0)), "0E+1");
        assert_eq!(both(&form11(false, 0, 0)), "0E-6176");
        assert_eq!(both(&form11(false, 12287, u128::MAX)), "0E+6111");
        // significand 2^113 + low bits; js-bson prints its digits for -40..=-1.
        assert_eq!(spec(&form11(false, 6175, 0)), "0.0");
        assert_eq!(
            js(&form11(false, 6175, 0)),
            "1038459371706965525706099265844019.2"
        );
        let all = (1u128 << 111) - 1;
        assert_eq!(spec(&form11(true, 6176 - 40, all)), "-0E-40");
        assert_eq!(
            js(&form11(true, 6176 - 40, all)),
            "-0.0000012980742146337069071326240823050239"
        );
    }

    #[test]
    fn appends_to_existing_output() {
        let mut out = b"x:".to_vec();
        write_decimal128(&finite(false, 6175, 15), Decimal128Style::Spec, &mut out);
        assert_eq!(out, b"x:1.5");
    }

    #[test]
    fn no_panic_on_exhaustive_top_bits() {
        // Every sign/combination/exponent pattern (top 18 bits) with a few
        // significand tails; output must be ASCII and non-empty.
        let tails = [
            0u128,
            1,
            u128::MAX >> 18,
            0x5555_5555_5555_5555_5555_5555_5555,
        ];
        let mut out = Vec::with_capacity(64);
        for top in 0u128..(1 << 18) {
            for tail in tails {
                let bytes = le((top << 110) | (tail & ((1 << 110) - 1)));
                for style in [Decimal128Style::Spec, Decimal128Style::JsBson] {
                    out.clear();
                    write_decimal128(&bytes, style, &mut out);
                    assert!(!out.is_empty() && out.is_ascii() && out.len() <= 48);
                }
            }
        }
    }

    #[test]
    fn corpus_values_agree_between_styles() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/bson-corpus/tests");
        let mut count = 0;
        for n in 1..=7 {
            let path = format!("{dir}/decimal128-{n}.json");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            // Cheap extraction of `"canonical_bson" : "HEX"` without serde.
            for part in text.split("\"canonical_bson\"").skip(1) {
                let hex: String = part
                    .split('"')
                    .nth(1)
                    .expect("canonical_bson value")
                    .to_string();
                let bytes = hex_bytes(&hex[14..46]);
                both(&bytes);
                count += 1;
            }
        }
        assert!(count >= 600, "only {count} corpus cases found");
    }
}
