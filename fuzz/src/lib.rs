//! Shared helpers for the bson2json fuzz targets: a hand-written BSON writer that records
//! where every length field sits (so a target can lie in one of them), an `Arbitrary` program
//! that builds a BSON tree without recursion, the `bson` crate oracle walk, and JSON checks.

use arbitrary::Arbitrary;
use bson2json_core::{Dialect, Error, ErrorKind, Options, Transcoder, Utf8Mode};

pub const DIALECTS: [Dialect; 3] = [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical];
pub const UTF8_MODES: [Utf8Mode; 2] = [Utf8Mode::Strict, Utf8Mode::Replace];

/// Panics unless `out` is one JSON text.
pub fn assert_json(out: &[u8], input: &[u8], opts: &Options) {
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(out) {
        panic!(
            "invalid JSON ({e}) for {opts:?}\ninput  {}\noutput {}",
            hex(input),
            String::from_utf8_lossy(out)
        );
    }
}

/// Panics unless `e` is a well-formed coded error for `input`.
pub fn assert_error(e: &Error, input: &[u8]) {
    assert!(ErrorKind::ALL.contains(&e.kind()), "kind {:?}", e.kind());
    assert!(
        e.offset() <= input.len(),
        "error offset {} past input length {} ({e}) for {}",
        e.offset(),
        input.len(),
        hex(input)
    );
    assert!(!e.code().is_empty() && !e.detail().is_empty());
}

/// Transcodes into a buffer that already holds a prefix; checks JSON validity on `Ok` and
/// that the buffer is untouched on `Err`. Returns the JSON (without the prefix).
pub fn checked_transcode(
    tc: &mut Transcoder,
    input: &[u8],
    opts: &Options,
) -> Result<Vec<u8>, Error> {
    const PREFIX: &[u8] = b"[\"prefix\",";
    let mut out = PREFIX.to_vec();
    let result = tc.transcode(input, opts, &mut out);
    // The lean `compat` walk and its recording twin: same output, same error.
    let mut twin = PREFIX.to_vec();
    let twin_result = Transcoder::new().transcode_plain(input, opts, &mut twin);
    assert_eq!(
        result,
        twin_result,
        "transcode vs transcode_plain for {}",
        hex(input)
    );
    assert_eq!(
        out,
        twin,
        "transcode vs transcode_plain output for {}",
        hex(input)
    );
    match result {
        Ok(()) => {
            assert!(out.starts_with(PREFIX), "prefix clobbered");
            let json = out.split_off(PREFIX.len());
            assert_json(&json, input, opts);
            Ok(json)
        }
        Err(e) => {
            assert_eq!(
                out,
                PREFIX,
                "output changed on error {e} for {}",
                hex(input)
            );
            assert_error(&e, input);
            Err(e)
        }
    }
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// A BSON writer that remembers the position of every int32 length field it writes.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
    /// Byte offsets of length fields (document, string, binary, binary-0x02 inner, code-w-scope).
    pub lengths: Vec<usize>,
    open: Vec<usize>,
}

