'use strict'

/**
 * `find()` / `aggregate()` cursors that stay raw: the commands run as
 * `db.command({find|aggregate ...}, {raw: true, session})` + `getMore`, and every batch is
 * transcoded by ONE native call (a string[] per batch, or one NDJSON Buffer per batch).
 * The next getMore is in flight while the consumer handles the current batch (`prefetch`
 * batches at most are buffered; a `stream()` fetches only while its Readable has room), and the
 * server cursor is killed when the consumer stops early.
 */

const native = require('../native')
const { resolveDriverOptions, intOption, ownOptions } = require('../options')
const { serverNamesOf } = require('../option-table')
const { describe, argumentError } = require('../errors')
const { pipeline } = require('node:stream')
const { RawCursor, checkPipeline, replyCursor } = require('./raw-cursor')
const { cursorReadable } = require('./readable')

const { NdjsonBuffer: LAYOUT_NDJSON, List: LAYOUT_LIST } = native.Layout
const NL = 0x0a
const COMMA = 0x2c
const COMMA_BUF = Buffer.from(',')
const OPEN_BUF = Buffer.from('[')

/** The options find / aggregate send to the server as fields of the command (lib/option-table.js). */
const FIND_OPTIONS = serverNamesOf('find')
const AGG_OPTIONS = serverNamesOf('aggregate')

function resolveCollection(coll) {
  if (!coll || typeof coll.collectionName !== 'string' || typeof coll.dbName !== 'string' || !coll.client) {
    throw new TypeError('bson2json: expected a driver Collection (collectionName, dbName, client)')
  }
  return { client: coll.client, db: coll.client.db(coll.dbName), name: coll.collectionName }
}

/**
 * The engine options of a find/aggregate cursor, and its resolved transcode options: every
 * argument checked (a TypeError/RangeError otherwise).
 */
function prepare(collection, command, options) {
  const c = resolveCollection(collection)
  const p = options.prefetch === undefined ? 1 : options.prefetch
  if (!Number.isInteger(p) || p < 0) throw new RangeError(`bson2json: options.prefetch must be an integer >= 0, got ${describe(p, 'number')}`)
  // The driver's BSON options for this collection and its js-bson major, under the call's.
  // find's `projection` goes to the server (the command); the client-side projection of the
  // results is `clientProjection` in both find and aggregate (lib/shape.js).
  if (command.find === undefined && options.projection !== undefined) {
    const e = new TypeError('bson2json: aggregate() has no projection option: project in the pipeline ($project) or on the client (clientProjection)')
    e.code = 'ERR_INVALID_ARG_VALUE'
    throw e
  }
  const o = resolveDriverOptions(collection, options, command.find !== undefined ? 'find' : 'aggregate')
  return {
    o,
    getMoreColl: c.name,
    engine: {
      client: c.client,
      db: c.db,
      prefetch: p,
      prefetchGiven: options.prefetch !== undefined,
      batchSize: options.batchSize,
      maxAwaitTimeMS: options.maxAwaitTimeMS,
      timeoutMS: intOption(options, 'timeoutMS', 0, Infinity, 0),
      session: options.session,
      signal: options.signal,
      what: 'cursor',
    },
  }
}

