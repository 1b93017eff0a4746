//! Many documents per call: splitting concatenated BSON (the mongodump `.bson` format),
//! finding a cursor reply's `firstBatch`/`nextBatch` in place, and transcoding a list of
//! documents into one output with a separator, on one thread or several.

use crate::bytes::load_i32;
use crate::element::{self as el, value_len};
use crate::error::{Error, ErrorKind};
use crate::options::Options;
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
    /// ([`split_concatenated`]); 0 otherwise.
    pub doc_offset: usize,
    /// The error, with the offset relative to the document.
    pub error: Error,
}

/// Splits concatenated BSON documents into `(start, end)` ranges using each document's
/// length prefix. Only the framing is checked here; each document is fully validated when it
/// is transcoded. A bad length stops the split with a [`BatchError`] for that document.
pub fn split_concatenated(
    input: &[u8],
    ranges: &mut Vec<(usize, usize)>,
) -> Result<(), BatchError> {
    let mut pos = 0;
    while pos < input.len() {
        let len = frame(input, pos, ranges.len())?;
        ranges.push((pos, pos + len));
        pos += len;
    }
    Ok(())
}

/// One top-level element of a document, located without decoding it.
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

/// Lists the top-level elements of the BSON document `doc` (framing checked, values not
/// decoded). Embedded document values (`value_start..value_end`) are themselves complete BSON
/// documents that [`crate::Transcoder::transcode`] accepts.
pub fn top_level_elements<'a>(doc: &'a [u8], out: &mut Vec<RawElement<'a>>) -> Result<(), Error> {
    out.clear();
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
    let mut pos = 4;
    while pos < end {
        let t = doc[pos];
        let ks = pos + 1;
        let kl = crate::scan::find_nul(&doc[ks..end])
            .ok_or_else(|| Error::new(ErrorKind::Truncated, ks, "key has no NUL terminator"))?;
        let v = ks + kl + 1;
        let n = value_len(doc, t, v, end)?;
        out.push(RawElement {
            element_type: t,
            key: &doc[ks..ks + kl],
            value_start: v,
            value_end: v + n,
        });
        pos = v + n;
    }
    if pos != end {
        return Err(Error::new(
            ErrorKind::BadTerminator,
            pos,
            "document ends before its declared length",
        ));
    }
    Ok(())
}

/// Where the parts of a cursor reply (`{id, ns, firstBatch|nextBatch, postBatchResumeToken}`,
/// the `cursor` field of a `find`/`aggregate`/`getMore` reply) lie in its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CursorParts {
    /// The cursor id (0 when the cursor is exhausted).
    pub id: i64,
    /// Byte range of the `ns` string's content, if present.
    pub ns: Option<(usize, usize)>,
    /// Byte range of the `postBatchResumeToken` document, if present.
    pub post_batch_resume_token: Option<(usize, usize)>,
    /// Byte ranges of the batch's documents, in order.
    pub docs: Vec<(usize, usize)>,
}

/// Reads a cursor reply document in place: the top-level fields it needs, and the ranges of
/// the documents in its `firstBatch` or `nextBatch` array (each must be an embedded document).
///
/// A document without an `id` (int64 or int32) or without a `firstBatch`/`nextBatch` array is
/// not a cursor: [`ErrorKind::NotACursor`] at offset 0 (after any framing error).
pub fn cursor_parts(cursor: &[u8], parts: &mut CursorParts) -> Result<(), Error> {
    parts.docs.clear();
    parts.ns = None;
    parts.post_batch_resume_token = None;
    parts.id = 0;
    let mut fields = Vec::new();
    top_level_elements(cursor, &mut fields)?;
    let mut items = Vec::new();
    let (mut has_id, mut has_batch) = (false, false);
    for f in &fields {
        let (v, e) = (f.value_start, f.value_end);
        match (f.key, f.element_type) {
            (b"id", el::INT64) => {
                has_id = true;
                parts.id = i64::from_le_bytes(cursor[v..v + 8].try_into().unwrap_or([0; 8]));
            }
            (b"id", el::INT32) => {
                has_id = true;
                parts.id = i64::from(load_i32(cursor, v));
            }
            (b"ns", el::STRING) => parts.ns = Some((v + 4, e - 1)),
            (b"postBatchResumeToken", el::DOCUMENT) => parts.post_batch_resume_token = Some((v, e)),
            (b"firstBatch" | b"nextBatch", el::ARRAY) => {
                has_batch = true;
                top_level_elements(&cursor[v..e], &mut items).map_err(|x| x.shifted(v))?;
                for it in &items {
                    if it.element_type != el::DOCUMENT {
                        return Err(Error::new(
                            ErrorKind::UnknownType,
                            v + it.value_start - it.key.len() - 2,
                            "batch element is not a document",
                        ));
                    }
                    parts.docs.push((v + it.value_start, v + it.value_end));
                }
            }
            _ => {}
        }
    }
    if !(has_id && has_batch) {
        parts.docs.clear();
        return Err(Error::new(
            ErrorKind::NotACursor,
            0,
            "not a cursor document (no id or no firstBatch/nextBatch array; pass the reply's \
             cursor field)",
        ));
    }
    Ok(())
}

