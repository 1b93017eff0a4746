//! Projection and redaction: a BSON → BSON pass that writes the projected and redacted
//! document into a scratch buffer, which the unchanged transcoder then turns into JSON, so one
//! implementation serves every dialect and every API.
//!
//! A [`Projection`] is MongoDB's projection document compiled into a path trie: inclusion
//! (`{a: 1, 'b.c': 1}`, `_id` kept unless `_id: 0`) or exclusion (`{secret: 0, 'card.number':
//! 0}`). Paths go through embedded documents and through arrays of documents with the rules of
//! a `find` projection: an inclusion path through an array keeps the matching fields of each
//! embedded document and drops every other element; an exclusion path removes the field from
//! each embedded document and keeps every other element unchanged; arrays nested in the array
//! are followed the same way (as `find` does, unlike aggregation's `$project`). A
//! path through a scalar drops the field under inclusion and keeps it under exclusion. Fields
//! keep the document's order.
//!
//! A [`Redaction`] keeps each matching field's key and replaces its value with `null` or with
//! the lowercase hex HMAC-SHA256, under the caller's key, of the value's *canonical bytes*:
//! the BSON type byte followed by the value's bytes exactly as BSON encodes them (for the
//! string `"ab"`: `02 03 00 00 00 61 62 00`; for an int32 `1`: `10 01 00 00 00`; for an embedded
//! document: `03` followed by the whole document, length prefix included). The same value
//! gives the same pseudonym in every run and process. Redaction paths follow the same rules
//! through documents and arrays of documents (nested arrays too); other elements are kept.
//! Projection runs first, redaction on its result.
//!
//! The pass checks every length it steps over against the enclosing document and every
//! terminator it reaches, but does not validate the values it copies or skips (the transcoder
//! that follows validates what is kept). The recursion depth is bounded by the number of
//! components of the longest path ([`MAX_PATH_DEPTH`]) and by [`MAX_ARRAY_NESTING`] arrays in
//! arrays, never by the input's nesting otherwise.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::bytes::load_i32;
use crate::element::{ARRAY, DOCUMENT, NULL, STRING};
use crate::error::{Error, ErrorKind};
use crate::raw::Elements;

/// The most components a path may have (MongoDB documents nest at most 100 levels).
pub const MAX_PATH_DEPTH: usize = 200;

/// A projection or redaction specification that cannot be compiled: the path and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The offending path, as given.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}': {}", self.path, self.reason)
    }
}

impl std::error::Error for SpecError {}

fn spec_err(path: &str, reason: impl Into<String>) -> SpecError {
    SpecError {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// One node of a path trie: its children by field name, or a leaf (the path ends here).
#[derive(Clone, Debug, Default)]
struct Node {
    children: Vec<(Box<[u8]>, Node)>,
    leaf: bool,
}

impl Node {
    #[inline]
    fn child(&self, key: &[u8]) -> Option<&Node> {
        self.children
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, n)| n)
    }

    /// Adds `path`; a path that is a prefix of another, or equal to one, is a collision.
    fn insert(&mut self, path: &str, what: &str) -> Result<(), SpecError> {
        if path.is_empty() {
            return Err(spec_err(path, format!("an empty {what} path")));
        }
        let comps: Vec<&str> = path.split('.').collect();
        if comps.len() > MAX_PATH_DEPTH {
            return Err(spec_err(
                path,
                format!("more than {MAX_PATH_DEPTH} path components"),
            ));
        }
        let mut node = self;
        for (i, c) in comps.iter().enumerate() {
            if c.is_empty() {
                return Err(spec_err(path, "an empty path component"));
            }
            if c.starts_with('$') {
                return Err(spec_err(
                    path,
                    "a path component starting with '$' (operators are not supported)",
                ));
            }
            if c.as_bytes().contains(&0) {
                return Err(spec_err(path, "a NUL byte in the path"));
            }
            if node.leaf {
                return Err(spec_err(
                    path,
                    format!("path collision with '{}'", comps[..i].join(".")),
                ));
            }
            let pos = match node.children.iter().position(|(k, _)| &**k == c.as_bytes()) {
                Some(p) => p,
                None => {
                    node.children
                        .push((c.as_bytes().to_vec().into_boxed_slice(), Node::default()));
                    node.children.len() - 1
                }
            };
            node = &mut node.children[pos].1;
        }
        if node.leaf || !node.children.is_empty() {
            return Err(spec_err(path, "path collision with another path"));
        }
        node.leaf = true;
        Ok(())
    }
}

/// A compiled MongoDB projection (inclusion or exclusion), see the module documentation.
#[derive(Clone, Debug)]
pub struct Projection {
    root: Node,
    inclusion: bool,
    /// Inclusion only: `_id: 0` was given.
    drop_id: bool,
}

