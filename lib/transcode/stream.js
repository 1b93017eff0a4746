'use strict'

/**
 * `createTranscodeStream(options)`: a Node `Transform` from raw concatenated BSON documents
 * (the mongodump `.bson` format, any chunking) to NDJSON or one JSON array.
 *
 * Per incoming chunk the span of complete documents is found by walking the int32 length
 * prefixes and transcoded with one native `toNDJSON` call per sub-batch (no per-document calls);
 * only the incomplete tail of a chunk is copied. Memory is bounded by the largest document plus
 * `concurrency` sub-batches of output (`batchBytes` of BSON each, default 1 MiB, or `chunkSize`
 * when set).
 *
 * With `concurrency: 1` (the default) each sub-batch is transcoded synchronously in `_transform`.
 * With `concurrency: N > 1` up to N sub-batches run at once on the libuv thread pool (the async
 * batch call copies its input first) while the stream goes on reading; their outputs are pushed
 * in input order, and `_transform` waits for a slot when N are in flight. A sub-batch that fails
 * on the pool is run again synchronously, in order, so errors, `skipInvalid` and the documents
 * written before a bad one are exactly those of the synchronous stream.
 *
 * `skipInvalid`: a document whose content is bad is skipped by its declared length. A length
 * that cannot be right (impossible, or its last byte is not 0 and no valid document follows)
 * loses the document boundaries: the stream scans forward for the next plausible document
 * (`_plausibleAt`) and reports the bytes before it as one skipped document (`'skip'` with
 * `bytesSkipped`).
 */

const { Transform } = require('stream')
const native = require('../native')
const { resolveOptions, ownOptions, intOption } = require('../options')
const { transcodeError, rebase } = require('../errors')

/** Default cap on one document's declared length (MongoDB's own limit is 16 MiB). */
const DEFAULT_MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
const DEFAULT_BATCH_BYTES = 1024 * 1024
const NL = 0x0a
const COMMA = 0x2c
const OPEN = Buffer.from('[')
const CLOSE = Buffer.from(']')
const EMPTY_ARRAY = Buffer.from('[]')
const EMPTY = Buffer.alloc(0)

const NDJSON = native.Layout.NdjsonBuffer

/** What `toNDJSON(buf, options)` does (projection / redact: in the same native call). */
function ndjson(buf, o) {
  return native.transcodeBatch(buf, NDJSON, o, o.threads)
}

/** `toNDJSONAsync(buf, options)`: a Promise, shaped and transcoded on the libuv pool. */
function ndjsonAsync(buf, o) {
  return native.transcodeBatchAsync(buf, NDJSON, o, o.threads, false)
}

class TranscodeStream extends Transform {
  constructor(options) {
    // the caller's own properties, each read once
    const o = options == null ? {} : ownOptions(options)
    if (typeof o !== 'object') throw new TypeError('bson2json: options must be an object')
    // validated now (unknown names too, against the stream's and the transcoder's), not on the first chunk
    const resolved = resolveOptions(o, 'stream')
    const format = o.format === undefined ? 'ndjson' : o.format
    if (format !== 'ndjson' && format !== 'array') {
      throw new TypeError(`bson2json: options.format must be 'ndjson' or 'array', got ${String(format)}`)
    }
    const chunkSize = intOption(o, 'chunkSize', 1, Infinity, 0)
    const maxDocumentBytes = intOption(o, 'maxDocumentBytes', 1, Infinity, DEFAULT_MAX_DOCUMENT_BYTES)
    const batchBytes = intOption(o, 'batchBytes', 1, Infinity, chunkSize || DEFAULT_BATCH_BYTES)
    const concurrency = intOption(o, 'concurrency', 1, 256, 1)
    // a null-prototype object: Node reads more names from it (`signal`, `objectMode`, …)
    const streamOptions = Object.create(null)
    streamOptions.highWaterMark = o.highWaterMark
    streamOptions.readableHighWaterMark = o.readableHighWaterMark
    streamOptions.writableHighWaterMark = o.writableHighWaterMark
    super(streamOptions)
    this._opts = resolved
    this._array = format === 'array'
    this._chunkSize = chunkSize
    this._maxDoc = maxDocumentBytes
    this._batchBytes = batchBytes
    this._skipInvalid = o.skipInvalid === true
    this._concurrency = concurrency
    /**
     * Documents handed to transcoding so far (written, skipped, failed or in flight): the next
     * document's global index.
     */
    this._index = 0
    /** Stream byte offset of the first byte not yet consumed (the start of `_pending`). */
    this._offset = 0
    /** Sub-batches on the thread pool, in input order (concurrency > 1). */
    this._jobs = []
    /** A `_transform` callback waiting for a free slot, or `_flush`'s waiting for the last job. */
    this._waiting = null
    this._flushing = null
    /** An error found while jobs were in flight: raised once the jobs before it are out. */
    this._deferred = null
    /** Documents written to the output (array format: for separators). */
    this._written = 0
    this._skipped = 0
    /** Partial document: its bytes so far live in `_pending[0.._have)`. */
    this._pending = null
    this._have = 0
    this._head = Buffer.allocUnsafe(4)
    this._failed = false
    /** `skipInvalid` after a bad length: the scan for the next plausible document, or null. */
    this._resync = null
  }

