'use strict'

/**
 * The raw-cursor engine shared by `find()` / `aggregate()` (lib/mongo/cursor.js) and `watch()`
 * (lib/mongo/change-stream.js): the initial command and the `getMore` pump, run as
 * `db.command(cmd, { raw: true, session })`, with prefetch, the batch queue between the pump and
 * the consumer, and close/kill.
 *
 * Connections: closing (or leaving a loop early) never cancels an in-flight command, because the
 * driver cancels a command by destroying its pooled connection. `close()` stops the pump, lets the
 * in-flight command finish (bounded: at most `maxAwaitTimeMS` (default 1000) + 2000 ms, after
 * which it is cancelled after all), then kills the server cursor with `killCursors`. Only the
 * caller's own `AbortSignal` cancels a command in flight.
 *
 * Sessions: one explicit session per cursor (the caller's `session`, or one started here and
 * ended on close), so every getMore runs in the session the cursor was created in. On a server
 * that does not support sessions (no `logicalSessionTimeoutMinutes` in its hello) the commands
 * run without one, as the driver's own cursors do; a caller-supplied session there is an error.
 *
 * A subclass provides:
 *   _initialCommand()            the find/aggregate command (called again after a resume)
 *   _accept(reply, isGetMore)    transcodes one reply and queues its batch (via _push); returns
 *                                an Error to end the stream with, or null
 *   _retry(err, isGetMore)       true when a failed command is to be retried by re-running the
 *                                initial command (the cursor is killed first); default false
 *
 * and queues its batches with `_push(item)`, or `_pushOrFold(item, fold)` to fold an item into
 * the newest queued one (change streams coalesce empty batches).
 */

/** Server-side default wait of an awaitData getMore without maxTimeMS. */
const DEFAULT_AWAIT_MS = 1000
/** Slack on top of the getMore's own wait before close() cancels it after all. */
const CLOSE_GRACE_MS = 2000

const { describe, transcodeError } = require('../errors')
const { guardDriver } = require('./driver-guard')

const END = Object.freeze({ end: true })

/**
 * An aggregation pipeline: an array of stage documents (each element read once, by the caller's
 * copy). Shared with watch().
 * @param {unknown} pipeline
 * @param {string} what `aggregate() pipeline` / `watch() pipeline`
 * @returns {object[]} a copy
 */
function checkPipeline(pipeline, what) {
  if (!Array.isArray(pipeline)) throw new TypeError(`bson2json: ${what} must be an array of stages, got ${describe(pipeline, 'object')}`)
  const copy = pipeline.slice()
  for (let i = 0; i < copy.length; i++) {
    const stage = copy[i]
    if (stage === null || typeof stage !== 'object' || Array.isArray(stage) || ArrayBuffer.isView(stage)) {
      throw new TypeError(`bson2json: ${what}[${i}] must be a stage document (an object like { $match: {...} }), got ${describe(stage, 'object')}`)
    }
  }
  return copy
}


function noSessionSupport(err) {
  return err !== null && typeof err === 'object' && err.name === 'MongoCompatibilityError' && /does not support sessions/.test(String(err.message))
}

/**
 * The driver keeps the `$clusterTime` of the last reply in the session and in the topology, and
 * its `signature.hash` (a 20-byte Binary) is a view into that whole reply message: each waiting
 * cursor's session would keep a batch of BSON alive. Copies the 20 bytes so the reply can go.
 * @param {any} holder a ClientSession or the client's Topology (anything with `clusterTime`)
 */
function compactClusterTime(holder) {
  let hash
  try {
    hash = holder && holder.clusterTime && holder.clusterTime.signature && holder.clusterTime.signature.hash
  } catch {
    return
  }
  const b = hash && hash.buffer
  if (b instanceof Uint8Array && b.buffer.byteLength > b.byteLength + 4096) {
    // Not Buffer.from: that takes a slice of the shared pool (64 KiB on Node 24), which the copy
    // would then hold instead; 20 bytes of their own.
    const own = Buffer.allocUnsafeSlow(b.byteLength)
    own.set(b)
    hash.buffer = own
  }
}