impl Projection {
    /// Compiles a projection from its fields in order: `(path, include)`, where `include` is
    /// MongoDB's truthiness of the value (`1`/`true` include, `0`/`false` exclude). Returns
    /// `None` for the empty projection (every field kept). Mixing inclusion and exclusion
    /// (other than `_id: 0`) and colliding paths (`a` and `a.b`) are errors naming the path.
    pub fn new(fields: &[(&str, bool)]) -> Result<Option<Projection>, SpecError> {
        if fields.is_empty() {
            return Ok(None);
        }
        let mut mode: Option<(bool, &str)> = None;
        for &(path, include) in fields {
            if path == "_id" {
                continue;
            }
            match mode {
                None => mode = Some((include, path)),
                Some((m, first)) if m != include => {
                    return Err(spec_err(
                        path,
                        format!(
                            "cannot do {} in {} projection (first path '{}')",
                            if include { "inclusion" } else { "exclusion" },
                            if m { "an inclusion" } else { "an exclusion" },
                            first
                        ),
                    ))
                }
                _ => {}
            }
        }
        // Only `_id` given: its own value decides.
        let inclusion = match mode {
            Some((m, _)) => m,
            None => fields.iter().any(|&(_, inc)| inc),
        };
        let mut root = Node::default();
        let mut drop_id = false;
        for &(path, include) in fields {
            if path == "_id" {
                if inclusion && !include {
                    drop_id = true;
                    continue;
                }
                if !inclusion && include {
                    // `_id: 1` in an exclusion projection keeps `_id`, as it would anyway.
                    continue;
                }
            }
            root.insert(path, "projection")?;
        }
        Ok(Some(Projection {
            root,
            inclusion,
            drop_id,
        }))
    }

    /// True for an inclusion projection.
    pub fn is_inclusion(&self) -> bool {
        self.inclusion
    }
}

/// What a redacted value becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedactWith {
    /// `null`.
    Null,
    /// The lowercase hex HMAC-SHA256 of the value's canonical bytes under this key.
    HmacSha256(Vec<u8>),
}

/// A compiled redaction: the paths and what their values become.
#[derive(Clone)]
pub struct Redaction {
    root: Node,
    mac: Option<Hmac<Sha256>>,
}

impl fmt::Debug for Redaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redaction")
            .field("root", &self.root)
            .field("hmac", &self.mac.is_some())
            .finish()
    }
}

impl Redaction {
    /// Compiles the redaction of `paths`; `None` when there are none.
    pub fn new(paths: &[&str], with: RedactWith) -> Result<Option<Redaction>, SpecError> {
        if paths.is_empty() {
            return Ok(None);
        }
        let mut root = Node::default();
        for p in paths {
            root.insert(p, "redact")?;
        }
        let mac = match with {
            RedactWith::Null => None,
            RedactWith::HmacSha256(key) => Some(
                <Hmac<Sha256> as KeyInit>::new_from_slice(&key)
                    .map_err(|_| spec_err("", "bad HMAC key"))?,
            ),
        };
        Ok(Some(Redaction { root, mac }))
    }
}

/// The lowercase hex HMAC-SHA256 of `bytes` under `key`: what [`RedactWith::HmacSha256`] writes
/// for a value whose canonical bytes are `bytes`.
pub fn hmac_hex(key: &[u8], bytes: &[u8]) -> String {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    m.update(bytes);
    let mut s = String::with_capacity(64);
    for b in m.finalize().into_bytes() {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A projection and a redaction together (either may be absent), applied to documents, to the
/// documents of a cursor reply and to change events.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    projection: Option<Projection>,
    redaction: Option<Redaction>,
    /// What a change event's `documentKey` gets: the projection without what it says about
    /// `_id` (never dropped there), built once.
    document_key: Option<Box<Shape>>,
}

/// Arrays nested in arrays that a path goes through: deeper is an error (`BSON_TOO_DEEP`),
/// so the pass's recursion stays bounded whatever the input.
pub const MAX_ARRAY_NESTING: usize = 1000;

fn too_deep(at: usize) -> Error {
    Error::new(
        ErrorKind::TooDeep,
        at,
        "arrays nested deeper than a projection or redaction follows",
    )
}

fn truncated(at: usize) -> Error {
    Error::new(ErrorKind::Truncated, at, "document runs past its end")
}

/// Checks the document at `start` (which must end by `end`) and returns its end.
fn doc_bounds(input: &[u8], start: usize, end: usize) -> Result<usize, Error> {
    if start + 4 > end || end > input.len() {
        return Err(truncated(start));
    }
    let len = load_i32(input, start);
    if len < 5 {
        return Err(Error::new(
            ErrorKind::BadLength,
            start,
            "document length below 5",
        ));
    }
    let len = len as usize;
    if len > end - start {
        return Err(Error::new(
            ErrorKind::BadLength,
            start,
            "document length past its enclosing document",
        ));
    }
    if input[start + len - 1] != 0 {
        return Err(Error::new(
            ErrorKind::BadTerminator,
            start + len - 1,
            "document does not end with NUL",
        ));
    }
    Ok(start + len)
}

/// One element of a document: its start, type, key range, value range.
struct Elem {
    at: usize,
    t: u8,
    key: (usize, usize),
    value: (usize, usize),
}

/// A document's elements for the passes below: [`Elements`] over the document, with this
/// module's own checks at the terminator and at a NUL type byte (their errors are part of the
/// projection's contract, tested in tests/project.rs and the `project` fuzz target).
struct Elems<'a> {
    input: &'a [u8],
    it: Elements<'a>,
    /// The terminator's index.
    last: usize,
}

