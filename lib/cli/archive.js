'use strict'

// `mongodump --archive` input for `dump`: the format of mongo-tools' common/archive (spec.md
// there). After a magic number (6d e2 99 81), a header document and one metadata document per
// collection up to a terminator (ff ff ff ff), the archive is a sequence of blocks, each a
// namespace header `{db, collection, EOF, CRC}` followed by that namespace's documents up to a
// terminator (none when EOF is true). Blocks of different collections interleave; each
// collection ends with its EOF block, whose CRC is the CRC-64-ECMA of all its documents. This
// reader yields the documents of the selected namespaces as one concatenated BSON stream, so the
// transcoder after it sees what a `.bson` file holds; `origin(index, offset)` maps a position in
// that stream back to the archive's bytes for error messages.
//
// Nothing is taken for complete that is not: the input must end after a block, with every
// collection of the prelude closed by its EOF block (as mongorestore requires; time-series
// views excepted, whose data is their buckets collection's), and each selected collection's CRC
// must match. Bytes are queued as they arrive and each document is cut out of the queue once
// (a 16 MiB document in 16 KiB gzip chunks is one copy, not a thousand), and yielded in chunks
// of at most ~1 MiB (or one larger document), so memory is bounded by the largest document.

const MAGIC = Buffer.from([0x6d, 0xe2, 0x99, 0x81])
const TERMINATOR = -1
const REMEMBER = 1 << 16
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
/** Documents are yielded in chunks of about this many bytes (one larger document on its own). */
const CHUNK_BYTES = 1 << 20

function isArchive(head) {
  return head.length >= 4 && head.subarray(0, 4).equals(MAGIC)
}

function archiveError(msg, offset) {
  const e = new Error(`mongodump archive: ${msg} at byte offset ${offset}`)
  e.archiveError = true
  return e
}

/** Strings, booleans and int64s (as BigInt) of a small document (headers and metadata). */
function fields(doc, at) {
  const out = {}
  // ./bson is required here, not at the top: `dump` requires this module for isArchive on every
  // run, and reads an archive's documents only when the input is one.
  const { T, forEachElement } = require('./bson')
  try {
    forEachElement(doc, 0, (type, ks, ke, vs) => {
      const k = doc.toString('utf8', ks, ke)
      if (type === T.STRING) out[k] = doc.toString('utf8', vs + 4, vs + 3 + doc.readInt32LE(vs))
      else if (type === T.BOOLEAN) out[k] = doc[vs] === 1
      else if (type === T.INT64) out[k] = doc.readBigUInt64LE(vs)
    })
  } catch (e) {
    throw archiveError(`a malformed header document (${e.message})`, at)
  }
  return out
}

/** The collection type in a metadata document's `metadata` (Extended JSON text), or ''. */
function metadataType(m) {
  try {
    const t = JSON.parse(m.metadata).type
    return typeof t === 'string' ? t : ''
  } catch {
    return ''
  }
}

// CRC-64-ECMA as mongo-tools computes it (Go's hash/crc64 with the ECMA table: reflected,
// inverted before and after), on two 32-bit halves, eight bytes a step (slicing-by-8: table k
// gives a byte's contribution k bytes further on). The tests compare it with a plain BigInt one.
const CRC_LO = new Uint32Array(8 * 256)
const CRC_HI = new Uint32Array(8 * 256)
for (let i = 0; i < 256; i++) {
  let lo = i
  let hi = 0
  for (let k = 0; k < 8; k++) {
    const odd = lo & 1
    lo = ((lo >>> 1) | ((hi & 1) << 31)) >>> 0
    hi >>>= 1
    if (odd) {
      lo = (lo ^ 0xd7870f42) >>> 0
      hi = (hi ^ 0xc96c5795) >>> 0
    }
  }
  CRC_LO[i] = lo
  CRC_HI[i] = hi
}
for (let t = 1; t < 8; t++) {
  for (let i = 0; i < 256; i++) {
    const lo = CRC_LO[(t - 1) * 256 + i]
    const hi = CRC_HI[(t - 1) * 256 + i]
    const j = lo & 0xff
    CRC_LO[t * 256 + i] = (((lo >>> 8) | (hi << 24)) ^ CRC_LO[j]) >>> 0
    CRC_HI[t * 256 + i] = ((hi >>> 8) ^ CRC_HI[j]) >>> 0
  }
}

/** A running CRC-64: `update(bytes)`, then `value()` as an unsigned BigInt. */
class Crc64 {
  constructor() {
    this.lo = 0xffffffff
    this.hi = 0xffffffff
  }

