//! The single-pass walker: reads BSON elements in order and writes JSON as it goes.
//!
//! Nesting is handled with an explicit stack of [`Frame`]s on the heap, so input depth never
//! turns into native stack depth. Every length is checked against the end of its enclosing
//! document before anything is read, so a lying length can only produce an error.

use crate::bytes::{load_i32, load_u64};
use crate::compat::keys::{
    bloom_hit, bloom_insert, has_duplicate, hash_of, key_flags, lean_bloom_hit, lean_has_duplicate,
    mix_key_hash,
};
use crate::compat::repair::{fixup, split_namespace};
use crate::compat::values::{write_bson_regexp, write_long, write_node_buffer};
use crate::compat::{self, Member};
use crate::decimal128::{write_decimal128, Decimal128Style};
use crate::element as el;
use crate::error::{Error, ErrorKind};
use crate::escape::write_quoted;
use crate::number::{
    write_ejson_double, write_i64, write_i64_inline, write_iso_date, write_js_double,
    write_js_double_plain, write_u64, JS_DATE_MAX_MS,
};
use crate::options::{BsonVersion, Dialect, Options, Utf8Mode};
use crate::scan::{find_nul, nul_in_16, short_key, short_key_tail, ShortKey};
use crate::text::{write_base64, write_hex, write_uuid};
use crate::utf8::write_quoted_lossy;

const COMPAT: u8 = 0;
const RELAXED: u8 = 1;
const CANONICAL: u8 = 2;

/// One open document, array or scope.
struct Frame {
    /// Absolute input index of this container's trailing NUL byte.
    pub end: usize,
    /// Output index of the container's opening `{` or `[`.
    pub out_start: usize,
    /// `compat` objects: index of this frame's first entry in the member list.
    pub members_start: usize,
    /// Input index of the container's first element (lean `compat` reads its keys back from
    /// there instead of keeping member records).
    pub first: usize,
    /// Elements written so far (decides the comma).
    pub count: u32,
    /// `compat` objects: a Bloom filter over key hashes, to spot possible duplicates: two
    /// 64-bit words, one bit set in each per key (see [`compat::keys::bloom_insert`]).
    pub bloom: [u64; 2],
    /// `compat` objects: `compat::F_*` bits saying whether the object needs reordering.
    pub flags: u8,
    /// True for arrays (element names are ignored).
    pub is_array: bool,
    /// Extra `}` to write after this container closes (code-with-scope wrappers). A `u16` so
    /// that the small fields fill eight bytes: with seven, the compiler initialises them with
    /// two overlapping four-byte stores, and the first read of `count` after a push cannot be
    /// forwarded from them (a stall on tiny documents; ARCHITECTURE.md, design decision 2).
    pub extra_close: u16,
}

/// A regular expression met in `compat` mode. js-bson builds a JS `RegExp` from it and throws a
/// `SyntaxError` when the engine rejects it, so an embedding that wants byte-exact error parity
/// checks these with the JavaScript engine (the Node addon does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexRecord {
    /// Input offset of the pattern's first byte.
    pub offset: usize,
    /// The pattern, decoded with U+FFFD replacement as js-bson does.
    pub pattern: String,
    /// The flags as js-bson maps them: `i`→`i`, `m`→`m`, `s`→`g`, everything else dropped.
    pub flags: String,
}

/// A reusable transcoder: keeps its frame stack and scratch buffers between calls, so steady
/// state transcoding does not allocate.
#[derive(Default)]
pub struct Transcoder {
    stack: Vec<Frame>,
    members: Vec<Member>,
    /// Scratch for the lean `compat` walk's duplicate check (`keys::lean_has_duplicate`).
    hashes: Vec<u64>,
    regexes: Vec<RegexRecord>,
    scratch: Vec<u8>,
    table: Vec<u32>,
    /// The longest `out` reached at an output-cap check during the last call. Output only
    /// shrinks when a `compat` object is repaired, so this is recorded before each repair and
    /// at the end; batch workers use it to place the cap error where a sequential run would.
    peak: usize,
    /// `compat` documents still to walk with member records before trying a lean walk again.
    lean_skip: u32,
    /// What `lean_skip` becomes when a lean walk gives up: 8, doubling up to 1024 while lean
    /// walks keep giving up, reset by one that succeeds.
    lean_backoff: u32,
}

#[cold]
fn err(kind: ErrorKind, offset: usize, detail: &'static str) -> Error {
    Error::new(kind, offset, detail)
}

/// Writes the number element of an array whose type `t` is a double, int32 or int64 and whose
/// value starts at `v` (after `,` if `comma`), as the general path would, and returns the
/// position after it; `None`, with nothing written, when the value runs past `end` or is one
/// the general path prints some other way (a non-finite double outside `compat`, an int64
/// that `compat` does not print as a number). The numbers loop in [`Transcoder::run`] writes
/// numbers the same way inline (calling this there measured slower in `relaxed`; ARCHITECTURE.md
/// decision 5); the twin tests hold both to the general path.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn put_number(
    input: &[u8],
    t: u8,
    v: usize,
    end: usize,
    out: &mut Vec<u8>,
    comma: bool,
    compat: bool,
    promote_longs: bool,
) -> Option<usize> {
    let next = v + if t == el::INT32 { 4 } else { 8 };
    if next > end {
        return None;
    }
    // (Only the value's own bytes: an int32 may end the input.)
    let bits = if t == el::INT32 {
        i64::from(load_i32(input, v)) as u64
    } else {
        load_u64(input, v)
    };
    let x = f64::from_bits(bits);
    let n = bits as i64;
    if (t == el::DOUBLE && !compat && !x.is_finite())
        || (t == el::INT64
            && compat
            && !(promote_longs && (-(1i64 << 53)..=1i64 << 53).contains(&n)))
    {
        return None;
    }
    if comma {
        out.push(b',');
    }
    if t != el::DOUBLE {
        write_i64_inline(out, n);
    } else if compat {
        write_js_double(out, x);
    } else {
        write_ejson_double(out, x);
    }
    Some(next)
}

