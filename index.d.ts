/**
 * bson2json: raw BSON bytes to JSON text in one native pass.
 *
 * - `compat` (default): byte-identical to `JSON.stringify(BSON.deserialize(bson))` with js-bson 7.
 * - `relaxed` / `canonical`: MongoDB Extended JSON v2, as specified.
 */

/**
 * Node's `Buffer` (what the byte-returning functions return) when the program has Node's types
 * (`@types/node`), so `const out: Buffer = toNDJSON(docs)` type-checks; `Uint8Array` (a Buffer's
 * base class) when it has not, so this file needs no `@types/node`.
 */
export type NodeBuffer = typeof globalThis extends { Buffer: { alloc(size: number): infer B } } ? B : Uint8Array

/** The JSON dialect to produce. */
export type Dialect = 'compat' | 'relaxed' | 'canonical'

/** Options accepted by every transcoding function. */
export interface TranscodeOptions {
  /** The JSON dialect. Default `'compat'`. */
  dialect?: Dialect
  /**
   * Invalid UTF-8 in string values: `'strict'` (default) throws `BSON_INVALID_UTF8`;
   * `'replace'` writes U+FFFD for each maximal invalid subpart, as `TextDecoder` does.
   */
  utf8?: 'strict' | 'replace'
  /**
   * Maximum nesting depth (the top-level document is depth 1). Deeper input throws
   * `BSON_TOO_DEEP`. Default 1000; MongoDB itself stores at most 100 levels.
   */
  maxDepth?: number
  /**
   * Maximum size of the JSON output in bytes; larger output throws `BSON_OUTPUT_TOO_LARGE`
   * instead of exhausting memory. Default 256 MiB.
   */
  maxOutputBytes?: number
  /**
   * `compat`: the js-bson major whose `JSON.stringify(BSON.deserialize(buf, opts))` is
   * reproduced: 7 (default; `mongodb` 7.x) or 6 (`mongodb` 6.x, Mongoose 8), which prints a
   * `Long` as `{"low","high","unsigned"}` and promotes DBRef-shaped code-with-scope scopes.
   */
  bsonVersion?: 6 | 7
  /** `compat`, js-bson's option: `false` prints every int64 as a `Long` object. Default true. */
  promoteLongs?: boolean
  /** `compat`, js-bson's option: `false` as `promoteLongs: false`, and disables `promoteBuffers`. Default true. */
  promoteValues?: boolean
  /** `compat`, js-bson's option: binaries as Node Buffer JSON, `{"type":"Buffer","data":[…]}`. Default false. */
  promoteBuffers?: boolean
  /** `compat`, js-bson's option: regexes as `{"pattern","options"}` (options outside imxlsu throw). Default false. */
  bsonRegExp?: boolean
  /** js-bson's option: `{ utf8: false }` is `utf8: 'replace'`, `{ utf8: true }` is `'strict'`. */
  validation?: { utf8: boolean }
  /** Accepted only as js-bson's default (`false`): JSON.stringify throws on BigInt. */
  useBigInt64?: false
  /** Accepted only as js-bson's default (`false`). */
  raw?: false
  /**
   * MongoDB's projection document, applied while transcoding: inclusion (`{ a: 1, 'b.c': 1 }`,
   * `_id` kept unless `_id: 0`) or exclusion (`{ secret: 0, 'card.number': 0 }`), dotted paths
   * through embedded documents and arrays of documents (docs/projection.md).
   * Operators, expressions, mixed inclusion/exclusion and colliding paths are a TypeError.
   * In `find`, this name is the server's projection: use `clientProjection`.
   */
  projection?: Projection
  /** Values to mask: the key stays, the value becomes `null` or an HMAC-SHA256 pseudonym. */
  redact?: RedactOptions
}

/** A MongoDB projection document: each path `1`/`true` (include) or `0`/`false` (exclude). */
export type Projection = Record<string, number | boolean>

/** What `redact` takes. */
export interface RedactOptions {
  /** Dotted paths, with the projection's rules through documents and arrays of documents. */
  paths: string[]
  /**
   * `'null'` (the default without `key`) or `'hmac-sha256'` (the default with `key`): the
   * lowercase hex HMAC-SHA256 under `key` of the value's canonical bytes (the BSON type byte
   * followed by the value's bytes), the same in every run and process.
   */
  with?: 'null' | 'hmac-sha256'
  /** The HMAC key (required for `'hmac-sha256'`). */
  key?: Uint8Array
}