impl<'a> Elems<'a> {
    fn new(input: &'a [u8], start: usize, end: usize) -> Result<Self, Error> {
        let doc_end = doc_bounds(input, start, end)?;
        Ok(Elems {
            input,
            it: Elements::within(input, start + 4, doc_end - 1),
            last: doc_end - 1,
        })
    }

    fn next(&mut self) -> Result<Option<Elem>, Error> {
        let at = self.it.position();
        if at >= self.last {
            if self.input[at] != 0 || at != self.last {
                return Err(truncated(at));
            }
            return Ok(None);
        }
        if self.input[at] == 0 {
            return Err(Error::new(
                ErrorKind::BadLength,
                at,
                "document ends before its length says",
            ));
        }
        let e = self.it.step()?;
        Ok(Some(Elem {
            at,
            t: e.element_type,
            key: e.key_range(),
            value: (e.value_start, e.value_end),
        }))
    }
}

/// Where the pass writes: a `Vec<u8>`, or a [`Traced`] one that also records where each
/// copied run came from.
trait Out {
    fn len(&self) -> usize;
    fn push(&mut self, b: u8);
    /// Bytes the pass makes up (a length, an array index, a redacted value).
    fn put(&mut self, bytes: &[u8]);
    /// `input[from..to]`, copied.
    fn copy(&mut self, input: &[u8], from: usize, to: usize);
    fn truncate(&mut self, len: usize);
    /// Writes a document's length at `p`.
    fn set_len_at(&mut self, p: usize, len: u32);
}

impl Out for Vec<u8> {
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }
    #[inline]
    fn push(&mut self, b: u8) {
        Vec::push(self, b);
    }
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    #[inline]
    fn copy(&mut self, input: &[u8], from: usize, to: usize) {
        self.extend_from_slice(&input[from..to]);
    }
    #[inline]
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
    #[inline]
    fn set_len_at(&mut self, p: usize, len: u32) {
        self[p..p + 4].copy_from_slice(&len.to_le_bytes());
    }
}

/// A pass's output with the origin of its copied runs: `(start, end)` in the output and the
/// start in the source, for copies from the source (the slice at the address `source`; copies
/// from anything else count as made up).
struct Traced {
    buf: Vec<u8>,
    source: usize,
    runs: Vec<(usize, usize, usize)>,
}

impl Traced {
    fn new(source: &[u8]) -> Traced {
        Traced {
            buf: Vec::new(),
            source: source.as_ptr() as usize,
            runs: Vec::new(),
        }
    }

    /// Where output byte `at` came from in the source: exact for a copied byte; for one the
    /// pass made up, the end of the copied run before it (where the element it belongs to
    /// starts, or the value it replaced).
    fn origin(&self, at: usize) -> usize {
        let i = self.runs.partition_point(|r| r.0 <= at);
        match i.checked_sub(1).map(|j| self.runs[j]) {
            None => 0,
            Some((start, end, from)) if at < end => from + (at - start),
            Some((start, end, from)) => from + (end - start),
        }
    }
}

impl Out for Traced {
    fn len(&self) -> usize {
        self.buf.len()
    }
    fn push(&mut self, b: u8) {
        self.buf.push(b);
    }
    fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
    fn copy(&mut self, input: &[u8], from: usize, to: usize) {
        if input.as_ptr() as usize == self.source && from < to {
            self.runs
                .push((self.buf.len(), self.buf.len() + (to - from), from));
        }
        self.buf.extend_from_slice(&input[from..to]);
    }
    fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
        while let Some(r) = self.runs.last_mut() {
            if r.0 >= len {
                self.runs.pop();
            } else {
                r.1 = r.1.min(len);
                break;
            }
        }
    }
    fn set_len_at(&mut self, p: usize, len: u32) {
        self.buf[p..p + 4].copy_from_slice(&len.to_le_bytes());
    }
}