  /** Documents written so far. */
  get documents() {
    return this._written
  }

  /** Documents skipped (with `skipInvalid`). */
  get skipped() {
    return this._skipped
  }

  /** BSON bytes consumed so far (complete documents). */
  get bytesIn() {
    return this._offset
  }

  _transform(chunk, encoding, callback) {
    if (this._failed) return callback()
    if (!(chunk instanceof Uint8Array)) {
      return callback(new TypeError('bson2json: the transcode stream takes Buffer / Uint8Array chunks'))
    }
    try {
      this._consume(chunk)
    } catch (e) {
      if (this._jobs.length > 0) return this._failAfterJobs(e, callback)
      return this._fail(e, callback)
    }
    if (this._jobs.length >= this._concurrency) this._waiting = callback
    else callback()
  }

  /** Raises `error` once the sub-batches in flight before it have been pushed (or one failed). */
  _failAfterJobs(error, callback) {
    this._failed = true
    this._deferred = { error, callback }
  }

  /** Starts `buf[start..end)` on the thread pool; its output is pushed in order by `_drain`. */
  _startJob(buf, start, end, starts) {
    const job = { slice: buf.subarray(start, end), starts, index: this._index, offset: this._offset, done: false, out: null, error: null }
    this._index += starts.length
    this._offset += end - start
    this._jobs.push(job)
    const settle = (out, error) => {
      job.done = true
      job.out = out
      job.error = error
      this._drain()
    }
    let p
    try {
      p = ndjsonAsync(job.slice, this._opts)
    } catch (e) {
      p = Promise.reject(e) // settled later, like the pool's own errors
    }
    p.then(
      (out) => settle(out, null),
      (e) => settle(null, e),
    )
  }

  /** Pushes finished sub-batches in input order; releases a waiting `_transform` or `_flush`. */
  _drain() {
    const jobs = this._jobs
    while (jobs.length > 0 && jobs[0].done) {
      const job = jobs.shift()
      if (this.destroyed) continue
      if (job.skip !== undefined) {
        this._emitSkip(job.skip)
        continue
      }
      if (job.error === null) {
        this._pushOutput(job.out, job.starts.length)
        this._written += job.starts.length
        continue
      }
      // Run the failed sub-batch again synchronously: the same errors, skips and partial output
      // as the synchronous stream. The stream's counters are this job's start meanwhile.
      const index = this._index
      const offset = this._offset
      this._index = job.index
      this._offset = job.offset
      try {
        this._emitSpanSync(job.slice, 0, job.slice.length, job.starts)
      } catch (e) {
        this._index = job.index + job.starts.length
        this._offset = offset
        // Later sub-batches are dropped; an error found after them is superseded by this one.
        jobs.length = 0
        const callback = this._takeCallback()
        this._failed = true
        this._deferred = null
        this._fail(e, callback)
        return
      }
      this._index = index
      this._offset = offset
    }
    if (jobs.length === 0 && this._deferred !== null) {
      const { error, callback } = this._deferred
      this._deferred = null
      this._fail(error, callback)
      return
    }
    if (this._waiting !== null && jobs.length < this._concurrency) {
      const callback = this._waiting
      this._waiting = null
      callback()
    }
    if (this._flushing !== null && jobs.length === 0) {
      const callback = this._flushing
      this._flushing = null
      this._flush(callback)
    }
  }

  /** The one callback the stream is holding (a waiting `_transform`, a deferred error's, `_flush`'s). */
  _takeCallback() {
    const callbacks = [this._waiting, this._deferred && this._deferred.callback, this._flushing].filter((c) => c !== null)
    this._waiting = null
    this._flushing = null
    if (callbacks.length === 0) return (e) => this.destroy(e)
    for (let i = 1; i < callbacks.length; i++) callbacks[i]()
    return callbacks[0]
  }

