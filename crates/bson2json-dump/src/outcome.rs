//! How a run ends: [`Stop`], and what [`crate::run`] returns, [`Finished`].

use std::io;

/// Why the run stopped before the end of the input, or [`Stop::End`].
#[derive(Debug)]
pub enum Stop {
    /// The input ended and every document is written.
    End,
    /// [`crate::Control::cancel`]: the documents written are whole.
    Cancelled,
    /// A fault in the input: a framing fault or a document's own, at its stream-wide document
    /// index and byte offset (the transcode stream's words, lib/transcode/stream.js).
    Bson {
        code: &'static str,
        detail: String,
        index: u64,
        offset: u64,
    },
    /// Reading the input failed (or the pipeline's threads could not start).
    Read(io::Error),
    /// Writing the output failed.
    Write(io::Error),
    /// zlib's message for gzip data that is truncated or corrupt.
    Gzip(String),
    /// The input is a mongodump --archive ([`crate::ARCHIVE_MAGIC`]): nothing is written; its
    /// bytes read so far, for the archive reader.
    Archive(Vec<u8>),
    /// A worker panicked (a bug).
    Panicked,
}

/// How a run ended and what it wrote.
#[derive(Debug)]
pub struct Finished {
    pub stop: Stop,
    /// Whole documents written.
    pub documents: u64,
    /// The output's length in whole documents (what a failed write leaves after truncation).
    pub bytes_written: u64,
    /// The input's bytes read (compressed, for a gzip input).
    pub bytes_read: u64,
    /// BSON bytes read (decompressed).
    pub bson_read: u64,
    /// Whether the input is gzip.
    pub gzip: bool,
    /// The first (up to) four BSON bytes.
    pub head: Vec<u8>,
}
