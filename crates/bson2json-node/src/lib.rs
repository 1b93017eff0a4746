//! Node-API bindings for bson2json: argument conversion, handing JSON to V8, and error
//! mapping only. All transcoding lives in `bson2json-core`, the CLI's dump pipeline in
//! `bson2json-dump`.
//!
//! The modules form a stack, each using only those listed before it here (tests/layers.rs):
//! [`node_api`] the raw Node-API calls (the crate's `unsafe`, see there), [`state`] the
//! per-thread scratch, [`options`] the options' one encoding, [`errors`] the failures and the JS
//! errors they become, [`strings`] JS strings of JSON text, [`regex`] the `RegExp` check,
//! [`output`] the single-document output protocol every export shares; then the exports:
//! [`shape`] projection and redaction, [`batch`] batches and cursors, [`packed`] change-stream
//! batches (the core's packed layout), [`fast`] the per-document hot path,
//! [`rows`] rows (`toRow`, `toRows`), [`staged`] the WASI build's boundary, [`dump`] the CLI's dump pipeline's task.
//!
//! This file holds the one registration point of the exports that are not `#[napi]` items.
#![deny(clippy::all)]
// Raw Node-API calls live in `node_api`; tests/layers.rs names the one other module with an
// `unsafe` block, and why.
#![deny(unsafe_code)]
// The exports are only reachable through napi's registration, which test builds leave out.
#![cfg_attr(test, allow(dead_code))]

use napi::bindgen_prelude::*;
use napi_derive::napi;

#[allow(unsafe_code)]
mod node_api;

mod state;

mod options;

mod errors;

mod strings;

mod regex;

mod output;

mod shape;

mod batch;

mod packed;

mod fast;

mod rows;

mod staged;

// The CLI's `dump` pipeline's task (Unix file descriptors; elsewhere `dumpFile` rejects).
mod dump;

/// Adds the exports made as plain Node-API callbacks (the hot path's, the WASI staging's) to the
/// module's exports; napi-rs registers every `#[napi]` item itself. The one module-exports hook
/// of the crate: a module with such exports adds its `register` call here.
#[napi(module_exports)]
pub fn register_exports(mut exports: Object<'_>, env: Env) -> Result<()> {
    fast::register(&env, &mut exports)?;
    rows::register(&env, &mut exports)?;
    staged::register(&env, &mut exports)
}