  update(buf) {
    let lo = this.lo
    let hi = this.hi
    let i = 0
    const n8 = buf.length - (buf.length % 8)
    for (; i < n8; i += 8) {
      lo ^= buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24)
      hi ^= buf[i + 4] | (buf[i + 5] << 8) | (buf[i + 6] << 16) | (buf[i + 7] << 24)
      const a = 7 * 256 + (lo & 0xff)
      const b = 6 * 256 + ((lo >>> 8) & 0xff)
      const c = 5 * 256 + ((lo >>> 16) & 0xff)
      const d = 4 * 256 + (lo >>> 24)
      const e = 3 * 256 + (hi & 0xff)
      const f = 2 * 256 + ((hi >>> 8) & 0xff)
      const g = 256 + ((hi >>> 16) & 0xff)
      const h = hi >>> 24
      lo = CRC_LO[a] ^ CRC_LO[b] ^ CRC_LO[c] ^ CRC_LO[d] ^ CRC_LO[e] ^ CRC_LO[f] ^ CRC_LO[g] ^ CRC_LO[h]
      hi = CRC_HI[a] ^ CRC_HI[b] ^ CRC_HI[c] ^ CRC_HI[d] ^ CRC_HI[e] ^ CRC_HI[f] ^ CRC_HI[g] ^ CRC_HI[h]
    }
    for (; i < buf.length; i++) {
      const t = (lo ^ buf[i]) & 0xff
      lo = ((lo >>> 8) | (hi << 24)) ^ CRC_LO[t]
      hi = (hi >>> 8) ^ CRC_HI[t]
    }
    this.lo = lo >>> 0
    this.hi = hi >>> 0
  }

  value() {
    return (BigInt(~this.hi >>> 0) << 32n) | BigInt(~this.lo >>> 0)
  }
}

/**
 * The input's bytes as a queue of chunks: `need(n)` reads until n bytes are queued, `take(n)`
 * cuts them out (a view of one chunk, or one concatenation of the pieces).
 */
class ByteQueue {
  constructor(input) {
    this.it = input[Symbol.asyncIterator]()
    this.chunks = []
    this.length = 0
    this.offset = 0 // archive offset of the first queued byte
    this.done = false
  }

  async need(n) {
    while (this.length < n) {
      if (this.done) return false
      const r = await this.it.next()
      if (r.done) {
        this.done = true
        return false
      }
      if (r.value.length === 0) continue
      this.chunks.push(r.value)
      this.length += r.value.length
    }
    return true
  }

  int32() {
    const c = this.chunks[0]
    if (c.length >= 4) return c.readInt32LE(0)
    return this.peek(4).readInt32LE(0)
  }

  peek(n) {
    const b = this.take(n)
    this.chunks.unshift(b)
    this.length += n
    this.offset -= n
    return b
  }

  take(n) {
    let out
    const c = this.chunks[0]
    if (c.length >= n) {
      out = c.subarray(0, n)
      if (c.length === n) this.chunks.shift()
      else this.chunks[0] = c.subarray(n)
    } else {
      out = Buffer.allocUnsafe(n)
      let at = 0
      while (at < n) {
        const d = this.chunks[0]
        const k = Math.min(d.length, n - at)
        d.copy(out, at, 0, k)
        at += k
        if (k === d.length) this.chunks.shift()
        else this.chunks[0] = d.subarray(k)
      }
    }
    this.length -= n
    this.offset += n
    return out
  }
}

/** A matcher for --nsInclude patterns (`db.coll`, `*` matches any run of characters). */
function nsMatcher(patterns) {
  if (patterns.length === 0) return null
  const res = patterns.map((p) => new RegExp(`^${p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`))
  return (ns) => res.some((r) => r.test(ns))
}

/**
 * Reads an archive from `input` (an async iterable of Buffers, starting with the magic).
 * `include`: --nsInclude patterns. Returns `{ chunks, origin, namespaces }`; `namespaces` is
 * filled from the prelude before the first chunk is yielded. `chunks` throws (an Error with
 * `archiveError: true`, or the input's own error) after yielding every whole document before
 * the fault.
 */