/// Writes the array elements of an array, from `pos` on, that are themselves arrays of only
/// numbers that [`put_number`] writes (GeoJSON's `[x, y]` coordinates), as many as follow one
/// another, and returns the position after the last (`pos` if none): the same text and the
/// same output-cap checks as the general path's frame for each, without the frames. `count` is
/// the enclosing array's element count. Stops, with `out` as it was before that element, at
/// anything else (the general path then takes the element and reports any error); the caller
/// checks the depth. `compat` only (the lean walk's): in `relaxed` the mere call site measured
/// slower on documents without such arrays (ARCHITECTURE.md decision 5).
#[inline(never)]
fn number_arrays(
    input: &[u8],
    mut pos: usize,
    end: usize,
    out: &mut Vec<u8>,
    count: &mut u32,
    promote_longs: bool,
    max_out: usize,
) -> Result<usize, Error> {
    while pos < end && input[pos] == el::ARRAY && pos + 17 <= input.len() {
        let Some(klen) = nul_in_16(input, pos + 1) else {
            break;
        };
        let v = pos + klen + 2;
        if v + 4 > end {
            break;
        }
        let len = load_i32(input, v);
        if len < 5 || len as usize > end - v {
            break;
        }
        let child_end = v + len as usize - 1;
        if input[child_end] != 0 {
            break;
        }
        let mark = out.len();
        if *count > 0 {
            out.push(b',');
        }
        out.push(b'[');
        let mut at = v + 4;
        while at < child_end {
            let t = input[at];
            let ks = at + 1;
            let next = if matches!(t, el::DOUBLE | el::INT32 | el::INT64) && ks + 16 <= input.len()
            {
                nul_in_16(input, ks).and_then(|klen| {
                    let comma = at > v + 4;
                    put_number(
                        input,
                        t,
                        ks + klen + 1,
                        child_end,
                        out,
                        comma,
                        true,
                        promote_longs,
                    )
                })
            } else {
                None
            };
            let Some(next) = next else {
                out.truncate(mark);
                return Ok(pos);
            };
            at = next;
            within_limit(out, max_out, at)?;
        }
        out.push(b']');
        within_limit(out, max_out, child_end)?;
        *count += 1;
        pos = child_end + 1;
    }
    Ok(pos)
}

/// `OutputTooLarge` (at input offset `at`) once `out` is over `max_out` bytes.
#[inline(always)]
fn within_limit(out: &[u8], max_out: usize, at: usize) -> Result<(), Error> {
    if out.len() > max_out {
        Err(err(
            ErrorKind::OutputTooLarge,
            at,
            "JSON output exceeds maxOutputBytes",
        ))
    } else {
        Ok(())
    }
}

/// The error for the innermost open container (the last of `stack`) whose last byte is not
/// the NUL its length promises.
#[cold]
fn unterminated(stack: &[Frame]) -> Error {
    let (end, detail) = match stack {
        [f] => (f.end, "document does not end with a NUL byte"),
        [.., f] if f.extra_close > 0 => {
            (f.end, "code-with-scope scope does not end with a NUL byte")
        }
        [.., f] => (f.end, "embedded document does not end with a NUL byte"),
        [] => (0, "document does not end with a NUL byte"),
    };
    err(ErrorKind::BadTerminator, end, detail)
}

/// Checks that `n` bytes starting at `at` lie before `end` (the enclosing document's NUL).
#[inline(always)]
fn need(at: usize, n: usize, end: usize) -> Result<(), Error> {
    if at + n > end {
        Err(err(
            ErrorKind::Truncated,
            at,
            "value runs past the end of its document",
        ))
    } else {
        Ok(())
    }
}

/// Reads a BSON string (int32 length including the NUL, bytes, NUL) at `at`, which must end
/// at or before `end`. Returns the content bytes and the index just after the string.
#[inline(always)]
fn read_string(input: &[u8], at: usize, end: usize) -> Result<(&[u8], usize), Error> {
    need(at, 4, end)?;
    let len = load_i32(input, at);
    if len <= 0 {
        return Err(err(
            ErrorKind::BadLength,
            at,
            "string length must be at least 1",
        ));
    }
    let len = len as usize;
    let start = at + 4;
    if len > end - start {
        return Err(err(
            ErrorKind::BadLength,
            at,
            "string length runs past the end of its document",
        ));
    }
    let stop = start + len - 1;
    if input[stop] != 0 {
        return Err(err(
            ErrorKind::BadTerminator,
            stop,
            "string is not NUL-terminated where its length says",
        ));
    }
    Ok((&input[start..stop], stop + 1))
}

/// Validates `input[from..to]` as UTF-8 and appends it quoted and escaped (one pass:
/// `utf8::write_quoted_utf8_in`); in replace mode invalid sequences become U+FFFD.
#[inline(always)]
fn write_str_value(
    out: &mut Vec<u8>,
    input: &[u8],
    from: usize,
    to: usize,
    mode: Utf8Mode,
) -> Result<(), Error> {
    let mark = out.len();
    let s = &input[from..to];
    if crate::utf8::write_quoted_utf8_in(out, input, from, to) {
        return Ok(());
    }
    match mode {
        Utf8Mode::Strict => {
            let bad = std::str::from_utf8(s).err().map_or(0, |e| e.valid_up_to());
            Err(err(
                ErrorKind::InvalidUtf8,
                from + bad,
                "string is not valid UTF-8",
            ))
        }
        Utf8Mode::Replace => {
            out.truncate(mark);
            write_quoted(out, String::from_utf8_lossy(s).as_bytes());
            Ok(())
        }
    }
}