/** The stable codes of {@link TranscodeError}. */
export type TranscodeErrorCode =
  | 'BSON_TRUNCATED'
  | 'BSON_BAD_LENGTH'
  | 'BSON_BAD_TERMINATOR'
  | 'BSON_INVALID_UTF8'
  | 'BSON_UNKNOWN_TYPE'
  | 'BSON_BAD_BOOLEAN'
  | 'BSON_BAD_BINARY'
  | 'BSON_BAD_CODE_W_SCOPE'
  | 'BSON_TOO_DEEP'
  | 'BSON_OUTPUT_TOO_LARGE'
  | 'BSON_INVALID_REGEX'
  | 'BSON_NOT_A_CURSOR'
  | 'BSON_DATE_OUT_OF_RANGE'

/** The error thrown for malformed or over-limit input. `name` is `'TranscodeError'`. */
export interface TranscodeError extends Error {
  /** Machine-readable reason; stable across releases. */
  code: TranscodeErrorCode
  /** What is wrong, without its position (the message is `code: detail (position)`). */
  detail: string
  /**
   * Byte offset where decoding failed: in the document for one-document calls, in the input
   * for batch calls and streams.
   */
  offset: number
  /** For batch functions, streams and change batches: the index of the offending document or event. */
  index?: number
}

/**
 * Transcodes one BSON document to a JSON string.
 * @param bson one whole BSON document: a `Buffer` or any `Uint8Array` view
 * @throws {TranscodeError} for malformed input or exceeded limits
 * @example
 * ```js
 * const { toJSON } = require('bson2json')
 * toJSON(BSON.serialize({ a: 1 })) // '{"a":1}'
 * ```
 */
export declare function toJSON(bson: Uint8Array, options?: TranscodeOptions): string

/**
 * Transcodes one BSON document to its UTF-8 JSON bytes, as a Buffer.
 * For small documents {@link toJSON} is faster: creating a Buffer costs more than a string.
 * @throws {TranscodeError}
 */
export declare function toJSONBuffer(bson: Uint8Array, options?: TranscodeOptions): NodeBuffer

/** Options of the batch functions. */
export interface BatchOptions extends TranscodeOptions {
  /**
   * Spread the batch over this many threads (documents are independent; output order is kept).
   * Default 1. Batches under 256 KiB of BSON per thread stay on one thread.
   */
  threads?: number
}

/**
 * The documents of a batch: an array of BSON documents (what the driver's `raw: true` cursors
 * yield), one buffer of concatenated documents (the mongodump `.bson` format), or a raw command
 * reply `{ cursor: Buffer }` from `db.command({ find | aggregate | getMore }, { raw: true })`,
 * whose `firstBatch`/`nextBatch` is read in place.
 */
export type BatchInput = readonly Uint8Array[] | Uint8Array | { cursor: Uint8Array }

/**
 * Transcodes many documents in one call into one JSON string per document.
 * Errors carry `index`, the offending document's position; `offset` counts from the start of
 * the input buffer for concatenated input, from the start of the document otherwise.
 * All the strings of a batch are alive together in V8's young generation until the call
 * returns (a 4 MiB batch of 10 KB documents is ~9 MB of UTF-16): let go of the previous
 * batch's list before converting the next (holding both doubles the garbage collector's work),
 * and for batches of megabytes {@link toNDJSON}, which returns bytes, is faster still.
 * @throws {TranscodeError}
 */
export declare function toJSONList(docs: BatchInput, options?: BatchOptions): string[]

/**
 * Transcodes many documents into one JSON array text, `[doc,doc,…]` (long texts come back as
 * a V8 rope, as `JSON.stringify` returns them). For batches of megabytes {@link toNDJSON},
 * which returns bytes, is faster. @throws {TranscodeError}
 */
export declare function toJSONArray(docs: BatchInput, options?: BatchOptions): string

/**
 * Transcodes many documents into newline-delimited JSON bytes (each document followed by `\n`)
 * in one Buffer, ready for a socket or a file. @throws {TranscodeError}
 */
export declare function toNDJSON(docs: BatchInput, options?: BatchOptions): NodeBuffer

/** A cursor reply read in place by {@link cursorBatch}. */
export interface CursorBatch {
  /** The cursor id; `0n` when the cursor is exhausted. */
  id: bigint
  /** The namespace `db.collection`, or null. */
  ns: string | null
  /** The raw BSON bytes of `postBatchResumeToken` (change streams), as a Buffer, or null. */
  postBatchResumeToken: NodeBuffer | null
  /** Number of documents in the batch. */
  count: number
  /** The batch's documents as JSON strings. */
  docs: string[]
}

