'use strict'

// --fields on a dump: frames the concatenated documents of a byte stream and replaces each by
// its projection (lib/cli/fields.js). A document the projection cannot read is passed on
// unchanged, and from a bad length prefix on everything is, so the transcoder after it reports
// the error with its code exactly as without --fields. `origin(index, offset)` turns an index
// and an offset of the projected stream back into the input's byte offset: exact inside a
// document passed unchanged, the document's first byte otherwise.

const { projectRaw } = require('./fields')

const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024 // the transcode stream's default cap
const REMEMBER = 1 << 16 // documents whose offsets are kept for error messages

function projectChunks(input, tree) {
  const starts = new Map() // index -> [input offset, projected offset, passed unchanged]
  let index = 0
  let inOffset = 0
  let outOffset = 0
  const note = (len, outLen, unchanged) => {
    starts.set(index, [inOffset, outOffset, unchanged])
    if (starts.size > REMEMBER) starts.delete(index - REMEMBER)
    index++
    inOffset += len
    outOffset += outLen
  }

  async function* chunks() {
    let pending = Buffer.alloc(0)
    let raw = false // after a bad length prefix: pass the rest through
    for await (const c of input) {
      if (raw) {
        yield c
        continue
      }
      let buf = pending.length === 0 ? c : Buffer.concat([pending, c])
      const out = []
      let pos = 0
      while (pos + 4 <= buf.length) {
        const len = buf.readInt32LE(pos)
        if (len < 5 || len > MAX_DOCUMENT_BYTES) {
          raw = true
          starts.set(index, [inOffset, outOffset, true])
          break
        }
        if (pos + len > buf.length) break
        const doc = buf.subarray(pos, pos + len)
        let p
        try {
          p = projectRaw(doc, tree)
        } catch {
          p = null
        }
        out.push(p === null ? doc : p)
        note(len, p === null ? len : p.length, p === null)
        pos += len
      }
      if (raw) {
        out.push(buf.subarray(pos))
        pending = Buffer.alloc(0)
      } else {
        pending = Buffer.from(buf.subarray(pos)) // a copy: the chunk is not retained
      }
      buf = null
      if (out.length > 0) yield out.length === 1 ? out[0] : Buffer.concat(out)
    }
    if (pending.length > 0) {
      starts.set(index, [inOffset, outOffset, true])
      yield pending // truncated: the transcoder reports it
    }
  }

  function origin(i, offset) {
    const s = starts.get(i)
    if (s === undefined) return null
    return s[2] ? s[0] + (offset - s[1]) : s[0]
  }

  return { chunks: chunks(), origin }
}

module.exports = { projectChunks }