class JsonCursor extends RawCursor {
  /**
   * @param {any} collection
   * @param {object | null} command
   * @param {object | null} options
   * @param {Error} [failure] an argument error of find()/aggregate(): the cursor fails every
   *   consumer with it, as with a server error (nothing is sent)
   */
  constructor(collection, command, options, failure) {
    let p = null
    if (failure === undefined) {
      try {
        p = prepare(collection, command, options)
      } catch (e) {
        failure = argumentError(e)
      }
    }
    super(p === null ? { failure, what: 'cursor' } : p.engine)
    this._cmd = command
    this._o = p === null ? null : p.o
    this._getMoreColl = p === null ? null : p.getMoreColl
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
    // shaped (clientProjection, redact) in the same native call
    const b = native.transcodeCursor(replyCursor(reply), this._layout, this._o)
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
    options = ownOptions(options) || {}
    let format = options.format === undefined ? 'ndjson' : options.format
    if (format !== 'ndjson' && format !== 'array') {
      // a format from a request's data: the stream fails with it, as the cursor's other argument errors
      if (this._failure === null) this._failure = argumentError(new TypeError(`bson2json: options.format must be 'ndjson' or 'array', got ${describe(format, 'string')}`))
      format = 'ndjson'
    }
    // Both formats come from the NDJSON Buffer of each batch: for an array its newlines become
    // commas (JSON text has no raw newline), so no per-document strings are made and re-encoded.
    let started = false
    const readable = cursorReadable(this, {
      highWaterMark: options.highWaterMark,
      next: async () => {
        const b = await this._nextBatch(LAYOUT_NDJSON)
        if (b === null) return null
        if (format === 'ndjson') return [b.docs]
        const body = b.docs
        for (let i = body.indexOf(NL); i !== -1; i = body.indexOf(NL, i + 1)) body[i] = COMMA
        const head = started ? COMMA_BUF : OPEN_BUF
        started = true
        return [head, body.subarray(0, body.length - 1)]
      },
      end: () => (format === 'array' ? [started ? ']' : '[]'] : []),
    })
    readable.contentType = format === 'ndjson' ? 'application/x-ndjson' : 'application/json'
    return readable
  }

  /**
   * Pipes the cursor into a writable and handles every error on both sides; returns the
   * destination. On an HTTP response (anything with `setHeader` and `headersSent`): sets
   * `Content-Type` if unset; when the cursor fails before the headers are sent, answers `500`
   * with `{"error": "query failed", "code": code}` (the server's code, no message: see
   * answer500), or calls `options.onError(err, res)` with the full error, which then answers;
   * after, destroys the response (the client sees a cut connection, never a body that
   * looks complete) and calls `onError` if given. When the destination closes first (a client
   * that went away), the cursor is closed (killCursors). On any other writable, an error destroys
   * it with that error, as `stream.pipeline` does, and `onError(err, destination)` is called.
   * @param {import('node:stream').Writable} destination
   * @param {{ format?: 'ndjson' | 'array', highWaterMark?: number, end?: boolean,
   *   onError?: (err: Error, destination: any) => void }} [options]
   */
  pipe(destination, options = {}) {
    if (destination === null || typeof destination !== 'object' || typeof destination.write !== 'function' || typeof destination.on !== 'function') {
      throw new TypeError(`bson2json: pipe() destination must be a writable stream, got ${describe(destination, 'object')}`)
    }
    if (options === null || typeof options !== 'object') throw new TypeError(`bson2json: pipe() options must be an object, got ${describe(options, 'object')}`)
    options = ownOptions(options)
    const onError = options.onError
    if (onError !== undefined && typeof onError !== 'function') {
      throw new TypeError(`bson2json: options.onError must be a function, got ${describe(onError, 'function')}`)
    }
    const { format, end } = options
    // No read-ahead by default: the next batch is fetched when the destination has taken the last
    // (its own buffer and, for a socket, the kernel's cover the fetch), so a slow client holds one
    // batch. `highWaterMark` buys read-ahead.
    const highWaterMark = options.highWaterMark === undefined ? 0 : options.highWaterMark
    const s = this.stream({ format, highWaterMark })
    const http = typeof destination.setHeader === 'function' && 'headersSent' in destination
    pipeSafely(s, destination, { http, end: end !== false, onError, contentType: s.contentType })
    return destination
  }
}

/** Calls the caller's `onError`; one that throws must not take the process down. */
function report(onError, err, destination) {
  if (onError === undefined) return false
  try {
    onError(err, destination)
  } catch (e) {
    if (typeof destination.destroy === 'function' && !destination.destroyed) destination.destroy()
    process.emitWarning(`bson2json: pipe() onError threw: ${e && e.message ? e.message : String(e)}`, { code: 'BSON2JSON_ON_ERROR' })
  }
  return true
}

/**
 * The code a 500 body may carry: the server's numeric code (`2` BadValue, `13` Unauthorized), or
 * bson2json's own (`BSON_*` for a corrupt document, `ERR_*` for an argument error, `BSON2JSON_TIMEOUT`); null for
 * anything else (a network error's `ECONNREFUSED` says where the database is not).
 */
