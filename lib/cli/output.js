'use strict'

// Where `dump` and `export` write: `-o FILE` or stdout. Every write is accounted for, so that a
// failed write is never silent and the output left behind is a complete prefix:
//
// - a file, a character device or stdout redirected to either (`> out.json`, `-o /dev/full`) is
//   written with fs.write in a loop that retries short writes; the first error stops the output,
//   and on a regular file the bytes of a document cut short are truncated away (`ftruncate` to
//   the end of the last complete document), so the file holds exactly `documents` documents;
// - a pipe, socket or terminal is written through process.stdout (the kernel takes whole writes).
//
// `documents` counts the documents whose bytes were all written (and, for a file, are in it).

const fs = require('fs')
const { promisify } = require('util')
const { CliError, describeIoError, usage, quoteName } = require('./usage')

const write = promisify(fs.write)
const HIGH_WATER = 4 << 20
const NL = 0x0a

/** NDJSON: the documents ending in `buf[0..end)` and the length of that complete prefix. */
function ndjsonPrefix(buf, end) {
  let docs = 0
  let last = -1
  for (let i = buf.indexOf(NL); i !== -1 && i < end; i = buf.indexOf(NL, i + 1)) {
    docs++
    last = i
  }
  return { docs, bytes: last + 1 }
}

/**
 * --pretty NDJSON: a document ends with a line at column 0 that closes it (`}` or `{}`); its
 * inner lines are indented. The chunk starts at a line start.
 */
function prettyPrefix(buf, end) {
  let docs = 0
  let bytes = 0
  let lineStart = 0
  for (let i = buf.indexOf(NL); i !== -1 && i < end; i = buf.indexOf(NL, i + 1)) {
    const c = buf[lineStart]
    if (c === 0x7d || (c === 0x7b && i - lineStart === 2 && buf[lineStart + 1] === 0x7d)) {
      docs++
      bytes = i + 1
    }
    lineStart = i + 1
  }
  return { docs, bytes }
}

/**
 * Whether a descriptor with this `fstat` may be a terminal (`tty.isatty` then decides): a
 * character device other than Linux's memory devices (major 1: /dev/null, /dev/zero, /dev/full).
 * @param {import('fs').Stats} st
 */
function mayBeTerminal(st) {
  return st.isCharacterDevice() && !(process.platform === 'linux' && st.rdev < 2 ** 32 && st.rdev >>> 8 === 1)
}

function fstatOrNull(fd) {
  try {
    return fs.fstatSync(fd)
  } catch {
    return null
  }
}

/** `stdout`, and the file it is redirected to where the system says (`stdout (/data/out.json)`). */
function stdoutName(direct) {
  if (!direct) return 'stdout'
  try {
    return `stdout (${quoteName(fs.readlinkSync('/proc/self/fd/1'))})`
  } catch {
    return 'stdout'
  }
}

/**
 * The regular file `st` is, among `inputs`, or undefined.
 * @param {import('fs').Stats | null} st
 * @param {{ name: string, st: import('fs').Stats }[]} inputs
 */
function sameFile(st, inputs) {
  if (st === null || !st.isFile()) return undefined
  return inputs.find((i) => i.st.isFile() && i.st.dev === st.dev && i.st.ino === st.ino)
}

/** `fs.statSync` that follows links, or null when there is nothing there (yet). */
function statOrNull(path) {
  try {
    return fs.statSync(path)
  } catch {
    return null
  }
}

class Output {
  /**
   * @param {string|null} path `-o FILE`, or null for stdout
   * @param {'ndjson'|'pretty'|'chunks'} layout how to find document ends inside a chunk cut short
   *   (`chunks`: only at chunk ends, for JSON arrays and CSV, whose cells may hold newlines)
   * @param {{ name: string, st: import('fs').Stats }[]} [inputs] the files the command reads:
   *   an output that is one of them (the same device and inode, through any path, symlink or
   *   hard link; stdout redirected to one with `>>`) is a usage error before anything is opened
   *   for writing (opening it would truncate the input)
   */
  static open(path, layout, inputs = []) {
    let fd = 1
    const input = sameFile(path === null ? fstatOrNull(1) : statOrNull(path), inputs)
    if (input !== undefined) {
      usage(`the output ${path === null ? stdoutName(true) : quoteName(path)} is the input ${quoteName(input.name)}: writing it would destroy the input (write to another file)`)
    }
    if (path !== null) {
      try {
        fd = fs.openSync(path, 'w')
      } catch (e) {
        throw new CliError(`cannot write ${quoteName(path)}: ${describeIoError(e)} (0 documents written)`)
      }
    }
    let st = null
    try {
      st = fs.fstatSync(fd)
    } catch {
      // a closed stdout: process.stdout reports it on the first write
    }
    // tty.isatty, not process.stdout.isTTY: creating process.stdout would make a pipe
    // non-blocking, which a native writer to the descriptor does not expect. A terminal is a
    // character device: stdout to a file or a pipe does not load `tty` (and with it `net` and
    // Node's streams) at all.
    const terminal = path === null && st !== null && mayBeTerminal(st) && require('tty').isatty(fd)
    const direct = st !== null && (st.isFile() || st.isCharacterDevice() || st.isBlockDevice()) && !terminal
    const output = new Output(path, fd, direct, st !== null && st.isFile() ? st.size : null, layout)
    output.terminal = terminal
    output.open = st !== null
    return output
  }

