//! Rows packed into a few flat buffers: the form in which the Node addon hands a call's rows
//! to JavaScript (lib/native builds the row objects from it; ARCHITECTURE.md, decision 28).
//! It is made without any JavaScript value, so it can be built on any thread.
//!
//! `words` is a sequence of 8-byte slots, each two 32-bit words `[tag, operand]` ([`Tag`]),
//! some followed by one 8-byte payload slot (a double or a 64-bit integer in the machine's
//! byte order, so JavaScript reads it with a `Float64Array`, `BigInt64Array` or
//! `BigUint64Array` over the same memory). Per row: its fields' values in document order,
//! then one [`Tag::Shape`] or [`Tag::NewShape`] slot that ends the row and names its keys.
//! A string operand is its end in `text` (UTF-8, every string back to back, each recorded in
//! `strings` so that the embedding can re-express ends in the strings it makes); a bytes
//! operand its end in `bins`.

use std::collections::HashMap;

use super::{RowOptions, RowSink, RowWriter, Value};
use crate::error::{Error, ErrorKind};

/// What a slot holds: its first 32-bit word. The numbers are the wire format: the binding
/// exports them (`RowTag`) and lib/native reads them from there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Tag {
    /// Ends a row whose keys are those of shape number `operand` of this batch.
    Shape = 0,
    /// Ends a row whose keys are new in this batch: the string `operand` holds them, each
    /// followed by a NUL; it becomes the batch's next shape.
    NewShape = 1,
    /// `null`.
    Null = 2,
    /// `true`.
    True = 3,
    /// `false`.
    False = 4,
    /// A number: the operand as a signed 32-bit integer.
    Int32 = 5,
    /// A `bigint`: the payload as a signed 64-bit integer.
    Int64 = 6,
    /// A `bigint`: the payload as an unsigned 64-bit integer.
    UInt64 = 7,
    /// A number: the payload as a double.
    Double = 8,
    /// A `bigint`: `BigInt` of the payload, an integral double.
    BigDouble = 9,
    /// A string: the next string, which ends at `operand`.
    Str = 10,
    /// A `Uint8Array`: the next bytes of `bins`, which end at `operand`.
    Bytes = 11,
}

impl Tag {
    /// Every tag with its name, for the binding to export.
    pub const ALL: [(Tag, &'static str); 12] = [
        (Tag::Shape, "Shape"),
        (Tag::NewShape, "NewShape"),
        (Tag::Null, "Null"),
        (Tag::True, "True"),
        (Tag::False, "False"),
        (Tag::Int32, "Int32"),
        (Tag::Int64, "Int64"),
        (Tag::UInt64, "UInt64"),
        (Tag::Double, "Double"),
        (Tag::BigDouble, "BigDouble"),
        (Tag::Str, "Str"),
        (Tag::Bytes, "Bytes"),
    ];
}

/// The packed rows of one call.
#[derive(Default)]
pub struct PackedRows {
    /// The slots, as 32-bit words (two per slot).
    pub words: Vec<u32>,
    /// Every string, UTF-8, back to back.
    pub text: Vec<u8>,
    /// Each string: the index in `words` of its operand and its end in `text`, in order.
    pub strings: Vec<(usize, usize)>,
    /// Every byte value, back to back.
    pub bins: Vec<u8>,
    /// How many rows.
    pub rows: usize,
    /// The current row's keys, each followed by a NUL.
    sig: Vec<u8>,
    /// The previous row's keys and shape number (most rows repeat their predecessor's).
    last: Vec<u8>,
    last_id: u32,
    /// How many shapes the batch has.
    shape_count: u32,
    /// Every shape of the batch and its number, once it has two (until then the one shape is
    /// `last`: a single row or a batch of one shape allocates nothing here).
    shapes: HashMap<Box<[u8]>, u32>,
}

impl PackedRows {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.words.clear();
        self.text.clear();
        self.strings.clear();
        self.bins.clear();
        self.rows = 0;
        self.sig.clear();
        self.last.clear();
        self.last_id = 0;
        self.shape_count = 0;
        self.shapes.clear();
    }