/// Every `compat` member the walker's fast path does not take (array-index, `$`-prefixed,
/// long, escaped or invalid-UTF-8 keys, `undefined` values): writes the key, sets the object's
/// flags and records the member. Returns true for an `undefined` value (nothing is written).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn compat_member<const LEAN: bool>(
    f: &mut Frame,
    members: &mut Vec<Member>,
    out: &mut Vec<u8>,
    input: &[u8],
    ks: usize,
    ke: usize,
    t: u8,
    short: Option<ShortKey>,
) -> bool {
    let key = &input[ks..ke];
    let mut flags = key_flags(key);
    let h = hash_of(input, ks, ke, short);
    if bloom_insert(&mut f.bloom, h) {
        flags |= if LEAN {
            lean_bloom_hit(input, f.first, f.end, f.count, ks, ke)
        } else {
            bloom_hit(&members[f.members_start..], input, h, key)
        };
    }
    let undefined = t == el::UNDEFINED;
    let (out_key, out_val) = if undefined {
        (compat::NONE, out.len() + 1)
    } else {
        let comma = f.count > 0;
        f.count += 1;
        match short {
            Some(k) if k.plain => {
                let at = out.len() + usize::from(comma);
                put_hashed_key(out, comma, k);
                (at, out.len())
            }
            _ => {
                if comma {
                    out.push(b',');
                }
                let at = out.len();
                if !write_quoted_lossy(out, input, ks, ke) {
                    flags |= compat::F_LOSSY;
                }
                out.push(b':');
                (at, out.len())
            }
        }
    };
    f.flags |= flags;
    if !LEAN {
        members.push(Member {
            key_start: ks,
            key_end: ke,
            out_key,
            out_val,
            val_start: ke + 1,
            vtype: t,
            hash: h,
        });
    }
    undefined
}

/// Whether the name at `ks` is one byte and its NUL (at `ks + 1`) comes before `end`: the
/// element names `0` to `9` of an array that ends within 16 bytes of the input's end, where
/// the 16-byte read cannot be used (without this they take [`long_key_len`]'s call). Used in
/// `compat` only, where it pays for itself; in `relaxed`, and in the numbers loop, the same
/// branch measured slower (callgrind on `examples/throughput`; ARCHITECTURE.md decision 5).
#[inline(always)]
fn one_digit_name(input: &[u8], ks: usize, end: usize) -> bool {
    ks + 1 < end && input[ks] != 0 && input[ks + 1] == 0
}

/// Length of the key at `ks` by a scan for its NUL, which must come before `end` (keys of 16
/// bytes or more, and keys near the end of a small input).
#[inline(never)]
fn long_key_len(input: &[u8], ks: usize, end: usize) -> Result<usize, Error> {
    find_nul(&input[ks..end]).ok_or_else(|| {
        err(
            ErrorKind::Truncated,
            ks,
            "key has no NUL terminator inside its document",
        )
    })
}

/// Appends `,"key":` (the comma only if `comma`) for a short key that needs no escaping, which
/// starts at `input[ks]`. Its bytes are copied from the input when 16 are readable there (the
/// lanes past the key are overwritten or cut off): rebuilding them from the key's words goes
/// through the stack and can stall the vector load on store forwarding.
#[inline(always)]
fn put_plain_key(out: &mut Vec<u8>, comma: bool, k: ShortKey, input: &[u8], ks: usize) {
    let block = match input.get(ks..ks + 16) {
        Some(b) => b.try_into().unwrap_or_else(|_| unreachable!()),
        None => crate::lanes::words_block(k.lo, k.hi),
    };
    crate::sink::put_key(out, comma, block, k.len);
}

/// [`put_plain_key`] in `compat`, whose key hash already took both of the key's words out of
/// the vector register: they are stored as they are (two 8-byte stores), with no second read
/// of the input. Not in `relaxed`, which does not hash: there taking the second word out of the
/// register costs more than the read (ARCHITECTURE.md decision 4).
#[inline(always)]
fn put_hashed_key(out: &mut Vec<u8>, comma: bool, k: ShortKey) {
    crate::sink::put_key_words(out, comma, k.lo, k.hi, k.len);
}

impl Transcoder {
    /// A transcoder with empty scratch space.
    pub fn new() -> Self {
        Self::default()
    }

    /// Transcodes one BSON document (all of `input`) and appends its JSON to `out`.
    /// On error, `out` is restored to its length before the call.
    ///
    /// In `compat`, documents are first walked without member records (the bookkeeping that
    /// only an object needing repair uses); a document with such an object is walked again
    /// with them, and so are the next few documents (8, doubling up to 1024 while documents
    /// keep needing it). The output and errors are those of [`Transcoder::transcode_plain`].
    pub fn transcode(
        &mut self,
        input: &[u8],
        options: &Options,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        self.transcode_with(input, options, out, true)
    }

    /// [`Transcoder::transcode`] with every `compat` object's members recorded as it is
    /// walked: the plain twin of the lean first walk, which tests and the fuzz targets hold
    /// equal to it (same output, same errors).
    pub fn transcode_plain(
        &mut self,
        input: &[u8],
        options: &Options,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        self.transcode_with(input, options, out, false)
    }

