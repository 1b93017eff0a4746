//! Many documents per call: a list of documents transcoded into one output, joined as a JSON
//! array, NDJSON or bare texts with offsets, on the calling thread or spread over several with
//! the sequential path's output and errors (ARCHITECTURE.md, design decision 16). Concatenated
//! input (the mongodump `.bson` format) is framed in `concat`, cursor replies in `mongo`.

use crate::error::{Error, ErrorKind};
use crate::options::Options;
use crate::project::Shape;
use crate::transcode::{RegexRecord, Transcoder};

/// How the documents of a batch are joined in the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `[doc,doc,…]`: one JSON array text.
    Array,
    /// `doc\ndoc\n…`: newline-delimited JSON, every document followed by `\n`.
    Lines,
    /// `docdoc…` with no separator; use the returned offsets to cut it (per-document strings).
    Bare,
}

/// A failure inside a batch: which document, and the error (its offset is relative to the
/// start of that document).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchError {
    /// Index of the offending document in the batch.
    pub index: usize,
    /// Input offset of the document's first byte, where the batch came as one buffer
    /// ([`crate::concat::split_concatenated`]); 0 otherwise.
    pub doc_offset: usize,
    /// The error, with the offset relative to the document.
    pub error: Error,
}

/// The result of transcoding a batch.
#[derive(Debug, Default)]
pub struct BatchOutput {
    /// The joined JSON.
    pub out: Vec<u8>,
    /// `out[offsets[i]..offsets[i + 1]]` is document `i` (without separators) for
    /// [`Layout::Bare`]; for the other layouts the offsets still delimit each document's text.
    pub offsets: Vec<usize>,
    /// `compat` regexes met, with the index of their document; each offset is in the document
    /// ([`crate::concat::transcode_concatenated`]: in its input).
    pub regexes: Vec<(usize, RegexRecord)>,
    /// Documents whose output was longer at some output-cap check than at its end (a `compat`
    /// repair shortened it): (index, that longest length counted from the document's start).
    pub(crate) shrunk: Vec<(usize, usize)>,
}

impl BatchOutput {
    /// Empties every part, keeping the allocations (a reused output does not grow again).
    pub fn clear(&mut self) {
        self.out.clear();
        self.offsets.clear();
        self.regexes.clear();
        self.shrunk.clear();
    }
}

/// Transcodes `docs` into `result.out` joined per `layout`, on the calling thread. Stops at
/// the first bad document; `first_index` is added to the index it reports.
pub fn transcode_docs(
    tc: &mut Transcoder,
    docs: &[&[u8]],
    first_index: usize,
    options: &Options,
    layout: Layout,
    result: &mut BatchOutput,
) -> Result<(), BatchError> {
    transcode_docs_with(tc, docs, first_index, None, options, layout, result)
}

/// [`transcode_docs`], each document first projected and redacted by `shape` when there is
/// one (into a buffer reused from one document to the next, so the shaped document is still
/// in cache when the transcoder reads it). An error's offset is then where the fault is in
/// the document as given ([`Shape::source_offset`]).
pub fn transcode_docs_with(
    tc: &mut Transcoder,
    docs: &[&[u8]],
    first_index: usize,
    shape: Option<&Shape>,
    options: &Options,
    layout: Layout,
    result: &mut BatchOutput,
) -> Result<(), BatchError> {
    open_batch(layout, result);
    let mut bufs = (Vec::new(), Vec::new());
    for (i, doc) in docs.iter().enumerate() {
        let at = (first_index + i, i == 0);
        match shape {
            None => add_doc(tc, doc, at, options, layout, result),
            Some(s) => add_shaped(tc, s, doc, &mut bufs, at, options, layout, result),
        }
        .map_err(|error| BatchError {
            index: first_index + i,
            doc_offset: 0,
            error,
        })?;
    }
    close_batch(
        layout,
        docs.len(),
        (first_index + docs.len()).saturating_sub(1),
        options,
        result,
    )
}