/**
 * The error of a server reply that did not arrive within `timeoutMS`: a TimeoutError with code
 * `BSON2JSON_TIMEOUT`, `timeoutMS` and `command` (the command was cancelled and its connection
 * closed).
 * @param {number} ms
 * @param {string} what `find`, `getMore`, …
 */
function timeoutError(ms, what) {
  const e = new Error(`bson2json: no reply from the server to ${what} within timeoutMS (${ms} ms); the command was cancelled`)
  e.name = 'TimeoutError'
  e.code = 'BSON2JSON_TIMEOUT'
  e.timeoutMS = ms
  e.command = what
  return e
}

/**
 * The raw `cursor` document of a command's reply, or a BSON_NOT_A_CURSOR TranscodeError when the
 * reply has none (a server or proxy that answers something else must not end in a TypeError).
 * @param {any} reply the driver's reply with `raw: true` (top-level fields read, documents raw)
 * @returns {Uint8Array}
 */
function replyCursor(reply) {
  const c = reply !== null && typeof reply === 'object' ? reply.cursor : undefined
  if (c instanceof Uint8Array) return c
  const fields = reply !== null && typeof reply === 'object' ? Object.keys(reply).join(', ') : typeof reply
  throw transcodeError('BSON_NOT_A_CURSOR', `the server's reply has no cursor document (${c === undefined ? `its fields: ${fields}` : `cursor is ${describe(c)}`})`, undefined, 0)
}

function abortError(signal, what) {
  const r = signal.reason
  if (r instanceof Error) return r
  const e = new Error(`bson2json: ${what} aborted`)
  e.name = 'AbortError'
  return e
}

class RawCursor {
  /**
   * @param {{ client: any, db: any, prefetch: number, prefetchGiven?: boolean, batchSize?: number,
   *   maxAwaitTimeMS?: number, timeoutMS?: number, session?: any, signal?: AbortSignal, what: string, failure?: Error }} o
   * `timeoutMS`: the longest wait for each server reply (0 or undefined: no bound).
   * `failure`: an argument error of the call that made the cursor; it is what every consumer
   * gets, and nothing is sent (the other fields are then unused).
   * An aborted `signal` ends the consumer with the signal's reason (an `AbortError` when the
   * reason is not an Error), never like the end of the results: a consumer that stopped early
   * must not look complete. `prefetchGiven`: the caller chose `prefetch` (a Readable consumer
   * then keeps it instead of fetching on demand).
   */
  constructor(o) {
    // An argument error found before anything was sent: every consumer fails with it.
    this._failure = o.failure ?? null
    this._client = o.client
    if (o.client !== undefined) guardDriver(o.client) // the driver's zero-length-message spin
    this._db = o.db
    this._prefetch = o.prefetch
    this._prefetchGiven = o.prefetchGiven === true
    this._full = false // a Readable consumer's buffer is full: no getMore but on demand
    this._batchSize = o.batchSize
    this._maxAwaitTimeMS = o.maxAwaitTimeMS
    this._timeoutMS = o.timeoutMS === undefined || o.timeoutMS === 0 ? undefined : o.timeoutMS
    this._userSession = o.session
    this._what = o.what
    this._session = undefined
    this._cursorId = null // bigint once open; 0n when exhausted
    this._getMoreColl = null
    this._queue = []
    this._waiter = null
    this._wake = null
    this._demand = false
    this._inFlight = false
    this._closed = false
    this._closing = null
    this._loop = null
    this._ac = new AbortController()
    this._abortReason = null
    this._lastId = null
    this._signal = o.signal
    if (this._signal) {
      if (this._signal.aborted) {
        this._abortReason = abortError(this._signal, this._what)
        this._ac.abort()
        this._closed = true
        this._closing = Promise.resolve()
      } else {
        this._onAbort = () => {
          this._abortReason = abortError(this._signal, this._what)
          this._ac.abort()
          this.close().catch(() => {})
        }
        this._signal.addEventListener('abort', this._onAbort, { once: true })
      }
    }
  }

