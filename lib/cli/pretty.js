'use strict'

// --pretty: re-indents compact JSON text as MongoDB's tools do (Go's json.Indent with a tab:
// one member or element per line, `"key": value`, empty `{}` and `[]` kept on one line). It
// works on the bytes the transcoder wrote, so number text and escapes are kept exactly, and it
// is a streaming state machine: chunks may end anywhere, even inside a string. Newlines outside
// any value (between NDJSON documents) pass through.

const NL = 0x0a
const TAB = 0x09
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const SPACE = 0x20

class Indenter {
  constructor() {
    this.depth = 0
    this.inString = false
    this.escape = false
    this.pendingOpen = false // just wrote `{` or `[`: the next byte decides `{}` or a new line
  }

  /** Re-indents one chunk; returns a Buffer. */
  push(chunk) {
    let out = Buffer.allocUnsafe(chunk.length * 2 + 64)
    let o = 0
    const need = (n) => {
      if (o + n > out.length) {
        const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, o + n + 64))
        out.copy(bigger, 0, 0, o)
        out = bigger
      }
    }
    const newline = () => {
      need(1 + this.depth)
      out[o++] = NL
      out.fill(TAB, o, o + this.depth)
      o += this.depth
    }
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]
      if (this.inString) {
        need(1)
        out[o++] = c
        if (this.escape) this.escape = false
        else if (c === BACKSLASH) this.escape = true
        else if (c === QUOTE) this.inString = false
        continue
      }
      if (this.pendingOpen) {
        this.pendingOpen = false
        if (c === 0x7d || c === 0x5d) {
          this.depth--
          need(1)
          out[o++] = c
          continue
        }
        newline()
      }
      switch (c) {
        case 0x7b: // {
        case 0x5b: // [
          need(1)
          out[o++] = c
          this.depth++
          this.pendingOpen = true
          break
        case 0x7d: // }
        case 0x5d: // ]
          this.depth--
          newline()
          need(1)
          out[o++] = c
          break
        case COMMA:
          need(1)
          out[o++] = c
          if (this.depth > 0) newline()
          break
        case COLON:
          need(2)
          out[o++] = c
          out[o++] = SPACE
          break
        case QUOTE:
          need(1)
          out[o++] = c
          this.inString = true
          break
        default:
          need(1)
          out[o++] = c
      }
    }
    return out.subarray(0, o)
  }
}

/** Re-indents a complete JSON text (or NDJSON) in one call. */
function prettyJSON(text) {
  const b = typeof text === 'string' ? Buffer.from(text) : text
  return new Indenter().push(b)
}

module.exports = { Indenter, prettyJSON }