fn begin_doc(out: &mut impl Out) -> usize {
    let p = out.len();
    out.put(&[0, 0, 0, 0]);
    p
}

fn end_doc(out: &mut impl Out, p: usize) {
    out.push(0);
    let len = (out.len() - p) as u32;
    out.set_len_at(p, len);
}

fn push_index_key(out: &mut impl Out, i: usize) {
    let mut b = itoa::Buffer::new();
    out.put(b.format(i).as_bytes());
    out.push(0);
}

/// The element kinds a trie walk distinguishes.
enum Step<'n> {
    /// No path goes here.
    Miss,
    /// A path ends here: the whole value.
    Leaf,
    /// Paths continue below.
    Inner(&'n Node),
}

#[inline]
fn step<'n>(node: &'n Node, key: &[u8]) -> Step<'n> {
    match node.child(key) {
        None => Step::Miss,
        Some(c) if c.leaf => Step::Leaf,
        Some(c) => Step::Inner(c),
    }
}

impl Projection {
    /// Projects the document `input[start..]` (ending by `end`) at `node` into `out`.
    fn doc(
        &self,
        input: &[u8],
        start: usize,
        end: usize,
        node: &Node,
        top: bool,
        out: &mut impl Out,
    ) -> Result<(), Error> {
        let mut it = Elems::new(input, start, end)?;
        let p = begin_doc(out);
        let mut run = it.it.position();
        while let Some(e) = it.next()? {
            let key = &input[e.key.0..e.key.1];
            let s = match step(node, key) {
                Step::Miss if top && self.inclusion && key == b"_id" => {
                    if self.drop_id {
                        Step::Miss
                    } else {
                        Step::Leaf
                    }
                }
                s => s,
            };
            match (s, self.inclusion) {
                (Step::Miss, false) | (Step::Leaf, true) => continue, // kept in the run
                (Step::Miss, true) | (Step::Leaf, false) => {
                    out.copy(input, run, e.at);
                    run = e.value.1;
                }
                (Step::Inner(child), _) => {
                    out.copy(input, run, e.at);
                    run = e.value.1;
                    let mark = out.len();
                    out.copy(input, e.at, e.value.0);
                    if !self.value(input, e.t, e.value, child, out)? {
                        out.truncate(mark);
                    }
                }
            }
        }
        out.copy(input, run, it.last);
        end_doc(out, p);
        Ok(())
    }

    /// Writes the value of type `t` projected at `node` (paths continue below it); false when
    /// the field is dropped (a scalar under inclusion).
    fn value(
        &self,
        input: &[u8],
        t: u8,
        v: (usize, usize),
        node: &Node,
        out: &mut impl Out,
    ) -> Result<bool, Error> {
        match t {
            DOCUMENT => self.doc(input, v.0, v.1, node, false, out)?,
            ARRAY => self.array(input, v, node, out, 0)?,
            _ if self.inclusion => return Ok(false),
            _ => out.copy(input, v.0, v.1),
        }
        Ok(true)
    }

    /// An array at `node`: each document projected, each nested array likewise (`depth`
    /// counts the arrays around it), every other element dropped under inclusion and kept
    /// under exclusion.
    fn array(
        &self,
        input: &[u8],
        v: (usize, usize),
        node: &Node,
        out: &mut impl Out,
        depth: usize,
    ) -> Result<(), Error> {
        if depth > MAX_ARRAY_NESTING {
            return Err(too_deep(v.0));
        }
        let mut it = Elems::new(input, v.0, v.1)?;
        let p = begin_doc(out);
        let mut i = 0;
        while let Some(e) = it.next()? {
            if e.t == DOCUMENT {
                out.push(DOCUMENT);
                push_index_key(out, i);
                self.doc(input, e.value.0, e.value.1, node, false, out)?;
            } else if e.t == ARRAY {
                out.push(ARRAY);
                push_index_key(out, i);
                self.array(input, e.value, node, out, depth + 1)?;
            } else if self.inclusion {
                continue;
            } else {
                out.push(e.t);
                push_index_key(out, i);
                out.copy(input, e.value.0, e.value.1);
            }
            i += 1;
        }
        end_doc(out, p);
        Ok(())
    }
}

