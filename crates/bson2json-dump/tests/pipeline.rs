//! The dump pipeline end to end: its output is the core's transcoding of each document, in input
//! order, whatever the input's reads, the slots and the workers; and every way it stops (a
//! fault, an incomplete last document, bad gzip, a failed read or write, a cancel, an archive)
//! leaves exactly the whole documents before it written and says where and why.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bson2json_core::{Options, Transcoder};
use bson2json_dump::{run, Control, Finished, Input, Job, Stop, ARCHIVE_MAGIC};
use flate2::write::GzEncoder;
use flate2::Compression;

// ---------------------------------------------------------------------------------------------
// documents

/// A BSON document of the given elements (each `type, key, value bytes`).
fn document(elements: &[(u8, &str, Vec<u8>)]) -> Vec<u8> {
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

fn string(s: &str) -> Vec<u8> {
    let mut v = ((s.len() + 1) as i32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    v
}

/// `{ i: <int32>, s: <text of about `pad` bytes> }`, its text varied by `i`.
fn doc(i: u32, pad: usize) -> Vec<u8> {
    let text: String = (0..pad)
        .map(|k| (b'a' + ((i as usize + k) % 26) as u8) as char)
        .collect();
    document(&[
        (0x10, "i", (i as i32).to_le_bytes().to_vec()),
        (0x02, "s", string(&text)),
    ])
}

/// A document the transcoder refuses: a string whose length prefix is 0.
fn bad_doc() -> Vec<u8> {
    let mut v = 0i32.to_le_bytes().to_vec();
    v.extend_from_slice(b"xyz\0");
    document(&[(0x10, "i", 7i32.to_le_bytes().to_vec()), (0x02, "s", v)])
}

/// `{ r: /pattern/flags }`.
fn regex_doc(pattern: &str, flags: &str) -> Vec<u8> {
    let mut v = pattern.as_bytes().to_vec();
    v.push(0);
    v.extend_from_slice(flags.as_bytes());
    v.push(0);
    document(&[(0x0b, "r", v)])
}

/// `n` documents of varied sizes (from a few bytes to a few KiB of text).
fn docs(n: u32) -> Vec<Vec<u8>> {
    (0..n).map(|i| doc(i, (i as usize * 37) % 3000)).collect()
}

fn concat(docs: &[Vec<u8>]) -> Vec<u8> {
    docs.concat()
}

/// The core's JSON of one document.
fn json(d: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    Transcoder::new()
        .transcode(d, &Options::default(), &mut out)
        .unwrap();
    out
}

/// NDJSON of `docs`, each transcoded by the core on its own.
fn ndjson(docs: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for d in docs {
        out.extend_from_slice(&json(d));
        out.push(b'\n');
    }
    out
}

/// One JSON array of `docs`, as the pipeline writes it.
fn array(docs: &[Vec<u8>]) -> Vec<u8> {
    let parts: Vec<Vec<u8>> = docs.iter().map(|d| json(d)).collect();
    let mut out = b"[".to_vec();
    out.extend_from_slice(&parts.join(&b","[..]));
    out.extend_from_slice(b"]\n");
    out
}

// ---------------------------------------------------------------------------------------------
// inputs and outputs

/// A file under the system's temporary folder, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(bytes: &[u8]) -> TempFile {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "bson2json-dump-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A stream that returns its bytes in reads of the sizes of `chunks`, cycled (a pipe), then
/// `end` once they are all read.
struct Chunked {
    bytes: Vec<u8>,
    at: usize,
    chunks: Vec<usize>,
    k: usize,
    end: Option<io::Error>,
}

impl Chunked {
    fn new(bytes: Vec<u8>, chunks: &[usize]) -> Chunked {
        Chunked {
            bytes,
            at: 0,
            chunks: chunks.to_vec(),
            k: 0,
            end: None,
        }
    }

    fn failing_at_end(mut self, e: io::Error) -> Chunked {
        self.end = Some(e);
        self
    }
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.bytes.len() {
            return match self.end.take() {
                Some(e) => Err(e),
                None => Ok(0),
            };
        }
        let n = self.chunks[self.k % self.chunks.len()]
            .min(buf.len())
            .min(self.bytes.len() - self.at);
        self.k += 1;
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// An output that takes `room` bytes, `step` at most per write, then fails as `fail` says.
struct Output {
    bytes: Vec<u8>,
    room: usize,
    step: usize,
    fail: fn() -> io::Result<usize>,
}

impl Output {
    fn failing_after(room: usize) -> Output {
        Output {
            bytes: Vec::new(),
            room,
            step: usize::MAX,
            fail: || Err(io::Error::other("disk full")),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(self.step).min(self.room - self.bytes.len());
        if n == 0 && !buf.is_empty() {
            return (self.fail)();
        }
        self.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn accept_all(_: &str, _: &str) -> Result<Option<String>, String> {
    Ok(None)
}

fn job(input: Input, threads: usize) -> Job {
    Job {
        input,
        options: Options::default(),
        array: false,
        threads,
        max_document_bytes: 16 << 20,
    }
}

/// Runs `job` into a Vec.
fn dump(job: Job) -> (Finished, Vec<u8>) {
    let mut out = Vec::new();
    let f = run(
        job,
        &mut out,
        &mut accept_all,
        &Arc::new(Control::default()),
    );
    (f, out)
}

fn reader(bytes: Vec<u8>, chunks: &[usize]) -> Input {
    Input::Reader(Box::new(Chunked::new(bytes, chunks)))
}

fn assert_end(f: &Finished, out: &[u8], want: &[u8], documents: usize) {
    assert!(matches!(f.stop, Stop::End), "{:?}", f.stop);
    assert_eq!(out.len(), want.len());
    assert!(out == want, "the output differs from the core's");
    assert_eq!(f.documents, documents as u64);
    assert_eq!(f.bytes_written, out.len() as u64);
}

/// The stream-wide fault of `f`: (code, detail, index, offset).
fn bson_fault(f: &Finished) -> (&'static str, String, u64, u64) {
    match &f.stop {
        Stop::Bson {
            code,
            detail,
            index,
            offset,
        } => (code, detail.clone(), *index, *offset),
        other => panic!("expected a BSON fault, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// the output is the core's, in order

#[test]
fn a_regular_file_over_many_slots_is_the_cores_ndjson_with_one_or_many_workers() {
    // ~ 5 MiB: three slots at least.
    let docs = docs(3500);
    let bytes = concat(&docs);
    assert!(bytes.len() > 2 * (2 << 20));
    let file = TempFile::new(&bytes);
    for threads in [1, 4] {
        let (f, out) = dump(job(Input::Path(file.0.clone()), threads));
        assert_end(&f, &out, &ndjson(&docs), docs.len());
        assert_eq!(f.bytes_read, bytes.len() as u64);
        assert_eq!(f.bson_read, bytes.len() as u64);
        assert!(!f.gzip);
        assert_eq!(f.head, bytes[..4]);
    }
    // an open file, as stdin redirected from one is
    let (f, out) = dump(job(Input::File(File::open(&file.0).unwrap()), 2));
    assert_end(&f, &out, &ndjson(&docs), docs.len());
}

#[test]
fn many_small_slots_come_out_in_input_order_with_eight_workers() {
    // A stream's short reads send each read's whole documents at once: hundreds of slots of
    // different sizes, which eight workers finish out of order.
    let docs = docs(4000);
    let want = ndjson(&docs);
    for chunks in [&[4096usize, 1000, 30_000][..], &[65_536, 7]] {
        let (f, out) = dump(job(reader(concat(&docs), chunks), 8));
        assert_end(&f, &out, &want, docs.len());
    }
}

#[test]
fn one_json_array_and_the_empty_input() {
    let docs = docs(2500);
    let mut j = job(reader(concat(&docs), &[100_000]), 3);
    j.array = true;
    let (f, out) = dump(j);
    assert_end(&f, &out, &array(&docs), docs.len());
    let mut j = job(reader(Vec::new(), &[1]), 1);
    j.array = true;
    let (f, out) = dump(j);
    assert_end(&f, &out, b"[]\n", 0);
    let (f, out) = dump(job(reader(Vec::new(), &[1]), 1));
    assert_end(&f, &out, b"", 0);
}

#[test]
fn documents_are_framed_across_reads_of_any_size() {
    // Reads of 1 to 7 bytes cut length prefixes and documents anywhere.
    let docs = docs(300);
    let want = ndjson(&docs);
    let (f, out) = dump(job(reader(concat(&docs), &[1, 2, 3, 4, 5, 6, 7]), 2));
    assert_end(&f, &out, &want, docs.len());
    // A document larger than a slot (3 MiB) between small ones, from a regular file (read in
    // 128 KiB steps into a slot grown for it) and from a stream.
    let mut docs = docs;
    docs.insert(150, doc(9999, 3 << 20));
    let bytes = concat(&docs);
    let want = ndjson(&docs);
    let file = TempFile::new(&bytes);
    let (f, out) = dump(job(Input::Path(file.0.clone()), 2));
    assert_end(&f, &out, &want, docs.len());
    let (f, out) = dump(job(reader(bytes, &[60_000, 3]), 2));
    assert_end(&f, &out, &want, docs.len());
}

// ---------------------------------------------------------------------------------------------
// gzip

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_input_one_member_or_several_and_padding() {
    let docs = docs(3000);
    let bytes = concat(&docs);
    let want = ndjson(&docs);
    let one = gzip(&bytes);
    let file = TempFile::new(&one);
    let (f, out) = dump(job(Input::Path(file.0.clone()), 3));
    assert_end(&f, &out, &want, docs.len());
    assert!(f.gzip);
    assert_eq!(f.bytes_read, one.len() as u64);
    assert_eq!(f.bson_read, bytes.len() as u64);
    // two members (cut inside a document), then zero bytes of padding, read in odd pieces
    let cut = bytes.len() / 2 + 3;
    let mut two = gzip(&bytes[..cut]);
    two.extend_from_slice(&gzip(&bytes[cut..]));
    two.extend_from_slice(&[0; 100]);
    let (f, out) = dump(job(reader(two, &[777, 5]), 2));
    assert_end(&f, &out, &want, docs.len());
}

#[test]
fn truncated_or_corrupt_gzip_stops_after_the_whole_documents_before_it() {
    let docs = docs(2000);
    let bytes = concat(&docs);
    let want = ndjson(&docs);
    let z = gzip(&bytes);
    let (f, out) = dump(job(reader(z[..z.len() * 2 / 3].to_vec(), &[4096]), 2));
    match &f.stop {
        Stop::Gzip(m) => assert_eq!(m, "unexpected end of file"),
        other => panic!("{other:?}"),
    }
    // whole documents only, each the core's, and as many as were counted
    assert!(want.starts_with(&out) && out.ends_with(b"\n"));
    assert_eq!(
        out.iter().filter(|&&b| b == b'\n').count() as u64,
        f.documents
    );
    assert_eq!(f.bytes_written, out.len() as u64);
    // a wrong checksum, found at the end: every document is written first
    let mut bad = z.clone();
    let crc = bad.len() - 8;
    bad[crc] = !bad[crc];
    let (f, out) = dump(job(reader(bad, &[4096]), 2));
    match &f.stop {
        Stop::Gzip(m) => assert_eq!(m, "incorrect data check"),
        other => panic!("{other:?}"),
    }
    assert!(out == want);
    assert_eq!(f.documents, docs.len() as u64);
}

// ---------------------------------------------------------------------------------------------
// faults

#[test]
fn a_fault_mid_stream_leaves_the_documents_before_it_written() {
    let mut docs = docs(3000);
    let bad = 2100;
    docs[bad] = bad_doc();
    let before: usize = docs[..bad].iter().map(Vec::len).sum();
    let mut e = Vec::new();
    let core = Transcoder::new()
        .transcode(&docs[bad], &Options::default(), &mut e)
        .unwrap_err();
    for threads in [1, 4] {
        let (f, out) = dump(job(reader(concat(&docs), &[50_000]), threads));
        let (code, detail, index, offset) = bson_fault(&f);
        assert_eq!(code, core.code());
        assert_eq!(detail, core.detail());
        assert_eq!(index, bad as u64);
        assert_eq!(offset, (before + core.offset()) as u64);
        assert!(out == ndjson(&docs[..bad]));
        assert_eq!(f.documents, bad as u64);
        assert_eq!(f.bytes_written, out.len() as u64);
    }
}

#[test]
fn an_incomplete_last_document_is_truncated_input_after_the_others() {
    let docs = docs(1000);
    let whole = concat(&docs);
    let next = doc(5, 100);
    for (rest, need) in [
        (10, format!("{} bytes", next.len())),
        (2, "its length prefix".to_owned()),
    ] {
        let mut bytes = whole.clone();
        bytes.extend_from_slice(&next[..rest]);
        let file = TempFile::new(&bytes);
        let (f, out) = dump(job(Input::Path(file.0.clone()), 2));
        let (code, detail, index, offset) = bson_fault(&f);
        assert_eq!(code, "BSON_TRUNCATED");
        assert_eq!(
            detail,
            format!("input ends inside a document ({rest} bytes of {need})")
        );
        assert_eq!((index, offset), (docs.len() as u64, whole.len() as u64));
        assert!(out == ndjson(&docs));
        assert_eq!(f.documents, docs.len() as u64);
    }
}

#[test]
fn a_bad_length_prefix_stops_at_its_document() {
    let docs = docs(500);
    let mut bytes = concat(&docs);
    let len = bytes.len();
    bytes.extend_from_slice(&3i32.to_le_bytes());
    bytes.extend_from_slice(&[0; 20]);
    let (f, out) = dump(job(reader(bytes, &[8192]), 2));
    let (code, detail, index, offset) = bson_fault(&f);
    assert_eq!(code, "BSON_BAD_LENGTH");
    assert_eq!(detail, "document length 3 is less than 5");
    assert_eq!((index, offset), (500, len as u64));
    assert!(out == ndjson(&docs));
    // above maxDocumentBytes
    let mut j = job(reader(concat(&docs), &[8192]), 1);
    j.max_document_bytes = 1000;
    let (f, out) = dump(j);
    let first = docs.iter().position(|d| d.len() > 1000).unwrap();
    let (code, detail, index, _) = bson_fault(&f);
    assert_eq!(code, "BSON_BAD_LENGTH");
    assert_eq!(
        detail,
        format!(
            "document length {} exceeds maxDocumentBytes 1000",
            docs[first].len()
        )
    );
    assert_eq!(index, first as u64);
    assert!(out == ndjson(&docs[..first]));
}

#[test]
fn a_regex_the_check_refuses_is_a_fault_at_its_document_asked_once_per_regex() {
    let mut docs = docs(1500);
    for i in (100..1500).step_by(100) {
        docs[i] = regex_doc("a+", "i");
    }
    let bad = 1234;
    docs[bad] = regex_doc("(", "");
    let before: usize = docs[..bad].iter().map(Vec::len).sum();
    let asked = AtomicUsize::new(0);
    let mut check = |p: &str, _: &str| {
        asked.fetch_add(1, Ordering::Relaxed);
        Ok(if p == "(" {
            Some("Unterminated group".to_owned())
        } else {
            None
        })
    };
    let mut out = Vec::new();
    let f = run(
        job(reader(concat(&docs), &[20_000]), 3),
        &mut out,
        &mut check,
        &Arc::new(Control::default()),
    );
    let (code, detail, index, offset) = bson_fault(&f);
    assert_eq!(code, "BSON_INVALID_REGEX");
    assert_eq!(detail, "invalid regular expression (Unterminated group)");
    assert_eq!(index, bad as u64);
    // the regex's offset in the stream: its document's start and the core's offset in it
    let mut tc = Transcoder::new();
    tc.transcode(&docs[bad], &Options::default(), &mut Vec::new())
        .unwrap();
    assert_eq!(offset, (before + tc.regexes()[0].offset) as u64);
    assert!(out == ndjson(&docs[..bad]));
    assert_eq!(asked.load(Ordering::Relaxed), 2);
    // a check that cannot answer is a fault too
    let mut out = Vec::new();
    let f = run(
        job(reader(concat(&docs), &[20_000]), 3),
        &mut out,
        &mut |_: &str, _: &str| Err("no engine".to_owned()),
        &Arc::new(Control::default()),
    );
    let (_, detail, index, _) = bson_fault(&f);
    assert_eq!(
        detail,
        "the regular expression could not be checked (no engine)"
    );
    assert_eq!(index, 100);
    assert!(out == ndjson(&docs[..100]));
}

#[test]
fn a_failed_read_stops_after_the_whole_documents_read() {
    let docs = docs(800);
    let input = Chunked::new(concat(&docs), &[10_000]).failing_at_end(io::Error::other("EIO"));
    let (f, out) = dump(job(Input::Reader(Box::new(input)), 2));
    match &f.stop {
        Stop::Read(e) => assert_eq!(e.to_string(), "EIO"),
        other => panic!("{other:?}"),
    }
    assert!(out == ndjson(&docs));
    let (f, out) = dump(job(Input::Path("/nonexistent/bson2json".into()), 1));
    assert!(matches!(&f.stop, Stop::Read(e) if e.kind() == io::ErrorKind::NotFound));
    assert!(out.is_empty());
}

#[test]
fn an_archive_is_handed_back_unwritten() {
    let mut bytes = ARCHIVE_MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 2, 3, 4, 5, 6]);
    let (f, out) = dump(job(reader(bytes.clone(), &[7]), 1));
    match &f.stop {
        Stop::Archive(consumed) => assert_eq!(consumed, &bytes[..7]),
        other => panic!("{other:?}"),
    }
    assert!(out.is_empty());
    assert_eq!(f.head, ARCHIVE_MAGIC);
}

// ---------------------------------------------------------------------------------------------
// the output

#[test]
fn a_failing_writer_counts_the_whole_documents_it_took() {
    let docs = docs(3000);
    let want = ndjson(&docs);
    let room = want.len() / 2;
    let mut out = Output::failing_after(room);
    let f = run(
        job(reader(concat(&docs), &[65_536]), 4),
        &mut out,
        &mut accept_all,
        &Arc::new(Control::default()),
    );
    assert!(matches!(&f.stop, Stop::Write(e) if e.to_string() == "disk full"));
    assert_eq!(out.bytes, want[..room]);
    // what the caller truncates to: the whole documents within the bytes taken
    let whole = want[..room].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    assert_eq!(f.bytes_written, whole as u64);
    assert_eq!(
        f.documents,
        want[..whole].iter().filter(|&&b| b == b'\n').count() as u64
    );
    // short writes are retried; a write that takes nothing is an error
    let docs = &docs[..200];
    let mut out = Output {
        bytes: Vec::new(),
        room: usize::MAX,
        step: 3,
        fail: || Ok(0),
    };
    let f = run(
        job(reader(concat(docs), &[65_536]), 2),
        &mut out,
        &mut accept_all,
        &Arc::new(Control::default()),
    );
    assert_end(&f, &out.bytes, &ndjson(docs), docs.len());
    let mut out = Output {
        bytes: Vec::new(),
        room: 10,
        step: usize::MAX,
        fail: || Ok(0),
    };
    let f = run(
        job(reader(concat(docs), &[65_536]), 2),
        &mut out,
        &mut accept_all,
        &Arc::new(Control::default()),
    );
    assert!(matches!(&f.stop, Stop::Write(e) if e.kind() == io::ErrorKind::WriteZero));
    assert_eq!((f.documents, f.bytes_written), (0, 0));
}

// ---------------------------------------------------------------------------------------------
// cancel

/// A stream that hands out what arrives on a channel, blocking while nothing does (a pipe
/// whose writer is idle).
struct Waiting(mpsc::Receiver<Vec<u8>>, Vec<u8>);

impl Read for Waiting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.1.is_empty() {
            match self.0.recv() {
                Ok(b) => self.1 = b,
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.1.len());
        buf[..n].copy_from_slice(&self.1[..n]);
        self.1.drain(..n);
        Ok(n)
    }
}

#[test]
fn cancel_stops_a_run_that_waits_for_input_with_whole_documents_written() {
    let docs = docs(100);
    let (tx, rx) = mpsc::channel();
    tx.send(concat(&docs)).unwrap();
    let control = Arc::new(Control::default());
    let c = Arc::clone(&control);
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let f = run(
            job(Input::Reader(Box::new(Waiting(rx, Vec::new()))), 2),
            &mut out,
            &mut accept_all,
            &c,
        );
        let _ = done_tx.send((f, out));
    });
    // the first documents are written while the input waits for more
    let t0 = Instant::now();
    while control.progress().documents < docs.len() as u64 {
        assert!(t0.elapsed() < Duration::from_secs(20), "nothing written");
        std::thread::sleep(Duration::from_millis(5));
    }
    control.cancel();
    let (f, out) = done
        .recv_timeout(Duration::from_secs(5))
        .expect("the run goes on after its cancel");
    assert!(matches!(f.stop, Stop::Cancelled), "{:?}", f.stop);
    assert!(out == ndjson(&docs));
    assert_eq!(f.documents, docs.len() as u64);
    drop(tx);
}

#[test]
fn a_run_cancelled_before_it_starts_writes_nothing_and_rearm_clears_it() {
    let docs = docs(1000);
    let control = Arc::new(Control::default());
    control.cancel();
    let mut out = Vec::new();
    let f = run(
        job(reader(concat(&docs), &[10_000]), 2),
        &mut out,
        &mut accept_all,
        &control,
    );
    assert!(matches!(f.stop, Stop::Cancelled), "{:?}", f.stop);
    assert!(out.is_empty());
    control.rearm();
    let mut out = Vec::new();
    let f = run(
        job(reader(concat(&docs), &[10_000]), 2),
        &mut out,
        &mut accept_all,
        &control,
    );
    assert_end(&f, &out, &ndjson(&docs), docs.len());
}

#[cfg(unix)]
#[test]
fn duplicate_owns_a_new_descriptor_and_refuses_a_closed_one() {
    use std::os::fd::AsRawFd;
    let file = TempFile::new(b"abc");
    let f = File::open(&file.0).unwrap();
    let mut d = bson2json_dump::duplicate(f.as_raw_fd()).unwrap();
    assert_ne!(d.as_raw_fd(), f.as_raw_fd());
    drop(f);
    let mut s = String::new();
    d.read_to_string(&mut s).unwrap();
    assert_eq!(s, "abc");
    assert!(bson2json_dump::duplicate(-1).is_err());
    assert!(bson2json_dump::duplicate(1 << 28).is_err());
}