  get closed() {
    return this._closed
  }

  // -- hooks (overridden) ------------------------------------------------------------------

  _retry() {
    return false
  }

  // -- pump --------------------------------------------------------------------------------

  _start() {
    if (this._loop === null && !this._closed) {
      this._session = this._userSession || this._client.startSession()
      this._loop = this._run().catch((e) => this._push({ error: e }))
    }
  }

  _wantMore() {
    if (this._demand && this._queue.length === 0) return true
    return !this._full && this._queuedBatches() < this._prefetch
  }

  /** Batches queued for the consumer (an error or the end is not one), counted against `prefetch`. */
  _queuedBatches() {
    let n = 0
    for (const item of this._queue) if (item !== END && item.error === undefined) n++
    return n
  }

  // -- a Readable consumer (stream()) ------------------------------------------------------

  /**
   * Called by stream(): the Readable's own buffer (its `highWaterMark`) is the read-ahead, so
   * unless the caller chose `prefetch`, batches are fetched on demand only, when the Readable
   * asks for more. A slow reader then holds one batch plus the Readable's `highWaterMark`.
   */
  _readableConsumer() {
    if (!this._prefetchGiven) this._prefetch = 0
  }

  /** The Readable's buffer is full (`push` returned false) or has room again (`read()` called). */
  _consumerFull(full) {
    this._full = full
    if (!full) this._poke()
  }

  async _run() {
    while (!this._closed) {
      if (!this._wantMore()) {
        await new Promise((resolve) => {
          this._wake = resolve
        })
        this._wake = null
        continue
      }
      const isGetMore = this._cursorId !== null
      let reply
      this._inFlight = true
      try {
        reply = await this._command(isGetMore ? this._getMoreCommand() : this._initialCommand())
      } catch (err) {
        this._inFlight = false
        if (this._closed) return
        if (!isGetMore && noSessionSupport(err) && this._session && this._session !== this._userSession) {
          // The server has no sessions: run without one, as the driver's own cursors do.
          await this._endSession()
          continue
        }
        if (this._retry(err, isGetMore)) {
          await this._killCursor()
          continue
        }
        this._push({ error: err })
        return
      }
      this._inFlight = false
      // Even after close() the reply is accepted: it carries the cursor id that close() kills.
      let err
      try {
        err = this._accept(reply, isGetMore)
      } catch (e) {
        err = e
      }
      // The raw reply is transcoded: let it go now. The suspended pump would otherwise keep it
      // (a whole batch of BSON) alive while it waits for the consumer.
      reply = undefined
      if (err) {
        this._push({ error: err })
        return
      }
      if (this._cursorId === 0n) {
        this._push(END)
        return
      }
    }
  }

  /** Records the cursor id and (from the first reply) the collection getMore names. */
  _setCursor(id, ns, isGetMore) {
    this._cursorId = id
    this._lastId = id
    if (!isGetMore || this._getMoreColl === null) {
      const s = ns || ''
      const dot = s.indexOf('.')
      if (dot >= 0) this._getMoreColl = s.slice(dot + 1)
      else if (this._getMoreColl === null) this._getMoreColl = s
    }
  }

  _getMoreCommand() {
    const cmd = { getMore: this._cursorId, collection: this._getMoreColl }
    if (this._batchSize !== undefined) cmd.batchSize = this._batchSize
    if (this._maxAwaitTimeMS !== undefined) cmd.maxTimeMS = this._maxAwaitTimeMS
    return cmd
  }

