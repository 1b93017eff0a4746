//! SWAR vs plain twins on arbitrary bytes, at every alignment of the first eight offsets:
//! - `scan::find_nul` vs `find_nul_plain` (whole and bounded slices);
//! - `scan::short_key` (SSE2 on x86-64) vs `short_key_swar` and vs `find_nul_plain` + the escape
//!   table (length, `plain` flag, lane bytes), `escape::short_run_is_plain` vs its SWAR twin,
//!   and `short_key_tail` vs `short_key` of the zero-padded tail;
//! - `escape::write_escaped` / `write_escaped_in` (a sub-range of a longer buffer, so the
//!   16-byte block copies read past `to`) vs `write_escaped_plain`, the pure-ASCII return
//!   value, and a JSON round trip for valid UTF-8; `escape::write_quoted_utf8_in` (escaping
//!   and UTF-8 validation in one AVX2 pass) vs `write_escaped_plain` + `std::str::from_utf8`,
//!   and `utf8::write_quoted_lossy` vs `write_quoted` of `String::from_utf8_lossy`, on the
//!   same sub-range;
//! - `number::write_js_number` / `write_ejson_double` (Żmij) vs their Ryū twins (on the
//!   window's bits, and on a double near the bounds where the layout changes), and
//!   `number::write_u64` (SWAR digits) vs `write_u64_plain`, and `number::write_iso_date`
//!   (three words) vs `write_iso_date_plain` (both forms, the window folded into the JS date
//!   range), on every 8-byte window;
//! - `utf8::is_valid` / `is_valid_short` (shift DFA, `simdutf8` from 64 bytes) vs
//!   `std::str::from_utf8`, and `utf8::to_utf16` (SSSE3 blocks, unvalidated decoding) and
//!   `to_utf16_scalar` (SSE2 widening) vs `to_utf16_plain` on valid UTF-8 (on any other
//!   input: no panic, no more units than bytes), `utf8_block_to_utf16` vs its plain twin on
//!   any 16 bytes,
//!   on every suffix the loop below takes; `lanes::widen16` vs `widen16_plain` on each
//!   16-byte window; `lanes::is_ascii` (SSE2) and `is_ascii_swar` vs `<[u8]>::is_ascii` on
//!   the first eight suffixes and on every prefix of the first 300 bytes.
#![no_main]
use bson2json_core::testing::{
    short_run_is_plain, short_run_is_plain_swar, write_escaped, write_escaped_in, write_escaped_plain,
};
use bson2json_core::testing::{
    write_ejson_double, write_ejson_double_plain, write_iso_date, write_iso_date_plain,
    write_js_number, write_js_number_plain, write_u64, write_u64_plain, JS_DATE_MAX_MS,
};
use bson2json_core::testing::{find_nul, find_nul_plain, is_ascii_swar, short_key, short_key_swar};
use bson2json_core::testing::{write_quoted, write_quoted_lossy, write_quoted_utf8_in};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for w in data.windows(8).take(64) {
        let bits = u64::from_le_bytes(w.try_into().unwrap());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_u64(&mut a, bits);
        write_u64_plain(&mut b, bits);
        assert_eq!(a, b, "write_u64({bits})");
        let ms = (bits % (2 * JS_DATE_MAX_MS as u64 + 1)) as i64 - JS_DATE_MAX_MS;
        for always in [true, false] {
            a.clear();
            b.clear();
            write_iso_date(&mut a, ms, always);
            write_iso_date_plain(&mut b, ms, always);
            assert_eq!(a, b, "write_iso_date({ms}, {always})");
        }
        // The window's bits as a double, and as a double within 2^15 of the bounds where the
        // layout changes (1e-6 and 1e21 for ECMAScript, 1e-5 and 1e16 for Żmij's text; the
        // writers tell them apart by magnitude), which random bits almost never land near.
        let near = [1e-6f64, 1e-5, 1e16, 1e21][(bits >> 62) as usize];
        let near = f64::from_bits(near.to_bits().wrapping_add_signed(i64::from(bits as i16)));
        for x in [f64::from_bits(bits), near] {
            if !x.is_finite() {
                continue;
            }
            a.clear();
            b.clear();
            write_js_number(&mut a, x);
            write_js_number_plain(&mut b, x);
            assert_eq!(a, b, "write_js_number({x:e})");
            a.clear();
            b.clear();
            write_ejson_double(&mut a, x);
            write_ejson_double_plain(&mut b, x);
            assert_eq!(a, b, "write_ejson_double({x:e})");
        }
    }
    for end in 0..data.len().min(300) {
        let p = &data[..end];
        assert_eq!(bson2json_core::is_ascii(p), p.is_ascii(), "is_ascii of {end} bytes");
        assert_eq!(is_ascii_swar(p), p.is_ascii(), "swar, {end} bytes");
    }
    for skip in 0..8.min(data.len() + 1) {
        let s = &data[skip..];
        assert_eq!(bson2json_core::is_ascii(s), s.is_ascii(), "is_ascii at skip {skip}");
        assert_eq!(is_ascii_swar(s), s.is_ascii(), "swar at skip {skip}");
        assert_eq!(find_nul(s), find_nul_plain(s), "find_nul at skip {skip}");
        // Also bounded sub-slices (a cstring scan is always bounded by its frame end).
        if !s.is_empty() {
            let t = &s[..s.len() - 1];
            assert_eq!(find_nul(t), find_nul_plain(t));
        }
        if s.len() >= 16 {
            let w = &s[..16];
            assert_eq!(short_key(s, 0), short_key_swar(s, 0), "short_key SSE2 vs SWAR");
            for len in 0..=16 {
                assert_eq!(
                    short_run_is_plain(s, 0, len),
                    short_run_is_plain_swar(s, 0, len),
                    "short_run_is_plain SSE2 vs SWAR, len {len}"
                );
            }
            match short_key(s, 0) {
                None => assert_eq!(find_nul_plain(w), None),
                Some(k) => {
                    assert_eq!(Some(k.len), find_nul_plain(w));
                    let key = &w[..k.len];
                    let plain = key.iter().all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\');
                    assert_eq!(k.plain, plain, "short_key plain flag for {key:02X?}");
                    let mut lo = [0u8; 8];
                    let mut hi = [0u8; 8];
                    for (i, &b) in key.iter().enumerate() {
                        if i < 8 { lo[i] = b } else { hi[i - 8] = b }
                    }
                    assert_eq!((k.lo, k.hi), (u64::from_le_bytes(lo), u64::from_le_bytes(hi)));
                }
            }
        }
        if s.len() >= 16 {
            // The tail reader sees the bytes after the end as NULs.
            for at in s.len() - 16..s.len() {
                let mut padded = s[at..].to_vec();
                padded.resize(16, 0);
                assert_eq!(bson2json_core::testing::short_key_tail(s, at), short_key(&padded, 0), "short_key_tail at {at}");
            }
        }
        let valid = std::str::from_utf8(s).is_ok();
        assert_eq!(bson2json_core::testing::is_valid(s), valid, "utf8::is_valid at skip {skip}");
        assert_eq!(bson2json_core::testing::is_valid_short(s), valid, "utf8::is_valid_short at skip {skip}");
        let mut wide = vec![0u16; s.len() + bson2json_core::UTF16_SLACK];
        let units = bson2json_core::to_utf16(s, &mut wide);
        assert!(units <= s.len(), "to_utf16 wrote more units than bytes");
        let mut narrow = vec![0u16; s.len() + bson2json_core::UTF16_SLACK];
        let scalar = bson2json_core::testing::to_utf16_scalar(s, &mut narrow);
        assert!(scalar <= s.len(), "to_utf16_scalar wrote more units than bytes");
        if valid {
            let mut plain = Vec::new();
            bson2json_core::testing::to_utf16_plain(s, &mut plain);
            assert_eq!(&wide[..units], &plain[..], "to_utf16 at skip {skip}");
            assert_eq!(&narrow[..scalar], &plain[..], "to_utf16_scalar at skip {skip}");
        }
        if s.len() >= 16 {
            let block: &[u8; 16] = s[..16].try_into().unwrap();
            let (mut a16, mut b16) = ([0u16; 16], [1u16; 16]);
            assert_eq!(
                bson2json_core::testing::widen16(block, &mut a16),
                bson2json_core::testing::widen16_plain(block, &mut b16)
            );
            assert_eq!(a16, b16, "widen16 at skip {skip}");
            let (mut a16, mut b16) = ([0u16; 16], [1u16; 16]);
            let plain = bson2json_core::testing::utf8_block_to_utf16_plain(block, &mut b16);
            if let Some(fast) = bson2json_core::testing::utf8_block_to_utf16(block, &mut a16) {
                assert_eq!(fast, plain, "utf8_block_to_utf16 at skip {skip}");
                assert_eq!(a16[..fast.1], b16[..plain.1], "utf8_block_to_utf16 units at skip {skip}");
            }
        }
        let ascii = s.is_ascii();
        let mut a = b"pre".to_vec();
        let mut b = b"pre".to_vec();
        assert_eq!(write_escaped(&mut a, s), ascii, "write_escaped ASCII flag");
        write_escaped_plain(&mut b, s);
        assert_eq!(a, b, "write_escaped at skip {skip}");
        // A sub-range [from, to) of the whole input: bytes after `to` may be read, never copied.
        let from = skip.min(data.len());
        let to = data.len().saturating_sub((data.first().copied().unwrap_or(0) % 24) as usize).max(from);
        let mut c = Vec::with_capacity(skip); // small capacities exercise the reserve logic
        let mut d = Vec::new();
        assert_eq!(write_escaped_in(&mut c, data, from, to), data[from..to].is_ascii());
        write_escaped_plain(&mut d, &data[from..to]);
        assert_eq!(c, d, "write_escaped_in({from}, {to})");
        // The one-pass escaper-validator and the replacement mode on the same sub-range.
        let sub = &data[from..to];
        let sub_valid = std::str::from_utf8(sub).is_ok();
        let (mut e, mut f) = (Vec::new(), b"\"".to_vec());
        assert_eq!(write_quoted_utf8_in(&mut e, data, from, to), sub_valid, "write_quoted_utf8_in({from}, {to}) verdict");
        write_escaped_plain(&mut f, sub);
        f.push(b'"');
        assert_eq!(e, f, "write_quoted_utf8_in({from}, {to})");
        let (mut g, mut h) = (Vec::new(), Vec::new());
        assert_eq!(write_quoted_lossy(&mut g, data, from, to), sub_valid, "write_quoted_lossy verdict");
        write_quoted(&mut h, String::from_utf8_lossy(sub).as_bytes());
        assert_eq!(g, h, "write_quoted_lossy({from}, {to})");
        if std::str::from_utf8(s).is_ok() {
            let mut q = b"\"".to_vec();
            q.extend_from_slice(&a[3..]);
            q.push(b'"');
            let back: String = serde_json::from_slice(&q).expect("escaped string is a JSON string");
            assert_eq!(back.as_bytes(), s, "escape round trip");
        }
    }
});
