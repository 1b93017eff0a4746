'use strict'

// `mongodump --archive` input for `dump`: the format of mongo-tools' common/archive (spec.md
// there). After a magic number (6d e2 99 81), a header document and one metadata document per
// collection up to a terminator (ff ff ff ff), the archive is a sequence of blocks, each a
// namespace header `{db, collection, EOF, CRC}` followed by that namespace's documents up to a
// terminator (none when EOF is true). Blocks of different collections interleave. This reader
// yields the documents of the selected namespaces as one concatenated BSON stream, so the
// transcoder after it sees what a `.bson` file holds; `origin(index, offset)` maps a position in
// that stream back to the archive's bytes for error messages.

const MAGIC = Buffer.from([0x6d, 0xe2, 0x99, 0x81])
const TERMINATOR = -1
const REMEMBER = 1 << 16
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

function isArchive(head) {
  return head.length >= 4 && head.subarray(0, 4).equals(MAGIC)
}

/** Strings and booleans of a small document (headers and metadata). */
function fields(doc) {
  const out = {}
  // ./bson is required here, not at the top: `dump` requires this module for isArchive on every
  // run, and reads an archive's documents only when the input is one.
  const { T, forEachElement } = require('./bson')
  forEachElement(doc, 0, (type, ks, ke, vs) => {
    const k = doc.toString('utf8', ks, ke)
    if (type === T.STRING) out[k] = doc.toString('utf8', vs + 4, vs + 3 + doc.readInt32LE(vs))
    else if (type === T.BOOLEAN) out[k] = doc[vs] === 1
  })
  return out
}

function archiveError(msg, offset) {
  const e = new Error(`mongodump archive: ${msg} at byte offset ${offset}`)
  e.archiveError = true
  return e
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
 * filled from the prelude before the first chunk is yielded.
 */
function readArchive(input, include) {
  const match = nsMatcher(include)
  const starts = new Map()
  const namespaces = []
  let index = 0
  let outOffset = 0

  async function* chunks() {
    let buf = Buffer.alloc(0)
    let base = 0 // archive offset of buf[0]
    let pos = 0
    let state = 'magic'
    let ns = null
    let keep = false
    let out = []
    const it = input[Symbol.asyncIterator]()
    let done = false
    const more = async () => {
      if (done) return false
      const r = await it.next()
      if (r.done) {
        done = true
        return false
      }
      buf = pos === buf.length ? r.value : Buffer.concat([buf.subarray(pos), r.value])
      base += pos
      pos = 0
      return true
    }
    const need = async (n) => {
      while (buf.length - pos < n) if (!(await more())) return false
      return true
    }
    // The next document, or TERMINATOR; null at a clean end of input.
    const next = async () => {
      if (!(await need(4))) {
        if (buf.length - pos === 0) return null
        throw archiveError('truncated length prefix', base + pos)
      }
      const len = buf.readInt32LE(pos)
      if (len === TERMINATOR) {
        pos += 4
        return TERMINATOR
      }
      if (len < 5 || len > MAX_DOCUMENT_BYTES) throw archiveError(`impossible document length ${len}`, base + pos)
      if (!(await need(len))) throw archiveError(`input ends inside a document of ${len} bytes`, base + pos)
      const at = base + pos
      const doc = buf.subarray(pos, pos + len)
      pos += len
      return { doc, at }
    }
    const flush = () => {
      if (out.length === 0) return null
      const c = out.length === 1 ? Buffer.from(out[0]) : Buffer.concat(out)
      out = []
      return c
    }

    if (!(await need(4)) || !isArchive(buf.subarray(pos, pos + 4))) throw archiveError('no archive magic number', 0)
    pos += 4
    state = 'header'
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
          if (state !== 'block') throw archiveError(`input ends in the ${state === 'data' ? `data of ${ns}` : state}`, base + pos)
          break
        }
        if (state === 'header') {
          if (d === TERMINATOR) throw archiveError('terminator instead of the header', base + pos - 4)
          const h = fields(d.doc)
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
          const m = fields(d.doc)
          namespaces.push({ ns: `${m.db}.${m.collection}`, type: m.type || '' })
        } else if (state === 'block') {
          if (d === TERMINATOR) throw archiveError('terminator instead of a namespace header', base + pos - 4)
          const h = fields(d.doc)
          ns = `${h.db}.${h.collection}`
          keep = match === null || match(ns)
          state = h.EOF === true ? 'eof' : 'data'
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
            starts.set(index, [d.at, outOffset])
            if (starts.size > REMEMBER) starts.delete(index - REMEMBER)
            index++
            outOffset += d.doc.length
            out.push(d.doc)
            if (out.length >= 1024) yield flush()
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

module.exports = { readArchive, isArchive, MAGIC }