/// [`transcode_docs`] over `count` documents that `doc(i)` hands out in order (a caller that
/// checks each document's bytes as it goes, e.g. a table of views into buffers, lists none).
/// `Ok(false)` when `doc` returns `None` for any document, even one after a document that
/// fails: the whole batch is then declined (the output is left unspecified; the caller
/// discards it). Otherwise the output and the error are [`transcode_docs`]'s on the list of
/// the documents, which the tests hold it to.
pub fn transcode_each<'a>(
    tc: &mut Transcoder,
    count: usize,
    doc: impl FnMut(usize) -> Option<&'a [u8]>,
    options: &Options,
    layout: Layout,
    result: &mut BatchOutput,
) -> Result<bool, BatchError> {
    // One loop per layout, so the separators are constants in it.
    match layout {
        Layout::Array => each(tc, count, doc, options, Layout::Array, result),
        Layout::Lines => each(tc, count, doc, options, Layout::Lines, result),
        Layout::Bare => each(tc, count, doc, options, Layout::Bare, result),
    }
}

#[inline(always)]
fn each<'a>(
    tc: &mut Transcoder,
    count: usize,
    mut doc: impl FnMut(usize) -> Option<&'a [u8]>,
    options: &Options,
    layout: Layout,
    result: &mut BatchOutput,
) -> Result<bool, BatchError> {
    open_batch(layout, result);
    for i in 0..count {
        let Some(bytes) = doc(i) else {
            return Ok(false);
        };
        if let Err(error) = add_doc(tc, bytes, (i, i == 0), options, layout, result) {
            // The error stands only if every later document is there too.
            if (i + 1..count).any(|k| doc(k).is_none()) {
                return Ok(false);
            }
            return Err(BatchError {
                index: i,
                doc_offset: 0,
                error,
            });
        }
    }
    close_batch(layout, count, count.saturating_sub(1), options, result)?;
    Ok(true)
}

/// [`add_doc`] on `doc` shaped by `shape` into `bufs` (the shaped document and the pass's
/// scratch).
#[allow(clippy::too_many_arguments)]
fn add_shaped(
    tc: &mut Transcoder,
    shape: &Shape,
    doc: &[u8],
    bufs: &mut (Vec<u8>, Vec<u8>),
    at: (usize, bool),
    options: &Options,
    layout: Layout,
    result: &mut BatchOutput,
) -> Result<(), Error> {
    let (shaped, scratch) = bufs;
    shaped.clear();
    shape.document(doc, shaped, scratch)?;
    add_doc(tc, shaped, at, options, layout, result)
        .map_err(|e| Error::new(e.kind(), shape.source_offset(doc, e.offset()), e.detail()))
}

pub(crate) fn open_batch(layout: Layout, result: &mut BatchOutput) {
    if layout == Layout::Array {
        result.out.push(b'[');
    }
}

/// Transcodes one document onto `result`: `first` if it opens the output, recorded (for
/// regexes and repaired objects) as document `index`.
#[inline(always)]
pub(crate) fn add_doc(
    tc: &mut Transcoder,
    doc: &[u8],
    (index, first): (usize, bool),
    options: &Options,
    layout: Layout,
    result: &mut BatchOutput,
) -> Result<(), Error> {
    let out = &mut result.out;
    if layout == Layout::Array && !first {
        out.push(b',');
    }
    let start = out.len();
    result.offsets.push(start);
    tc.transcode(doc, options, out)?;
    if tc.peak_len() > out.len() {
        result.shrunk.push((index, tc.peak_len() - start));
    }
    for r in tc.regexes() {
        result.regexes.push((index, r.clone()));
    }
    if layout == Layout::Lines {
        out.push(b'\n');
    }
    if out.len() > options.max_output_bytes {
        return Err(Error::new(
            ErrorKind::OutputTooLarge,
            0,
            "JSON output exceeds maxOutputBytes",
        ));
    }
    Ok(())
}

