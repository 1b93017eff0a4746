//! Table-driven hex (ObjectId, UUID) and base64 (binary) writers.

static HEX_PAIRS: [[u8; 2]; 256] = {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [H[i >> 4], H[i & 15]];
        i += 1;
    }
    t
};

/// The eight lowercase hex digits of the four bytes of `x` (little-endian: the low byte is
/// printed first) as a little-endian word, by SWAR: each byte is spread to a 16-bit lane, its
/// nibbles split into the lane's two bytes (high nibble first), and each nibble `n` becomes
/// `'0' + n`, plus 39 (`'a' - '0' - 10`) where `n > 9`, which adding 6 detects in bit 4.
#[inline(always)]
fn hex8(x: u32) -> u64 {
    const LO4: u64 = 0x000F_000F_000F_000F;
    let y = u64::from(x);
    let y = (y | (y << 16)) & 0x0000_FFFF_0000_FFFF;
    let y = (y | (y << 8)) & 0x00FF_00FF_00FF_00FF; // byte k in 16-bit lane k
    let n = ((y >> 4) & LO4) | ((y & LO4) << 8); // one nibble per byte, high nibble first
    let letters = ((n + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
    n + 0x3030_3030_3030_3030 + letters * 39
}

/// Appends the lowercase hex of `bytes`, eight bytes of text per step (`hex8`);
/// [`write_hex_plain`] is its twin.
#[inline]
pub fn write_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() * 2 + 8);
    let mut chunks = bytes.chunks_exact(4);
    for c in &mut chunks {
        let mut w = [0u8; 4];
        w.copy_from_slice(c);
        crate::sink::put_word(out, hex8(u32::from_le_bytes(w)), 8);
    }
    for &b in chunks.remainder() {
        out.extend_from_slice(&HEX_PAIRS[b as usize]);
    }
}

/// The plain twin of [`write_hex`]: one table lookup per byte.
pub fn write_hex_plain(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.extend_from_slice(&HEX_PAIRS[b as usize]);
    }
}

/// Appends the 16 bytes of a UUID as `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (lowercase).
pub fn write_uuid(out: &mut Vec<u8>, b: &[u8; 16]) {
    write_hex(out, &b[0..4]);
    out.push(b'-');
    write_hex(out, &b[4..6]);
    out.push(b'-');
    write_hex(out, &b[6..8]);
    out.push(b'-');
    write_hex(out, &b[8..10]);
    out.push(b'-');
    write_hex(out, &b[10..16]);
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends standard base64 (RFC 4648 alphabet, `=` padding) of `bytes`.
pub fn write_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        out.extend_from_slice(&[
            B64[(n >> 18) as usize & 63],
            B64[(n >> 12) as usize & 63],
            B64[(n >> 6) as usize & 63],
            B64[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend_from_slice(&[
                B64[(n >> 18) as usize & 63],
                B64[(n >> 12) as usize & 63],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            out.extend_from_slice(&[
                B64[(n >> 18) as usize & 63],
                B64[(n >> 12) as usize & 63],
                B64[(n >> 6) as usize & 63],
                b'=',
            ]);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_matches_plain() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        for len in 0..40 {
            for _ in 0..if cfg!(miri) { 4 } else { 2000 } {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let bytes: Vec<u8> = (0..len)
                    .map(|i| (x >> (i % 8 * 8)) as u8 ^ i as u8)
                    .collect();
                let (mut a, mut b) = (Vec::new(), Vec::new());
                write_hex(&mut a, &bytes);
                write_hex_plain(&mut b, &bytes);
                assert_eq!(a, b);
            }
        }
        let all: Vec<u8> = (0..=255).collect();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_hex(&mut a, &all);
        write_hex_plain(&mut b, &all);
        assert_eq!(a, b);
    }

    #[test]
    fn base64_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut v = Vec::new();
            write_base64(&mut v, i.as_bytes());
            assert_eq!(v, o.as_bytes());
        }
        let mut v = Vec::new();
        write_base64(&mut v, &[0xff, 0xff]);
        assert_eq!(v, b"//8=");
    }

    #[test]
    fn hex_and_uuid() {
        let mut v = Vec::new();
        write_uuid(
            &mut v,
            &[
                0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
                0xee, 0xff,
            ],
        );
        assert_eq!(v, b"00112233-4455-6677-8899-aabbccddeeff");
    }
}