impl Redaction {
    /// Writes the redacted element: `t` is the original type, `v` the original value.
    fn replace(&self, input: &[u8], t: u8, key: &[u8], v: (usize, usize), out: &mut impl Out) {
        match &self.mac {
            None => {
                out.push(NULL);
                out.put(key);
                out.push(0);
            }
            Some(mac) => {
                let mut m = mac.clone();
                m.update(&[t]);
                m.update(&input[v.0..v.1]);
                out.push(STRING);
                out.put(key);
                out.push(0);
                out.put(&65u32.to_le_bytes());
                for b in m.finalize().into_bytes() {
                    out.push(HEX[(b >> 4) as usize]);
                    out.push(HEX[(b & 15) as usize]);
                }
                out.push(0);
            }
        }
    }

    /// Writes type, key and value of an element with redaction at `s`.
    fn element(
        &self,
        input: &[u8],
        t: u8,
        key: &[u8],
        v: (usize, usize),
        s: Step<'_>,
        out: &mut impl Out,
    ) -> Result<(), Error> {
        match s {
            Step::Miss => {
                out.push(t);
                out.put(key);
                out.push(0);
                out.copy(input, v.0, v.1);
            }
            Step::Leaf => self.replace(input, t, key, v, out),
            Step::Inner(node) => {
                out.push(t);
                out.put(key);
                out.push(0);
                self.value(input, t, v, node, out)?;
            }
        }
        Ok(())
    }

    fn value(
        &self,
        input: &[u8],
        t: u8,
        v: (usize, usize),
        node: &Node,
        out: &mut impl Out,
    ) -> Result<(), Error> {
        match t {
            DOCUMENT => self.doc(input, v.0, v.1, node, out),
            ARRAY => self.array(input, v, node, out, 0),
            _ => {
                out.copy(input, v.0, v.1);
                Ok(())
            }
        }
    }

    /// An array at `node`: documents redacted, nested arrays likewise, the rest kept.
    fn array(
        &self,
        input: &[u8],
        v: (usize, usize),
        node: &Node,
        out: &mut impl Out,
        depth: usize,
    ) -> Result<(), Error> {
        if depth > MAX_ARRAY_NESTING {
            return Err(too_deep(v.0));
        }
        let mut it = Elems::new(input, v.0, v.1)?;
        let p = begin_doc(out);
        let mut run = it.it.position();
        while let Some(e) = it.next()? {
            if e.t == DOCUMENT {
                out.copy(input, run, e.value.0);
                run = e.value.1;
                self.doc(input, e.value.0, e.value.1, node, out)?;
            } else if e.t == ARRAY {
                out.copy(input, run, e.value.0);
                run = e.value.1;
                self.array(input, e.value, node, out, depth + 1)?;
            }
        }
        out.copy(input, run, it.last);
        end_doc(out, p);
        Ok(())
    }

    fn doc(
        &self,
        input: &[u8],
        start: usize,
        end: usize,
        node: &Node,
        out: &mut impl Out,
    ) -> Result<(), Error> {
        let mut it = Elems::new(input, start, end)?;
        let p = begin_doc(out);
        let mut run = it.it.position();
        while let Some(e) = it.next()? {
            let key = &input[e.key.0..e.key.1];
            match step(node, key) {
                Step::Miss => continue,
                s => {
                    out.copy(input, run, e.at);
                    run = e.value.1;
                    self.element(input, e.t, key, e.value, s, out)?;
                }
            }
        }
        out.copy(input, run, it.last);
        end_doc(out, p);
        Ok(())
    }
}

/// Where a dotted field name (an `updatedFields` key, a `removedFields` entry) meets a trie:
/// numeric components that name no child are array indexes and stay at the same node.
fn match_dotted<'n>(root: &'n Node, name: &[u8]) -> Step<'n> {
    let mut node = root;
    for comp in name.split(|&b| b == b'.') {
        if node.leaf {
            return Step::Leaf;
        }
        match node.child(comp) {
            Some(c) => node = c,
            None if !comp.is_empty() && comp.iter().all(u8::is_ascii_digit) => {}
            None => return Step::Miss,
        }
    }
    if node.leaf {
        Step::Leaf
    } else if std::ptr::eq(node, root) {
        Step::Miss
    } else {
        Step::Inner(node)
    }
}

impl Shape {
    /// A shape from its parts.
    pub fn new(projection: Option<Projection>, redaction: Option<Redaction>) -> Shape {
        let document_key = projection.as_ref().map(|proj| {
            let mut keep_id = proj.clone();
            keep_id.drop_id = false;
            keep_id.root.children.retain(|(k, _)| &**k != b"_id");
            let p = if !keep_id.inclusion && keep_id.root.children.is_empty() {
                None
            } else {
                Some(keep_id)
            };
            Box::new(Shape {
                projection: p,
                redaction: redaction.clone(),
                document_key: None,
            })
        });
        Shape {
            projection,
            redaction,
            document_key,
        }
    }