  /**
   * Fails the stream only once the consumer has read what was pushed before the error, so the
   * documents before a bad one reach the destination (destroying drops the readable buffer).
   */
  _fail(error, callback) {
    this._failed = true
    const check = () => {
      if (this.readableLength === 0 || this.destroyed) callback(error)
      else setTimeout(check, 2)
    }
    check()
  }

  _flush(callback) {
    if (this._resync !== null && !this._failed) {
      // The input ended while looking for the next document after a bad length: the last
      // candidate may end exactly at the end of the input; otherwise the rest is skipped.
      // What follows a found document may hold another bad length, hence the loop.
      try {
        while (this._resync !== null) {
          const rest = this._resyncFeed(null)
          if (rest !== null) this._consume(rest)
        }
      } catch (e) {
        if (this._jobs.length > 0) return this._failAfterJobs(e, callback)
        return this._fail(e, callback)
      }
    }
    if (this._jobs.length > 0) {
      this._flushing = callback
      return
    }
    if (this._failed) return callback()
    if (this._have > 0) {
      const need = this._pending === null ? 'its length prefix' : `${this._pending.length} bytes`
      return this._fail(transcodeError('BSON_TRUNCATED', `input ends inside a document (${this._have} bytes of ${need})`, this._index, this._offset), callback)
    }
    if (this._array) this.push(this._written === 0 ? EMPTY_ARRAY : CLOSE)
    callback()
  }

  /** A declared document length that cannot be right, or null. */
  _badLength(len) {
    if (len < 5) return `document length ${len} is less than 5`
    if (len > this._maxDoc) return `document length ${len} exceeds maxDocumentBytes ${this._maxDoc}`
    return null
  }

  /** Checks a declared document length; throws at the current index and offset. */
  _checkLength(len) {
    const bad = this._badLength(len)
    if (bad !== null) throw transcodeError('BSON_BAD_LENGTH', bad, this._index, this._offset)
  }

  /** Reports `bytes` bytes at the current position as one skipped document and moves past them. */
  _skipRegion(error, bytes) {
    const event = { index: this._index, offset: typeof error.offset === 'number' ? error.offset : this._offset, error, bytesSkipped: bytes }
    this._index++
    this._offset += bytes
    // With sub-batches in flight, the event waits its turn (their own skips come first).
    if (this._jobs.length > 0) this._jobs.push({ done: true, skip: event, starts: [] })
    else this._emitSkip(event)
  }

  _emitSkip(event) {
    this._skipped++
    this.emit('skip', event)
  }

  /**
   * `skipInvalid` after a length that cannot be right (impossible, or the byte it points at is
   * not a document's 0 terminator): the document boundaries are lost, so the bytes from the bad
   * document on are scanned for the next plausible document (see `_resyncFeed`). `bytes` are the
   * input from the bad document's first byte on.
   */
  _startResync(error, bytes, declared = 0) {
    // `doc`: a complete document whose last byte is wrong; if the scan finds the next document
    // right after it, its length was right and the transcoder's own error is the one reported.
    const doc = declared > 0 ? Buffer.from(bytes.subarray(0, declared)) : null
    this._resync = { error, doc, scan: Buffer.from(bytes), more: [], total: bytes.length, need: 0, pos: 1, dropped: 0 }
  }

  /** The error to report for the skipped bytes, `skipped` long. */
  _resyncError(r, skipped) {
    if (r.doc === null || skipped !== r.doc.length) return r.error
    try {
      ndjson(r.doc, this._opts)
    } catch (e) {
      if (typeof e.index === 'number' && typeof e.offset === 'number') return rebase(e, this._index, this._offset, [0])
    }
    return r.error
  }

