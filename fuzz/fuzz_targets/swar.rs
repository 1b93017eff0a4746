//! SWAR vs plain twins on arbitrary bytes, at every alignment of the first eight offsets.
#![no_main]
use bson2json_core::escape::{write_escaped, write_escaped_plain};
use bson2json_core::scan::{find_nul, find_nul_plain};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for skip in 0..8.min(data.len() + 1) {
        let s = &data[skip..];
        assert_eq!(find_nul(s), find_nul_plain(s), "find_nul at skip {skip}");
        // Also bounded sub-slices (a cstring scan is always bounded by its frame end).
        if !s.is_empty() {
            let t = &s[..s.len() - 1];
            assert_eq!(find_nul(t), find_nul_plain(t));
        }
        let mut a = b"pre".to_vec();
        let mut b = b"pre".to_vec();
        write_escaped(&mut a, s);
        write_escaped_plain(&mut b, s);
        assert_eq!(a, b, "write_escaped at skip {skip}");
        if std::str::from_utf8(s).is_ok() {
            let mut q = b"\"".to_vec();
            q.extend_from_slice(&a[3..]);
            q.push(b'"');
            let back: String = serde_json::from_slice(&q).expect("escaped string is a JSON string");
            assert_eq!(back.as_bytes(), s, "escape round trip");
        }
    }
});
