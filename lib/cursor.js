'use strict'

/**
 * `find()` / `aggregate()` cursors that stay raw: the commands run as
 * `db.command({find|aggregate ...}, {raw: true, session})` + `getMore`, and every batch is
 * transcoded by ONE native call (a string[] per batch, or one NDJSON Buffer per batch).
 * The next getMore is in flight while the consumer handles the current batch (`prefetch`
 * batches at most are buffered), and the server cursor is killed when the consumer stops early.
 */

const { resolveDriverOptions, BASE_KEYS } = require('./options')
const { loadBackend } = require('./backend')
const { RawCursor } = require('./raw-cursor')

// Batch layouts of the backend's `transcodeCursor` (the addon's `BatchLayout` enum).
const { NdjsonBuffer: LAYOUT_NDJSON, List: LAYOUT_LIST } = loadBackend().binding.BatchLayout
const NL = 0x0a
const COMMA = 0x2c
const COMMA_BUF = Buffer.from(',')
const OPEN_BUF = Buffer.from('[')

let native = null
function binding() {
  if (native === null) {
    const b = loadBackend()
    if (typeof b.binding.transcodeCursor !== 'function') {
      throw new Error('bson2json: find()/aggregate() need transcodeCursor from the native addon')
    }
    native = b.binding
  }
  return native
}

const FIND_OPTIONS = ['sort', 'projection', 'limit', 'skip', 'hint', 'maxTimeMS', 'collation', 'comment', 'let', 'allowDiskUse', 'min', 'max', 'returnKey', 'showRecordId', 'readConcern']
const AGG_OPTIONS = ['allowDiskUse', 'maxTimeMS', 'hint', 'collation', 'comment', 'let', 'readConcern', 'bypassDocumentValidation']

/** The option names find / aggregate accept (anything else is a TypeError). */
const CURSOR_KEYS = [...BASE_KEYS, 'batchSize', 'maxAwaitTimeMS', 'prefetch', 'session', 'signal', 'enableUtf8Validation']
const FIND_KEYS = new Set([...CURSOR_KEYS, ...FIND_OPTIONS])
const AGG_KEYS = new Set([...CURSOR_KEYS, ...AGG_OPTIONS])

function resolveCollection(coll) {
  if (!coll || typeof coll.collectionName !== 'string' || typeof coll.dbName !== 'string' || !coll.client) {
    throw new TypeError('bson2json: expected a driver Collection (collectionName, dbName, client)')
  }
  return { client: coll.client, db: coll.client.db(coll.dbName), name: coll.collectionName }
}

class JsonCursor extends RawCursor {
  constructor(collection, command, options) {
    const c = resolveCollection(collection)
    const p = options.prefetch === undefined ? 1 : options.prefetch
    if (!Number.isInteger(p) || p < 0) throw new RangeError(`bson2json: options.prefetch must be an integer >= 0, got ${String(p)}`)
    // The driver's BSON options for this collection and its js-bson major, under the call's.
    const o = resolveDriverOptions(collection, options, command.find !== undefined ? FIND_KEYS : AGG_KEYS)
    super({
      client: c.client,
      db: c.db,
      prefetch: p,
      batchSize: options.batchSize,
      maxAwaitTimeMS: options.maxAwaitTimeMS,
      session: options.session,
      signal: options.signal,
      what: 'cursor',
      reportAbort: false,
    })
    this._cmd = command
    this._o = o
    this._getMoreColl = c.name
    this._layout = 0 // decided by the first consumer
    this._terminal = null
  }

  /** Server cursor id (bigint) once the first reply arrived; 0n when exhausted. */
  get id() {
    return this._lastId
  }

  _use(layout) {
    if (this._layout === 0) this._layout = layout
    else if (this._layout !== layout) throw new Error('bson2json: a cursor is consumed either as strings or as NDJSON, not both')
  }

  _initialCommand() {
    return this._cmd
  }

  _accept(reply, isGetMore) {
    const b = binding().transcodeCursor(reply.cursor, this._layout, this._o.flags, this._o.maxDepth, this._o.maxOutputBytes)
    this._setCursor(b.id, b.ns, isGetMore)
    if (b.count > 0) this._push({ docs: b.docs, count: b.count })
    return null
  }

  /** Next batch item of the chosen layout, or null at the end (errors are thrown after close). */
  async _nextBatch(layout) {
    this._use(layout)
    const item = await this._take()
    if (item.docs !== undefined) return item
    this._terminal = item
    await this.close()
    if (item.error) throw item.error
    return null
  }

  /** One `string[]` per server batch. */
  async *batches() {
    try {
      for (;;) {
        const b = await this._nextBatch(LAYOUT_LIST)
        if (b === null) return
        yield b.docs
      }
    } finally {
      await this.close()
    }
  }