    fn transcode_with(
        &mut self,
        input: &[u8],
        options: &Options,
        out: &mut Vec<u8>,
        lean: bool,
    ) -> Result<(), Error> {
        let base = out.len();
        self.regexes.clear();
        self.peak = base;
        let r = match options.dialect {
            Dialect::Compat => {
                let try_lean = lean && self.lean_skip == 0;
                if lean && !try_lean {
                    self.lean_skip -= 1;
                }
                self.compat(input, options, out, base, try_lean)
            }
            Dialect::Relaxed => self.run::<RELAXED, false>(input, options, out).map(drop),
            Dialect::Canonical => self.run::<CANONICAL, false>(input, options, out).map(drop),
        };
        if r.is_err() {
            out.truncate(base);
        }
        self.peak = self.peak.max(out.len());
        r
    }

    /// `compat`: the lean walk first if `lean`, then (if it gave up) the recording walk over
    /// again, from `out` cut back to `base`.
    fn compat(
        &mut self,
        input: &[u8],
        options: &Options,
        out: &mut Vec<u8>,
        base: usize,
        lean: bool,
    ) -> Result<(), Error> {
        if lean {
            if self.run::<COMPAT, true>(input, options, out)? {
                self.lean_backoff = 0;
                return Ok(());
            }
            self.lean_backoff = (self.lean_backoff * 2).clamp(8, 1024);
            self.lean_skip = self.lean_backoff;
            out.truncate(base);
            self.regexes.clear();
            self.peak = base;
        }
        self.run::<COMPAT, false>(input, options, out).map(drop)
    }

    /// The longest the output buffer was at any output-cap check of the last successful call:
    /// more than its final length only when a `compat` repair shortened an object.
    pub(crate) fn peak_len(&self) -> usize {
        self.peak
    }

    /// The regular expressions met by the last `compat` call, in input order. Empty for the
    /// Extended JSON dialects.
    pub fn regexes(&self) -> &[RegexRecord] {
        &self.regexes
    }