function publicCode(err) {
  const code = err !== null && typeof err === 'object' ? err.code : undefined
  if (typeof code === 'number' && Number.isInteger(code)) return code
  if (typeof code === 'string' && /^(BSON2JSON|BSON|ERR)_[A-Z0-9_]+$/.test(code)) return code
  return null
}

/**
 * The default answer of a cursor that failed before the response's headers were sent:
 * `500 {"error":"query failed","code":…}`, and no message text. A server's message can quote the
 * command (a filter with another user's data), a driver's names the database's address; the
 * full error goes to `onError`, which answers instead (docs/reliability.md shows one that logs it).
 */
function answer500(res, err) {
  const body = JSON.stringify({ error: 'query failed', code: publicCode(err) })
  try {
    res.statusCode = 500
    res.setHeader('content-type', 'application/json')
    res.setHeader('content-length', Buffer.byteLength(body))
    res.end(body)
  } catch {
    res.destroy()
  }
}

/**
 * `source.pipe(destination)` with an error path on both sides (see JsonCursor#pipe).
 * @param {import('node:stream').Readable} source
 * @param {any} destination
 * @param {{ http: boolean, end: boolean, onError?: Function, contentType?: string }} o
 */
function pipeSafely(source, destination, o) {
  if (!o.http && o.end) {
    // stream.pipeline: an error on either side destroys both (the destination with the error);
    // pipeline's own listeners keep it from being unhandled.
    pipeline(source, destination, (err) => {
      if (err) report(o.onError, err, destination)
    })
    return
  }
  let failed = false
  const fail = (err) => {
    if (failed) return
    failed = true
    source.unpipe(destination)
    if (o.http && !destination.headersSent && !destination.writableEnded && !destination.destroyed) {
      if (!report(o.onError, err, destination)) answer500(destination, err)
      return
    }
    // Headers sent (or not HTTP): cut the response so the client cannot take it for complete.
    if (!destination.destroyed) {
      if (o.http) destination.destroy()
      else destination.destroy(err)
    }
    report(o.onError, err, destination)
  }
  if (o.http && o.contentType !== undefined && !destination.headersSent && typeof destination.getHeader === 'function' && destination.getHeader('content-type') === undefined) {
    destination.setHeader('content-type', o.contentType)
  }
  source.on('error', fail)
  // A destination error (also the one destroy(err) above emits) stops the cursor and is handled here.
  destination.on('error', (err) => {
    if (!source.destroyed) source.destroy()
    if (!failed) {
      failed = true
      report(o.onError, err, destination)
    }
  })
  // The destination went away first (a client that disconnected): close the cursor (killCursors).
  destination.on('close', () => {
    if (!source.destroyed && !source.readableEnded) source.destroy()
  })
  if (destination.destroyed) {
    // Gone before we started (a client that left while the handler ran): send nothing.
    source.destroy()
    return
  }
  source.pipe(destination, { end: o.end })
}

function pick(target, options, keys) {
  for (const k of keys) if (options[k] !== undefined) target[k] = options[k]
  return target
}

// ---- the driver's argument forms ---------------------------------------------------------

function isSortMeta(v) {
  return typeof v === 'object' && v !== null && '$meta' in v && typeof v.$meta === 'string'
}

/** A sort direction as the driver's `find` takes it: 1/-1, 'asc'/'desc'/'ascending'/'descending' (any case), '1'/'-1', `{ $meta }`. */
function sortDirection(v, key) {
  if (v === undefined) return 1
  if (isSortMeta(v)) return v
  const text = typeof v === 'symbol' ? '' : `${v}`.toLowerCase()
  if (text === '1' || text === 'asc' || text === 'ascending') return 1
  if (text === '-1' || text === 'desc' || text === 'descending') return -1
  throw new TypeError(`bson2json: options.sort has an invalid direction for '${key}': ${describe(v)} (1, -1, 'asc', 'desc', 'ascending', 'descending' or { $meta })`)
}

function isSortPair(t) {
  if (!Array.isArray(t) || t.length !== 2) return false
  try {
    sortDirection(t[1], t[0])
    return true
  } catch {
    return false
  }
}

/**
 * `options.sort` in every form the driver's `find` accepts, as the ordered document it sends
 * (a Map; undefined for no sort). The rules are the driver's (mongodb lib/sort.js `formatSort`):
 * `'n'`, `{ n: -1 }`, a Map, `['n', -1]` (a pair), `['a', 'b']` (names, ascending),
 * `[['a', 1], ['b', -1]]`; an empty object, Map or array is no sort.
 * @param {unknown} sort
 * @returns {Map<string, 1 | -1 | { $meta: string }> | undefined}
 */
