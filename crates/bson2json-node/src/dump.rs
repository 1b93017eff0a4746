//! `dumpFile`: the CLI's `dump` of a file or stdin through the pipeline of the
//! `bson2json-dump` crate, run as a task on the libuv pool (its thread is the pipeline's
//! writer), with `DumpControl` for its progress and cancel, and the `compat` regexes checked by
//! V8 through a thread-safe call of a JS function. Only that glue is here; the pipeline and its
//! tests are the crate's.

use std::fs::File;
use std::path::PathBuf;
use std::sync::mpsc::channel;
use std::sync::Arc;

use bson2json_dump::{Control, Finished, Input, Job, RegexCheck, Stop};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::options;

/// A running (or finished) `dumpFile`'s progress and its cancel switch.
#[napi]
#[derive(Default)]
pub struct DumpControl {
    control: Arc<Control>,
}

#[napi]
impl DumpControl {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    /// `[documents written, input bytes read, JSON bytes written]` so far (atomic loads; the
    /// input's bytes are the compressed ones for a gzip input).
    #[napi]
    pub fn progress(&self) -> Vec<f64> {
        let p = self.control.progress();
        vec![
            p.documents as f64,
            p.bytes_read as f64,
            p.bytes_written as f64,
        ]
    }

    /// Stops the pipeline at the next batch boundary: what is written is whole documents.
    #[napi]
    pub fn cancel(&self) {
        self.control.cancel();
    }
}

/// How a `dumpFile` ended. `stop` is `'end'`, `'cancelled'`, `'bson'` (a fault in the input:
/// `code`, `detail`, `index`, `offset`), `'gzip'` (the gzip data is truncated or corrupt:
/// zlib's `message`), `'archive'` (the input is a mongodump --archive, which the pipeline does
/// not read: nothing is written, `consumed` holds the input's bytes read), `'read'` or `'write'`
/// (an I/O error: `errno`, `message`). `bytesWritten` is the output's length in whole documents
/// (what a failed write leaves after truncation), `documents` those documents; `bytesRead` the
/// input's bytes read, `bsonRead` the BSON bytes (decompressed), `head` the first four of them,
/// `gzip` whether the input was gzip.
#[napi(object)]
pub struct DumpOutcome {
    pub stop: String,
    pub documents: f64,
    pub bytes_read: f64,
    pub bson_read: f64,
    pub bytes_written: f64,
    pub gzip: bool,
    pub head: Buffer,
    pub consumed: Option<Buffer>,
    pub code: Option<String>,
    pub detail: Option<String>,
    pub index: Option<f64>,
    pub offset: Option<f64>,
    pub errno: Option<i32>,
    pub message: Option<String>,
}

/// The check a `compat` regex needs: `(pattern, flags)` → V8's SyntaxError message, or null.
type RegexFn = ThreadsafeFunction<
    FnArgs<(String, String)>,
    Option<String>,
    FnArgs<(String, String)>,
    Status,
    false,
>;

/// V8's verdict on a regex, asked on the JS thread (the pipeline's writer waits for it).
struct V8Regex(RegexFn);

impl RegexCheck for V8Regex {
    fn check(&mut self, pattern: &str, flags: &str) -> std::result::Result<Option<String>, String> {
        let (tx, rx) = channel();
        let status = self.0.call_with_return_value(
            FnArgs {
                data: (pattern.to_owned(), flags.to_owned()),
            },
            ThreadsafeFunctionCallMode::Blocking,
            move |answer: Result<Option<String>>, _env| {
                let _ = tx.send(answer.map_err(|e| e.reason.clone()));
                Ok(())
            },
        );
        if status != Status::Ok {
            return Err(format!("{status:?}"));
        }
        rx.recv().map_err(|e| e.to_string())?
    }
}

/// The pipeline's task on the libuv pool.
pub struct DumpTask {
    control: Arc<Control>,
    job: Option<(Job, File, RegexFn)>,
}

const PANICKED: &str = "bson2json: internal panic in the dump pipeline (a bug; please report it)";

#[napi]
impl Task for DumpTask {
    type Output = Finished;
    type JsValue = DumpOutcome;

