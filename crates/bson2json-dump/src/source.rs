//! The input: a file, a descriptor or any reader, plain or gzip (decompressed here, with zlib's
//! own rules for what follows a member, as Node's gunzip: another member, or zero bytes of
//! padding to the end).

use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;

use flate2::{Decompress, FlushDecompress, Status as GzStatus};

use crate::control::Control;
use crate::outcome::Stop;
use crate::sys::read_spare;

/// Compressed bytes read at a time from a gzip input (and a stream's reads at most).
const GZIP_READ_BYTES: usize = 256 << 10;

/// Where the BSON comes from.
pub enum Input {
    /// A file, opened by the run (a failure to open it is [`Stop::Read`]).
    Path(PathBuf),
    /// An open file: a regular file is read to each slot's size at once, anything else (stdin,
    /// a pipe, a socket) as a stream.
    File(File),
    /// Any reader, read as a stream (each read framed as it arrives).
    Reader(Box<dyn Read + Send>),
}

/// The bytes underneath: a regular file, read straight into a slot, or a stream.
enum Raw {
    Regular(File),
    Stream(Box<dyn Read + Send>),
}

impl Raw {
    fn of_file(f: File) -> Raw {
        if f.metadata().is_ok_and(|m| m.is_file()) {
            Raw::Regular(f)
        } else {
            Raw::Stream(Box::new(f))
        }
    }

    fn stream(&mut self) -> &mut dyn Read {
        match self {
            Raw::Regular(f) => f,
            Raw::Stream(r) => r,
        }
    }
}

/// The opened input, its first bytes looked at.
pub(crate) struct Source {
    raw: Raw,
    gz: Option<Gunzip>,
    /// BSON bytes read ahead of the first slot (at least four, unless the input is shorter).
    pub(crate) carry: Vec<u8>,
    pub(crate) eof: bool,
    /// The last read of a plain input returned less than asked (a pipe with no more for now).
    pub(crate) short: bool,
    /// A stream's reads, copied to the slot.
    scratch: Vec<u8>,
    /// The input's bytes read while looking at its first bytes (an archive is handed back).
    consumed: Vec<u8>,
}

struct Gunzip {
    d: Decompress,
    /// The compressed bytes `raw[pos..len]` are still to decompress (the buffer keeps its
    /// length: it is not zeroed for every read).
    raw: Vec<u8>,
    len: usize,
    pos: usize,
    raw_eof: bool,
    /// The last member ended and nothing but padding follows.
    done: bool,
    /// While looking at the first bytes: every compressed byte read, kept.
    record: Option<Vec<u8>>,
}

impl Source {
    /// Opens `input` and reads its first bytes: gzip or not, then the first four BSON bytes. A
    /// failure says whether the input is gzip.
    pub(crate) fn open(input: Input, control: &Control) -> Result<Self, (Stop, bool)> {
        let mut raw = match input {
            Input::Path(p) => Raw::of_file(File::open(p).map_err(|e| (Stop::Read(e), false))?),
            Input::File(f) => Raw::of_file(f),
            Input::Reader(r) => Raw::Stream(r),
        };
        let mut first = Vec::with_capacity(GZIP_READ_BYTES);
        let mut raw_eof = false;
        while first.len() < 4 && !raw_eof {
            let n = read_some(raw.stream(), &mut first, GZIP_READ_BYTES)
                .map_err(|e| (Stop::Read(e), false))?;
            Control::add(&control.bytes_read, n);
            raw_eof = n == 0;
        }
        let consumed = first.clone();
        if first.len() >= 2 && first[0] == 0x1f && first[1] == 0x8b {
            let mut s = Source {
                raw,
                gz: Some(Gunzip {
                    d: Decompress::new_gzip(15),
                    len: first.len(),
                    raw: first,
                    pos: 0,
                    raw_eof,
                    done: false,
                    record: Some(consumed),
                }),
                carry: Vec::new(),
                eof: false,
                short: false,
                scratch: Vec::new(),
                consumed: Vec::new(),
            };
            let mut carry = Vec::new();
            while carry.len() < 4 && !s.eof {
                s.eof = s
                    .fill(&mut carry, 4, control)
                    .map_err(|stop| (stop, true))?;
            }
            s.carry = carry;
            if let Some(g) = s.gz.as_mut() {
                s.consumed = g.record.take().unwrap_or_default();
            }
            Ok(s)
        } else {
            Control::add(&control.bson_read, first.len());
            Ok(Source {
                raw,
                gz: None,
                short: first.len() < GZIP_READ_BYTES,
                scratch: Vec::new(),
                carry: first,
                eof: raw_eof,
                consumed,
            })
        }
    }