/// Ends the output of `count` documents (`last`: the index of the last one, which an output cap
/// the closing `]` crosses is reported at). The cap counts the whole output, brackets included.
pub(crate) fn close_batch(
    layout: Layout,
    count: usize,
    last: usize,
    options: &Options,
    result: &mut BatchOutput,
) -> Result<(), BatchError> {
    let out = &mut result.out;
    let end = if layout == Layout::Lines {
        out.len().saturating_sub(usize::from(count > 0))
    } else {
        out.len()
    };
    result.offsets.push(end);
    if layout == Layout::Array {
        out.push(b']');
        if out.len() > options.max_output_bytes {
            return Err(BatchError {
                index: last,
                doc_offset: 0,
                error: Error::new(
                    ErrorKind::OutputTooLarge,
                    0,
                    "JSON output exceeds maxOutputBytes",
                ),
            });
        }
    }
    Ok(())
}

/// Like [`transcode_docs`], spread over up to `threads` threads (documents are independent);
/// the output is identical to the single-threaded one, in the same order. Small batches
/// (under 256 KiB of BSON per thread) run on the calling thread.
pub fn transcode_docs_parallel(
    tc: &mut Transcoder,
    docs: &[&[u8]],
    options: &Options,
    layout: Layout,
    threads: usize,
    result: &mut BatchOutput,
) -> Result<(), BatchError> {
    transcode_docs_parallel_with(tc, docs, None, options, layout, threads, result)
}