impl Writer {
    fn len_placeholder(&mut self) -> usize {
        let at = self.buf.len();
        self.lengths.push(at);
        self.buf.extend_from_slice(&[0; 4]);
        at
    }
    fn patch(&mut self, at: usize) {
        let n = (self.buf.len() - at) as i32;
        self.buf[at..at + 4].copy_from_slice(&n.to_le_bytes());
    }
    pub fn cstring(&mut self, s: &[u8]) {
        self.buf
            .extend(s.iter().map(|&b| if b == 0 { b'_' } else { b }));
        self.buf.push(0);
    }
    pub fn string(&mut self, s: &[u8]) {
        self.lengths.push(self.buf.len());
        self.buf
            .extend_from_slice(&(s.len() as i32 + 1).to_le_bytes());
        self.buf.extend_from_slice(s);
        self.buf.push(0);
    }
    pub fn begin_doc(&mut self) {
        let at = self.len_placeholder();
        self.open.push(at);
    }
    pub fn end_doc(&mut self) {
        self.buf.push(0);
        let at = self.open.pop().expect("balanced");
        self.patch(at);
    }
    pub fn key(&mut self, t: u8, key: &[u8]) {
        self.buf.push(t);
        self.cstring(key);
    }
    pub fn depth(&self) -> usize {
        self.open.len()
    }
    /// Starts a code-with-scope value: total length, code string, then the scope document
    /// (closed by `end_cws`).
    pub fn begin_cws(&mut self, code: &[u8]) {
        let total = self.len_placeholder();
        self.open.push(total);
        self.string(code);
        self.begin_doc();
    }
    pub fn end_cws(&mut self) {
        self.end_doc();
        let at = self.open.pop().expect("balanced");
        self.patch(at);
    }
    pub fn binary(&mut self, sub: u8, data: &[u8]) {
        self.lengths.push(self.buf.len());
        let old = sub == 2;
        let n = data.len() + if old { 4 } else { 0 };
        self.buf.extend_from_slice(&(n as i32).to_le_bytes());
        self.buf.push(sub);
        if old {
            self.lengths.push(self.buf.len());
            self.buf
                .extend_from_slice(&(data.len() as i32).to_le_bytes());
        }
        self.buf.extend_from_slice(data);
    }
}

/// A scalar BSON value.
#[derive(Arbitrary, Debug, Clone)]
pub enum Scalar {
    Double(f64),
    Str(String),
    Binary(u8, Vec<u8>),
    Undefined,
    Oid([u8; 12]),
    Bool(bool),
    Date(i64),
    Null,
    Regex(String, String),
    DbPointer(String, [u8; 12]),
    Code(String),
    Symbol(String),
    Int32(i32),
    Timestamp(u64),
    Int64(i64),
    Decimal([u8; 16]),
    MinKey,
    MaxKey,
}

/// One step of the tree-building program: a flat list of these is turned into nested BSON
/// with an explicit stack, so neither generation nor serialization recurses.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    Scalar(String, Scalar),
    OpenDoc(String),
    OpenArray(String),
    OpenCodeWithScope(String, String),
    Close,
}

/// Serializes a program into one valid BSON document (every open container is closed at the
/// end). Array element keys are written as "0", "1", … as the spec asks.
pub fn build(ops: &[Op]) -> Writer {
    let mut w = Writer::default();
    // Per open container: (is_array, element count, is_code_with_scope)
    let mut frames: Vec<(bool, usize, bool)> = vec![(false, 0, false)];
    w.begin_doc();
    let key_for = |frames: &mut Vec<(bool, usize, bool)>, k: &str| -> Vec<u8> {
        let f = frames.last_mut().expect("frame");
        let key = if f.0 {
            f.1.to_string().into_bytes()
        } else {
            k.as_bytes().to_vec()
        };
        f.1 += 1;
        key
    };
    for op in ops {
        match op {
            Op::Scalar(k, s) => {
                let key = key_for(&mut frames, k);
                write_scalar(&mut w, &key, s);
            }
            Op::OpenDoc(k) | Op::OpenArray(k) => {
                let is_array = matches!(op, Op::OpenArray(_));
                let key = key_for(&mut frames, k);
                w.key(if is_array { 4 } else { 3 }, &key);
                w.begin_doc();
                frames.push((is_array, 0, false));
            }
            Op::OpenCodeWithScope(k, code) => {
                let key = key_for(&mut frames, k);
                w.key(0x0F, &key);
                w.begin_cws(code.as_bytes());
                frames.push((false, 0, true));
            }
            Op::Close => {
                if frames.len() > 1 {
                    close(&mut w, &mut frames);
                }
            }
        }
    }
    while frames.len() > 1 {
        close(&mut w, &mut frames);
    }
    w.end_doc();
    w
}

fn close(w: &mut Writer, frames: &mut Vec<(bool, usize, bool)>) {
    let (_, _, cws) = frames.pop().expect("frame");
    if cws {
        w.end_cws();
    } else {
        w.end_doc();
    }
}