    fn slot(&mut self, tag: Tag, operand: u32) {
        self.words.extend_from_slice(&[tag as u32, operand]);
    }

    fn payload(&mut self, bytes: [u8; 8]) {
        let [a, b, c, d, e, f, g, h] = bytes;
        self.words.extend_from_slice(&[
            u32::from_ne_bytes([a, b, c, d]),
            u32::from_ne_bytes([e, f, g, h]),
        ]);
    }

    fn string(&mut self, tag: Tag, s: &[u8]) {
        self.text.extend_from_slice(s);
        self.strings.push((self.words.len() + 1, self.text.len()));
        self.slot(tag, 0);
    }

    /// Appends the row of the BSON document `doc`; on an error the batch is as it was.
    pub fn row(
        &mut self,
        writer: &mut RowWriter,
        doc: &[u8],
        opts: &RowOptions,
    ) -> Result<(), Error> {
        let marks = (
            self.words.len(),
            self.text.len(),
            self.strings.len(),
            self.bins.len(),
        );
        self.sig.clear();
        let r = writer.write(doc, opts, self).and_then(|()| {
            // Offsets into the bytes are 32-bit.
            if u32::try_from(self.bins.len()).is_err() {
                return Err(Error::new(
                    ErrorKind::OutputTooLarge,
                    0,
                    "a batch's byte values exceed 4 GiB",
                ));
            }
            Ok(())
        });
        if let Err(e) = r {
            self.words.truncate(marks.0);
            self.text.truncate(marks.1);
            self.strings.truncate(marks.2);
            self.bins.truncate(marks.3);
            return Err(e);
        }
        self.end_row();
        Ok(())
    }

    /// The slot that ends the row: its shape.
    fn end_row(&mut self) {
        self.rows += 1;
        if self.rows > 1 && self.sig == self.last {
            let id = self.last_id;
            return self.slot(Tag::Shape, id);
        }
        if self.shape_count == 1 && self.shapes.is_empty() {
            // A second shape: the first (every row's so far, so `last`) goes into the map.
            self.shapes.insert(self.last.clone().into_boxed_slice(), 0);
        }
        let id = match self.shapes.get(&self.sig[..]) {
            Some(&id) => {
                self.slot(Tag::Shape, id);
                id
            }
            None => {
                let id = self.shape_count;
                self.shape_count += 1;
                if id > 0 {
                    self.shapes.insert(self.sig.clone().into_boxed_slice(), id);
                }
                let sig = std::mem::take(&mut self.sig);
                self.string(Tag::NewShape, &sig);
                self.sig = sig;
                id
            }
        };
        std::mem::swap(&mut self.last, &mut self.sig);
        self.last_id = id;
    }
}

impl RowSink for PackedRows {
    #[inline]
    fn field(&mut self, key: &[u8], value: Value<'_>) {
        self.sig.extend_from_slice(key);
        self.sig.push(0);
        match value {
            Value::Null => self.slot(Tag::Null, 0),
            Value::Bool(true) => self.slot(Tag::True, 0),
            Value::Bool(false) => self.slot(Tag::False, 0),
            Value::Int32(x) => self.slot(Tag::Int32, x as u32),
            Value::Int64(x) => {
                self.slot(Tag::Int64, 0);
                self.payload(x.to_ne_bytes());
            }
            Value::UInt64(x) => {
                self.slot(Tag::UInt64, 0);
                self.payload(x.to_ne_bytes());
            }
            Value::Double(x) => {
                self.slot(Tag::Double, 0);
                self.payload(x.to_ne_bytes());
            }
            Value::BigDouble(x) => {
                self.slot(Tag::BigDouble, 0);
                self.payload(x.to_ne_bytes());
            }
            Value::Str(s) => self.string(Tag::Str, s),
            Value::Bytes(b) => {
                self.bins.extend_from_slice(b);
                let end = self.bins.len() as u32;
                self.slot(Tag::Bytes, end);
            }
        }
    }
}
