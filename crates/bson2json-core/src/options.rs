//! What a caller can ask of the transcoder: the dialect, UTF-8 handling, limits and the js-bson
//! deserialize options `compat` reproduces.

/// The JSON dialect to produce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// `JSON.stringify(BSON.deserialize(buf))` with js-bson 7: the drop-in replacement.
    #[default]
    Compat,
    /// MongoDB Extended JSON v2, relaxed mode.
    Relaxed,
    /// MongoDB Extended JSON v2, canonical mode (type-preserving).
    Canonical,
}

impl Dialect {
    /// Parses `"compat"`, `"relaxed"` or `"canonical"`.
    pub fn from_name(name: &str) -> Option<Dialect> {
        match name {
            "compat" => Some(Dialect::Compat),
            "relaxed" => Some(Dialect::Relaxed),
            "canonical" => Some(Dialect::Canonical),
            _ => None,
        }
    }
}

/// What to do with invalid UTF-8 in string values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Utf8Mode {
    /// Fail with [`ErrorKind::InvalidUtf8`](crate::ErrorKind::InvalidUtf8) (js-bson's default).
    #[default]
    Strict,
    /// Replace each maximal invalid subpart with U+FFFD, as the WHATWG `TextDecoder` and
    /// Node's `Buffer.toString('utf8')` do.
    Replace,
}

/// The js-bson major version whose `JSON.stringify(BSON.deserialize(buf))` text `compat`
/// reproduces. The Extended JSON dialects ignore it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BsonVersion {
    /// js-bson 6 (the `mongodb` 6.x driver, Mongoose 8): a `Long` prints as
    /// `{"low","high","unsigned"}`, and a code-with-scope scope shaped like a DBRef becomes one.
    V6,
    /// js-bson 7 (the `mongodb` 7.x driver): a `Long` prints as `{"high","low","unsigned"}`,
    /// and a code-with-scope scope is kept as it is.
    #[default]
    V7,
}

/// Default for [`Options::max_depth`]: far above MongoDB's own limits (100 levels for stored
/// documents, 200 in the server's BSON validation) so that change events, which wrap stored
/// documents, always fit.
pub const DEFAULT_MAX_DEPTH: u32 = 1000;

/// Default for [`Options::max_output_bytes`]: 256 MiB. The largest JSON any valid 16 MiB BSON
/// document can produce is about 6.5 times its size (104 MiB), so the default never rejects a
/// single valid document, and it stays far below V8's maximum string length (536,870,888).
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 256 * 1024 * 1024;

/// Transcoding options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The JSON dialect.
    pub dialect: Dialect,
    /// Invalid UTF-8 handling for string values. (In `compat`, keys and regexes are always
    /// decoded with replacement, as js-bson does.)
    pub utf8: Utf8Mode,
    /// Maximum nesting depth: the top-level document is depth 1 and every embedded document,
    /// array or code-with-scope scope adds one. Deeper input fails with
    /// [`ErrorKind::TooDeep`](crate::ErrorKind::TooDeep).
    pub max_depth: u32,
    /// Maximum length of the output buffer; beyond it the call fails with
    /// [`ErrorKind::OutputTooLarge`](crate::ErrorKind::OutputTooLarge). It is checked after every element, so the buffer can
    /// exceed it by at most one element's output before the check fires.
    pub max_output_bytes: usize,
    /// `compat`: the js-bson major to reproduce.
    pub bson_version: BsonVersion,
    /// `compat`: js-bson's `promoteLongs` (default true). When false, every int64 prints as a
    /// `Long`, `{"high":…,"low":…,"unsigned":false}` (field order per [`BsonVersion`]), not only
    /// those beyond ±2^53.
    pub promote_longs: bool,
    /// `compat`: js-bson's `promoteValues` (default true). When false, int64 prints as with
    /// `promote_longs: false`, and `promote_buffers` has no effect (int32, double and symbol
    /// wrappers print as the plain values).
    pub promote_values: bool,
    /// `compat`: js-bson's `promoteBuffers` (default false). When true (and `promote_values`),
    /// every binary, UUIDs included, prints as a Node `Buffer`, `{"type":"Buffer","data":[…]}`
    /// (for subtype 2, the inner payload).
    pub promote_buffers: bool,
    /// `compat`: js-bson's `bsonRegExp` (default false). When true a regex prints as
    /// `{"pattern":…,"options":…}` with the options sorted, options outside `imxlsu` fail with
    /// [`ErrorKind::InvalidRegex`](crate::ErrorKind::InvalidRegex) (js-bson throws a `BSONError`), and the JavaScript engine
    /// does not judge the pattern (no [`RegexRecord`](crate::RegexRecord)s).
    pub bson_regexp: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dialect: Dialect::Compat,
            utf8: Utf8Mode::Strict,
            max_depth: DEFAULT_MAX_DEPTH,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            bson_version: BsonVersion::V7,
            promote_longs: true,
            promote_values: true,
            promote_buffers: false,
            bson_regexp: false,
        }
    }
}

impl Options {
    /// Default options with the given dialect.
    pub fn with_dialect(dialect: Dialect) -> Self {
        Options {
            dialect,
            ..Options::default()
        }
    }
}