/**
 * Reads a raw `find`/`aggregate`/`getMore` reply (`db.command(cmd, { raw: true })`, or its
 * `cursor` Buffer) in place and transcodes its batch. @throws {TranscodeError}
 */
export declare function cursorBatch(reply: { cursor: Uint8Array } | Uint8Array, options?: TranscodeOptions): CursorBatch

/** {@link toJSON} on the libuv thread pool. The input is copied before the Promise is returned. */
export declare function toJSONAsync(bson: Uint8Array, options?: TranscodeOptions): Promise<string>
/** {@link toJSONList} on the libuv thread pool. Inputs are copied first. */
export declare function toJSONListAsync(docs: BatchInput, options?: BatchOptions): Promise<string[]>
/** {@link toJSONArray} on the libuv thread pool. Inputs are copied first. */
export declare function toJSONArrayAsync(docs: BatchInput, options?: BatchOptions): Promise<string>
/** {@link toNDJSON} on the libuv thread pool. Inputs are copied first. */
export declare function toNDJSONAsync(docs: BatchInput, options?: BatchOptions): Promise<NodeBuffer>

/**
 * Row options (docs/rows.md): the transcoding options (a projection and a redaction apply to
 * every format; `dialect`, `utf8` and js-bson's options shape the general format's JSON text
 * and do not go with `rowFormat: 'powersync'`), and the format.
 */
export interface RowOptions extends TranscodeOptions {
  /**
   * `'general'` (default): values for SQL drivers, nested values as JSON text in `dialect`.
   * `'powersync'`: PowerSync's `bufferToSqlite` (`@powersync/service-module-mongodb`), value for value.
   */
  rowFormat?: 'general' | 'powersync'
  /**
   * PowerSync's `DateRenderMode` (`rowFormat: 'powersync'` only): 0 `2024-01-02 03:04:05.678Z`
   * (default), 1 `2024-01-02T03:04:05.678Z`, 2 `2024-01-02T03:04:05Z`.
   */
  dateRenderMode?: 0 | 1 | 2
}

/**
 * A row value: a string (text, hex, a date, a decimal, a UUID, JSON text of a nested value), a
 * number (int32 and doubles in the general format; non-integral doubles in PowerSync's), a
 * bigint (int64, timestamps; all integers in PowerSync's), a boolean (general format), `null`,
 * or the bytes of a binary value (a plain Uint8Array of its own).
 */
export type RowValue = string | number | bigint | boolean | null | Uint8Array

/** One document's row: its top-level keys, in the order a JavaScript object keeps them. */
export type Row = Record<string, RowValue>

/** One document's top-level fields as values, one per column (docs/rows.md has the type map). */
export declare function toRow(bson: Uint8Array, options?: RowOptions): Row
/** The rows of many documents: an array of documents, concatenated documents, or a raw cursor reply. */
export declare function toRows(docs: BatchInput, options?: RowOptions): Row[]
/**
 * {@link toRows} on the libuv thread pool (the input is copied before it returns; a batch of
 * several MiB runs as several pool tasks, whose rows are made one task per turn of the event
 * loop). Argument errors throw; BSON errors reject with a {@link TranscodeError}.
 */
export declare function toRowsAsync(docs: BatchInput, options?: RowOptions): Promise<Row[]>

/** True if `e` is an error bson2json threw for bad input (works across realms). */
export declare function isTranscodeError(e: unknown): e is TranscodeError

/** Default of {@link TranscodeOptions.maxDepth}. */
export declare const DEFAULT_MAX_DEPTH: number
/** Default of {@link TranscodeOptions.maxOutputBytes}. */
export declare const DEFAULT_MAX_OUTPUT_BYTES: number
/**
 * Which build of the core is in use: the native addon, or the WASI build (the same core as
 * WebAssembly, where no native binary matches or loads).
 */
export declare const backend: 'native' | 'wasi'