    fn compute(&mut self) -> Result<Self::Output> {
        let Some((job, mut out, regex)) = self.job.take() else {
            return Err(Error::new(Status::GenericFailure, PANICKED.to_owned()));
        };
        // A panic here would abort the process (napi-rs calls `compute` from a bare
        // `extern "C"` callback), so it is caught and reported as an error instead.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            bson2json_dump::run(job, &mut out, &mut V8Regex(regex), &self.control)
        }))
        .map_err(|_| Error::new(Status::GenericFailure, PANICKED.to_owned()))
    }

    fn resolve(&mut self, _env: Env, f: Self::Output) -> Result<Self::JsValue> {
        let mut o = DumpOutcome {
            stop: String::new(),
            documents: f.documents as f64,
            bytes_read: f.bytes_read as f64,
            bson_read: f.bson_read as f64,
            bytes_written: f.bytes_written as f64,
            gzip: f.gzip,
            head: f.head.into(),
            consumed: None,
            code: None,
            detail: None,
            index: None,
            offset: None,
            errno: None,
            message: None,
        };
        o.stop = match f.stop {
            Stop::End => "end",
            Stop::Panicked => return Err(Error::new(Status::GenericFailure, PANICKED.to_owned())),
            Stop::Cancelled => "cancelled",
            Stop::Bson {
                code,
                detail,
                index,
                offset,
            } => {
                o.code = Some(code.to_owned());
                o.detail = Some(detail);
                o.index = Some(index as f64);
                o.offset = Some(offset as f64);
                "bson"
            }
            Stop::Read(e) => {
                o.errno = e.raw_os_error();
                o.message = Some(e.to_string());
                "read"
            }
            Stop::Write(e) => {
                o.errno = e.raw_os_error();
                o.message = Some(e.to_string());
                "write"
            }
            Stop::Gzip(message) => {
                o.message = Some(message);
                "gzip"
            }
            Stop::Archive(consumed) => {
                o.consumed = Some(consumed.into());
                "archive"
            }
        }
        .to_owned();
        Ok(o)
    }
}

/// What `dumpFile` dumps, and how (its options aside).
#[napi(object)]
pub struct DumpJob {
    /// The file to read (unless `inFd` is not -1).
    pub input: String,
    /// An open descriptor to read instead of `input` (stdin), or -1.
    pub in_fd: i32,
    /// The open descriptor to write to: a file, a device, a pipe or a socket.
    pub out_fd: i32,
    /// One JSON array instead of NDJSON.
    pub array: bool,
    /// Transcoding threads.
    pub threads: u32,
    /// The largest document accepted.
    pub max_document_bytes: f64,
}

/// The CLI's `dump` of concatenated BSON, plain or gzip, from `job`'s file or descriptor to its
/// output descriptor, as NDJSON or one JSON array: read, decompressed, framed, transcoded on
/// `threads` threads and written in order, off the JS thread, with the options' pair of
/// options.rs. `checkRegex(pattern, flags)` returns V8's message for a regex it refuses, or
/// null (compat only). Resolves with how it ended ([`DumpOutcome`]).
#[napi(
    js_name = "dumpFile",
    catch_unwind,
    ts_args_type = "control: DumpControl, job: DumpJob, packed: number, maxOutputBytes: number, checkRegex: (pattern: string, flags: string) => string | null",
    ts_return_type = "Promise<DumpOutcome>"
)]
pub fn dump_file(
    control: &DumpControl,
    job: DumpJob,
    packed: f64,
    max_output_bytes: f64,
    check_regex: RegexFn,
) -> Result<AsyncTask<DumpTask>> {
    let options = options::decode(packed, max_output_bytes)?;
    let out = duplicate(job.out_fd)?;
    let input = if job.in_fd == -1 {
        Input::Path(PathBuf::from(job.input))
    } else {
        Input::File(duplicate(job.in_fd)?)
    };
    control.control.rearm();
    let run = Job {
        input,
        options,
        array: job.array,
        threads: job.threads as usize,
        max_document_bytes: job.max_document_bytes.clamp(5.0, f64::from(i32::MAX)) as usize,
    };
    Ok(AsyncTask::new(DumpTask {
        control: Arc::clone(&control.control),
        job: Some((run, out, check_regex)),
    }))
}

/// A duplicate of the caller's open descriptor `fd` (the output, or stdin), owned by the
/// pipeline and closed when it ends: lib/cli/output.js keeps `fd` open until the returned
/// promise settles, and stdin is open for the process's life.
fn duplicate(fd: i32) -> Result<File> {
    if fd < 0 {
        return Err(Error::new(
            Status::InvalidArg,
            "bson2json: inFd and outFd must be open file descriptors".to_owned(),
        ));
    }
    bson2json_dump::duplicate(fd).map_err(|e| {
        Error::new(
            Status::GenericFailure,
            format!("bson2json: the dump pipeline cannot use descriptor {fd}: {e}"),
        )
    })
}
