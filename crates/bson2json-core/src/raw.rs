//! Raw elements: stepping over a document's elements in place, without decoding values.
//!
//! [`Elements`] is the one iterator over a document's elements in the crate. Its users: the
//! lean `compat` walk reading back the keys of an object it has already walked
//! (`compat::keys`), [`top_level_elements`] (cursor replies and change events in `mongo`),
//! and projection's element reader (`project`). Each step checks the key's NUL and the
//! value's length (`element::value_len`) against the end it was given, so an element it
//! yields lies wholly before that end; it never decodes a value. The walker (`transcode`)
//! reads elements itself, in its own loop (ARCHITECTURE.md, design decision 5).

use crate::bytes::load_i32;
use crate::element::value_len;
use crate::error::{Error, ErrorKind};
use crate::scan::{find_nul, nul_in_16};

/// One element of a document, located without decoding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawElement<'a> {
    /// The BSON element type byte.
    pub element_type: u8,
    /// The key's raw bytes.
    pub key: &'a [u8],
    /// Input index of the value's first byte.
    pub value_start: usize,
    /// Input index just past the value.
    pub value_end: usize,
}

impl RawElement<'_> {
    /// Input index of the element's type byte.
    #[inline]
    pub(crate) fn start(&self) -> usize {
        self.value_start - self.key.len() - 2
    }

    /// Input range of the key's bytes (without its NUL).
    #[inline]
    pub(crate) fn key_range(&self) -> (usize, usize) {
        let ke = self.value_start - 1;
        (ke - self.key.len(), ke)
    }
}

/// The elements of one document or array, in order: each step reads a type byte, a key and
/// steps over the value. Invariant: `pos <= end`, and every yielded element ends at or before
/// `end`. After an error the iterator yields nothing more.
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    input: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Elements<'a> {
    /// The elements of the whole BSON document `doc`, after checking its length prefix
    /// against `doc.len()` and its trailing NUL.
    pub fn new(doc: &'a [u8]) -> Result<Self, Error> {
        if doc.len() < 5 {
            return Err(Error::new(
                ErrorKind::Truncated,
                0,
                "document is shorter than 5 bytes",
            ));
        }
        let size = load_i32(doc, 0);
        if size < 5 || size as usize != doc.len() {
            return Err(Error::new(
                ErrorKind::BadLength,
                0,
                "document length disagrees with its bytes",
            ));
        }
        let end = doc.len() - 1;
        if doc[end] != 0 {
            return Err(Error::new(
                ErrorKind::BadTerminator,
                end,
                "document does not end with a NUL byte",
            ));
        }
        Ok(Self::within(doc, 4, end))
    }

    /// The elements of `input` from `first` (a type byte) up to `end` (exclusive: a
    /// container's terminating NUL, or any element boundary), with no check of an envelope.
    #[inline]
    pub(crate) fn within(input: &'a [u8], first: usize, end: usize) -> Self {
        Elements {
            input,
            pos: first,
            end,
        }
    }

    /// Input index of the next element's type byte (or `end` once all are read).
    #[inline]
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Reads the element at the current position, which must be before `end`, and steps past
    /// it. Short keys are found with one 16-byte read where the input has 16 bytes there.
    /// Inlined into each caller's loop (the lean duplicate checks run it once per key of an
    /// object with a Bloom hit; as a call it cost them more than their old inline reader).
    #[inline(always)]
    pub(crate) fn step(&mut self) -> Result<RawElement<'a>, Error> {
        let (input, end) = (self.input, self.end);
        let t = input[self.pos];
        let ks = self.pos + 1;
        let short = if ks + 16 <= input.len() {
            nul_in_16(input, ks).filter(|&n| ks + n < end)
        } else {
            None
        };
        let kl = match short {
            Some(n) => n,
            None => find_nul(input.get(ks..end).unwrap_or_default())
                .ok_or_else(|| Error::new(ErrorKind::Truncated, ks, "key has no NUL terminator"))?,
        };
        let v = ks + kl + 1;
        let n = value_len(input, t, v, end)?;
        self.pos = v + n;
        Ok(RawElement {
            element_type: t,
            key: &input[ks..ks + kl],
            value_start: v,
            value_end: v + n,
        })
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<RawElement<'a>, Error>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.end {
            return None;
        }
        let r = self.step();
        if r.is_err() {
            self.pos = self.end;
        }
        Some(r)
    }
}

/// Lists the top-level elements of the BSON document `doc` (framing checked, values not
/// decoded) into `out`: all of them, or the first error. Embedded document values
/// (`value_start..value_end`) are themselves complete BSON documents that
/// [`crate::Transcoder::transcode`] accepts.
pub fn top_level_elements<'a>(doc: &'a [u8], out: &mut Vec<RawElement<'a>>) -> Result<(), Error> {
    out.clear();
    for e in Elements::new(doc)? {
        out.push(e?);
    }
    Ok(())
}