    /// The projection, if any.
    pub fn projection(&self) -> Option<&Projection> {
        self.projection.as_ref()
    }

    /// The redaction, if any.
    pub fn redaction(&self) -> Option<&Redaction> {
        self.redaction.as_ref()
    }

    /// True when the shape changes nothing.
    pub fn is_identity(&self) -> bool {
        self.projection.is_none() && self.redaction.is_none()
    }

    /// Appends the projected and redacted form of the whole document `input` to `out`;
    /// `scratch` holds the projection's result when both apply.
    pub fn document(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let end = doc_bounds(input, 0, input.len())?;
        if end != input.len() {
            return Err(Error::new(
                ErrorKind::BadLength,
                end,
                "trailing bytes after the document",
            ));
        }
        self.doc_at(input, 0, end, out, scratch)
    }

    fn doc_at(
        &self,
        input: &[u8],
        start: usize,
        end: usize,
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), Error> {
        match (&self.projection, &self.redaction) {
            (None, None) => {
                let e = doc_bounds(input, start, end)?;
                out.extend_from_slice(&input[start..e]);
            }
            (Some(p), None) => p.doc(input, start, end, &p.root, true, out)?,
            (None, Some(r)) => r.doc(input, start, end, &r.root, out)?,
            (Some(p), Some(r)) => {
                scratch.clear();
                p.doc(input, start, end, &p.root, true, scratch)?;
                r.doc(scratch, 0, scratch.len(), &r.root, out)?;
            }
        }
        Ok(())
    }

    /// Where the byte at `at` of the shaped form of the document `input` (what
    /// [`Shape::document`] writes) came from in `input`: exact for a byte the pass copied; for
    /// one it made up (a length, an array index, a redacted value), where the element it
    /// belongs to starts. Runs the pass again, tracing it (for error reports, so the shaped
    /// document's fault is reported where it is in the caller's input).
    pub fn source_offset(&self, input: &[u8], at: usize) -> usize {
        let end = input.len();
        match (&self.projection, &self.redaction) {
            (None, None) => at,
            (Some(p), None) => {
                let mut t = Traced::new(input);
                match p.doc(input, 0, end, &p.root, true, &mut t) {
                    Ok(()) => t.origin(at),
                    Err(_) => 0,
                }
            }
            (None, Some(r)) => {
                let mut t = Traced::new(input);
                match r.doc(input, 0, end, &r.root, &mut t) {
                    Ok(()) => t.origin(at),
                    Err(_) => 0,
                }
            }
            (Some(p), Some(r)) => {
                let mut projected = Traced::new(input);
                if p.doc(input, 0, end, &p.root, true, &mut projected).is_err() {
                    return 0;
                }
                let mut t = Traced::new(&projected.buf);
                match r.doc(&projected.buf, 0, projected.buf.len(), &r.root, &mut t) {
                    Ok(()) => projected.origin(t.origin(at)),
                    Err(_) => 0,
                }
            }
        }
    }

    /// Rewrites a cursor document (`{ id, ns, firstBatch | nextBatch, ... }`): every document
    /// of its batch array shaped (as a change event with `events`), every other field copied.
    pub fn cursor(
        &self,
        input: &[u8],
        events: bool,
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let mut it = Elems::new(input, 0, input.len())?;
        let p = begin_doc(out);
        while let Some(e) = it.next()? {
            let key = &input[e.key.0..e.key.1];
            out.extend_from_slice(&input[e.at..e.value.0]);
            if e.t == ARRAY && (key == b"firstBatch" || key == b"nextBatch") {
                let mut docs = Elems::new(input, e.value.0, e.value.1)?;
                let q = begin_doc(out);
                while let Some(d) = docs.next()? {
                    out.extend_from_slice(&input[d.at..d.value.0]);
                    if d.t == DOCUMENT && events {
                        let ev = &input[d.value.0..d.value.1];
                        self.change_event(ev, out, scratch)?;
                    } else if d.t == DOCUMENT {
                        self.doc_at(input, d.value.0, d.value.1, out, scratch)?;
                    } else {
                        out.extend_from_slice(&input[d.value.0..d.value.1]);
                    }
                }
                end_doc(out, q);
            } else {
                out.extend_from_slice(&input[e.value.0..e.value.1]);
            }
        }
        end_doc(out, p);
        Ok(())
    }