/** Options of {@link createTranscodeStream}. */
export interface TranscodeStreamOptions extends BatchOptions {
  /** Output: newline-delimited JSON (default) or one JSON array `[doc,doc,…]`. */
  format?: 'ndjson' | 'array'
  /** Emit output in chunks of at most this many bytes (also the BSON sub-batch size). */
  chunkSize?: number
  /** BSON bytes transcoded per native call when `chunkSize` is not set. Default 1 MiB. */
  batchBytes?: number
  /**
   * Sub-batches transcoded at once on the libuv thread pool while the stream goes on reading
   * (1 to 256; default 1: each sub-batch is transcoded synchronously in the stream's
   * `_transform`). Output order, errors and `'skip'` events are those of `concurrency: 1`.
   * Memory: up to this many sub-batches of input and output (more if one written chunk holds more).
   */
  concurrency?: number
  /** Largest accepted declared document length; larger is `BSON_BAD_LENGTH`. Default 64 MiB. */
  maxDocumentBytes?: number
  /**
   * Skip a corrupt document (emitting `'skip'` with `{ index, offset, error, bytesSkipped }`) and
   * go on with the next one. After an impossible length prefix the stream scans forward for the
   * next plausible document (its length, first element type and terminator, accepted by the
   * transcoder, and followed by another plausible document or the end) and skips the bytes before it.
   */
  skipInvalid?: boolean
  highWaterMark?: number
  readableHighWaterMark?: number
  writableHighWaterMark?: number
}

/**
 * The stream returned by {@link createTranscodeStream}: a Node.js `stream.Transform`
 * (typed minimally so this file needs no `@types/node`; cast to `import('stream').Transform`).
 */
export interface TranscodeStream {
  /** Documents written so far. */
  readonly documents: number
  /** Documents skipped with `skipInvalid`. */
  readonly skipped: number
  /** BSON bytes consumed so far (complete documents). */
  readonly bytesIn: number
  write(chunk: Uint8Array, callback?: (error?: Error | null) => void): boolean
  end(chunk?: Uint8Array, callback?: () => void): this
  pipe<T>(destination: T, options?: { end?: boolean }): T
  on(event: 'skip', listener: (info: { index: number; offset: number; error: TranscodeError; bytesSkipped: number }) => void): this
  on(event: 'error', listener: (error: Error) => void): this
  on(event: string, listener: (...args: any[]) => void): this
  once(event: string, listener: (...args: any[]) => void): this
  destroy(error?: Error): this
  /** Output chunks (Buffers). */
  [Symbol.asyncIterator](): AsyncIterableIterator<NodeBuffer>
}

/**
 * A Transform stream from raw concatenated BSON documents (the mongodump `.bson` format, any
 * chunk boundaries) to NDJSON or a JSON array. Errors are {@link TranscodeError}s whose `index`
 * and `offset` count from the start of the stream; documents before a bad one are written first.
 * A stream ending inside a document fails with `BSON_TRUNCATED`. Gunzip `.bson.gz` first
 * (`zlib.createGunzip()`).
 */
export declare function createTranscodeStream(options?: TranscodeStreamOptions): TranscodeStream

// ---- change streams and JSON cursors (lib/mongo/change-stream.js, lib/mongo/cursor.js) ----------------
// Structural types only: no dependency on @types/node or the mongodb typings.

/** A driver `MongoClient` (cluster stream), `Db` (database stream) or `Collection`. */
export type WatchTarget =
  | { collectionName: string; dbName: string; client: object }
  | { databaseName: string; command: (...args: any[]) => any; client: object }
  | { db: (name?: string) => object; startSession: (...args: any[]) => object }
  | object

/** A driver `Collection` (`collectionName`, `dbName`, `client`). */
export type CursorTarget = { collectionName: string; dbName: string; client: object } | object

/** A resume token: usually `{ _data: string }`; other shapes come from canonical EJSON. */
export type ResumeToken = { _data: string } | Record<string, unknown>

