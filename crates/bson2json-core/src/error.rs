//! The error type: a stable machine-readable kind plus the byte offset where decoding failed.

use std::fmt;

/// What went wrong. Each kind has a stable string code (see [`ErrorKind::code`]) that the Node
/// package exposes as `err.code`; codes are part of the public API and never change meaning.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The input ends before a length, a value, or a key's NUL terminator (`BSON_TRUNCATED`).
    Truncated,
    /// A length field is impossible: below its minimum, past its enclosing document, or the
    /// document is followed by trailing bytes (`BSON_BAD_LENGTH`).
    BadLength,
    /// A document or string does not end with the NUL byte its length promises
    /// (`BSON_BAD_TERMINATOR`).
    BadTerminator,
    /// A string is not valid UTF-8 and `utf8: 'strict'` is in force (`BSON_INVALID_UTF8`).
    InvalidUtf8,
    /// An element type byte that BSON does not define (`BSON_UNKNOWN_TYPE`).
    UnknownType,
    /// A boolean byte other than 0 or 1 (`BSON_BAD_BOOLEAN`).
    BadBoolean,
    /// A binary element with a negative or inconsistent length (`BSON_BAD_BINARY`).
    BadBinary,
    /// A code-with-scope element whose inner lengths disagree (`BSON_BAD_CODE_W_SCOPE`).
    BadCodeWithScope,
    /// Nesting deeper than `max_depth` (`BSON_TOO_DEEP`).
    TooDeep,
    /// The JSON output would exceed `max_output_bytes` (`BSON_OUTPUT_TOO_LARGE`).
    OutputTooLarge,
    /// `compat` only (`BSON_INVALID_REGEX`): the JavaScript engine rejects a regular expression's
    /// pattern or flags, where js-bson throws a `SyntaxError` (the embedding, the Node addon,
    /// validates the regexes the core reports); or, with `bson_regexp`, an option outside
    /// `imxlsu`, where js-bson's `BSONRegExp` throws (the core raises this one itself).
    InvalidRegex,
    /// A cursor reply (the `cursor` field of a `find`/`aggregate`/`getMore` reply) without an
    /// `id` or without a `firstBatch`/`nextBatch` array: not a cursor document at all, e.g. the
    /// whole reply instead of its `cursor` field (`BSON_NOT_A_CURSOR`).
    NotACursor,
    /// A date outside JavaScript's range (more than 8.64e15 ms from the epoch) where a row's
    /// PowerSync format must render it, as PowerSync throws `RangeError: Invalid time value`
    /// (`BSON_DATE_OUT_OF_RANGE`).
    DateOutOfRange,
}

impl ErrorKind {
    /// The stable string code, e.g. `"BSON_TRUNCATED"`.
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "BSON_TRUNCATED",
            ErrorKind::BadLength => "BSON_BAD_LENGTH",
            ErrorKind::BadTerminator => "BSON_BAD_TERMINATOR",
            ErrorKind::InvalidUtf8 => "BSON_INVALID_UTF8",
            ErrorKind::UnknownType => "BSON_UNKNOWN_TYPE",
            ErrorKind::BadBoolean => "BSON_BAD_BOOLEAN",
            ErrorKind::BadBinary => "BSON_BAD_BINARY",
            ErrorKind::BadCodeWithScope => "BSON_BAD_CODE_W_SCOPE",
            ErrorKind::TooDeep => "BSON_TOO_DEEP",
            ErrorKind::OutputTooLarge => "BSON_OUTPUT_TOO_LARGE",
            ErrorKind::InvalidRegex => "BSON_INVALID_REGEX",
            ErrorKind::NotACursor => "BSON_NOT_A_CURSOR",
            ErrorKind::DateOutOfRange => "BSON_DATE_OUT_OF_RANGE",
        }
    }

    /// Every kind, for tests and documentation tables.
    pub const ALL: [ErrorKind; 13] = [
        ErrorKind::Truncated,
        ErrorKind::BadLength,
        ErrorKind::BadTerminator,
        ErrorKind::InvalidUtf8,
        ErrorKind::UnknownType,
        ErrorKind::BadBoolean,
        ErrorKind::BadBinary,
        ErrorKind::BadCodeWithScope,
        ErrorKind::TooDeep,
        ErrorKind::OutputTooLarge,
        ErrorKind::InvalidRegex,
        ErrorKind::NotACursor,
        ErrorKind::DateOutOfRange,
    ];
}

/// A decoding failure: its [`ErrorKind`], the byte offset in the input where it was detected,
/// and a short static explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    offset: usize,
    detail: &'static str,
}

impl Error {
    #[cold]
    #[inline(never)]
    pub(crate) fn new(kind: ErrorKind, offset: usize, detail: &'static str) -> Self {
        Error {
            kind,
            offset,
            detail,
        }
    }

    /// Builds an error from its parts; for embeddings that add their own checks (regexes).
    #[cold]
    pub fn custom(kind: ErrorKind, offset: usize, detail: &'static str) -> Self {
        Error::new(kind, offset, detail)
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable string code of the kind, e.g. `"BSON_BAD_LENGTH"`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// Byte offset into the input (of the document passed in) where the problem was detected.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// A short human-readable explanation, without the offset.
    pub fn detail(&self) -> &'static str {
        self.detail
    }

    /// The same error moved by `delta` bytes (used when a document sits inside a larger buffer).
    pub fn shifted(mut self, delta: usize) -> Self {
        self.offset = self.offset.saturating_add(delta);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.detail, self.offset)
    }
}

impl std::error::Error for Error {}