function formatSort(sort) {
  if (sort === undefined || sort === null) return undefined
  if (typeof sort === 'string') return new Map([[sort, 1]])
  if (typeof sort !== 'object') throw new TypeError(`bson2json: options.sort must be a field name, an object, a Map or an array, got ${describe(sort, 'object')}`)
  const entries = (list) => new Map(list.map(([k, v]) => [`${k}`, sortDirection(v, `${k}`)]))
  if (!Array.isArray(sort)) {
    if (sort instanceof Map && sort.size > 0) return entries(Array.from(sort))
    const keys = Object.entries(sort)
    return keys.length > 0 ? entries(keys) : undefined
  }
  if (sort.length === 0) return undefined
  if (Array.isArray(sort[0])) {
    for (let i = 0; i < sort.length; i++) {
      if (!Array.isArray(sort[i])) throw new TypeError(`bson2json: options.sort[${i}] must be a [field, direction] pair like options.sort[0], got ${describe(sort[i])}`)
    }
    return entries(sort)
  }
  if (isSortPair(sort)) return new Map([[`${sort[0]}`, sortDirection(sort[1], `${sort[0]}`)]])
  return new Map(sort.map((k) => [`${k}`, 1]))
}

/** A query document: any object but an array, a byte view or a BSON value. */
function checkFilter(filter, what) {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter) || ArrayBuffer.isView(filter) || typeof filter._bsontype === 'string') {
    throw new TypeError(`bson2json: ${what} must be a query document (an object), got ${describe(filter, 'object')}`)
  }
}

/**
 * `find` returning JSON text. `options`: dialect, utf8, maxDepth, maxOutputBytes, batchSize,
 * prefetch (default 1), session, signal, and the find options sort, projection, limit, skip, …
 * Arguments take the driver's forms (`sort: [['n', -1]]`, `'n'`, …). It never throws: an argument
 * error (a filter that is not an object, a bad option) is a TypeError/RangeError with `code`
 * (`ERR_INVALID_ARG_TYPE`/`ERR_OUT_OF_RANGE`) that every consumer fails with, as with a server
 * error, and nothing is sent (a request's data can go into the arguments: docs/reliability.md).
 */
function find(collection, filter = {}, options = {}) {
  let cmd
  try {
    const c = resolveCollection(collection)
    checkFilter(filter, 'find() filter')
    if (options === null || typeof options !== 'object') throw new TypeError(`bson2json: find() options must be an object, got ${describe(options, 'object')}`)
    // the caller's own properties, each read once (lib/option-table.js: the names find takes)
    options = ownOptions(options)
    cmd = { find: c.name, filter }
    if (options.batchSize !== undefined) cmd.batchSize = options.batchSize
    pick(cmd, options, FIND_OPTIONS)
    if (Object.hasOwn(cmd, 'sort')) {
      const sort = formatSort(cmd.sort)
      if (sort === undefined) delete cmd.sort
      else cmd.sort = sort
    }
  } catch (e) {
    return new JsonCursor(null, null, null, argumentError(e))
  }
  return new JsonCursor(collection, cmd, options)
}

/** `aggregate` returning JSON text; same options as {@link find} plus allowDiskUse etc.; never throws either. */
function aggregate(collection, pipeline = [], options = {}) {
  let cmd
  try {
    const stages = checkPipeline(pipeline, 'aggregate() pipeline')
    const c = resolveCollection(collection)
    if (options === null || typeof options !== 'object') throw new TypeError(`bson2json: aggregate() options must be an object, got ${describe(options, 'object')}`)
    options = ownOptions(options)
    cmd = { aggregate: c.name, pipeline: stages, cursor: options.batchSize === undefined ? {} : { batchSize: options.batchSize } }
    pick(cmd, options, AGG_OPTIONS)
  } catch (e) {
    return new JsonCursor(null, null, null, argumentError(e))
  }
  return new JsonCursor(collection, cmd, options)
}

module.exports = { find, aggregate, JsonCursor, formatSort }