/// The result of transcoding a batch.
#[derive(Debug, Default)]
pub struct BatchOutput {
    /// The joined JSON.
    pub out: Vec<u8>,
    /// `out[offsets[i]..offsets[i + 1]]` is document `i` (without separators) for
    /// [`Layout::Bare`]; for the other layouts the offsets still delimit each document's text.
    pub offsets: Vec<usize>,
    /// `compat` regexes met, with the index of their document.
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
    open_batch(layout, result);
    for (i, doc) in docs.iter().enumerate() {
        let at = (first_index + i, i == 0);
        add_doc(tc, doc, at, options, layout, result).map_err(|error| BatchError {
            index: first_index + i,
            doc_offset: 0,
            error,
        })?;
    }
    close_batch(layout, !docs.is_empty(), result);
    Ok(())
}

/// [`transcode_docs`] over concatenated documents (the mongodump `.bson` format), framed from
/// their length prefixes as it goes, without first listing them (for small documents the
/// lists cost as much as a tenth of the work). Errors are the ones [`split_concatenated`]
/// followed by [`transcode_docs`] reports: a framing error anywhere in `input` wins over an
/// error in an earlier document; `doc_offset` is the failing document's start.
pub fn transcode_concatenated(
    tc: &mut Transcoder,
    input: &[u8],
    options: &Options,
    layout: Layout,
    result: &mut BatchOutput,
) -> Result<(), BatchError> {
    open_batch(layout, result);
    let mut pos = 0;
    let mut index = 0;
    while pos < input.len() {
        let len = frame(input, pos, index)?;
        let doc = &input[pos..pos + len];
        if let Err(error) = add_doc(tc, doc, (index, index == 0), options, layout, result) {
            check_framing(input, pos + len, index + 1)?;
            return Err(BatchError {
                index,
                doc_offset: pos,
                error,
            });
        }
        pos += len;
        index += 1;
    }
    close_batch(layout, index > 0, result);
    Ok(())
}

/// The length of the concatenated document `index` starting at `pos < input.len()`, checked
/// against the input as [`split_concatenated`] checks it.
#[inline]
fn frame(input: &[u8], pos: usize, index: usize) -> Result<usize, BatchError> {
    let fail = |kind, detail| BatchError {
        index,
        doc_offset: pos,
        error: Error::new(kind, 0, detail),
    };
    if input.len() - pos < 4 {
        return Err(fail(
            ErrorKind::Truncated,
            "input ends inside a document's length prefix",
        ));
    }
    let len = load_i32(input, pos);
    if len < 5 {
        return Err(fail(
            ErrorKind::BadLength,
            "document length must be at least 5",
        ));
    }
    let len = len as usize;
    if len > input.len() - pos {
        return Err(fail(
            ErrorKind::Truncated,
            "input ends before the document's declared length",
        ));
    }
    Ok(len)
}

/// Checks the framing of the concatenated documents from `pos` on (the first is number
/// `index`), without transcoding them.
#[cold]
fn check_framing(input: &[u8], mut pos: usize, mut index: usize) -> Result<(), BatchError> {
    while pos < input.len() {
        pos += frame(input, pos, index)?;
        index += 1;
    }
    Ok(())
}

fn open_batch(layout: Layout, result: &mut BatchOutput) {
    if layout == Layout::Array {
        result.out.push(b'[');
    }
}