/** Minimal AbortSignal shape. */
export interface AbortSignalLike {
  readonly aborted: boolean
  readonly reason?: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

export interface WatchOptions extends TranscodeOptions {
  /**
   * The driver's option of this name (`false` is `utf8: 'replace'`). The driver's resolved
   * `bsonOptions` (client → db → collection) and its js-bson major apply unless the call sets them.
   */
  enableUtf8Validation?: boolean
  /** Each event carries `json`: the whole event (in `compat`, `JSON.stringify` of the driver's event). */
  whole?: boolean
  batchSize?: number
  /** getMore `maxTimeMS` (how long the server waits for new events); below `timeoutMS` when both are set. */
  maxAwaitTimeMS?: number
  /**
   * The longest wait for each server reply, in ms (0: no limit, the default): past it the command
   * is cancelled and the stream fails with a `TimeoutError` (`code` `BSON2JSON_TIMEOUT`), a reply
   * that trickles in too. Without `maxAwaitTimeMS`, getMores then wait at most min(1000, timeoutMS / 2).
   */
  timeoutMS?: number
  fullDocument?: 'default' | 'updateLookup' | 'whenAvailable' | 'required'
  fullDocumentBeforeChange?: 'off' | 'whenAvailable' | 'required'
  showExpandedEvents?: boolean
  resumeAfter?: unknown
  startAfter?: unknown
  /** A BSON Timestamp (driver `Timestamp`). */
  startAtOperationTime?: unknown
  /** Batches buffered ahead of the consumer (the next getMore runs while you process). Default 4. */
  prefetch?: number
  signal?: AbortSignalLike
  /** Append `$changeStreamSplitLargeEvent` and reassemble fragments into one event. Default false. */
  splitLargeEvents?: boolean
}

/**
 * One change event. `resumeToken` is on every event (a batch with an event without `_id` fails
 * the stream); `operationType` and `clusterTime` are on every event the server produces (the
 * Change Streams specification's required fields), unless your own pipeline removes them or the
 * event is the second or later fragment of an event split by your own
 * `$changeStreamSplitLargeEvent` stage (see `splitEvent`). The other fields depend on the
 * operation type and the options.
 */
export interface ChangeEvent {
  // <change-event-fields> generated from crates/bson2json-core/src/mongo/layout.rs (npm run generate)
  /**
   * The event's `_id`: `{ _data }`, or when it has another shape, its value as js-bson
   * deserializes it (BSON types kept, as with `promoteValues: false`). (For the last event of a batch, `stream.resumeToken` is the batch's
   * postBatchResumeToken.)
   */
  resumeToken: ResumeToken
  /** Canonical EJSON of `_id` (of `resumeToken`) when it is not the usual `{ _data }` shape. */
  resumeTokenEJSON?: string
  /** `'insert'`, `'update'`, `'replace'`, `'delete'`, `'invalidate'`, `'drop'`, … (the server may add more). */
  operationType: string
  clusterTime: { t: number; i: number }
  /** MongoDB 6.0 and later. */
  wallTime?: Date
  ns?: { db: string; coll?: string }
  /** JSON text. */
  documentKey?: string
  /** JSON text (not in `whole` mode). */
  fullDocument?: string | null
  fullDocumentBeforeChange?: string | null
  updateDescription?: string | null
  /** Only on unreassembled fragments (when `splitLargeEvents` is false). */
  splitEvent?: { fragment: number; of: number }
  /** The whole event as JSON text (`whole: true`). */
  json?: string
  // </change-event-fields>
}

export interface ChangeBatch {
  events: ChangeEvent[]
  /** Checkpoint after this batch: persist it once the batch is processed. */
  resumeToken: ResumeToken | null
}

/** Minimal object-mode Readable (cast to `import('stream').Readable`). */
export interface ObjectReadable<T> {
  pipe<D>(destination: D, options?: { end?: boolean }): D
  on(event: string, listener: (...args: any[]) => void): this
  once(event: string, listener: (...args: any[]) => void): this
  destroy(error?: Error): this
  [Symbol.asyncIterator](): AsyncIterableIterator<T>
}

export interface ChangeStream extends AsyncIterable<ChangeEvent> {
  /** Token of the last delivered event or batch (the spec's cached resume token). */
  readonly resumeToken: ResumeToken | null
  /** Resumes performed so far. */
  readonly resumeCount: number
  readonly closed: boolean
  next(): Promise<IteratorResult<ChangeEvent, undefined>>
  batches(): AsyncGenerator<ChangeBatch, void, unknown>
  stream(options?: { highWaterMark?: number }): ObjectReadable<ChangeEvent>
  /** Stops, sends killCursors (awaited) and ends the session. Idempotent. */
  close(): Promise<void>
}

/** Raised after the `invalidate` event has been delivered. */
export declare class ChangeStreamInvalidatedError extends Error {
  readonly event: ChangeEvent
}

/**
 * Opens a change stream run on raw replies (one native call per batch), resumed per the spec.
 * Never throws: an argument error (a `TypeError`/`RangeError` with `code` `ERR_INVALID_ARG_TYPE` /
 * `ERR_OUT_OF_RANGE`) fails the first read, as a server error does.
 */
export declare function watch(target: WatchTarget, pipeline?: object[], options?: WatchOptions): ChangeStream

export type SortDirection = 1 | -1 | 'asc' | 'desc' | 'ascending' | 'descending' | { $meta: string }
export type SortSpec =
  | string
  | string[]
  | [string, SortDirection]
  | Array<[string, SortDirection]>
  | Map<string, SortDirection>
  | { [field: string]: SortDirection }

export interface CursorOptions extends Omit<TranscodeOptions, 'projection'> {
  /**
   * The driver's option of this name (`false` is `utf8: 'replace'`). The driver's resolved
   * `bsonOptions` (client → db → collection) and its js-bson major apply unless the call sets them.
   */
  enableUtf8Validation?: boolean
  batchSize?: number
  /** Batches fetched ahead of the consumer. Default 1. */
  prefetch?: number
  /**
   * The longest wait for each server reply (the first command and each getMore), in ms (0: no
   * limit, the default): past it the command is cancelled and every consumer fails with a
   * `TimeoutError` (`code` `BSON2JSON_TIMEOUT`), a reply that trickles in byte by byte too.
   */
  timeoutMS?: number
  /** A driver ClientSession to use (otherwise one is started and ended per cursor). */
  session?: object
  /**
   * Aborting cancels the command in flight and fails every consumer with the signal's reason
   * (an `AbortError`): a result cut short never looks complete (`pipe(res)` cuts the response).
   */
  signal?: AbortSignalLike
  /** Every form the driver's `find` accepts: `{ n: -1 }`, `'n'`, `['n', -1]`, `['a', 'b']`, `[['a', 1], ['b', -1]]`, a Map. */
  sort?: SortSpec
  /** `find` only: the server's projection (sent with the command). */
  projection?: object
  /**
   * The client-side projection of the results (the `projection` option of the other calls),
   * applied while transcoding on top of whatever the server returned; `find` and `aggregate`.
   */
  clientProjection?: Projection
  limit?: number
  skip?: number
  hint?: object | string
  maxTimeMS?: number
  collation?: object
  comment?: unknown
  let?: object
  allowDiskUse?: boolean
}

export interface PipeOptions<D> {
  format?: 'ndjson' | 'array'
  highWaterMark?: number
  /** Default true; false leaves the destination open when the cursor ends. */
  end?: boolean
  /**
   * Called with the full error and the destination (log it on your side); before an HTTP
   * response's headers are sent it must answer (instead of the default generic `500`).
   */
  onError?: (err: Error, destination: D) => void
}

export interface JsonCursor extends AsyncIterable<string> {
  /** Server cursor id once known (0n when exhausted). */
  readonly id: bigint | null
  readonly closed: boolean
  batches(): AsyncGenerator<string[], void, unknown>
  /** One NDJSON Buffer per server batch. */
  ndjson(): AsyncGenerator<NodeBuffer, void, unknown>
  toArray(): Promise<string[]>
  /** A byte Readable (Buffer chunks) of NDJSON or one JSON array. */
  stream(options?: { format?: 'ndjson' | 'array'; highWaterMark?: number }): ObjectReadable<NodeBuffer>
  /**
   * Pipes into a writable such as an `http.ServerResponse` (sets Content-Type if unset) and
   * handles every error: before an HTTP response's headers are sent, a `500` with
   * `{"error":"query failed","code":…}` (the server's numeric code or bson2json's `BSON_*` /
   * `ERR_*` code, else null; never the message, which can quote the query or the database's
   * address), or `onError` with the full error, which then answers; after, the response is destroyed.
   * Other writables are destroyed with the error, as `stream.pipeline` does.
   */
  pipe<D>(destination: D, options?: PipeOptions<D>): D
  /** Kills the server cursor if still open and ends the session. Idempotent. */
  close(): Promise<void>
}

/**
 * `find` returning JSON text. Never throws: an argument error (a filter that is not an object, a
 * bad option: a `TypeError`/`RangeError` with `code` `ERR_INVALID_ARG_TYPE` / `ERR_OUT_OF_RANGE`)
 * fails every consumer as a server error does (`pipe(res)` answers 500), and nothing is sent.
 */
export declare function find(collection: CursorTarget, filter?: object, options?: CursorOptions): JsonCursor
/** `aggregate` returning JSON text; never throws either (see {@link find}). */
export declare function aggregate(collection: CursorTarget, pipeline?: object[], options?: CursorOptions): JsonCursor