    pub(crate) fn is_gzip(&self) -> bool {
        self.gz.is_some()
    }

    /// The first (up to) four BSON bytes.
    pub(crate) fn head(&self) -> Vec<u8> {
        self.carry[..self.carry.len().min(4)].to_vec()
    }

    /// The input's bytes read so far (an archive's, handed back).
    pub(crate) fn into_consumed(self) -> Vec<u8> {
        self.consumed
    }

    /// Appends BSON bytes to `out`, up to `want` bytes (or a little more) or the end of the
    /// input, `Ok(true)` there. A plain input stops after one read (`short` says whether it
    /// returned less than asked).
    pub(crate) fn fill(
        &mut self,
        out: &mut Vec<u8>,
        want: usize,
        control: &Control,
    ) -> Result<bool, Stop> {
        let Some(g) = self.gz.as_mut() else {
            if out.len() >= want {
                return Ok(false);
            }
            let need = want - out.len();
            let n = match &mut self.raw {
                Raw::Regular(file) => {
                    // Into the slot's spare capacity, not zeroed first.
                    let n = read_spare(file, out, need).map_err(Stop::Read)?;
                    if n < need {
                        // the end of the file (a short read of a regular file is its end)
                        Control::add(&control.bytes_read, n);
                        Control::add(&control.bson_read, n);
                        self.short = true;
                        return Ok(true);
                    }
                    n
                }
                Raw::Stream(r) => {
                    self.scratch.resize(GZIP_READ_BYTES, 0);
                    let n = read_into(r, &mut self.scratch[..need.min(GZIP_READ_BYTES)])
                        .map_err(Stop::Read)?;
                    out.extend_from_slice(&self.scratch[..n]);
                    n
                }
            };
            Control::add(&control.bytes_read, n);
            Control::add(&control.bson_read, n);
            self.short = n < need;
            return Ok(n == 0);
        };
        while out.len() < want {
            if g.done {
                return Ok(true);
            }
            if g.pos == g.len && !g.raw_eof {
                g.refill(self.raw.stream(), control)?;
            }
            let flush = if g.raw_eof {
                FlushDecompress::Finish
            } else {
                FlushDecompress::None
            };
            out.reserve(want - out.len());
            let (in0, out0) = (g.d.total_in(), out.len());
            let status = g.d.decompress_vec(&g.raw[g.pos..g.len], out, flush);
            g.pos += (g.d.total_in() - in0) as usize;
            let produced = out.len() - out0;
            Control::add(&control.bson_read, produced);
            match status {
                Ok(GzStatus::StreamEnd) => {
                    // Another member follows, or padding (zero bytes: the rest is ignored).
                    if g.pos == g.len && !g.raw_eof {
                        g.refill(self.raw.stream(), control)?;
                    }
                    if g.pos == g.len || g.raw[g.pos] == 0 {
                        g.done = true;
                    } else {
                        g.d = Decompress::new_gzip(15);
                    }
                }
                Ok(_) if produced == 0 && g.raw_eof && g.pos == g.len => {
                    return Err(Stop::Gzip("unexpected end of file".to_owned()));
                }
                Ok(_) => {}
                Err(e) => return Err(Stop::Gzip(e.message().unwrap_or("invalid data").to_owned())),
            }
        }
        Ok(false)
    }
}

impl Gunzip {
    /// Reads the next compressed bytes into `raw` (kept while looking at the first bytes).
    fn refill(&mut self, input: &mut dyn Read, control: &Control) -> Result<(), Stop> {
        if self.raw.len() < GZIP_READ_BYTES {
            self.raw.resize(GZIP_READ_BYTES, 0);
        }
        let n = read_into(input, &mut self.raw).map_err(Stop::Read)?;
        Control::add(&control.bytes_read, n);
        (self.pos, self.len, self.raw_eof) = (0, n, n == 0);
        if let Some(r) = self.record.as_mut() {
            r.extend_from_slice(&self.raw[..n]);
        }
        Ok(())
    }
}

/// One `read` of up to `max` bytes appended to `buf`; 0 at the end.
fn read_some(input: &mut dyn Read, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let at = buf.len();
    buf.resize(at + max, 0);
    let r = read_into(input, &mut buf[at..]);
    buf.truncate(at + *r.as_ref().unwrap_or(&0));
    r
}

/// One `read` into `buf` (retried when interrupted); 0 at the end.
fn read_into(input: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match input.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // stdin that someone else made non-blocking: wait for data (no poll in std).
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            r => return r,
        }
    }
}
