//! # bson2json-core
//!
//! Transcodes raw BSON bytes straight into JSON text in one pass: no intermediate tree, no
//! allocation per element, and no recursion on the input's nesting depth (an explicit frame
//! stack on the heap). Three dialects:
//!
//! - [`Dialect::Compat`]: byte-identical to `JSON.stringify(BSON.deserialize(buf, opts))` with
//!   js-bson 7 (or 6, [`Options::bson_version`]) and the deserialize options `promoteLongs`,
//!   `promoteValues`, `promoteBuffers`, `bsonRegExp` and `validation.utf8` ([`Options`];
//!   defaults: js-bson's), and failing on exactly the inputs where js-bson throws.
//! - [`Dialect::Relaxed`] and [`Dialect::Canonical`]: MongoDB Extended JSON v2, as the
//!   specification and the BSON corpus define it.
//!
//! ```
//! use bson2json_core::{transcode, Options};
//! // {"a": 1} as BSON
//! let bson = [12, 0, 0, 0, 0x10, b'a', 0, 1, 0, 0, 0, 0];
//! let mut json = Vec::new();
//! transcode(&bson, &Options::default(), &mut json).unwrap();
//! assert_eq!(json, br#"{"a":1}"#);
//! ```
//!
//! Malformed input returns an [`Error`] with a stable [`ErrorKind`] and the byte offset; the
//! transcoder never panics and never reads outside the input. A successful result is always
//! valid JSON.
#![deny(missing_docs)]
// Unsafe code is confined to `lanes` (SSE2 classification) and `sink` (unchecked output
// stores), each block with its SAFETY argument; everything else is safe Rust.
#![deny(unsafe_code)]

// The modules form a stack; each uses only modules listed above it (checked by
// tests/layers.rs). From the bottom:
//
// 1. reading input and errors
mod bytes;
mod error;
// 2. SIMD/SWAR byte classification and the unchecked output sink: the only `unsafe`
#[allow(unsafe_code)]
mod lanes;
#[allow(unsafe_code)]
mod sink;
// 3. scanning cstrings and value writers
mod decimal128;
mod escape;
mod number;
mod scan;
mod text;
mod utf8;
// 4. element types: tags and value lengths; raw elements (one iterator over a document's
//    elements, values not decoded)
mod element;
pub mod raw;
// 5. the walk: options, compat's object model, the walker
mod compat;
mod options;
mod transcode;
// 6. many documents per call; concatenated BSON; MongoDB cursor replies and change events
pub mod batch;
pub mod concat;
pub mod csv;
// the Kafka connectors' record formats (the Java driver's JSON), written by the change-event packer
pub mod kafka;
pub mod mongo;
// 5b. rows: a document's top-level fields as typed values (SQL sinks, PowerSync's format)
pub mod row;
// 7. projection and redaction: a BSON → BSON pass ahead of the transcoder
pub mod project;

pub use error::{Error, ErrorKind};
pub use lanes::is_ascii;
pub use options::{
    BsonVersion, Dialect, Options, Utf8Mode, DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES,
};
pub use transcode::{RegexRecord, Transcoder};
pub use utf8::{to_utf16, UTF16_SLACK};

/// Transcodes one BSON document (the whole of `input`) and appends its JSON to `out`.
///
/// On error nothing is appended. This convenience function allocates scratch space on every
/// call; reuse a [`Transcoder`] on hot paths.
pub fn transcode(input: &[u8], options: &Options, out: &mut Vec<u8>) -> Result<(), Error> {
    Transcoder::new().transcode(input, options, out)
}

/// The fast paths' plain twins and the primitives they are checked against, for the property
/// tests, the fuzz targets and the benchmarks. Not part of the API: no stability promise.
#[doc(hidden)]
pub mod testing {
    pub use crate::decimal128::{write_decimal128, Decimal128Style};
    pub use crate::escape::{write_escaped, write_escaped_in, write_escaped_plain, write_quoted};
    pub use crate::lanes::{
        is_ascii_swar, short_run_is_plain, short_run_is_plain_swar, utf8_block_to_utf16,
        utf8_block_to_utf16_plain, widen16, widen16_plain,
    };
    pub use crate::number::{
        write_ejson_double, write_ejson_double_plain, write_go_float, write_go_float_plain,
        write_iso_date, write_iso_date_plain, write_java_double, write_java_double_plain,
        write_js_number, write_js_number_plain, write_u64, write_u64_plain, JS_DATE_MAX_MS,
    };
    pub use crate::scan::{
        find_nul, find_nul_plain, nul_in_16, short_key, short_key_swar, short_key_tail, ShortKey,
    };
    pub use crate::text::{write_hex, write_hex_plain};
    pub use crate::utf8::{
        is_valid, is_valid_short, to_utf16_plain, to_utf16_scalar, write_quoted_lossy,
        write_quoted_utf8_in, write_quoted_utf8_two_pass,
    };
}
