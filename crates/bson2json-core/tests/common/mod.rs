//! BSON built by hand for the integration tests: a document around its elements' bytes, and
//! one element.

/// A document: its length, `body` (its elements) and the terminating NUL.
pub fn doc(body: &[u8]) -> Vec<u8> {
    let mut d = ((body.len() + 5) as i32).to_le_bytes().to_vec();
    d.extend_from_slice(body);
    d.push(0);
    d
}

/// One element: type `t`, the key `name` and the value's bytes.
pub fn member(t: u8, name: impl AsRef<[u8]>, value: &[u8]) -> Vec<u8> {
    let mut m = vec![t];
    m.extend_from_slice(name.as_ref());
    m.push(0);
    m.extend_from_slice(value);
    m
}