/// Transcodes one document onto `result`: `first` if it opens the output, recorded (for
/// regexes and repaired objects) as document `index`.
#[inline]
fn add_doc(
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

fn close_batch(layout: Layout, any: bool, result: &mut BatchOutput) {
    let out = &mut result.out;
    let last = if layout == Layout::Lines {
        out.len().saturating_sub(usize::from(any))
    } else {
        out.len()
    };
    result.offsets.push(last);
    if layout == Layout::Array {
        out.push(b']');
    }
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
    // Under cargo-fuzz the split happens from 256 bytes, so small inputs reach the threaded
    // path (the threshold only trades thread start-up against work; the output is the same).
    const MIN_BYTES_PER_THREAD: usize = if cfg!(fuzzing) { 256 } else { 256 * 1024 };
    let total: usize = docs.iter().map(|d| d.len()).sum();
    let threads = threads
        .min(docs.len())
        .min(total / MIN_BYTES_PER_THREAD)
        .max(1);
    if threads <= 1 {
        return transcode_docs(tc, docs, 0, options, layout, result);
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
                    transcode_docs(&mut t, &docs[a..b], a, &opts, Layout::Bare, &mut r).map(|()| r)
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
        return transcode_docs(tc, docs, 0, options, layout, result);
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
    close_batch(layout, n > 0, result);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A1: [u8; 12] = [12, 0, 0, 0, 0x10, b'a', 0, 1, 0, 0, 0, 0];

    /// A BSON document of `(type, key, value bytes)` elements.
    fn doc(elements: &[(u8, &str, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (t, k, v) in elements {
            body.push(*t);
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v);
        }
        let mut d = ((body.len() + 5) as i32).to_le_bytes().to_vec();
        d.extend_from_slice(&body);
        d.push(0);
        d
    }

    #[test]
    fn cursor_parts_reads_a_cursor_and_rejects_what_is_not_one() {
        let batch = doc(&[(0x03, "0", &A1), (0x03, "1", &A1)]);
        let ns = [&6i32.to_le_bytes()[..], b"db.co\0"].concat();
        let id = 7i64.to_le_bytes();
        let token = doc(&[(0x02, "_data", &[&2i32.to_le_bytes()[..], b"x\0"].concat())]);
        let cursor = doc(&[
            (0x04, "firstBatch", &batch),
            (0x12, "id", &id),
            (0x02, "ns", &ns),
            (0x03, "postBatchResumeToken", &token),
        ]);
        let mut parts = CursorParts::default();
        cursor_parts(&cursor, &mut parts).unwrap();
        assert_eq!(parts.id, 7);
        let (s, e) = parts.ns.unwrap();
        assert_eq!(&cursor[s..e], b"db.co");
        let (s, e) = parts.post_batch_resume_token.unwrap();
        assert_eq!(&cursor[s..e], &token[..]);
        assert_eq!(parts.docs.len(), 2);
        for &(s, e) in &parts.docs {
            assert_eq!(&cursor[s..e], &A1[..]);
        }
        // An int32 id and an empty nextBatch are a cursor too.
        let small = doc(&[
            (0x10, "id", &0i32.to_le_bytes()),
            (0x04, "nextBatch", &doc(&[])),
        ]);
        cursor_parts(&small, &mut parts).unwrap();
        assert_eq!((parts.id, parts.docs.len()), (0, 0));
        // The whole reply ({cursor: {...}, ok: 1}), no id, no batch, a batch of the wrong
        // type, an empty document: not a cursor.
        let reply = doc(&[(0x03, "cursor", &cursor), (0x01, "ok", &1f64.to_le_bytes())]);
        let no_id = doc(&[(0x04, "firstBatch", &batch)]);
        let no_batch = doc(&[(0x12, "id", &id)]);
        let wrong_batch = doc(&[(0x12, "id", &id), (0x03, "firstBatch", &batch)]);
        let string_id = doc(&[(0x02, "id", &ns), (0x04, "firstBatch", &batch)]);
        for bad in [reply, no_id, no_batch, wrong_batch, string_id, doc(&[])] {
            let e = cursor_parts(&bad, &mut parts).unwrap_err();
            assert_eq!(
                (e.kind(), e.offset(), e.code()),
                (ErrorKind::NotACursor, 0, "BSON_NOT_A_CURSOR")
            );
            assert!(parts.docs.is_empty());
        }
        // A framing error comes first.
        let e = cursor_parts(&cursor[..cursor.len() - 1], &mut parts).unwrap_err();
        assert_ne!(e.kind(), ErrorKind::NotACursor);
    }

    #[test]
    fn concatenated_split_and_layouts() {
        let mut input = Vec::new();
        for _ in 0..3 {
            input.extend_from_slice(&A1);
        }
        let mut ranges = Vec::new();
        split_concatenated(&input, &mut ranges).unwrap();
        assert_eq!(ranges, vec![(0, 12), (12, 24), (24, 36)]);
        let docs: Vec<&[u8]> = ranges.iter().map(|&(s, e)| &input[s..e]).collect();
        let opts = Options::default();
        for (layout, want) in [
            (Layout::Array, &b"[{\"a\":1},{\"a\":1},{\"a\":1}]"[..]),
            (Layout::Lines, b"{\"a\":1}\n{\"a\":1}\n{\"a\":1}\n"),
            (Layout::Bare, b"{\"a\":1}{\"a\":1}{\"a\":1}"),
        ] {
            let mut r = BatchOutput::default();
            transcode_docs(&mut Transcoder::new(), &docs, 0, &opts, layout, &mut r).unwrap();
            assert_eq!(r.out, want);
            assert_eq!(r.offsets.len(), 4);
            let mut p = BatchOutput::default();
            transcode_docs_parallel(&mut Transcoder::new(), &docs, &opts, layout, 4, &mut p)
                .unwrap();
            assert_eq!(p.out, want);
        }
        input.truncate(30);
        ranges.clear();
        let e = split_concatenated(&input, &mut ranges).unwrap_err();
        assert_eq!(
            (e.index, e.doc_offset, e.error.kind()),
            (2, 24, ErrorKind::Truncated)
        );
    }

    /// The fused path and its twin (split, then transcode the list) agree on output, offsets
    /// and every error, including which error wins when several documents are bad.
    #[test]
    fn concatenated_in_one_pass_equals_split_then_transcode() {
        let twin = |input: &[u8], opts: &Options, layout| {
            let mut ranges = Vec::new();
            let mut r = BatchOutput::default();
            split_concatenated(input, &mut ranges)?;
            let docs: Vec<&[u8]> = ranges.iter().map(|&(s, e)| &input[s..e]).collect();
            transcode_docs(&mut Transcoder::new(), &docs, 0, opts, layout, &mut r).map_err(
                |mut e| {
                    e.doc_offset = ranges[e.index].0;
                    e
                },
            )?;
            Ok::<_, BatchError>((r.out, r.offsets))
        };
        let fused = |input: &[u8], opts: &Options, layout| {
            let mut r = BatchOutput::default();
            transcode_concatenated(&mut Transcoder::new(), input, opts, layout, &mut r)?;
            Ok::<_, BatchError>((r.out, r.offsets))
        };
        let bad_content = [12u8, 0, 0, 0, 0x10, b'a', 0, 1, 0, 0, 0, 1]; // no final NUL
        let bad_length = [3u8, 0, 0, 0];
        let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), A1.to_vec(), [A1, A1, A1].concat()];
        inputs.push([&A1[..], &bad_content, &A1].concat()); // content error in document 1
        inputs.push([&A1[..], &bad_content, &A1, &bad_length].concat()); // framing error wins
        inputs.push([&A1[..], &A1[..7]].concat()); // truncated second document
        inputs.push([&A1[..], &A1, &A1[..2]].concat()); // truncated length prefix
        inputs.push([&bad_length[..], &A1].concat());
        let small = Options {
            max_output_bytes: 10,
            ..Options::default()
        };
        for input in &inputs {
            for opts in [&Options::default(), &small] {
                for layout in [Layout::Array, Layout::Lines, Layout::Bare] {
                    let (a, b) = (twin(input, opts, layout), fused(input, opts, layout));
                    match (&a, &b) {
                        (Ok(x), Ok(y)) => assert_eq!(x, y),
                        (Err(x), Err(y)) => assert_eq!(
                            (x.index, x.doc_offset, x.error.kind(), x.error.offset()),
                            (y.index, y.doc_offset, y.error.kind(), y.error.offset()),
                            "{input:?}"
                        ),
                        _ => panic!("{input:?} {layout:?}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
                    }
                }
            }
        }
        let e = fused(&inputs[4], &Options::default(), Layout::Lines).unwrap_err();
        assert_eq!((e.index, e.error.kind()), (3, ErrorKind::BadLength));
        let e = fused(&inputs[3], &Options::default(), Layout::Lines).unwrap_err();
        assert_eq!((e.index, e.doc_offset), (1, 12));
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
