//! Concatenated BSON (the mongodump `.bson` format): documents back to back, each framed by
//! its own length prefix. [`split_concatenated`] lists them; [`transcode_concatenated`] frames
//! and transcodes them in one pass onto a [`crate::batch`] layout, with the errors the split
//! followed by [`crate::batch::transcode_docs`] reports (ARCHITECTURE.md, design decision 16).

use crate::batch::{add_doc, close_batch, open_batch, BatchError, BatchOutput, Layout};
use crate::bytes::load_i32;
use crate::error::{Error, ErrorKind};
use crate::options::Options;
use crate::transcode::Transcoder;

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

/// Why [`frame_prefix`] stopped where it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefixEnd {
    /// The rest is shorter than a length prefix (perhaps empty).
    Short,
    /// The rest starts a document of this declared length that the input does not hold whole.
    Partial(usize),
    /// The rest starts with a declared length below 5 or above the caller's maximum.
    BadLength(i32),
}

/// The whole documents at the start of `input`, a stretch of a stream of concatenated documents
/// (a file read in blocks): `input[..end]` holds `count` documents, each with a declared length
/// from 5 to `max_doc_bytes`, and `why` says what follows them. Only the framing is read, as in
/// [`split_concatenated`]; each document is fully validated when it is transcoded.
pub fn frame_prefix(input: &[u8], max_doc_bytes: usize) -> (usize, usize, PrefixEnd) {
    let (mut pos, mut count) = (0, 0);
    loop {
        if input.len() - pos < 4 {
            return (pos, count, PrefixEnd::Short);
        }
        let len = load_i32(input, pos);
        if len < 5 || len as usize > max_doc_bytes {
            return (pos, count, PrefixEnd::BadLength(len));
        }
        let len = len as usize;
        if len > input.len() - pos {
            return (pos, count, PrefixEnd::Partial(len));
        }
        pos += len;
        count += 1;
    }
}

/// [`crate::batch::transcode_docs`] over concatenated documents (the mongodump `.bson` format), framed from
/// their length prefixes as it goes, without first listing them (for small documents the
/// lists cost as much as a tenth of the work). Errors are the ones [`split_concatenated`]
/// followed by [`crate::batch::transcode_docs`] reports: a framing error anywhere in `input` wins over an
/// error in an earlier document; `doc_offset` is the failing document's start. The regexes'
/// offsets are in `input`.
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
        let regexes = result.regexes.len();
        if let Err(error) = add_doc(tc, doc, (index, index == 0), options, layout, result) {
            check_framing(input, pos + len, index + 1)?;
            return Err(BatchError {
                index,
                doc_offset: pos,
                error,
            });
        }
        for (_, r) in &mut result.regexes[regexes..] {
            r.offset += pos;
        }
        pos += len;
        index += 1;
    }
    close_batch(layout, index, index.saturating_sub(1), options, result)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{transcode_docs, transcode_docs_parallel};

    const A1: [u8; 12] = [12, 0, 0, 0, 0x10, b'a', 0, 1, 0, 0, 0, 0];

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

    #[test]
    fn frame_prefix_stops_at_partial_short_and_bad_lengths() {
        let two = [A1, A1].concat();
        assert_eq!(frame_prefix(&two, 64), (24, 2, PrefixEnd::Short));
        assert_eq!(
            frame_prefix(&two[..20], 64),
            (12, 1, PrefixEnd::Partial(12))
        );
        assert_eq!(frame_prefix(&two[..14], 64), (12, 1, PrefixEnd::Short));
        assert_eq!(frame_prefix(&two, 11), (0, 0, PrefixEnd::BadLength(12)));
        let bad = [&A1[..], &[4, 0, 0, 0]].concat();
        assert_eq!(frame_prefix(&bad, 64), (12, 1, PrefixEnd::BadLength(4)));
        assert_eq!(frame_prefix(&[], 64), (0, 0, PrefixEnd::Short));
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
}