  /**
   * Runs one command. With `timeoutMS`, the wait for its reply (server selection, the write, the
   * whole reply however slowly it trickles in) is bounded: past it the command is cancelled (the
   * driver closes its connection) and fails with a TimeoutError.
   */
  async _command(cmd) {
    let reply
    if (this._timeoutMS === undefined) {
      reply = await this._db.command(cmd, { raw: true, session: this._session, signal: this._ac.signal })
    } else {
      const ac = new AbortController()
      const cancel = () => ac.abort()
      this._ac.signal.addEventListener('abort', cancel, { once: true })
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        ac.abort()
      }, this._timeoutMS)
      try {
        reply = await this._db.command(cmd, { raw: true, session: this._session, signal: ac.signal })
      } catch (e) {
        throw timedOut ? timeoutError(this._timeoutMS, Object.keys(cmd)[0]) : e
      } finally {
        clearTimeout(timer)
        this._ac.signal.removeEventListener('abort', cancel)
      }
    }
    compactClusterTime(this._session)
    compactClusterTime(this._client.topology)
    return reply
  }

  async _killCursor() {
    const id = this._cursorId
    this._cursorId = null
    if (id === null || id === 0n) return
    try {
      await this._db.command({ killCursors: this._getMoreColl, cursors: [id] }, { session: this._session })
    } catch {
      // best effort (spec: killCursors errors are suppressed)
    }
  }

  async _endSession() {
    const s = this._session
    this._session = undefined
    if (s && s !== this._userSession) {
      try {
        await s.endSession()
      } catch {
        // ignore
      }
    }
  }

  // -- queue -------------------------------------------------------------------------------

  _push(item) {
    this._queue.push(item)
    if (this._waiter) this._deliver()
  }

  /**
   * Queues `item`, unless `fold(newest)` folds it into the newest queued item (which it then
   * updates itself and returns true for); a waiting consumer gets the newest item either way.
   * @param {object} item
   * @param {(newest: object) => boolean} fold
   */
  _pushOrFold(item, fold) {
    const newest = this._queue[this._queue.length - 1]
    if (newest !== undefined && newest !== END && newest.error === undefined && fold(newest)) {
      if (this._waiter) this._deliver()
      return
    }
    this._push(item)
  }

  _deliver() {
    const w = this._waiter
    this._waiter = null
    this._demand = false
    const item = this._queue.shift()
    this._poke()
    w(item)
  }

  _poke() {
    if (this._wake) this._wake()
  }

  /** Next queued item (batch, error or end); starts the pump on first use. */
  _take() {
    if (this._failure !== null) return Promise.resolve({ error: this._failure })
    if (this._terminal) return Promise.resolve(this._terminal)
    if (this._closed) return Promise.resolve(this._abortReason ? { error: this._abortReason } : END)
    this._start()
    if (this._queue.length > 0) {
      const item = this._queue.shift()
      this._poke()
      return Promise.resolve(item)
    }
    return new Promise((resolve) => {
      this._waiter = resolve
      this._demand = true
      this._poke()
    })
  }

  // -- close -------------------------------------------------------------------------------

  /**
   * Stops fetching, lets an in-flight command finish (bounded), kills the server cursor
   * (killCursors, awaited) and ends the session it started. Idempotent.
   */
  close() {
    if (this._closing) return this._closing
    this._closed = true
    if (this._signal && this._onAbort) this._signal.removeEventListener('abort', this._onAbort)
    this._closing = (async () => {
      this._poke()
      if (this._loop) {
        if (this._inFlight && !this._ac.signal.aborted) {
          const bound = (this._maxAwaitTimeMS === undefined ? DEFAULT_AWAIT_MS : this._maxAwaitTimeMS) + CLOSE_GRACE_MS
          let timer
          const timedOut = await Promise.race([
            this._loop.then(() => false),
            new Promise((resolve) => {
              timer = setTimeout(() => resolve(true), bound)
            }),
          ])
          clearTimeout(timer)
          if (timedOut) this._ac.abort()
        }
        try {
          await this._loop
        } catch {
          // reported through the queue
        }
      }
      await this._killCursor()
      this._queue.length = 0
      this._afterClose()
      if (this._waiter) {
        const w = this._waiter
        this._waiter = null
        w(this._abortReason ? { error: this._abortReason } : END)
      }
      await this._endSession()
    })()
    return this._closing
  }

  _afterClose() {}
}

module.exports = { RawCursor, END, noSessionSupport, checkPipeline, replyCursor }