  /**
   * Whether a document plausibly starts at `p` of `buf` (the resync scan): a length from 5 to
   * maxDocumentBytes, a valid first element type (or 0 for `{}`), its last byte 0, and the
   * transcoder accepts it; and the next document's length also ends at a 0 byte, unless the
   * input ends exactly after the first (a document nested in the damaged one passes the first
   * test, rarely the second). `single`: the first test only. Returns true, false, or the input
   * length needed to decide (when `final`, the input has ended: false).
   */
  _plausibleAt(buf, p, final, single = false) {
    const n = buf.length
    const doc = (q, full) => {
      if (q + 5 > n) return final ? false : q + 5
      const len = buf.readInt32LE(q)
      if (this._badLength(len) !== null) return false
      const type = buf[q + 4]
      if (full && !(len === 5 ? type === 0 : (type >= 0x01 && type <= 0x13) || type === 0x7f || type === 0xff)) return false
      if (q + len > n) return final ? false : q + len
      if (buf[q + len - 1] !== 0) return false
      if (!full) return true
      try {
        ndjson(buf.subarray(q, q + len), this._opts)
      } catch {
        return false
      }
      return true
    }
    const first = doc(p, true)
    if (first !== true || single) return first
    const end = p + buf.readInt32LE(p)
    if (final && end === n) return true
    return doc(end, false)
  }

  /**
   * Feeds the resync scan `chunk` (null: the input ended). When a plausible document is found,
   * the bytes before it are reported as one skipped document (`'skip'` with `bytesSkipped`) and
   * the input from it on is returned to be consumed as usual; null while still scanning.
   */
  _resyncFeed(chunk) {
    const r = this._resync
    const final = chunk === null
    if (!final && chunk.length > 0) {
      r.more.push(chunk)
      r.total += chunk.length
    }
    if (!final && r.total < r.need) return null // a candidate waits for more input
    if (r.more.length > 0) {
      r.scan = Buffer.concat([r.scan, ...r.more])
      r.more = []
    }
    const buf = r.scan
    let p = r.pos
    for (; p < buf.length; p++) {
      const ok = this._plausibleAt(buf, p, final)
      if (ok === true) {
        this._resync = null
        this._skipRegion(this._resyncError(r, r.dropped + p), r.dropped + p)
        return buf.subarray(p)
      }
      if (ok !== false) {
        // Keep from the undecided candidate on, until `ok` bytes from it are here.
        r.dropped += p
        r.scan = buf.subarray(p)
        r.total = r.scan.length
        r.need = ok - p
        r.pos = 0
        return null
      }
    }
    if (final) {
      this._resync = null
      this._skipRegion(r.error, r.dropped + buf.length)
      return null
    }
    r.dropped += buf.length
    r.scan = EMPTY
    r.total = 0
    r.need = 0
    r.pos = 0
    return null
  }

