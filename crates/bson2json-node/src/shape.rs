//! `Shaper`: a projection and/or redaction (core `project`) compiled once per call or stream,
//! applied to each document as a BSON → BSON pass ahead of the unchanged transcoder.

use std::sync::{Arc, Mutex, MutexGuard};

use bson2json_core::project::{Projection, RedactWith, Redaction, Shape};
use bson2json_core::Options;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::{type_error, Failure};
use crate::node_api;
use crate::output::{transcode_out, Held, Outcome};
use crate::state::KEEP_CAPACITY;

/// `Shaper.shape` results above this size become external buffers (no copy).
const EXTERNAL_ABOVE: usize = 64 * 1024;

thread_local! {
    /// The shaped document and the projection's scratch of `Shaper.transcode`, kept per thread.
    static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// What `Shaper.shape` reads: a cursor document of documents, or of change events (the
/// calls that transcode take the `Shaper` itself and shape as they go).
#[napi]
pub enum ShapeInput {
    /// A cursor document (`{ id, ns, firstBatch | nextBatch }`): its batch's documents.
    Cursor = 2,
    /// A cursor document whose batch holds change events.
    ChangeCursor = 4,
}

/// A compiled projection and redaction. `recompile()` replaces it in place: lib/shape.js's
/// bounded pool reuses the `Shaper` of the entry it evicts, so a program that compiles many
/// distinct shapes holds a bounded number of them (a new `Shaper` each time would free its
/// memory only when Node-API runs finalizers, after the event loop turns).
#[napi]
pub struct Shaper {
    /// A call holds its own count of the shape ([`Shaper::compiled`]), taken before anything
    /// that can run JavaScript (which could recompile this `Shaper`), so the shape it started
    /// with outlives it.
    shape: Mutex<Arc<Shape>>,
}

impl Shaper {
    /// The compiled shape, counted for this call (or a task on another thread).
    pub(crate) fn compiled(&self) -> Arc<Shape> {
        Arc::clone(&self.slot())
    }

    /// The shape's slot, locked (only ever for a clone or a swap: nothing panics while it is
    /// held, and a poisoned lock still holds a whole `Arc`).
    fn slot(&self) -> MutexGuard<'_, Arc<Shape>> {
        self.shape
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The compiled shape, for a task on another thread ([`Shaper::compiled`]).
    pub(crate) fn shared_shape(&self) -> Arc<Shape> {
        self.compiled()
    }

    /// Shapes the one document `bson` into the thread's scratch, then transcodes it as
    /// [`transcode_out`] does; [`finish_out`] finishes it once `bson` is dropped. An error's
    /// offset is where the fault is in `bson` (the shaped document's offset mapped back). Runs
    /// no JavaScript. The scratch is taken out of the thread state meanwhile and kept unless
    /// large.
    ///
    /// [`finish_out`]: crate::output::finish_out
    pub(crate) fn shape_out(&self, bson: &[u8], opts: &Options) -> (Outcome, Held) {
        let shape = self.compiled();
        let (mut shaped, mut scratch) = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        shaped.clear();
        let r = match shape.document(bson, &mut shaped, &mut scratch) {
            Err(e) => (Err(e), Held::take()),
            Ok(()) => {
                let (outcome, held) = transcode_out(&shaped, opts);
                let outcome = outcome.map_err(|e| {
                    let at = shape.source_offset(bson, e.offset());
                    bson2json_core::Error::custom(e.kind(), at, e.detail())
                });
                (outcome, held)
            }
        };
        if shaped.capacity() + scratch.capacity() <= KEEP_CAPACITY {
            SCRATCH.with(|s| *s.borrow_mut() = (shaped, scratch));
        }
        r
    }
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
        let shape = compile(&env, &fields, &include, &redact, key)?;
        Ok(Shaper {
            shape: Mutex::new(Arc::new(shape)),
        })
    }

    /// Replaces the compiled shape with that of the arguments (as the constructor takes
    /// them); a bad spec throws and leaves the shape as it was. Calls under way keep the
    /// shape they started with; the old one is freed when the last of them ends.
    #[napi]
    pub fn recompile(
        &self,
        env: Env,
        fields: Vec<String>,
        include: Vec<bool>,
        redact: Vec<String>,
        key: Option<Buffer>,
    ) -> Result<()> {
        let shape = Arc::new(compile(&env, &fields, &include, &redact, key)?);
        // Swapped out, then dropped once the borrow has ended.
        let old = std::mem::replace(&mut *self.slot(), shape);
        drop(old);
        Ok(())
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
        let events = matches!(kind, ShapeInput::ChangeCursor);
        let shape = self.compiled();
        let r = shape.cursor(&input, events, &mut out, &mut scratch);
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
}

/// The shape of a `Shaper`'s arguments.
fn compile(
    env: &Env,
    fields: &[String],
    include: &[bool],
    redact: &[String],
    key: Option<Buffer>,
) -> Result<Shape> {
    if fields.len() != include.len() {
        return Err(type_error(
            env,
            "bson2json: fields and include differ in length",
        ));
    }
    let pairs: Vec<(&str, bool)> = fields
        .iter()
        .map(String::as_str)
        .zip(include.iter().copied())
        .collect();
    let projection = Projection::new(&pairs)
        .map_err(|e| type_error(env, &format!("bson2json: options.projection: {e}")))?;
    let paths: Vec<&str> = redact.iter().map(String::as_str).collect();
    let with = match key {
        None => RedactWith::Null,
        Some(k) => RedactWith::HmacSha256(k.to_vec()),
    };
    let redaction = Redaction::new(&paths, with)
        .map_err(|e| type_error(env, &format!("bson2json: options.redact: {e}")))?;
    Ok(Shape::new(projection, redaction))
}