pub fn write_scalar(w: &mut Writer, key: &[u8], s: &Scalar) {
    match s {
        Scalar::Double(x) => {
            w.key(0x01, key);
            w.buf.extend_from_slice(&x.to_le_bytes());
        }
        Scalar::Str(x) => {
            w.key(0x02, key);
            w.string(x.as_bytes());
        }
        Scalar::Binary(sub, data) => {
            w.key(0x05, key);
            w.binary(*sub, data);
        }
        Scalar::Undefined => w.key(0x06, key),
        Scalar::Oid(b) => {
            w.key(0x07, key);
            w.buf.extend_from_slice(b);
        }
        Scalar::Bool(b) => {
            w.key(0x08, key);
            w.buf.push(u8::from(*b));
        }
        Scalar::Date(ms) => {
            w.key(0x09, key);
            w.buf.extend_from_slice(&ms.to_le_bytes());
        }
        Scalar::Null => w.key(0x0A, key),
        Scalar::Regex(p, f) => {
            w.key(0x0B, key);
            w.cstring(p.as_bytes());
            w.cstring(f.as_bytes());
        }
        Scalar::DbPointer(ns, oid) => {
            w.key(0x0C, key);
            w.string(ns.as_bytes());
            w.buf.extend_from_slice(oid);
        }
        Scalar::Code(c) => {
            w.key(0x0D, key);
            w.string(c.as_bytes());
        }
        Scalar::Symbol(c) => {
            w.key(0x0E, key);
            w.string(c.as_bytes());
        }
        Scalar::Int32(n) => {
            w.key(0x10, key);
            w.buf.extend_from_slice(&n.to_le_bytes());
        }
        Scalar::Timestamp(n) => {
            w.key(0x11, key);
            w.buf.extend_from_slice(&n.to_le_bytes());
        }
        Scalar::Int64(n) => {
            w.key(0x12, key);
            w.buf.extend_from_slice(&n.to_le_bytes());
        }
        Scalar::Decimal(b) => {
            w.key(0x13, key);
            w.buf.extend_from_slice(b);
        }
        Scalar::MinKey => w.key(0xFF, key),
        Scalar::MaxKey => w.key(0x7F, key),
    }
}

/// The `bson` crate as an accept/reject oracle: `RawDocument::from_bytes` plus a full walk of
/// every element of every nested document, array and code-with-scope scope, with an explicit
/// stack (the crate itself has no depth limit). Every value is materialised with
/// `RawElement::value()` through the `Iter` API, so strings, keys, regexes, symbols, code and
/// DBPointer namespaces are UTF-8 validated.
pub fn bson_crate_accepts(input: &[u8]) -> Result<(), bson::error::Error> {
    use bson::raw::{RawBsonRef, RawDocument};
    let root = RawDocument::from_bytes(input)?;
    let mut stack: Vec<&RawDocument> = vec![root];
    while let Some(doc) = stack.pop() {
        for item in doc.iter() {
            let (_key, value) = item?;
            match value {
                RawBsonRef::Document(d) => stack.push(d),
                RawBsonRef::Array(a) => stack.push(RawDocument::from_bytes(a.as_bytes())?),
                RawBsonRef::JavaScriptCodeWithScope(c) => stack.push(c.scope),
                _ => {}
            }
        }
    }
    Ok(())
}

/// True when the `bson` crate's error is a UTF-8 error (used for the documented array-key
/// exception: bson2json ignores array element names, so it never validates them).
pub fn is_utf8_error(e: &bson::error::Error) -> bool {
    matches!(e.kind, bson::error::ErrorKind::Utf8Encoding { .. })
}

/// Options for the oracle comparisons: no depth limit (the `bson` crate has none).
pub fn unlimited(dialect: Dialect, utf8: Utf8Mode) -> Options {
    Options {
        dialect,
        utf8,
        max_depth: u32::MAX,
        ..Options::default()
    }
}
