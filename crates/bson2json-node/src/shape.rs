//! `Shaper`: a projection and/or redaction (core `project`) compiled once per call or stream,
//! applied to each document as a BSON → BSON pass ahead of the unchanged transcoder.

use std::borrow::Cow;

use bson2json_core::project::{Projection, RedactWith, Redaction, Shape};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::batch::BatchLayout;
use crate::errors::{type_error, Failure};
use crate::fast::with_output;
use crate::node_api;
use crate::{options, strings, KEEP_CAPACITY};

/// `Shaper.shape` results above this size become external buffers (no copy).
const EXTERNAL_ABOVE: usize = 64 * 1024;

thread_local! {
    /// The shaped document and the projection's scratch of `Shaper.transcode`, kept per thread.
    static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// What `Shaper.shape` reads: one document, concatenated documents, a cursor document, a
/// change event.
#[napi]
pub enum ShapeInput {
    /// One whole document.
    Document = 0,
    /// Documents back to back.
    Concatenated = 1,
    /// A cursor document (`{ id, ns, firstBatch | nextBatch }`): its batch's documents.
    Cursor = 2,
    /// A change event.
    ChangeEvent = 3,
    /// A cursor document whose batch holds change events.
    ChangeCursor = 4,
}

/// A compiled projection and redaction.
#[napi]
pub struct Shaper {
    shape: Shape,
}

#[napi]
impl Shaper {
    /// `fields[i]` with `include[i]` (the projection, in the spec's order), the redacted
    /// `paths`, and the HMAC key (`null` redacts to `null`). A bad spec throws a TypeError
    /// naming the path.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        fields: Vec<String>,
        include: Vec<bool>,
        redact: Vec<String>,
        key: Option<Buffer>,
    ) -> Result<Self> {
        if fields.len() != include.len() {
            return Err(type_error(
                &env,
                "bson2json: fields and include differ in length",
            ));
        }
        let pairs: Vec<(&str, bool)> = fields
            .iter()
            .map(String::as_str)
            .zip(include.iter().copied())
            .collect();
        let projection = Projection::new(&pairs)
            .map_err(|e| type_error(&env, &format!("bson2json: options.projection: {e}")))?;
        let paths: Vec<&str> = redact.iter().map(String::as_str).collect();
        let with = match key {
            None => RedactWith::Null,
            Some(k) => RedactWith::HmacSha256(k.to_vec()),
        };
        let redaction = Redaction::new(&paths, with)
            .map_err(|e| type_error(&env, &format!("bson2json: options.redact: {e}")))?;
        Ok(Shaper {
            shape: Shape::new(projection, redaction),
        })
    }

    /// The shaped BSON of `input` (read as `kind` says), in a new `Buffer`.
    #[napi(
        ts_args_type = "kind: ShapeInput, input: Uint8Array",
        ts_return_type = "Buffer"
    )]
    pub fn shape<'env>(
        &self,
        env: &'env Env,
        kind: ShapeInput,
        input: Uint8ArraySlice<'_>,
    ) -> Result<Unknown<'env>> {
        let mut out = Vec::with_capacity(input.len());
        let mut scratch = Vec::new();
        let r = match kind {
            ShapeInput::Document => self.shape.document(&input, &mut out, &mut scratch),
            ShapeInput::Concatenated => self.shape.concatenated(&input, &mut out, &mut scratch),
            ShapeInput::Cursor => self.shape.cursor(&input, false, &mut out, &mut scratch),
            ShapeInput::ChangeCursor => self.shape.cursor(&input, true, &mut out, &mut scratch),
            ShapeInput::ChangeEvent => self.shape.change_event(&input, &mut out, &mut scratch),
        };
        if let Err(e) = r {
            return Err(Failure::from(e).throw(env));
        }
        // Large results (batches) are handed over without a copy; small ones are copied into a
        // V8 buffer, which is cheaper than an external one with a finalizer.
        let v = if out.len() > EXTERNAL_ABOVE {
            node_api::buffer_owned(env, out)
        } else {
            node_api::buffer_copy(env, &out)
        };
        Ok(v?.into_unknown(env))
    }

    /// One document shaped then transcoded in one call: `packed` and `maxOutputBytes` as
    /// `transcode` takes them; a `Buffer` when `buffer` is true, else a string.
    #[napi(
        ts_args_type = "input: Uint8Array, packed: number, maxOutputBytes: number, buffer: boolean",
        ts_return_type = "string | Buffer"
    )]
    pub fn transcode<'env>(
        &self,
        env: &'env Env,
        input: Uint8ArraySlice<'_>,
        packed: f64,
        max_output_bytes: f64,
        buffer: bool,
    ) -> Result<Unknown<'env>> {
        // The thread's buffers, taken out while in use (JavaScript that re-enters meanwhile
        // finds empty ones of its own) and kept for the next call unless large.
        let (mut shaped, mut scratch) = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        shaped.clear();
        let v = self
            .shape
            .document(&input, &mut shaped, &mut scratch)
            .map_err(Failure::from)
            .and_then(|()| {
                let opts = options::unpack(packed, max_output_bytes).ok_or_else(|| {
                    Error::new(Status::InvalidArg, "invalid resolved options".to_owned())
                })?;
                with_output(env, Cow::Borrowed(&shaped), &opts, |out, wide| {
                    if buffer {
                        node_api::buffer_copy(env, out)
                    } else {
                        strings::json(env, out, wide)
                    }
                })
            });
        if shaped.capacity() + scratch.capacity() <= KEEP_CAPACITY {
            SCRATCH.with(|s| *s.borrow_mut() = (shaped, scratch));
        }
        Ok(v.map_err(|f| f.throw(env))?.into_unknown(env))
    }

    /// Concatenated documents shaped then transcoded as `transcodeBatch` does on one thread:
    /// `layout`, `flags`, `maxDepth` and `maxOutputBytes` as it takes them. An error's `index`
    /// is the document's; its `offset` is one in the shaped documents.
    #[napi(
        ts_args_type = "input: Uint8Array, layout: BatchLayout, flags: number, maxDepth: number, maxOutputBytes: number",
        ts_return_type = "BatchValue"
    )]
    pub fn transcode_concatenated<'env>(
        &self,
        env: &'env Env,
        input: Uint8ArraySlice<'_>,
        layout: BatchLayout,
        flags: u32,
        max_depth: u32,
        max_output_bytes: f64,
    ) -> Result<Unknown<'env>> {
        let (mut shaped, mut scratch) = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        shaped.clear();
        let v = match self.shape.concatenated(&input, &mut shaped, &mut scratch) {
            Err(e) => Err(Failure::from(e).throw(env)),
            Ok(()) => {
                let opts = options::decode(flags, max_depth, max_output_bytes);
                crate::batch::transcode_concatenated_bytes(env, &shaped, layout, &opts)
            }
        };
        if shaped.capacity() + scratch.capacity() <= KEEP_CAPACITY {
            SCRATCH.with(|s| *s.borrow_mut() = (shaped, scratch));
        }
        v
    }
}
