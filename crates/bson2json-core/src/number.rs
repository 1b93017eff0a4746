//! Numbers and dates as text: ECMAScript `Number::toString`, Extended JSON doubles,
//! `Date.prototype.toISOString` and the Extended JSON relaxed date form.

/// Appends `x` exactly as ECMAScript `Number::toString` (and so `JSON.stringify`) prints a
/// finite double: shortest round-trip digits, `-0` as `0`, exponent form outside
/// `1e-7 < |x| < 1e21` (`1e+21`, `1.5e-7`). `x` must be finite.
#[inline]
pub fn write_js_number(out: &mut Vec<u8>, x: f64) {
    debug_assert!(x.is_finite());
    if x == 0.0 {
        out.push(b'0');
        return;
    }
    if !write_short_decimal(out, x) {
        write_js_number_plain(out, x);
    }
}

/// The plain twin of [`write_js_number`]: always the full shortest-round-trip algorithm.
#[inline]
pub fn write_js_number_plain(out: &mut Vec<u8>, x: f64) {
    if x == 0.0 {
        out.push(b'0');
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(x).as_bytes());
}

const POW10: [f64; 7] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6];

/// Fast path for the doubles real documents are full of: integers and values with at most six
/// decimals (prices, measurements). Finds the smallest `k <= 6` with `y = x * 10^k` an integer
/// below 2^52 and `y / 10^k == x` (IEEE division is correctly rounded, so the decimal
/// `y / 10^k` reads back as `x`). Below 2^52 the rounding interval of `x` is narrower than
/// `10^-k`, so that decimal is the only one with at most `k` decimals that reads back as `x`,
/// and therefore exactly the digits ECMAScript's shortest round-trip rule prints. Values
/// that don't qualify return false and go through Ryū. Tests and a fuzz target hold this
/// equal to [`write_js_number_plain`].
#[inline]
fn write_short_decimal(out: &mut Vec<u8>, x: f64) -> bool {
    const LIMIT: f64 = 4_503_599_627_370_496.0; // 2^52
    let a = x.abs();
    if !(1e-6..LIMIT).contains(&a) {
        return false;
    }
    for (k, &p) in POW10.iter().enumerate() {
        let y = a * p;
        if y >= LIMIT {
            return false;
        }
        // `y < 2^52`, so the integer conversion is exact when `y` is integral (and avoids
        // `f64::trunc`, a libm call on baseline x86-64).
        if (y as u64) as f64 == y && y / p == a {
            let y = y as u64;
            if x < 0.0 {
                out.push(b'-');
            }
            if k == 0 {
                write_u64(out, y);
                return true;
            }
            let scale = 10u64.pow(k as u32);
            let (int, mut frac) = (y / scale, y % scale);
            write_u64(out, int);
            out.push(b'.');
            let mut digits = [b'0'; 6];
            for d in (0..k).rev() {
                digits[d] = b'0' + (frac % 10) as u8;
                frac /= 10;
            }
            // The product can miss an integer at a smaller k by rounding and hit one at a
            // larger k: the trailing zeros that leaves are not significant.
            let mut n = k;
            while n > 1 && digits[n - 1] == b'0' {
                n -= 1;
            }
            out.extend_from_slice(&digits[..n]);
            return true;
        }
    }
    false
}

/// Appends a JSON number for a compat double: JS text for finite values, `null` otherwise
/// (what `JSON.stringify` prints for NaN and ±Infinity).
#[inline]
pub fn write_js_double(out: &mut Vec<u8>, x: f64) {
    if x.is_finite() {
        write_js_number(out, x);
    } else {
        out.extend_from_slice(b"null");
    }
}

/// Splits the ECMAScript text of a finite, non-zero `x` into its significant digits and the
/// decimal exponent `e` such that `|x| = d1.d2d3… × 10^e`.
fn digits_and_exponent(x: f64, digits: &mut [u8; 32]) -> (usize, i32) {
    let mut buf = ryu_js::Buffer::new();
    let s = buf.format_finite(x.abs()).as_bytes();
    // Forms: "123.45", "0.000123", "123000", "1.5e+21", "1e-7".
    let (mantissa, exp_part) = match s.iter().position(|&b| b == b'e') {
        Some(p) => (&s[..p], Some(&s[p + 1..])),
        None => (s, None),
    };
    let mut n = 0;
    let mut int_len: i32 = 0; // digits before the point, counting leading zeros
    let mut seen_point = false;
    let mut leading_zeros: i32 = 0; // zeros after the point before the first significant digit
    for &b in mantissa {
        if b == b'.' {
            seen_point = true;
            continue;
        }
        if n == 0 && b == b'0' {
            if seen_point {
                leading_zeros += 1;
            }
            continue;
        }
        if n < digits.len() {
            digits[n] = b;
            n += 1;
        }
        if !seen_point {
            int_len += 1;
        }
    }
    // Trailing zeros of an integer mantissa are not significant.
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    let mut e = if int_len > 0 {
        int_len - 1
    } else {
        -(leading_zeros + 1)
    };
    if let Some(ep) = exp_part {
        let (neg, body) = match ep.first() {
            Some(b'-') => (true, &ep[1..]),
            Some(b'+') => (false, &ep[1..]),
            _ => (false, ep),
        };
        let mut v: i32 = 0;
        for &b in body {
            v = v * 10 + i32::from(b - b'0');
        }
        e += if neg { -v } else { v };
    }
    (n, e)
}