  /** One NDJSON Buffer per server batch (every document followed by `\n`). */
  async *ndjson() {
    try {
      for (;;) {
        const b = await this._nextBatch(LAYOUT_NDJSON)
        if (b === null) return
        yield b.docs
      }
    } finally {
      await this.close()
    }
  }

  /** Async iterator of JSON strings, one per document. */
  async *[Symbol.asyncIterator]() {
    try {
      for (;;) {
        const b = await this._nextBatch(LAYOUT_LIST)
        if (b === null) return
        for (const s of b.docs) yield s
      }
    } finally {
      await this.close()
    }
  }

  /** All documents as JSON strings. */
  async toArray() {
    const out = []
    for await (const docs of this.batches()) for (const s of docs) out.push(s)
    return out
  }

  /**
   * A byte Readable: NDJSON (default) or one JSON array. Destroying it (for example when the HTTP
   * client goes away) closes the cursor (killCursors).
   * @param {{ format?: 'ndjson' | 'array', highWaterMark?: number }} [options]
   */
  stream(options = {}) {
    const { Readable } = require('node:stream')
    const format = options.format === undefined ? 'ndjson' : options.format
    if (format !== 'ndjson' && format !== 'array') throw new TypeError(`bson2json: stream format must be 'ndjson' or 'array', got ${String(format)}`)
    const self = this
    // Both formats come from the NDJSON Buffer of each batch: for an array its newlines become
    // commas (JSON text has no raw newline), so no per-document strings are made and re-encoded.
    const layout = LAYOUT_NDJSON
    let started = false
    let reading = false
    let any = false
    const readable = new Readable({
      highWaterMark: options.highWaterMark,
      read() {
        if (reading) return
        reading = true
        const step = () => {
          self._nextBatch(layout).then(
            (b) => {
              let more
              if (b === null) {
                if (format === 'array') this.push(started ? ']' : '[]')
                reading = false
                this.push(null)
                return
              }
              if (format === 'ndjson') more = this.push(b.docs)
              else {
                const body = b.docs
                for (let i = body.indexOf(NL); i !== -1; i = body.indexOf(NL, i + 1)) body[i] = COMMA
                const head = started ? (any ? COMMA_BUF : null) : OPEN_BUF
                started = true
                any = true
                if (head !== null) this.push(head)
                more = this.push(body.subarray(0, body.length - 1))
              }
              if (more) step()
              else reading = false
            },
            (e) => {
              reading = false
              this.destroy(e)
            },
          )
        }
        step()
      },
      destroy(err, cb) {
        self.close().then(
          () => cb(err),
          () => cb(err),
        )
      },
    })
    readable.contentType = format === 'ndjson' ? 'application/x-ndjson' : 'application/json'
    return readable
  }

  /**
   * Pipes the cursor into a writable (an `http.ServerResponse`, a file, …). Sets `Content-Type`
   * when the destination has `setHeader` and headers are not sent yet.
   */
  pipe(destination, options = {}) {
    const s = this.stream(options)
    if (destination && typeof destination.setHeader === 'function' && !destination.headersSent && typeof destination.getHeader === 'function' && destination.getHeader('content-type') === undefined) {
      destination.setHeader('content-type', s.contentType)
    }
    if (destination && typeof destination.once === 'function') {
      // client went away before the end: stop the cursor
      destination.once('close', () => {
        if (!s.readableEnded) s.destroy()
      })
    }
    return s.pipe(destination, options.end === undefined ? undefined : { end: options.end })
  }
}

function pick(target, options, keys) {
  for (const k of keys) if (options[k] !== undefined) target[k] = options[k]
  return target
}

/**
 * `find` returning JSON text. `options`: dialect, utf8, maxDepth, maxOutputBytes, batchSize,
 * prefetch (default 1), session, signal, and the find options sort, projection, limit, skip, …
 */
function find(collection, filter = {}, options = {}) {
  const c = resolveCollection(collection)
  const cmd = { find: c.name, filter }
  if (options.batchSize !== undefined) cmd.batchSize = options.batchSize
  pick(cmd, options, FIND_OPTIONS)
  return new JsonCursor(collection, cmd, options)
}

/** `aggregate` returning JSON text; same options as {@link find} plus allowDiskUse etc. */
function aggregate(collection, pipeline = [], options = {}) {
  if (!Array.isArray(pipeline)) throw new TypeError('bson2json: aggregate() pipeline must be an array')
  const c = resolveCollection(collection)
  const cmd = { aggregate: c.name, pipeline, cursor: options.batchSize === undefined ? {} : { batchSize: options.batchSize } }
  pick(cmd, options, AGG_OPTIONS)
  return new JsonCursor(collection, cmd, options)
}

module.exports = { find, aggregate, JsonCursor }
