//! Dates as text: `Date.prototype.toISOString` (`compat`) and the Extended JSON relaxed form,
//! from a division-free calendar (Neri and Schneider) built as three words in registers
//! (ARCHITECTURE.md, design decisions 7 and 11); a bytewise writer is the twin and the path
//! for the years and forms the words do not cover.

use crate::number::integer::DIGIT_PAIRS;

/// Milliseconds in ±100,000,000 days: the range of a valid ECMAScript `Date`.
pub const JS_DATE_MAX_MS: i64 = 8_640_000_000_000_000;

/// Days to add to "days since 1970-01-01" (at least -10^8 in the JS date range) for days
/// since 0000-03-01 shifted forward by 700 whole 400-year cycles: never negative, and four
/// times it still fits a `u32`.
const SHIFTED_EPOCH_DAYS: u32 = 719_468 + 146_097 * 700;

/// Days since 1970-01-01 plus 10^8 (so `0..=2 * 10^8`) → (year, month 1-12, day 1-31),
/// proleptic Gregorian: Neri and Schneider's Euclidean affine functions, in 32-bit unsigned
/// multiplies and shifts (the divisions by constants compile to multiplies). Held equal to
/// Hinnant's [`civil_from_days`] over the whole JS date range by a test.
#[inline(always)]
fn civil_from_shifted_days(days: u32) -> (i64, u32, u32) {
    debug_assert!(days <= 200_000_000);
    // Days since 0000-03-01, plus 700 cycles (the constant part first: `days` may be below
    // 10^8, and the sum never is).
    let n = days + (SHIFTED_EPOCH_DAYS - 100_000_000);
    let n1 = 4 * n + 3;
    let century = n1 / 146_097;
    let nc = n1 % 146_097 / 4; // day of the century
    let p2 = 2_939_745u64 * u64::from(4 * nc + 3);
    let year_of_century = (p2 >> 32) as u32;
    let day_of_year = (p2 as u32) / 2_939_745 / 4; // from March 1
    let n3 = 2_141 * day_of_year + 197_913;
    let month = n3 >> 16; // 3..=14
    let day = (n3 & 0xFFFF) / 2_141 + 1;
    let jan_feb = day_of_year >= 306;
    let year = i64::from(100 * century + year_of_century + u32::from(jan_feb)) - 400 * 700;
    (year, if jan_feb { month - 12 } else { month }, day)
}

/// Days since 1970-01-01 → (year, month 1-12, day 1-31), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`): the plain twin of [`civil_from_shifted_days`].
#[cfg(test)]
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

/// Writes the two digits of `v < 100` at `buf[at..at + 2]`.
#[inline(always)]
fn put2(buf: &mut [u8; 32], at: usize, v: u32) {
    let r = v as usize * 2;
    buf[at] = DIGIT_PAIRS[r];
    buf[at + 1] = DIGIT_PAIRS[r + 1];
}

/// Appends an ISO-8601 timestamp for `ms` since the epoch, which must satisfy
/// `|ms| <= JS_DATE_MAX_MS`. With `always_millis`, this is exactly
/// `Date.prototype.toISOString()`: `YYYY-MM-DDTHH:mm:ss.sssZ`, years outside 0..=9999 as a
/// signed six-digit year (`+010000-…`, `-000001-…`). Without it, `.sss` is left out when the
/// milliseconds are zero (the Extended JSON relaxed form, `1970-01-01T00:00:00Z`).
/// Years 0-9999 with milliseconds written (every `compat` date of the last 8,000 years) are
/// built as three 8-byte words in registers; everything else goes through
/// [`write_iso_date_plain`], which is also its twin in tests.
#[inline]
pub fn write_iso_date(out: &mut Vec<u8>, ms: i64, always_millis: bool) {
    let (y, mo, d, rem) = date_parts(ms);
    let milli = rem % 1000;
    if !(0..=9999).contains(&y) || !(always_millis || milli != 0) {
        return iso_date_bytewise(out, (y, mo, d, rem), always_millis);
    }
    let pair = |v: u32| {
        let r = v as usize * 2;
        u64::from(DIGIT_PAIRS[r]) | (u64::from(DIGIT_PAIRS[r + 1]) << 8)
    };
    let ch = |c: u8, lane: u32| u64::from(c) << (8 * lane);
    let (y, secs) = (y as u32, rem / 1000);
    // "YYYY-MM-", "DDTHH:mm", ":ss.sssZ"
    let w0 = pair(y / 100) | (pair(y % 100) << 16) | ch(b'-', 4) | (pair(mo) << 40) | ch(b'-', 7);
    let w1 = pair(d)
        | ch(b'T', 2)
        | (pair(secs / 3600) << 24)
        | ch(b':', 5)
        | (pair((secs / 60) % 60) << 48);
    let w2 = ch(b':', 0)
        | (pair(secs % 60) << 8)
        | ch(b'.', 3)
        | ch(b'0' + (milli / 100) as u8, 4)
        | (pair(milli % 100) << 40)
        | ch(b'Z', 7);
    crate::sink::put_words(out, [w0, w1, w2]);
}