  _consume(input) {
    let chunk = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength)
    if (this._resync !== null) {
      chunk = this._resyncFeed(chunk)
      if (chunk === null) return
    }
    while (chunk !== null) chunk = this._consumeChunk(chunk)
  }

  /**
   * Consumes one chunk; returns the input to go on with after a resync found the next document
   * (`skipInvalid`), or null when the chunk is consumed.
   */
  _consumeChunk(chunk) {
    let pos = 0
    const n = chunk.length
    // 1. Complete the pending partial document by copying only what it still needs.
    if (this._have > 0) {
      if (this._pending === null) {
        const take = Math.min(4 - this._have, n)
        chunk.copy(this._head, this._have, 0, take)
        this._have += take
        pos = take
        if (this._have < 4) return null
        const len = this._head.readInt32LE(0)
        const bad = this._badLength(len)
        if (bad !== null && this._skipInvalid) {
          this._have = 0
          this._startResync(transcodeError('BSON_BAD_LENGTH', bad, this._index, this._offset), Buffer.concat([this._head, chunk.subarray(pos)]))
          return this._resyncFeed(EMPTY)
        }
        this._checkLength(len)
        this._pending = Buffer.allocUnsafe(len)
        this._head.copy(this._pending, 0, 0, 4)
      }
      const doc = this._pending
      const take = Math.min(doc.length - this._have, n - pos)
      chunk.copy(doc, this._have, pos, pos + take)
      this._have += take
      pos += take
      if (this._have < doc.length) return null
      this._pending = null
      this._have = 0
      if (this._skipInvalid && doc[doc.length - 1] !== 0) {
        this._startResync(this._badEnd(doc.length), Buffer.concat([doc, chunk.subarray(pos)]), doc.length)
        return this._resyncFeed(EMPTY)
      }
      this._emitSpan(doc, 0, doc.length, [0])
    }
    // 2. Walk the complete documents of the chunk, transcoding sub-batches of ~batchBytes.
    const view = chunk
    let start = pos
    let starts = []
    while (pos + 4 <= n) {
      const len = view.readInt32LE(pos)
      const bad = this._badLength(len)
      // skipInvalid: a document whose last byte is not 0 has a wrong length unless a plausible
      // document follows it (then only its last byte is bad: the transcoder reports it).
      if (bad !== null || (this._skipInvalid && pos + len <= n && view[pos + len - 1] !== 0 && this._plausibleAt(view, pos + len, false, true) !== true)) {
        this._emitSpan(view, start, pos, starts)
        if (!this._skipInvalid) this._checkLength(len) // throws with the global index/offset
        this._startResync(bad !== null ? transcodeError('BSON_BAD_LENGTH', bad, this._index, this._offset) : this._badEnd(len), view.subarray(pos), bad !== null ? 0 : len)
        return this._resyncFeed(EMPTY)
      }
      if (pos + len > n) break
      starts.push(pos - start)
      pos += len
      if (pos - start >= this._batchBytes) {
        this._emitSpan(view, start, pos, starts)
        start = pos
        starts = []
      }
    }
    this._emitSpan(view, start, pos, starts)
    // 3. Keep the incomplete tail (a copy: the chunk is not retained).
    const rest = n - pos
    if (rest > 0) {
      this._have = rest
      if (rest < 4) {
        view.copy(this._head, 0, pos, n)
      } else {
        const len = view.readInt32LE(pos)
        this._pending = Buffer.allocUnsafe(len)
        view.copy(this._pending, 0, pos, n)
      }
    }
    return null
  }

  /** The error for a document whose declared length does not end at a 0 byte. */
  _badEnd(len) {
    return transcodeError('BSON_BAD_TERMINATOR', `document length ${len} does not end at a document's 0 terminator`, this._index, this._offset)
  }

  /**
   * Transcodes the documents `buf[start..end)` (their offsets relative to `start` in `starts`)
   * and pushes the output. A bad document: the documents before it are pushed first, then it
   * is skipped (`skipInvalid`) or the error is thrown with stream-global index and offset.
   */
  _emitSpan(buf, start, end, starts) {
    if (this._concurrency > 1 && start < end) this._startJob(buf, start, end, starts)
    else this._emitSpanSync(buf, start, end, starts)
  }

  _emitSpanSync(buf, start, end, starts) {
    while (start < end) {
      const slice = buf.subarray(start, end)
      let out
      try {
        out = ndjson(slice, this._opts)
      } catch (e) {
        if (typeof e.index !== 'number' || typeof e.offset !== 'number') throw e
        const bad = e.index
        if (bad > 0) this._emitSpanSync(buf, start, start + starts[bad], starts.slice(0, bad))
        const badStart = starts[bad]
        const badEnd = bad + 1 < starts.length ? starts[bad + 1] : end - start
        // The documents before it are out: this._index / this._offset now point at the bad one.
        rebase(e, this._index - bad, this._offset - badStart, starts)
        if (!this._skipInvalid) throw e
        this._index++
        this._offset += badEnd - badStart
        this._skipped++
        this.emit('skip', { index: e.index, offset: e.offset, error: e, bytesSkipped: badEnd - badStart })
        start += badEnd
        starts = starts.slice(bad + 1).map((s) => s - badEnd)
        continue
      }
      this._pushOutput(out, starts.length)
      this._index += starts.length
      this._written += starts.length
      this._offset += end - start
      return
    }
  }

  _pushOutput(out, count) {
    if (count === 0) return
    let buf = Buffer.isBuffer(out) ? out : Buffer.from(out.buffer, out.byteOffset, out.byteLength)
    if (this._array) {
      // NDJSON -> array elements: every '\n' becomes ',' (JSON text has no raw newlines),
      // the last one is dropped, and a ',' separates this batch from the previous one.
      for (let i = buf.indexOf(NL); i !== -1; i = buf.indexOf(NL, i + 1)) buf[i] = COMMA
      buf = buf.subarray(0, buf.length - 1)
      this.push(this._written === 0 ? OPEN : Buffer.from(','))
    }
    const size = this._chunkSize
    if (size === 0 || buf.length <= size) {
      this.push(buf)
      return
    }
    for (let i = 0; i < buf.length; i += size) this.push(buf.subarray(i, i + size))
  }
}

/**
 * Creates a Transform stream: raw BSON documents in (any chunk boundaries), JSON text out.
 * @param {import('../index').TranscodeStreamOptions} [options]
 * @returns {TranscodeStream}
 */
function createTranscodeStream(options) {
  return new TranscodeStream(options)
}

module.exports = { createTranscodeStream, TranscodeStream, DEFAULT_MAX_DOCUMENT_BYTES }