function readArchive(input, include) {
  const match = nsMatcher(include)
  const starts = new Map()
  const namespaces = []
  let index = 0
  let outOffset = 0

  async function* chunks() {
    const q = new ByteQueue(input)
    let state = 'header'
    let ns = null
    let keep = false
    let out = []
    let outBytes = 0
    /** namespace → { closed, crc (a Crc64 while selected) } */
    const colls = new Map()

    // The next document, or TERMINATOR; null at a clean end of input.
    const next = async () => {
      if (!(await q.need(4))) {
        if (q.length === 0) return null
        throw archiveError('truncated length prefix', q.offset)
      }
      const len = q.int32()
      if (len === TERMINATOR) {
        q.take(4)
        return TERMINATOR
      }
      if (len < 5 || len > MAX_DOCUMENT_BYTES) throw archiveError(`impossible document length ${len}`, q.offset)
      if (!(await q.need(len))) throw archiveError(`input ends inside a document of ${len} bytes`, q.offset)
      const at = q.offset
      return { doc: q.take(len), at }
    }
    const flush = () => {
      if (out.length === 0) return null
      const c = out.length === 1 ? out[0] : Buffer.concat(out, outBytes)
      out = []
      outBytes = 0
      return c
    }

    if (!(await q.need(4)) || !isArchive(q.peek(4))) throw archiveError('no archive magic number', 0)
    q.take(4)
    try {
      yield* blocks()
    } catch (e) {
      const c = flush() // the documents before the error are written first
      if (c !== null) yield c
      throw e
    }
    const c = flush()
    if (c !== null) yield c

    async function* blocks() {
      for (;;) {
        const d = await next()
        if (d === null) {
          if (state !== 'block') throw archiveError(`input ends in the ${state === 'data' ? `data of ${ns}` : state === 'eof' ? `end of ${ns}` : state}`, q.offset)
          const open = [...colls].filter(([, s]) => !s.closed).map(([n]) => n)
          if (open.length > 0) throw archiveError(`input ends before the end of ${open.join(', ')} (the archive is truncated)`, q.offset)
          return
        }
        if (state === 'header') {
          if (d === TERMINATOR) throw archiveError('terminator instead of the header', q.offset - 4)
          const h = fields(d.doc, d.at)
          if (h.version !== undefined && h.version !== '0.1') throw archiveError(`unknown archive version '${h.version}'`, d.at)
          state = 'prelude'
        } else if (state === 'prelude') {
          if (d === TERMINATOR) {
            state = 'block'
            if (match === null) {
              const data = namespaces.filter((n) => n.type !== 'view')
              if (data.length > 1) {
                const e = new Error(
                  `mongodump archive holds ${data.length} collections (${data.map((n) => n.ns).join(', ')}): choose with --nsInclude DB.COLLECTION ('*' matches any run of characters)`,
                )
                e.usage = true
                throw e
              }
            }
            continue
          }
          const m = fields(d.doc, d.at)
          const entry = { ns: `${m.db}.${m.collection}`, type: metadataType(m) }
          namespaces.push(entry)
          // mongorestore waits for every collection's EOF block but a time-series view's
          if (entry.type !== 'timeseries') colls.set(entry.ns, { closed: false, crc: null })
        } else if (state === 'block') {
          if (d === TERMINATOR) throw archiveError('terminator instead of a namespace header', q.offset - 4)
          const h = fields(d.doc, d.at)
          ns = `${h.db}.${h.collection}`
          keep = match === null || match(ns)
          let s = colls.get(ns)
          if (s === undefined) colls.set(ns, (s = { closed: false, crc: null }))
          if (s.closed) throw archiveError(`a block of ${ns} after its end`, d.at)
          if (h.EOF === true) {
            s.closed = true
            if (keep && typeof h.CRC === 'bigint') {
              const crc = (s.crc ?? new Crc64()).value()
              if (crc !== h.CRC) throw archiveError(`the CRC of ${ns}'s documents does not match its end block (the archive is corrupt)`, d.at)
            }
            state = 'eof'
          } else {
            if (keep && s.crc === null) s.crc = new Crc64()
            state = 'data'
          }
        } else if (state === 'eof') {
          if (d !== TERMINATOR) throw archiveError(`no terminator after the end of ${ns}`, d.at)
          state = 'block'
        } else {
          if (d === TERMINATOR) {
            state = 'block'
            const c = flush()
            if (c !== null) yield c
            continue
          }
          if (keep) {
            colls.get(ns).crc.update(d.doc)
            starts.set(index, [d.at, outOffset])
            if (starts.size > REMEMBER) starts.delete(index - REMEMBER)
            index++
            outOffset += d.doc.length
            if (outBytes > 0 && outBytes + d.doc.length > CHUNK_BYTES) yield flush()
            out.push(d.doc)
            outBytes += d.doc.length
            if (outBytes >= CHUNK_BYTES) yield flush()
          }
        }
      }
    }
  }

  function origin(i, offset) {
    const s = starts.get(i)
    return s === undefined ? null : s[0] + (offset - s[1])
  }

  return { chunks: chunks(), origin, namespaces }
}

module.exports = { readArchive, isArchive, MAGIC, Crc64 }