    /// The walk. `LEAN` (`compat` only) keeps no member records: it returns `Ok(false)` as soon
    /// as an object closes that needs them (a repair, or an exact duplicate check that finds
    /// one), and the caller starts over with records. Otherwise `Ok(true)`.
    ///
    /// Kept as one function on purpose (ARCHITECTURE.md, design decision 5, which lists the
    /// splits measured and rejected): the loop's speed depends on how much of its state (input
    /// position, the open frame, the output's length and capacity) stays in registers, and
    /// every split of common work measured slower side by side (`benchmark/ab-core.sh`). Rare
    /// work (non-plain, `$` and index keys, Bloom hits, duplicate checks, repairs, long keys)
    /// lives in `#[inline(never)]` helpers (`compat_member` above, `compat::keys`); the
    /// common key's Bloom update and the common values are inline. Measure a new split the
    /// same way before landing it.
    fn run<const D: u8, const LEAN: bool>(
        &mut self,
        input: &[u8],
        opts: &Options,
        out: &mut Vec<u8>,
    ) -> Result<bool, Error> {
        let compat = D == COMPAT;
        let canonical = D == CANONICAL;
        if input.len() < 5 {
            if input.len() >= 4 && load_i32(input, 0) < 5 {
                return Err(err(
                    ErrorKind::BadLength,
                    0,
                    "document length must be at least 5",
                ));
            }
            return Err(err(
                ErrorKind::Truncated,
                input.len(),
                "input is shorter than a BSON document",
            ));
        }
        let size = load_i32(input, 0);
        if size < 5 {
            return Err(err(
                ErrorKind::BadLength,
                0,
                "document length must be at least 5",
            ));
        }
        let size = size as usize;
        if input.len() < size {
            return Err(err(
                ErrorKind::Truncated,
                input.len(),
                "input ends before the document's declared length",
            ));
        }
        if input.len() > size {
            return Err(err(
                ErrorKind::BadLength,
                size,
                "trailing bytes after the document",
            ));
        }
        // The terminator of every document (this one included) is checked when the walk
        // reaches it, not when the document opens: then it is in cache (reading a large
        // document's last byte first is a cache miss; design decision 3), and errors come in
        // input order.
        if opts.max_depth == 0 {
            return Err(err(ErrorKind::TooDeep, 0, "nesting deeper than maxDepth"));
        }
        self.stack.clear();
        self.members.clear();
        out.reserve(size + size / 4 + 16);
        out.push(b'{');
        self.stack.push(Frame {
            end: size - 1,
            out_start: out.len() - 1,
            members_start: 0,
            first: 4,
            count: 0,
            bloom: [0; 2],
            flags: 0,
            is_array: false,
            extra_close: 0,
        });
        let max_out = opts.max_output_bytes;
        let max_depth = opts.max_depth as usize;
        let utf8 = opts.utf8;
        // js-bson's deserialize options (`compat` only): int64 within ±2^53 prints as a
        // number only under promoteLongs && promoteValues.
        let promote_longs = opts.promote_longs && opts.promote_values;
        let mut pos = 4usize;

        loop {
            let top = self.stack.len() - 1;
            let end = self.stack[top].end;
            if pos >= end {
                // pos == end: every value is checked to end at or before `end`.
                if input[end] != 0 {
                    return Err(unterminated(&self.stack));
                }
                let f = self.stack.pop().unwrap_or_else(|| unreachable!());
                let mut flags = f.flags;
                if compat
                    && LEAN
                    && (compat::needs_fixup(flags)
                        || flags & compat::F_MAYBE_DUP != 0
                            && lean_has_duplicate(input, f.first, f.end, &mut self.hashes))
                {
                    return Ok(false);
                }
                if compat
                    && !LEAN
                    && flags & compat::F_MAYBE_DUP != 0
                    && has_duplicate(input, &self.members[f.members_start..], &mut self.table)
                {
                    flags |= compat::F_DUP;
                }
                if compat && !LEAN && !f.is_array && compat::needs_fixup(flags) {
                    // The cap was last checked at this length; the repair may shorten it.
                    self.peak = self.peak.max(out.len());
                    fixup(
                        out,
                        input,
                        f.out_start,
                        f.flags,
                        &self.members[f.members_start..],
                        &mut self.scratch,
                        opts.promote_values,
                    );
                } else {
                    out.push(if f.is_array { b']' } else { b'}' });
                }
                // (The lean walk records no members.)
                if compat && !LEAN {
                    self.members.truncate(f.members_start);
                }
                for _ in 0..f.extra_close {
                    out.push(b'}');
                }
                pos = end + 1;
                within_limit(out, max_out, end)?;
                if self.stack.is_empty() {
                    break;
                }
                continue;
            }

            // Numbers in an array, in a loop of their own, where the compiler keeps its state
            // in registers (number-heavy documents are mostly this), and in the lean `compat`
            // walk arrays of numbers in an array (GeoJSON's coordinates) without a frame of
            // their own (`number_arrays`). Anything else, including anything malformed, leaves
            // it for the general path below, which also reports the errors. Not in the
            // recording `compat` walk, so that its twin tests compare this loop with the
            // general path.
            if !canonical && (LEAN || !compat) && self.stack[top].is_array {
                let f = &mut self.stack[top];
                while pos < end {
                    let t = input[pos];
                    let ks = pos + 1;
                    if !matches!(t, el::DOUBLE | el::INT32 | el::INT64) || ks + 16 > input.len() {
                        break;
                    }
                    let Some(klen) = nul_in_16(input, ks) else {
                        break;
                    };
                    let v = ks + klen + 1;
                    let next = v + if t == el::INT32 { 4 } else { 8 };
                    if next > end {
                        break;
                    }
                    // (Only the value's own bytes: an int32 may end the input.)
                    let bits = if t == el::INT32 {
                        i64::from(load_i32(input, v)) as u64
                    } else {
                        load_u64(input, v)
                    };
                    let x = f64::from_bits(bits);
                    let n = bits as i64;
                    // Values the general path prints some other way.
                    if (t == el::DOUBLE && !compat && !x.is_finite())
                        || (t == el::INT64
                            && compat
                            && !(promote_longs && (-(1i64 << 53)..=1i64 << 53).contains(&n)))
                    {
                        break;
                    }
                    if f.count > 0 {
                        out.push(b',');
                    }
                    f.count += 1;
                    if t != el::DOUBLE {
                        write_i64_inline(out, n);
                    } else if compat {
                        write_js_double(out, x);
                    } else {
                        write_ejson_double(out, x);
                    }
                    pos = next;
                    within_limit(out, max_out, pos)?;
                }
                if LEAN && pos < end && input[pos] == el::ARRAY && self.stack.len() < max_depth {
                    let f = &mut self.stack[top];
                    let at =
                        number_arrays(input, pos, end, out, &mut f.count, promote_longs, max_out)?;
                    if at > pos {
                        pos = at;
                        continue;
                    }
                }
                if pos >= end {
                    continue;
                }
            }

            let t = input[pos];
            if t == 0 {
                return Err(err(
                    ErrorKind::BadTerminator,
                    pos,
                    "document ends before its declared length",
                ));
            }
            let ks = pos + 1;
            let in_array = self.stack[top].is_array;
            // Short keys (nearly all of them) are found, checked and hashed in one read of
            // 16 bytes (which may reach past this document into its parent, or end at the end
            // of the input); the NUL must still lie inside the document. Array element names
            // are only skipped, so there the read just looks for the NUL.
            let short = if in_array {
                None
            } else if ks + 16 <= input.len() {
                short_key(input, ks)
            } else if input.len() >= 16 {
                short_key_tail(input, ks)
            } else {
                None
            }
            .filter(|k| ks + k.len < end);
            let klen = match short {
                Some(k) => k.len,
                None => match if in_array && ks + 16 <= input.len() {
                    nul_in_16(input, ks).filter(|&n| ks + n < end)
                } else if compat && in_array && one_digit_name(input, ks, end) {
                    Some(1)
                } else {
                    None
                } {
                    Some(n) => n,
                    None => long_key_len(input, ks, end)?,
                },
            };
            let ke = ks + klen;
            let v = ke + 1;

            // Comma, key and member bookkeeping.
            {
                let f = &mut self.stack[top];
                if f.is_array {
                    if f.count > 0 {
                        out.push(b',');
                    }
                    f.count += 1;
                } else {
                    if compat {
                        // The common member: a short plain key that is neither an array index
                        // nor `$`-prefixed, and a value that is not `undefined`. One compare
                        // rules out both key kinds (digits and `$` are bytes up to `9`); the
                        // few other keys it sends to `compat_member`, which handles every key,
                        // start with punctuation or are empty.
                        match short {
                            Some(k) if k.plain && t != el::UNDEFINED && k.lo as u8 > b'9' => {
                                let h = mix_key_hash(k.lo, k.hi, 0, k.len);
                                if bloom_insert(&mut f.bloom, h) {
                                    f.flags |= if LEAN {
                                        lean_bloom_hit(input, f.first, f.end, f.count, ks, ke)
                                    } else {
                                        bloom_hit(
                                            &self.members[f.members_start..],
                                            input,
                                            h,
                                            &input[ks..ke],
                                        )
                                    };
                                }
                                let comma = f.count > 0;
                                f.count += 1;
                                let at = out.len() + usize::from(comma);
                                put_hashed_key(out, comma, k);
                                if !LEAN {
                                    self.members.push(Member {
                                        key_start: ks,
                                        key_end: ke,
                                        out_key: at,
                                        out_val: out.len(),
                                        val_start: v,
                                        vtype: t,
                                        hash: h,
                                    });
                                }
                            }
                            _ => {
                                if compat_member::<LEAN>(
                                    f,
                                    &mut self.members,
                                    out,
                                    input,
                                    ks,
                                    ke,
                                    t,
                                    short,
                                ) {
                                    // `undefined`: recorded, nothing written.
                                    pos = v;
                                    continue;
                                }
                            }
                        }
                    } else {
                        let comma = f.count > 0;
                        f.count += 1;
                        match short {
                            Some(k) if k.plain => put_plain_key(out, comma, k, input, ks),
                            _ => {
                                if comma {
                                    out.push(b',');
                                }
                                write_str_value(out, input, ks, ke, utf8)?;
                                out.push(b':');
                            }
                        }
                    }
                }
            }

            // The value. Strings, the commonest type in realistic documents, take a
            // conditional branch ahead of the type dispatch: the jump table's indirect branch
            // mispredicts often on mixed types, and this test is cheaper to get wrong (design
            // decision 8).
            if t == el::STRING {
                let (_, next) = read_string(input, v, end)?;
                pos = next;
                write_str_value(out, input, v + 4, next - 1, utf8)?;
                within_limit(out, max_out, pos)?;
                continue;
            }
            match t {
                el::DOUBLE => {
                    need(v, 8, end)?;
                    let x = f64::from_bits(load_u64(input, v));
                    pos = v + 8;
                    if compat {
                        if LEAN {
                            write_js_double(out, x);
                        } else {
                            // The recording walk (rare, and the twin of the lean one) prints
                            // doubles with the plain twin, so the fast writer keeps a single
                            // caller and stays inlined into the lean walk.
                            write_js_double_plain(out, x);
                        }
                    } else if x.is_finite() && !canonical {
                        write_ejson_double(out, x);
                    } else {
                        out.extend_from_slice(b"{\"$numberDouble\":\"");
                        if x.is_nan() {
                            out.extend_from_slice(b"NaN");
                        } else if x == f64::INFINITY {
                            out.extend_from_slice(b"Infinity");
                        } else if x == f64::NEG_INFINITY {
                            out.extend_from_slice(b"-Infinity");
                        } else {
                            write_ejson_double(out, x);
                        }
                        out.extend_from_slice(b"\"}");
                    }
                }
                // JavaScript code and symbols (strings take the branch above the dispatch):
                // js-bson wraps code as `{"code": …}` and reads a symbol as a plain string.
                el::JAVASCRIPT | el::SYMBOL => {
                    let (_, next) = read_string(input, v, end)?;
                    pos = next;
                    let wrapper: &[u8] = match (compat, t) {
                        (true, el::JAVASCRIPT) => b"{\"code\":",
                        (true, _) => b"",
                        (false, el::JAVASCRIPT) => b"{\"$code\":",
                        (false, _) => b"{\"$symbol\":",
                    };
                    out.extend_from_slice(wrapper);
                    write_str_value(out, input, v + 4, next - 1, utf8)?;
                    if !wrapper.is_empty() {
                        out.push(b'}');
                    }
                }
                el::DOCUMENT | el::ARRAY => {
                    need(v, 4, end)?;
                    let len = load_i32(input, v);
                    if len < 5 || len as usize > end - v {
                        return Err(err(
                            ErrorKind::BadLength,
                            v,
                            "embedded document length is below 5 or runs past its parent",
                        ));
                    }
                    let child_end = v + len as usize - 1;
                    if self.stack.len() >= max_depth {
                        return Err(err(ErrorKind::TooDeep, v, "nesting deeper than maxDepth"));
                    }
                    let is_array = t == el::ARRAY;
                    // An empty one (`"blockIds": []`, many a document in some data) is written
                    // whole, with the frame path's checks but no frame. Not in the recording
                    // `compat` walk, so that its twin tests compare this with the frame path.
                    if compat && LEAN && len == 5 && input[v + 4] == 0 {
                        out.extend_from_slice(if is_array { b"[]" } else { b"{}" });
                        pos = v + 5;
                        within_limit(out, max_out, v + 4)?;
                        continue;
                    }
                    out.push(if is_array { b'[' } else { b'{' });
                    self.stack.push(Frame {
                        end: child_end,
                        out_start: out.len() - 1,
                        members_start: self.members.len(),
                        first: v + 4,
                        count: 0,
                        bloom: [0; 2],
                        flags: 0,
                        is_array,
                        extra_close: 0,
                    });
                    pos = v + 4;
                    continue;
                }
                el::BINARY => {
                    need(v, 5, end)?;
                    let len = load_i32(input, v);
                    if len < 0 {
                        return Err(err(ErrorKind::BadBinary, v, "negative binary length"));
                    }
                    let len = len as usize;
                    let sub = input[v + 4];
                    let data = v + 5;
                    if len > end - data {
                        return Err(err(
                            ErrorKind::BadLength,
                            v,
                            "binary length runs past the end of its document",
                        ));
                    }
                    pos = data + len;
                    let mut payload = &input[data..pos];
                    if sub == 0x02 {
                        if len < 4 || i64::from(load_i32(input, data)) != len as i64 - 4 {
                            return Err(err(
                                ErrorKind::BadBinary,
                                data,
                                "binary subtype 0x02 inner length disagrees with outer length",
                            ));
                        }
                        payload = &payload[4..];
                    }
                    if compat && opts.promote_buffers && opts.promote_values {
                        write_node_buffer(out, payload);
                    } else if compat {
                        out.push(b'"');
                        if sub == 0x04 && payload.len() == 16 {
                            let mut u = [0u8; 16];
                            u.copy_from_slice(payload);
                            write_uuid(out, &u);
                        } else {
                            write_base64(out, payload);
                        }
                        out.push(b'"');
                    } else {
                        out.extend_from_slice(b"{\"$binary\":{\"base64\":\"");
                        write_base64(out, payload);
                        out.extend_from_slice(b"\",\"subType\":\"");
                        write_hex(out, &[sub]);
                        out.extend_from_slice(b"\"}}");
                    }
                }
                el::UNDEFINED => {
                    // compat objects never get here (handled with the key).
                    pos = v;
                    if compat {
                        out.extend_from_slice(b"null");
                    } else {
                        out.extend_from_slice(b"{\"$undefined\":true}");
                    }
                }
                el::OBJECT_ID => {
                    need(v, 12, end)?;
                    pos = v + 12;
                    let id: &[u8; 12] = match input[v..pos].try_into() {
                        Ok(id) => id,
                        Err(_) => unreachable!(),
                    };
                    if compat {
                        crate::sink::put_quoted_hex12(out, id);
                    } else {
                        out.extend_from_slice(b"{\"$oid\":");
                        crate::sink::put_quoted_hex12(out, id);
                        out.push(b'}');
                    }
                }
                el::BOOLEAN => {
                    need(v, 1, end)?;
                    pos = v + 1;
                    match input[v] {
                        0 => out.extend_from_slice(b"false"),
                        1 => out.extend_from_slice(b"true"),
                        _ => {
                            return Err(err(
                                ErrorKind::BadBoolean,
                                v,
                                "boolean byte is neither 0 nor 1",
                            ))
                        }
                    }
                }
                el::DATE_TIME => {
                    need(v, 8, end)?;
                    let ms = load_u64(input, v) as i64;
                    pos = v + 8;
                    if compat {
                        if (-JS_DATE_MAX_MS..=JS_DATE_MAX_MS).contains(&ms) {
                            out.push(b'"');
                            write_iso_date(out, ms, true);
                            out.push(b'"');
                        } else {
                            out.extend_from_slice(b"null");
                        }
                    } else if !canonical && (0..=253_402_300_799_999).contains(&ms) {
                        out.extend_from_slice(b"{\"$date\":\"");
                        write_iso_date(out, ms, false);
                        out.extend_from_slice(b"\"}");
                    } else {
                        out.extend_from_slice(b"{\"$date\":{\"$numberLong\":\"");
                        write_i64(out, ms);
                        out.extend_from_slice(b"\"}}");
                    }
                }
                el::NULL => {
                    pos = v;
                    out.extend_from_slice(b"null");
                }
                el::REGEX => {
                    let plen = find_nul(&input[v..end]).ok_or_else(|| {
                        err(
                            ErrorKind::Truncated,
                            v,
                            "regex pattern has no NUL terminator inside its document",
                        )
                    })?;
                    let fs = v + plen + 1;
                    let flen = find_nul(&input[fs..end]).ok_or_else(|| {
                        err(
                            ErrorKind::Truncated,
                            fs,
                            "regex flags have no NUL terminator inside its document",
                        )
                    })?;
                    let pattern = &input[v..v + plen];
                    let flags = &input[fs..fs + flen];
                    pos = fs + flen + 1;
                    if compat && opts.bson_regexp {
                        write_bson_regexp(out, input, v, v + plen, flags, fs)?;
                    } else if compat {
                        out.extend_from_slice(b"{}");
                        let mapped: String = String::from_utf8_lossy(flags)
                            .chars()
                            .filter_map(|c| match c {
                                'i' => Some('i'),
                                'm' => Some('m'),
                                's' => Some('g'),
                                _ => None,
                            })
                            .collect();
                        self.regexes.push(RegexRecord {
                            offset: v,
                            pattern: String::from_utf8_lossy(pattern).into_owned(),
                            flags: mapped,
                        });
                    } else {
                        out.extend_from_slice(b"{\"$regularExpression\":{\"pattern\":");
                        write_str_value(out, input, v, v + plen, utf8)?;
                        out.extend_from_slice(b",\"options\":");
                        if simdutf8::basic::from_utf8(flags).is_err() && utf8 == Utf8Mode::Strict {
                            return Err(err(
                                ErrorKind::InvalidUtf8,
                                fs,
                                "regex options are not valid UTF-8",
                            ));
                        }
                        let mut sorted = [0u8; 64];
                        if flen <= sorted.len() {
                            sorted[..flen].copy_from_slice(flags);
                            sorted[..flen].sort_unstable();
                            write_quoted_lossy(out, &sorted, 0, flen);
                        } else {
                            let mut v = flags.to_vec();
                            v.sort_unstable();
                            write_quoted_lossy(out, &v, 0, v.len());
                        }
                        out.extend_from_slice(b"}}");
                    }
                }
                el::DB_POINTER => {
                    let (ns, next) = read_string(input, v, end)?;
                    need(next, 12, end)?;
                    pos = next + 12;
                    let oid = &input[next..pos];
                    if compat {
                        // new DBRef(namespace, oid).toJSON()
                        let ns_text: std::borrow::Cow<'_, [u8]> =
                            match simdutf8::basic::from_utf8(ns) {
                                Ok(_) => ns.into(),
                                Err(_) if utf8 == Utf8Mode::Replace => {
                                    String::from_utf8_lossy(ns).into_owned().into_bytes().into()
                                }
                                Err(_) => {
                                    return Err(err(
                                        ErrorKind::InvalidUtf8,
                                        v + 4,
                                        "DBPointer namespace is not valid UTF-8",
                                    ))
                                }
                            };
                        let (db, coll) = split_namespace(&ns_text);
                        out.extend_from_slice(b"{\"$ref\":");
                        write_quoted(out, coll);
                        out.extend_from_slice(b",\"$id\":\"");
                        write_hex(out, oid);
                        out.push(b'"');
                        if let Some(db) = db {
                            out.extend_from_slice(b",\"$db\":");
                            write_quoted(out, db);
                        }
                        out.push(b'}');
                    } else {
                        out.extend_from_slice(b"{\"$dbPointer\":{\"$ref\":");
                        write_str_value(out, input, v + 4, next - 1, utf8)?;
                        out.extend_from_slice(b",\"$id\":{\"$oid\":\"");
                        write_hex(out, oid);
                        out.extend_from_slice(b"\"}}}");
                    }
                }
                el::CODE_WITH_SCOPE => {
                    need(v, 4, end)?;
                    let total = load_i32(input, v);
                    if total < 13 {
                        return Err(err(
                            ErrorKind::BadCodeWithScope,
                            v,
                            "code-with-scope length is below the minimum of 13",
                        ));
                    }
                    let total = total as usize;
                    if total > end - v {
                        return Err(err(
                            ErrorKind::BadLength,
                            v,
                            "code-with-scope length runs past the end of its document",
                        ));
                    }
                    let cws_end = v + total; // exclusive
                    let (_, scope_at) = read_string(input, v + 4, cws_end)?;
                    need(scope_at, 4, cws_end)?;
                    let slen = load_i32(input, scope_at);
                    if slen < 5 || scope_at + slen as usize != cws_end {
                        return Err(err(
                            ErrorKind::BadCodeWithScope,
                            scope_at,
                            "code-with-scope scope length disagrees with the total length",
                        ));
                    }
                    let scope_end = cws_end - 1;
                    if self.stack.len() >= max_depth {
                        return Err(err(
                            ErrorKind::TooDeep,
                            scope_at,
                            "nesting deeper than maxDepth",
                        ));
                    }
                    out.extend_from_slice(if compat {
                        b"{\"code\":"
                    } else {
                        b"{\"$code\":"
                    });
                    write_str_value(out, input, v + 8, scope_at - 1, utf8)?;
                    out.extend_from_slice(if compat {
                        b",\"scope\":{"
                    } else {
                        b",\"$scope\":{"
                    });
                    self.stack.push(Frame {
                        end: scope_end,
                        out_start: out.len() - 1,
                        members_start: self.members.len(),
                        first: scope_at + 4,
                        count: 0,
                        bloom: [0; 2],
                        // js-bson 7 builds the Code from the scope object as is: the scope
                        // itself is never promoted to a DBRef (documents inside it are).
                        // js-bson 6 promotes it like any other document.
                        flags: if opts.bson_version == BsonVersion::V7 {
                            compat::F_NO_DBREF
                        } else {
                            0
                        },
                        is_array: false,
                        extra_close: 1,
                    });
                    pos = scope_at + 4;
                    continue;
                }
                el::INT32 => {
                    need(v, 4, end)?;
                    pos = v + 4;
                    let n = load_i32(input, v);
                    if canonical {
                        out.extend_from_slice(b"{\"$numberInt\":\"");
                        write_i64(out, i64::from(n));
                        out.extend_from_slice(b"\"}");
                    } else {
                        write_i64(out, i64::from(n));
                    }
                }
                el::TIMESTAMP => {
                    need(v, 8, end)?;
                    pos = v + 8;
                    let ts = load_u64(input, v);
                    if compat {
                        out.extend_from_slice(b"{\"$timestamp\":\"");
                        write_u64(out, ts);
                        out.extend_from_slice(b"\"}");
                    } else {
                        out.extend_from_slice(b"{\"$timestamp\":{\"t\":");
                        write_u64(out, ts >> 32);
                        out.extend_from_slice(b",\"i\":");
                        write_u64(out, ts & 0xffff_ffff);
                        out.extend_from_slice(b"}}");
                    }
                }
                el::INT64 => {
                    need(v, 8, end)?;
                    pos = v + 8;
                    let n = load_u64(input, v) as i64;
                    if compat {
                        const JS_INT_MAX: i64 = 1 << 53;
                        if promote_longs && (-JS_INT_MAX..=JS_INT_MAX).contains(&n) {
                            write_i64(out, n);
                        } else {
                            write_long(out, n, opts.bson_version);
                        }
                    } else if canonical {
                        out.extend_from_slice(b"{\"$numberLong\":\"");
                        write_i64(out, n);
                        out.extend_from_slice(b"\"}");
                    } else {
                        write_i64(out, n);
                    }
                }
                el::DECIMAL128 => {
                    need(v, 16, end)?;
                    pos = v + 16;
                    let mut d = [0u8; 16];
                    d.copy_from_slice(&input[v..pos]);
                    out.extend_from_slice(b"{\"$numberDecimal\":\"");
                    write_decimal128(
                        &d,
                        if compat {
                            Decimal128Style::JsBson
                        } else {
                            Decimal128Style::Spec
                        },
                        out,
                    );
                    out.extend_from_slice(b"\"}");
                }
                el::MIN_KEY | el::MAX_KEY => {
                    pos = v;
                    if compat {
                        out.extend_from_slice(b"{}");
                    } else if t == el::MIN_KEY {
                        out.extend_from_slice(b"{\"$minKey\":1}");
                    } else {
                        out.extend_from_slice(b"{\"$maxKey\":1}");
                    }
                }
                _ => {
                    return Err(err(
                        ErrorKind::UnknownType,
                        pos,
                        "unknown BSON element type",
                    ));
                }
            }
            within_limit(out, max_out, pos)?;
        }
        Ok(true)
    }
}