/// Appends the Extended JSON text of a finite double: shortest round-trip digits, always with
/// a fraction or an exponent so that it reads back as a double: `1.0`, `-0.0`, `0.1`,
/// `1.0001220703125`, `1.2345678921232E+18`, `1E-7`. Fixed notation is used for decimal
/// exponents -7 < e < 16, as the BSON corpus does.
pub fn write_ejson_double(out: &mut Vec<u8>, x: f64) {
    debug_assert!(x.is_finite());
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    if x < 0.0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 32];
    let (n, e) = digits_and_exponent(x, &mut digits);
    let d = &digits[..n];
    if (-7 < e) && (e < 16) {
        if e >= 0 {
            let int_digits = (e + 1) as usize;
            if n <= int_digits {
                out.extend_from_slice(d);
                out.resize(out.len() + (int_digits - n), b'0');
                out.extend_from_slice(b".0");
            } else {
                out.extend_from_slice(&d[..int_digits]);
                out.push(b'.');
                out.extend_from_slice(&d[int_digits..]);
            }
        } else {
            out.extend_from_slice(b"0.");
            out.resize(out.len() + (-e - 1) as usize, b'0');
            out.extend_from_slice(d);
        }
    } else {
        out.push(d[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&d[1..]);
        }
        out.push(b'E');
        out.push(if e < 0 { b'-' } else { b'+' });
        let mut b = itoa::Buffer::new();
        out.extend_from_slice(b.format(e.unsigned_abs()).as_bytes());
    }
}

static DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal digits of `v`. Formats into a stack buffer and copies it as one block
/// (no `memcpy` call for the usual short numbers).
#[inline]
pub fn write_u64(out: &mut Vec<u8>, mut v: u64) {
    let n = v.checked_ilog10().map_or(1, |d| d as usize + 1);
    let mut buf = [0u8; 32];
    let mut i = n;
    while v >= 100 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i] = DIGIT_PAIRS[r];
        buf[i + 1] = DIGIT_PAIRS[r + 1];
    }
    if v >= 10 {
        let r = v as usize * 2;
        buf[i - 2] = DIGIT_PAIRS[r];
        buf[i - 1] = DIGIT_PAIRS[r + 1];
    } else {
        buf[i - 1] = b'0' + v as u8;
    }
    out.reserve(n + 16);
    crate::escape::copy_run(out, &buf, 0, n);
}

/// Appends the decimal text of `v` (with a `-` when negative).
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

/// Milliseconds in ±100,000,000 days: the range of a valid ECMAScript `Date`.
pub const JS_DATE_MAX_MS: i64 = 8_640_000_000_000_000;

/// Days since 1970-01-01 → (year, month 1-12, day 1-31), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32; // [1, 12]
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn push2(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&[b'0' + (v / 10) as u8, b'0' + (v % 10) as u8]);
}

