//! Batch helpers against their single-document equivalents:
//! - `split_concatenated` vs a naive length-prefix splitter;
//! - `transcode_docs` (all layouts) vs per-document `transcode`;
//! - `transcode_each` vs `transcode_docs`, and declining a batch with a document missing;
//! - `transcode_concatenated` (one pass) vs `split_concatenated` + `transcode_docs`: same output
//!   and offsets, or the same error (index, document offset, kind, offset);
//! - `transcode_docs_parallel` vs `transcode_docs` (identical result or identical error);
//!   under `cfg(fuzzing)` the per-thread threshold is 256 bytes, so most multi-document
//!   inputs take the threaded path;
//! - `top_level_elements` vs full transcode acceptance, element ranges tiling the document;
//! - `cursor_parts` vs a reference built from `top_level_elements`.
#![no_main]
use bson2json_core::batch::*;
use bson2json_core::concat::{split_concatenated, transcode_concatenated};
use bson2json_core::mongo::{cursor_parts, CursorParts};
use bson2json_core::raw::top_level_elements;
use bson2json_core::{Dialect, Options, Transcoder, Utf8Mode};
use bson2json_fuzz::*;
use libfuzzer_sys::fuzz_target;

fn naive_split(input: &[u8]) -> (Vec<(usize, usize)>, bool) {
    let mut v = Vec::new();
    let mut pos = 0;
    while pos < input.len() {
        if input.len() - pos < 4 {
            return (v, false);
        }
        let len = i32::from_le_bytes(input[pos..pos + 4].try_into().unwrap());
        if len < 5 || len as usize > input.len() - pos {
            return (v, false);
        }
        v.push((pos, pos + len as usize));
        pos += len as usize;
    }
    (v, true)
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let sel = data[0];
    let input = &data[1..];
    let mut ranges = Vec::new();
    let r = split_concatenated(input, &mut ranges);
    let (want, ok) = naive_split(input);
    assert_eq!(r.is_ok(), ok);
    assert_eq!(ranges, want);
    let docs: Vec<&[u8]> = ranges.iter().map(|&(s, e)| &input[s..e]).collect();

    let dialect = [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical][(sel % 3) as usize];
    let utf8 = if sel & 4 != 0 { Utf8Mode::Replace } else { Utf8Mode::Strict };
    let opts = Options { dialect, utf8, ..Options::default() };
    let mut tc = Transcoder::new();

    // transcode_docs vs per-document transcode.
    let mut lines = BatchOutput::default();
    let rl = transcode_docs(&mut tc, &docs, 0, &opts, Layout::Lines, &mut lines);
    let mut expect = Vec::new();
    let mut first_err = None;
    for (i, d) in docs.iter().enumerate() {
        match checked_transcode(&mut tc, d, &opts) {
            Ok(j) => {
                expect.extend_from_slice(&j);
                expect.push(b'\n');
            }
            Err(e) => {
                first_err = Some((i, e));
                break;
            }
        }
    }
    match (&rl, &first_err) {
        (Ok(()), None) => assert_eq!(lines.out, expect),
        (Err(be), Some((i, e))) => assert_eq!((be.index, &be.error), (*i, e)),
        _ => panic!("transcode_docs {rl:?} vs per-doc {first_err:?}"),
    }
    // transcode_each (documents handed out one at a time) vs transcode_docs, in a layout the
    // selector picks; with a document missing (one the selector names), the batch is declined.
    let layout = [Layout::Array, Layout::Lines, Layout::Bare][(sel >> 3) as usize % 3];
    let mut list = BatchOutput::default();
    let rw = transcode_docs(&mut tc, &docs, 0, &opts, layout, &mut list);
    let mut each = BatchOutput::default();
    let re = transcode_each(
        &mut tc,
        docs.len(),
        |i| docs.get(i).copied(),
        &opts,
        layout,
        &mut each,
    );
    match (&rw, &re) {
        (Ok(()), Ok(true)) => assert_eq!((&list.out, &list.offsets), (&each.out, &each.offsets)),
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("transcode_docs {rw:?} vs transcode_each {re:?}"),
    }
    if !docs.is_empty() {
        let gap = (sel >> 5) as usize % docs.len();
        let mut r = BatchOutput::default();
        let g = transcode_each(
            &mut tc,
            docs.len(),
            |i| (i != gap).then(|| docs[i]),
            &opts,
            layout,
            &mut r,
        );
        assert_eq!(g, Ok(false));
    }
    // The one-pass concatenated path vs its twin (split, then transcode the list).
    let mut fused = BatchOutput::default();
    let rf = transcode_concatenated(&mut tc, input, &opts, Layout::Lines, &mut fused);
    match (&r, &rl, &rf) {
        (Ok(()), Ok(()), Ok(())) => {
            assert_eq!(fused.out, lines.out);
            assert_eq!(fused.offsets, lines.offsets);
        }
        (Err(split), _, Err(f)) => assert_eq!(
            (split.index, split.doc_offset, split.error.kind()),
            (f.index, f.doc_offset, f.error.kind())
        ),
        (Ok(()), Err(t), Err(f)) => assert_eq!(
            (t.index, ranges[t.index].0, &t.error),
            (f.index, f.doc_offset, &f.error)
        ),
        _ => panic!("transcode_concatenated {rf:?} vs split {r:?} + transcode_docs {rl:?}"),
    }
    if rl.is_ok() {
        let mut arr = BatchOutput::default();
        transcode_docs(&mut tc, &docs, 0, &opts, Layout::Array, &mut arr).unwrap();
        assert_json(&arr.out, input, &opts);
    }

    // Parallel vs sequential. Under `cfg(fuzzing)` the core splits batches from 256 bytes per
    // thread, so any input of two or more documents past 512 bytes takes the threaded path;
    // 1/8 of the inputs repeat their documents to 2 KiB to get there more often.
    let mut many: Vec<&[u8]> = docs.clone();
    let total: usize = docs.iter().map(|d| d.len()).sum();
    let repeat = sel & 0x38 == 0x38 && total > 0;
    if repeat {
        let mut sum = total;
        while sum < 2048 {
            many.extend_from_slice(&docs);
            sum += total;
        }
    }
    let cap_opts = if sel & 0xC0 == 0xC0 {
        // A cap that bites somewhere in the middle of the batch.
        Options { max_output_bytes: input.len() * many.len().max(1) / 2, ..opts }
    } else {
        opts
    };
    let layouts: &[Layout] = &[Layout::Array, Layout::Lines, Layout::Bare];
    for &layout in layouts {
        let mut s = BatchOutput::default();
        let mut p = BatchOutput::default();
        let rs = transcode_docs(&mut Transcoder::new(), &many, 0, &cap_opts, layout, &mut s);
        let rp = transcode_docs_parallel(&mut Transcoder::new(), &many, &cap_opts, layout, 2, &mut p);
        match (&rs, &rp) {
            (Ok(()), Ok(())) => {
                assert_eq!(s.out, p.out, "{layout:?}");
                assert_eq!(s.offsets, p.offsets, "{layout:?}");
                assert_eq!(s.regexes, p.regexes, "{layout:?}");
            }
            (Err(a), Err(b)) => assert_eq!((a.index, a.error.kind()), (b.index, b.error.kind()), "{layout:?}"),
            _ => panic!("sequential {rs:?} vs parallel {rp:?} ({layout:?}, cap {})", cap_opts.max_output_bytes),
        }
    }

    // top_level_elements vs full transcode, on the first document (or the whole input).
    let doc = docs.first().copied().unwrap_or(input);
    let mut els = Vec::new();
    let rt = top_level_elements(doc, &mut els);
    let relaxed = Options { dialect: Dialect::Relaxed, utf8: Utf8Mode::Replace, max_depth: u32::MAX, ..Options::default() };
    let full = checked_transcode(&mut tc, doc, &relaxed);
    if full.is_ok() {
        assert!(rt.is_ok(), "transcode Ok but top_level_elements {rt:?}: {}", hex(doc));
    }
    if rt.is_ok() {
        let mut pos = 4;
        for e in &els {
            assert_eq!(e.value_start, pos + 1 + e.key.len() + 1);
            assert!(e.value_end <= doc.len() - 1);
            if full.is_ok() && (e.element_type == 3 || e.element_type == 4) {
                checked_transcode(&mut tc, &doc[e.value_start..e.value_end], &relaxed)
                    .unwrap_or_else(|er| panic!("embedded doc of a valid doc rejected: {er} {}", hex(doc)));
            }
            pos = e.value_end;
        }
        assert_eq!(pos, doc.len() - 1);

        // cursor_parts vs a reference from top_level_elements.
        let mut parts = CursorParts::default();
        let rc = cursor_parts(doc, &mut parts);
        let mut ref_docs = Vec::new();
        let mut ref_ok = true;
        let mut inner = Vec::new();
        for e in &els {
            if e.element_type == 4 && (e.key == b"firstBatch" || e.key == b"nextBatch") {
                match top_level_elements(&doc[e.value_start..e.value_end], &mut inner) {
                    Ok(()) => {
                        for x in &inner {
                            if x.element_type != 3 {
                                ref_ok = false;
                            }
                            ref_docs.push((e.value_start + x.value_start, e.value_start + x.value_end));
                        }
                    }
                    Err(_) => ref_ok = false,
                }
                if !ref_ok {
                    break;
                }
            }
        }
        // Not a cursor without an int32/int64 `id` and a `firstBatch`/`nextBatch` array.
        let has_id = els.iter().any(|e| e.key == b"id" && (e.element_type == 0x10 || e.element_type == 0x12));
        let has_batch = els
            .iter()
            .any(|e| e.element_type == 4 && (e.key == b"firstBatch" || e.key == b"nextBatch"));
        if ref_ok && !(has_id && has_batch) {
            ref_ok = false;
            assert_eq!(
                rc.as_ref().map_err(|e| e.kind()).err(),
                Some(bson2json_core::ErrorKind::NotACursor),
                "{}",
                hex(doc)
            );
        }
        assert_eq!(rc.is_ok(), ref_ok, "cursor_parts {rc:?}: {}", hex(doc));
        if ref_ok {
            assert_eq!(parts.docs, ref_docs);
        }
    }
});