  constructor(path, fd, direct, startSize, layout) {
    this.name = path === null ? stdoutName(direct) : quoteName(path)
    this.fd = fd
    this.ownsFd = path !== null
    this.direct = direct
    this.base = startSize // a regular file: where this run's output starts
    this.layout = layout
    /** Documents completely written. */
    this.documents = 0
    /** Bytes written in complete documents (the output's length after a failure). */
    this.bytes = 0
    /** The first write error, or null. */
    this.error = null
    this.queue = []
    this.queued = 0
    this.busy = false
    this.waiters = []
    this.pending = 0
    /** stdout is a terminal; the descriptor could be examined (fstat). Set by `open`. */
    this.terminal = false
    this.open = true
    /** process.stdout, once the first write needs it (not a file or a device). */
    this.stream = null
  }

  _stream() {
    if (this.stream === null) {
      this.stream = process.stdout
      this.stream.on('error', (e) => this._failed(e))
    }
    return this.stream
  }

  /** Queues `buf`, which completes `docs` documents. Returns false when the caller should wait (`drained()`). */
  write(buf, docs) {
    if (this.error !== null) return false
    if (buf.length === 0) {
      this.documents += docs
      return true
    }
    this.queued += buf.length
    if (this.direct) {
      this.queue.push({ buf, docs })
      this._pump()
    } else {
      this.pending++
      this._stream().write(buf, (e) => {
        this.pending--
        this.queued -= buf.length
        if (e) this._failed(e)
        else if (this.error === null) {
          this.documents += docs
          this.bytes += buf.length
        }
        this._wake()
      })
    }
    return this.queued < HIGH_WATER
  }

  /** Resolves when the queue is below its high-water mark, or the output failed. */
  drained() {
    if (this.queued < HIGH_WATER || this.error !== null) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  _wake() {
    if (this.queued >= HIGH_WATER && this.error === null && !this._idle()) return
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  _idle() {
    return this.direct ? !this.busy && this.queue.length === 0 : this.pending === 0
  }

  _failed(e) {
    if (this.error === null) this.error = e
    this._wake()
  }

  async _pump() {
    if (this.busy) return
    this.busy = true
    while (this.queue.length > 0 && this.error === null) {
      const { buf, docs } = this.queue[0]
      let off = 0
      try {
        while (off < buf.length) off += (await write(this.fd, buf, off, buf.length - off, null)).bytesWritten
      } catch (e) {
        this._cut(buf, off)
        this.error = e
        break
      }
      this.queue.shift()
      this.queued -= buf.length
      this.documents += docs
      this.bytes += buf.length
      this._wake()
    }
    this.queue = []
    this.queued = 0
    this.busy = false
    this._wake()
  }

  /** A write failed after `off` bytes of `buf`: keep the complete documents, drop the rest. */
  _cut(buf, off) {
    if (off === 0) return
    const p = this.layout === 'ndjson' ? ndjsonPrefix(buf, off) : this.layout === 'pretty' ? prettyPrefix(buf, off) : { docs: 0, bytes: 0 }
    this.documents += p.docs
    this.bytes += p.bytes
    this._truncate()
  }

  /** A regular file: cut to this run's complete documents (`bytes` past where it started). */
  _truncate() {
    if (this.base !== null) {
      try {
        fs.ftruncateSync(this.fd, this.base + this.bytes)
      } catch {
        // best effort: the message still says how many documents are complete
      }
    }
  }

  /**
   * Whether a native writer may write to this output's descriptor itself (lib/cli/dump.js):
   * a file or a character device (`direct`), or stdout to a pipe or a socket that nothing has
   * written to through process.stdout; nothing written or queued yet.
   */
  get nativeWritable() {
    const fresh = this.error === null && this.queued === 0 && !this.busy && this.documents === 0 && this.bytes === 0
    return fresh && this.open && (this.direct || (this.stream === null && !this.terminal))
  }

  /**
   * Records what a native writer wrote to the descriptor: `documents` whole documents in
   * `bytes` bytes, then `error` (a failed write, or null). After a failure the file is cut to
   * those documents, as after a failed write of this class's own.
   * @param {number} documents
   * @param {number} bytes
   * @param {Error | null} error
   */
  recordNative(documents, bytes, error) {
    this.documents += documents
    this.bytes += bytes
    if (error !== null) {
      this.error = error
      this._truncate()
    }
  }

  /** Waits for every queued write; closes `-o FILE`. Sets `error` on failure. */
  async finish() {
    while (!this._idle() && this.error === null) await new Promise((resolve) => this.waiters.push(resolve))
    if (this.direct && this.busy) await new Promise((resolve) => this.waiters.push(resolve))
    if (this.ownsFd) {
      const fd = this.fd
      this.ownsFd = false
      try {
        fs.closeSync(fd)
      } catch (e) {
        if (this.error === null) this.error = e
      }
    }
  }

  /** The failure as one message naming the output. */
  describe() {
    return `cannot write ${this.name}: ${describeIoError(this.error)}`
  }

  /** Whether the failure is the reader of a pipe going away (`| head`): a clean exit. */
  get closedByReader() {
    return this.error !== null && this.error.code === 'EPIPE' && !this.direct
  }
}

module.exports = { Output, ndjsonPrefix, prettyPrefix }