/// Appends an ISO-8601 timestamp for `ms` since the epoch, which must satisfy
/// `|ms| <= JS_DATE_MAX_MS`. With `always_millis`, this is exactly
/// `Date.prototype.toISOString()`: `YYYY-MM-DDTHH:mm:ss.sssZ`, years outside 0..=9999 as a
/// signed six-digit year (`+010000-…`, `-000001-…`). Without it, `.sss` is left out when the
/// milliseconds are zero (the Extended JSON relaxed form, `1970-01-01T00:00:00Z`).
pub fn write_iso_date(out: &mut Vec<u8>, ms: i64, always_millis: bool) {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000) as u32;
    let (y, mo, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        let y = y as u32;
        push2(out, y / 100);
        push2(out, y % 100);
    } else {
        out.push(if y < 0 { b'-' } else { b'+' });
        let a = y.unsigned_abs() as u32; // ≤ 275,760 within the JS date range
        push2(out, a / 10_000);
        push2(out, (a / 100) % 100);
        push2(out, a % 100);
    }
    out.push(b'-');
    push2(out, mo);
    out.push(b'-');
    push2(out, d);
    out.push(b'T');
    push2(out, rem / 3_600_000);
    out.push(b':');
    push2(out, (rem / 60_000) % 60);
    out.push(b':');
    push2(out, (rem / 1000) % 60);
    let milli = rem % 1000;
    if always_millis || milli != 0 {
        out.push(b'.');
        out.push(b'0' + (milli / 100) as u8);
        push2(out, milli % 100);
    }
    out.push(b'Z');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(x: f64) -> String {
        let mut v = Vec::new();
        write_js_double(&mut v, x);
        String::from_utf8(v).unwrap()
    }
    fn ej(x: f64) -> String {
        let mut v = Vec::new();
        write_ejson_double(&mut v, x);
        String::from_utf8(v).unwrap()
    }
    fn iso(ms: i64, always: bool) -> String {
        let mut v = Vec::new();
        write_iso_date(&mut v, ms, always);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn js_numbers() {
        assert_eq!(js(1.0), "1");
        assert_eq!(js(-0.0), "0");
        assert_eq!(js(f64::NAN), "null");
        assert_eq!(js(f64::NEG_INFINITY), "null");
        assert_eq!(js(1e21), "1e+21");
        assert_eq!(js(1e20), "100000000000000000000");
        assert_eq!(js(1e-7), "1e-7");
        assert_eq!(js(1e-6), "0.000001");
        assert_eq!(js(5e-324), "5e-324");
        assert_eq!(js(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(js(-1.5e300), "-1.5e+300");
    }

    #[test]
    fn short_decimal_fast_path_matches_ryu() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let check = |x: f64| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            write_js_number(&mut a, x);
            write_js_number_plain(&mut b, x);
            assert_eq!(a, b, "{x:e}");
        };
        for _ in 0..200_000 {
            let r = next();
            let cents = (r % 100_000_000) as f64;
            for k in [1.0, 10.0, 100.0, 1000.0, 1e4, 1e5, 1e6, 1e7] {
                check(cents / k);
                check(-cents / k);
            }
            let bits = f64::from_bits(r);
            if bits.is_finite() {
                check(bits);
            }
            check((r >> 11) as f64);
            check((r >> 11) as f64 + 0.5);
        }
        for x in [
            0.1,
            0.2,
            0.3,
            0.1 + 0.2,
            1e-6,
            1.5e-6,
            1e-7,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            123.456,
            0.07,
            1e15,
            1e16,
            1e21,
        ] {
            check(x);
            check(-x);
        }
    }

    #[test]
    fn integers_match_itoa() {
        let mut seed = 1u64;
        let mut vals = vec![
            0i64,
            1,
            -1,
            9,
            10,
            99,
            100,
            i64::MAX,
            i64::MIN,
            i32::MAX as i64,
            i32::MIN as i64,
        ];
        for _ in 0..100_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            vals.push((seed as i64) >> (seed % 64));
        }
        for v in vals {
            let mut a = Vec::new();
            write_i64(&mut a, v);
            assert_eq!(a, itoa::Buffer::new().format(v).as_bytes());
            let mut b = Vec::new();
            write_u64(&mut b, v as u64);
            assert_eq!(b, itoa::Buffer::new().format(v as u64).as_bytes());
        }
    }

    #[test]
    fn ejson_doubles() {
        assert_eq!(ej(1.0), "1.0");
        assert_eq!(ej(-1.0), "-1.0");
        assert_eq!(ej(0.0), "0.0");
        assert_eq!(ej(-0.0), "-0.0");
        assert_eq!(ej(1.0001220703125), "1.0001220703125");
        assert_eq!(ej(1.2345678921232E+18), "1.2345678921232E+18");
        assert_eq!(ej(-1.2345678921232E+18), "-1.2345678921232E+18");
        assert_eq!(ej(1e100), "1E+100");
        assert_eq!(ej(1e15), "1000000000000000.0");
        assert_eq!(ej(1e16), "1E+16");
        assert_eq!(ej(0.000001), "0.000001");
        assert_eq!(ej(1e-7), "1E-7");
        assert_eq!(ej(1.5e-7), "1.5E-7");
        assert_eq!(ej(123.456), "123.456");
        assert_eq!(ej(5e-324), "5E-324");
        assert_eq!(ej(f64::MAX), "1.7976931348623157E+308");
    }

    #[test]
    fn ejson_doubles_round_trip() {
        let mut x = 1.234_567_890_123_456_7e-300_f64;
        while x < 1e300 {
            for v in [x, -x, x * 3.3, 1.0 / x] {
                let s = ej(v);
                assert_eq!(s.parse::<f64>().unwrap(), v, "{s}");
            }
            x *= 7.77;
        }
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso(0, true), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(0, false), "1970-01-01T00:00:00Z");
        assert_eq!(iso(1_356_351_330_501, false), "2012-12-24T12:15:30.501Z");
        assert_eq!(
            iso(253_402_300_800_000, true),
            "+010000-01-01T00:00:00.000Z"
        );
        assert_eq!(iso(JS_DATE_MAX_MS, true), "+275760-09-13T00:00:00.000Z");
        assert_eq!(iso(-JS_DATE_MAX_MS, true), "-271821-04-20T00:00:00.000Z");
        assert_eq!(
            iso(-62_198_755_200_001, true),
            "-000002-12-31T23:59:59.999Z"
        );
        assert_eq!(iso(-1, true), "1969-12-31T23:59:59.999Z");
        assert_eq!(iso(951_782_400_000, true), "2000-02-29T00:00:00.000Z");
    }
}