    /// Rewrites a change event: the shape applies to `fullDocument`,
    /// `fullDocumentBeforeChange`, `documentKey` (whose `_id` is never dropped), the matching
    /// keys of `updateDescription.updatedFields` (a path `card.number` matches an updated field
    /// `card`, applying the rest of the path inside its value, `card.number` itself and
    /// `card.number.x`; numeric components are array indexes) and the entries of
    /// `updateDescription.removedFields` the projection drops. Every other field is copied.
    pub fn change_event(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let mut it = Elems::new(input, 0, input.len())?;
        let p = begin_doc(out);
        while let Some(e) = it.next()? {
            let key = &input[e.key.0..e.key.1];
            out.extend_from_slice(&input[e.at..e.value.0]);
            match key {
                b"fullDocument" | b"fullDocumentBeforeChange" if e.t == DOCUMENT => {
                    self.doc_at(input, e.value.0, e.value.1, out, scratch)?;
                }
                b"documentKey" if e.t == DOCUMENT => {
                    self.document_key(input, e.value, out, scratch)?;
                }
                b"updateDescription" if e.t == DOCUMENT => {
                    self.update_description(input, e.value, out)?;
                }
                _ => out.extend_from_slice(&input[e.value.0..e.value.1]),
            }
        }
        end_doc(out, p);
        Ok(())
    }

    fn document_key(
        &self,
        input: &[u8],
        v: (usize, usize),
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), Error> {
        match &self.document_key {
            None => self.doc_at(input, v.0, v.1, out, scratch),
            Some(s) => s.doc_at(input, v.0, v.1, out, scratch),
        }
    }

    fn update_description(
        &self,
        input: &[u8],
        v: (usize, usize),
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let mut it = Elems::new(input, v.0, v.1)?;
        let p = begin_doc(out);
        while let Some(e) = it.next()? {
            let key = &input[e.key.0..e.key.1];
            out.extend_from_slice(&input[e.at..e.value.0]);
            match key {
                b"updatedFields" if e.t == DOCUMENT => self.updated_fields(input, e.value, out)?,
                b"removedFields" if e.t == ARRAY => self.removed_fields(input, e.value, out)?,
                _ => out.extend_from_slice(&input[e.value.0..e.value.1]),
            }
        }
        end_doc(out, p);
        Ok(())
    }

    fn updated_fields(
        &self,
        input: &[u8],
        v: (usize, usize),
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let mut it = Elems::new(input, v.0, v.1)?;
        let p = begin_doc(out);
        let mut one = Vec::new();
        while let Some(e) = it.next()? {
            let key = &input[e.key.0..e.key.1];
            // The projection's verdict on this field, into `one` as a single element.
            one.clear();
            let kept = match &self.projection {
                None => {
                    one.extend_from_slice(&input[e.value.0..e.value.1]);
                    true
                }
                Some(proj) => match (match_dotted(&proj.root, key), proj.inclusion) {
                    (Step::Miss, false) | (Step::Leaf, true) => {
                        one.extend_from_slice(&input[e.value.0..e.value.1]);
                        true
                    }
                    (Step::Miss, true) | (Step::Leaf, false) => false,
                    (Step::Inner(n), _) => proj.value(input, e.t, e.value, n, &mut one)?,
                },
            };
            if !kept {
                continue;
            }
            let s = match &self.redaction {
                None => Step::Miss,
                Some(r) => match_dotted(&r.root, key),
            };
            match &self.redaction {
                Some(r) => r.element(&one, e.t, key, (0, one.len()), s, out)?,
                None => {
                    out.push(e.t);
                    out.extend_from_slice(key);
                    out.push(0);
                    out.extend_from_slice(&one);
                }
            }
        }
        end_doc(out, p);
        Ok(())
    }