/// [`transcode_docs_parallel`] with a `shape`, as [`transcode_docs_with`].
pub fn transcode_docs_parallel_with(
    tc: &mut Transcoder,
    docs: &[&[u8]],
    shape: Option<&Shape>,
    options: &Options,
    layout: Layout,
    threads: usize,
    result: &mut BatchOutput,
) -> Result<(), BatchError> {
    // Under cargo-fuzz the split happens from 256 bytes, so small inputs reach the threaded
    // path (the threshold only trades thread start-up against work; the output is the same).
    const MIN_BYTES_PER_THREAD: usize = if cfg!(fuzzing) { 256 } else { 256 * 1024 };
    let total: usize = docs.iter().map(|d| d.len()).sum();
    let threads = threads
        .min(docs.len())
        .min(total / MIN_BYTES_PER_THREAD)
        .max(1);
    if threads <= 1 {
        return transcode_docs_with(tc, docs, 0, shape, options, layout, result);
    }
    // Contiguous chunks of roughly equal byte size.
    let target = total.div_ceil(threads);
    let mut chunks: Vec<(usize, usize)> = Vec::with_capacity(threads);
    let (mut start, mut acc) = (0, 0);
    for (i, d) in docs.iter().enumerate() {
        acc += d.len();
        if acc >= target && chunks.len() + 1 < threads {
            chunks.push((start, i + 1));
            start = i + 1;
            acc = 0;
        }
    }
    chunks.push((start, docs.len()));
    let per_chunk_opts = Options {
        max_output_bytes: options.max_output_bytes,
        ..*options
    };
    let results: Vec<Result<BatchOutput, BatchError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|&(a, b)| {
                let opts = per_chunk_opts;
                scope.spawn(move || {
                    let mut t = Transcoder::new();
                    let mut r = BatchOutput::default();
                    transcode_docs_with(&mut t, &docs[a..b], a, shape, &opts, Layout::Bare, &mut r)
                        .map(|()| r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(BatchError {
                        index: 0,
                        doc_offset: 0,
                        error: Error::new(ErrorKind::OutputTooLarge, 0, "a worker thread panicked"),
                    })
                })
            })
            .collect()
    });
    // Any failure: redo the batch on this thread, which reports exactly the error (and the
    // document index) the sequential path reports. Errors are the rare path.
    if results.iter().any(Result::is_err) {
        result.out.clear();
        result.offsets.clear();
        result.regexes.clear();
        result.shrunk.clear();
        return transcode_docs_with(tc, docs, 0, shape, options, layout, result);
    }
    // Stitch the chunks together in order, adding the layout's separators and checking the
    // output cap at the same points as the sequential path.
    open_batch(layout, result);
    let out = &mut result.out;
    let mut n = 0usize;
    let cap_error = |index| BatchError {
        index,
        doc_offset: 0,
        error: Error::new(
            ErrorKind::OutputTooLarge,
            0,
            "JSON output exceeds maxOutputBytes",
        ),
    };
    for r in results.into_iter().flatten() {
        let mut shrunk = r.shrunk.iter().peekable();
        for w in 0..r.offsets.len() - 1 {
            if layout == Layout::Array && n > 0 {
                out.push(b',');
            }
            // A document that was longer before a compat repair hit the cap there in a
            // sequential run, even if its final text fits.
            if let Some(&(_, peak)) = shrunk.next_if(|&&(i, _)| i == n) {
                if out.len() + peak > options.max_output_bytes {
                    return Err(cap_error(n));
                }
            }
            result.offsets.push(out.len());
            out.extend_from_slice(&r.out[r.offsets[w]..r.offsets[w + 1]]);
            if out.len() > options.max_output_bytes {
                return Err(cap_error(n));
            }
            if layout == Layout::Lines {
                out.push(b'\n');
                if out.len() > options.max_output_bytes {
                    return Err(cap_error(n));
                }
            }
            n += 1;
        }
        result.regexes.extend(r.regexes);
    }
    close_batch(layout, n, n.saturating_sub(1), options, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `transcode_each` against its twin, `transcode_docs` on the list: the same output,
    /// offsets, regexes and error, and `Ok(false)` exactly when some document is missing,
    /// even after one that fails.
    #[test]
    fn each_equals_the_list() {
        let a1: &[u8] = &[12, 0, 0, 0, 0x10, b'a', 0, 1, 0, 0, 0, 0];
        let re: &[u8] = &[12, 0, 0, 0, 0x0b, b'r', 0, b'x', 0, b'i', 0, 0];
        let bad: &[u8] = &[12, 0, 0, 0, 0x10, b'a', 0, 1, 0, 0, 0, 1]; // no final NUL
        let small = Options {
            max_output_bytes: 20,
            ..Options::default()
        };
        let lists: Vec<Vec<&[u8]>> = vec![
            vec![],
            vec![a1],
            vec![a1, re, a1, a1],
            vec![a1, bad, a1],
            vec![bad],
            vec![a1, a1, bad],
        ];
        for docs in &lists {
            for opts in [&Options::default(), &small] {
                for layout in [Layout::Array, Layout::Lines, Layout::Bare] {
                    let mut want = BatchOutput::default();
                    let w =
                        transcode_docs(&mut Transcoder::new(), docs, 0, opts, layout, &mut want);
                    let mut got = BatchOutput::default();
                    let g = transcode_each(
                        &mut Transcoder::new(),
                        docs.len(),
                        |i| docs.get(i).copied(),
                        opts,
                        layout,
                        &mut got,
                    );
                    let whole = docs.len() == 4 && opts.max_output_bytes > 20;
                    assert!(!whole || g == Ok(true), "{g:?}");
                    match (w, g) {
                        (Ok(()), Ok(true)) => {
                            assert_eq!(want.out, got.out);
                            assert_eq!(want.offsets, got.offsets);
                            assert_eq!(want.regexes.len(), got.regexes.len());
                            if whole {
                                assert_eq!(got.regexes.len(), 1);
                            }
                        }
                        (Err(x), Err(y)) => assert_eq!(x, y),
                        (w, g) => panic!("{docs:?} {layout:?}: {w:?} against {g:?}"),
                    }
                    // Any document missing declines the batch, before or after a failing one.
                    for gap in 0..docs.len() {
                        let mut r = BatchOutput::default();
                        let g = transcode_each(
                            &mut Transcoder::new(),
                            docs.len(),
                            |i| if i == gap { None } else { docs.get(i).copied() },
                            opts,
                            layout,
                            &mut r,
                        );
                        assert_eq!(g, Ok(false), "{docs:?} {layout:?} gap {gap}");
                    }
                }
            }
        }
    }

    #[test]
    fn empty_batch() {
        let mut r = BatchOutput::default();
        transcode_docs(
            &mut Transcoder::new(),
            &[],
            0,
            &Options::default(),
            Layout::Array,
            &mut r,
        )
        .unwrap();
        assert_eq!(r.out, b"[]");
        let mut r = BatchOutput::default();
        transcode_docs(
            &mut Transcoder::new(),
            &[],
            0,
            &Options::default(),
            Layout::Lines,
            &mut r,
        )
        .unwrap();
        assert_eq!(r.out, b"");
    }
}