/// (year, month, day, milliseconds into the day) of `ms` since the epoch, clamped to the JS
/// date range.
#[inline(always)]
fn date_parts(ms: i64) -> (i64, u32, u32, u32) {
    // Shifted by 10^8 days (exactly JS_DATE_MAX_MS) so the division is unsigned.
    let shifted = ms
        .clamp(-JS_DATE_MAX_MS, JS_DATE_MAX_MS)
        .wrapping_add(JS_DATE_MAX_MS) as u64;
    let days = (shifted / 86_400_000) as u32; // 0..=2 * 10^8
    let rem = (shifted % 86_400_000) as u32;
    let (y, mo, d) = civil_from_shifted_days(days);
    (y, mo, d, rem)
}

/// [`write_iso_date`] for every year and both forms, laid out byte by byte in a stack buffer
/// and copied out as one block: the path for years outside 0-9999 and for relaxed dates on a
/// whole second, and the fast path's twin in tests.
pub fn write_iso_date_plain(out: &mut Vec<u8>, ms: i64, always_millis: bool) {
    iso_date_bytewise(out, date_parts(ms), always_millis);
}

/// The byte-by-byte layout of [`write_iso_date_plain`] from the [`date_parts`] of an instant.
fn iso_date_bytewise(
    out: &mut Vec<u8>,
    (y, mo, d, rem): (i64, u32, u32, u32),
    always_millis: bool,
) {
    let mut buf = [0u8; 32];
    let mut i = if (0..=9999).contains(&y) {
        let y = y as u32;
        put2(&mut buf, 0, y / 100);
        put2(&mut buf, 2, y % 100);
        4
    } else {
        buf[0] = if y < 0 { b'-' } else { b'+' };
        let a = y.unsigned_abs() as u32; // ≤ 275,760 within the JS date range
        put2(&mut buf, 1, a / 10_000);
        put2(&mut buf, 3, (a / 100) % 100);
        put2(&mut buf, 5, a % 100);
        7
    };
    buf[i] = b'-';
    put2(&mut buf, i + 1, mo);
    buf[i + 3] = b'-';
    put2(&mut buf, i + 4, d);
    buf[i + 6] = b'T';
    let secs = rem / 1000;
    put2(&mut buf, i + 7, secs / 3600);
    buf[i + 9] = b':';
    put2(&mut buf, i + 10, (secs / 60) % 60);
    buf[i + 12] = b':';
    put2(&mut buf, i + 13, secs % 60);
    i += 15;
    let milli = rem % 1000;
    if always_millis || milli != 0 {
        buf[i] = b'.';
        buf[i + 1] = b'0' + (milli / 100) as u8;
        put2(&mut buf, i + 2, milli % 100);
        i += 4;
    }
    buf[i] = b'Z';
    out.reserve(i + 17);
    crate::sink::copy_run(out, &buf, 0, i + 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(ms: i64, always: bool) -> String {
        let mut v = Vec::new();
        write_iso_date(&mut v, ms, always);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn civil_dates_agree_with_hinnant() {
        // Every day within ±5,000 years of the epoch, then every 997th day of the JS range
        // (±10^8 days) and both ends.
        let check = |z: i64| {
            assert_eq!(
                civil_from_shifted_days((z + 100_000_000) as u32),
                civil_from_days(z),
                "day {z}"
            );
        };
        let near = if cfg!(miri) { 400 } else { 1_900_000 };
        for z in -near..=near {
            check(z);
        }
        for z in (-100_000_000..=100_000_000).step_by(if cfg!(miri) { 9_999_991 } else { 997 }) {
            check(z);
        }
        check(-100_000_000);
        check(100_000_000);
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

    #[test]
    fn iso_date_fast_path_equals_its_twin() {
        let check = |ms: i64| {
            for always in [true, false] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                write_iso_date(&mut a, ms, always);
                write_iso_date_plain(&mut b, ms, always);
                assert_eq!(a, b, "ms {ms} always {always}");
            }
        };
        // Around the year-0 and year-9999 edges, whole seconds and every millisecond digit,
        // then random instants over the whole JS date range.
        for base in [
            -62_167_219_200_000i64,
            253_402_300_800_000,
            0,
            951_782_400_000,
        ] {
            let span = if cfg!(miri) { 8 } else { 2_000 };
            for d in -span..span {
                check(base + d);
                check(base + d * 86_399_999);
            }
        }
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..if cfg!(miri) { 30 } else { 300_000 } {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let ms = (seed % (2 * JS_DATE_MAX_MS as u64 + 1)) as i64 - JS_DATE_MAX_MS;
            check(ms);
            check(ms % 400_000_000_000_000);
            check(ms / 1000 * 1000);
        }
    }
}