    fn removed_fields(
        &self,
        input: &[u8],
        v: (usize, usize),
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let mut it = Elems::new(input, v.0, v.1)?;
        let p = begin_doc(out);
        let mut i = 0;
        while let Some(e) = it.next()? {
            if let (Some(proj), STRING) = (&self.projection, e.t) {
                let name = &input[e.value.0 + 4..e.value.1 - 1];
                let keep = match (match_dotted(&proj.root, name), proj.inclusion) {
                    (Step::Miss, inc) => !inc,
                    (Step::Leaf, inc) => inc,
                    (Step::Inner(_), _) => true,
                };
                if !keep {
                    continue;
                }
            }
            out.push(e.t);
            push_index_key(out, i);
            out.extend_from_slice(&input[e.value.0..e.value.1]);
            i += 1;
        }
        end_doc(out, p);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(fields: &[(&str, &[u8], u8)]) -> Vec<u8> {
        let mut out = vec![0, 0, 0, 0];
        for (k, v, t) in fields {
            out.push(*t);
            out.extend_from_slice(k.as_bytes());
            out.push(0);
            out.extend_from_slice(v);
        }
        out.push(0);
        let l = out.len() as u32;
        out[..4].copy_from_slice(&l.to_le_bytes());
        out
    }

    fn i32v(n: i32) -> Vec<u8> {
        n.to_le_bytes().to_vec()
    }

    fn shape(fields: &[(&str, bool)]) -> Shape {
        Shape::new(Projection::new(fields).unwrap(), None)
    }

    fn run(s: &Shape, d: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        s.document(d, &mut out, &mut Vec::new()).unwrap();
        out
    }

    #[test]
    fn project_inclusion_keeps_id_and_order() {
        let d = doc(&[
            ("_id", &i32v(1), 0x10),
            ("a", &i32v(2), 0x10),
            ("b", &i32v(3), 0x10),
        ]);
        let s = shape(&[("b", true)]);
        assert_eq!(
            run(&s, &d),
            doc(&[("_id", &i32v(1), 0x10), ("b", &i32v(3), 0x10)])
        );
        let s = shape(&[("b", true), ("_id", false)]);
        assert_eq!(run(&s, &d), doc(&[("b", &i32v(3), 0x10)]));
        let s = shape(&[("a", false)]);
        assert_eq!(
            run(&s, &d),
            doc(&[("_id", &i32v(1), 0x10), ("b", &i32v(3), 0x10)])
        );
    }

    #[test]
    fn project_through_arrays() {
        let inner = doc(&[("x", &i32v(1), 0x10), ("y", &i32v(2), 0x10)]);
        let arr = doc(&[("0", &inner, 3), ("1", &i32v(7), 0x10)]);
        let d = doc(&[("a", &arr, 4)]);
        let inc = shape(&[("a.x", true), ("_id", false)]);
        let want_inner = doc(&[("x", &i32v(1), 0x10)]);
        assert_eq!(
            run(&inc, &d),
            doc(&[("a", &doc(&[("0", &want_inner, 3)]), 4)])
        );
        let exc = shape(&[("a.x", false)]);
        let want_inner = doc(&[("y", &i32v(2), 0x10)]);
        assert_eq!(
            run(&exc, &d),
            doc(&[(
                "a",
                &doc(&[("0", &want_inner, 3), ("1", &i32v(7), 0x10)]),
                4
            )])
        );
    }

    #[test]
    fn project_spec_errors() {
        assert!(Projection::new(&[("a", true), ("b", false)])
            .unwrap_err()
            .to_string()
            .contains("'b'"));
        assert!(Projection::new(&[("a", true), ("a.b", true)])
            .unwrap_err()
            .to_string()
            .contains("collision"));
        assert!(Projection::new(&[("a.$", true)]).is_err());
        assert!(Projection::new(&[("a..b", true)]).is_err());
        assert!(Projection::new(&[]).unwrap().is_none());
    }

    #[test]
    fn project_redact_hmac_and_null() {
        let d = doc(&[("a", &i32v(5), 0x10), ("b", &i32v(6), 0x10)]);
        let r = Redaction::new(&["a"], RedactWith::HmacSha256(b"k".to_vec())).unwrap();
        let s = Shape::new(None, r);
        let out = run(&s, &d);
        let hex = hmac_hex(b"k", &[0x10, 5, 0, 0, 0]);
        let mut sv = 65u32.to_le_bytes().to_vec();
        sv.extend_from_slice(hex.as_bytes());
        sv.push(0);
        assert_eq!(out, doc(&[("a", &sv, 2), ("b", &i32v(6), 0x10)]));
        let s = Shape::new(None, Redaction::new(&["b"], RedactWith::Null).unwrap());
        assert_eq!(run(&s, &d), doc(&[("a", &i32v(5), 0x10), ("b", &[], 0x0A)]));
    }

    #[test]
    fn project_change_event_updated_fields() {
        let card = doc(&[("number", &i32v(4111), 0x10), ("exp", &i32v(12), 0x10)]);
        let uf = doc(&[
            ("card", &card, 3),
            ("card.number", &i32v(1), 0x10),
            ("name", &i32v(2), 0x10),
        ]);
        let ud = doc(&[("updatedFields", &uf, 3)]);
        let ev = doc(&[("updateDescription", &ud, 3)]);
        let s = Shape::new(
            None,
            Redaction::new(&["card.number"], RedactWith::Null).unwrap(),
        );
        let mut out = Vec::new();
        s.change_event(&ev, &mut out, &mut Vec::new()).unwrap();
        let card2 = doc(&[("number", &[], 0x0A), ("exp", &i32v(12), 0x10)]);
        let uf2 = doc(&[
            ("card", &card2, 3),
            ("card.number", &[], 0x0A),
            ("name", &i32v(2), 0x10),
        ]);
        let want = doc(&[("updateDescription", &doc(&[("updatedFields", &uf2, 3)]), 3)]);
        assert_eq!(out, want);
    }
}
