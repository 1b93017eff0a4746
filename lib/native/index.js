'use strict'

/**
 * The one owner of the binding (the native addon, or its WASI build wrapped by `wasi.js`): every
 * call into it in the package goes through the named functions here, which take the resolved
 * options of lib/options.js (`{ flags, packed, maxDepth, maxOutputBytes, shaper }`) and pass the
 * binding its positional arguments. __test__/repo/module-graph.spec.ts keeps it the only module
 * that requires `load.js` or the generated loader.
 *
 * The binding is loaded when this module is first required; a platform with neither a native
 * binary nor the WASI build fails there with `ERR_BSON2JSON_NO_BINDING`.
 */

const { types } = require('node:util')
const { availableParallelism } = require('node:os')
const { loadBackend } = require('./load')
const { rowDecoder } = require('./rows')
const { EventFormat, unpackEvents } = require('./events')

const backend = loadBackend()
const b = backend.binding

/** The default `maxDepth` and `maxOutputBytes` (the core's, exported by the binding). */
const { DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES } = b
/** `packed`'s multiplier of `maxDepth`: 2 ** the binding's `FLAG_BITS`. */
const DEPTH_UNIT = 2 ** b.FLAG_BITS

/**
 * The first number of the options' pair: the `OptionFlag` bits plus `maxDepth` above them (exact
 * in a double); the second is `maxOutputBytes`.
 * @param {number} flags
 * @param {number} maxDepth
 */
function packOptions(flags, maxDepth) {
  return flags + maxDepth * DEPTH_UNIT
}

const DEFAULT_PACKED = packOptions(0, DEFAULT_MAX_DEPTH)

/** The flag bits of `flags` (the binding's `OptionFlag` enum). */
const OptionFlag = Object.freeze({ ...b.OptionFlag })
/** The output layouts of the batch calls (the binding's `BatchLayout` enum). */
const Layout = Object.freeze({ ...b.BatchLayout })
/** What a `Shaper` reads (the binding's `ShapeInput` enum). */
const ShapeInput = Object.freeze({ ...b.ShapeInput })

/**
 * The layout the per-document string calls ask for. `Joined` (native only) sends texts of whole
 * documents (<= 64 KiB each) with UTF-16 offsets, which {@link split} cuts with `slice` (V8
 * shares the parent text instead of copying): one string creation per text rather than one per
 * document.
 */
const LIST_LAYOUT = backend.name === 'native' ? Layout.Joined : Layout.List

/**
 * The per-document strings of a `LIST_LAYOUT` result: `[text0, offsets0, text1, offsets1, ...]`
 * cut at its offsets, or the plain list the binding sends when the documents are large.
 * @param {any} joined
 * @returns {string[]}
 */
function split(joined) {
  if (LIST_LAYOUT !== Layout.Joined || !(joined[1] instanceof Uint32Array)) return joined
  const list = []
  for (let t = 0; t < joined.length; t += 2) {
    const text = joined[t]
    const offsets = joined[t + 1]
    for (let i = 1; i < offsets.length; i++) list.push(text.slice(offsets[i - 1], offsets[i]))
  }
  return list
}

/** One document to a JSON string with the default options (the binding's function itself). */
const transcodeDefault = b.transcode

/**
 * Small JSON results are written into a shared slab and returned as views of it, as Node's own
 * pool serves `Buffer.from` and `Buffer.allocUnsafe`: a new Buffer from Node-API costs far more
 * than the transcoding of a small document (ARCHITECTURE.md, decision "Small Buffer results from a pool"). A
 * result that does not fit in the slab's rest comes back as its own Buffer. A call made while
 * another is in the binding (JavaScript that runs mid-call, such as a patched `RegExp`, calling
 * back in) takes the unpooled path, so the two never write to the same bytes.
 */
const POOL_BYTES = 8 * 1024
/** A slab with less room than this is replaced before the next call. */
const POOL_MIN_ROOM = 256
/** Inputs above this many bytes get their own Buffer at once (their JSON would rarely fit). */
const POOL_MAX_INPUT = 2 * 1024
let pool = null
let poolUsed = 0
let poolBusy = false

/**
 * @param {Uint8Array} bson
 * @param {number} packed
 * @param {number} maxOutputBytes
 * @param {any} [shaper] a projection / redaction: its output may be small whatever the input's
 *   size, so the input's size does not decide
 */
function transcodeIntoPool(bson, packed, maxOutputBytes, shaper) {
  if (poolBusy || !ArrayBuffer.isView(bson) || (shaper === undefined && bson.byteLength > POOL_MAX_INPUT)) {
    // the binding's own Buffer, with as few arguments as the options allow
    if (shaper !== undefined) return b.transcodeBuffer(bson, packed, maxOutputBytes, shaper)
    return packed === DEFAULT_PACKED && maxOutputBytes === DEFAULT_MAX_OUTPUT_BYTES ? b.transcodeBuffer(bson) : b.transcodeBuffer(bson, packed, maxOutputBytes)
  }
  if (pool === null || POOL_BYTES - poolUsed < POOL_MIN_ROOM) {
    pool = Buffer.allocUnsafeSlow(POOL_BYTES)
    poolUsed = 0
  }
  const at = poolUsed
  poolBusy = true
  let r
  try {
    r = shaper === undefined ? b.transcodeInto(bson, packed, maxOutputBytes, pool, at) : b.transcodeInto(bson, packed, maxOutputBytes, pool, at, shaper)
  } finally {
    poolBusy = false
  }
  if (typeof r !== 'number') {
    // It did not fit in the rest of the slab, or the slab was taken away (an earlier result's
    // ArrayBuffer transferred while JavaScript ran mid-call): the next call starts a new one,
    // unless the result was larger than any slab (the slab's rest still serves small ones).
    if (r.length < POOL_BYTES) pool = null
    return r
  }
  // 8-byte aligned, as Node's pool keeps its slices
  poolUsed = (at + r + 7) & ~7
  return pool.subarray(at, at + r)
}

/** Whether small Buffer results come from the pool (the native addon; the WASI build stages its output). */
const POOLED = backend.name === 'native'

/** One document to JSON bytes with the default options. */
const transcodeBufferDefault = POOLED ? (bson) => transcodeIntoPool(bson, DEFAULT_PACKED, DEFAULT_MAX_OUTPUT_BYTES) : b.transcodeBuffer

/**
 * One document to JSON: a string, or its UTF-8 bytes when `buffer`.
 * @param {Uint8Array} bson
 * @param {any} o resolved options
 * @param {boolean} buffer
 */
function transcode(bson, o, buffer) {
  if (o.shaper !== undefined) {
    if (buffer) return POOLED ? transcodeIntoPool(bson, o.packed, o.maxOutputBytes, o.shaper) : b.transcodeBuffer(bson, o.packed, o.maxOutputBytes, o.shaper)
    return b.transcode(bson, o.packed, o.maxOutputBytes, o.shaper)
  }
  if (buffer) return POOLED ? transcodeIntoPool(bson, o.packed, o.maxOutputBytes) : b.transcodeBuffer(bson, o.packed, o.maxOutputBytes)
  return o.maxOutputBytes === DEFAULT_MAX_OUTPUT_BYTES ? b.transcode(bson, o.packed) : b.transcode(bson, o.packed, o.maxOutputBytes)
}

/**
 * Many documents (an array of documents or concatenated documents) in one call, each shaped
 * first when the options have a projection or redaction (`o.shaper`); an error's offset is in
 * the document as given.
 * @param {Uint8Array | Uint8Array[]} docs
 * @param {number} layout
 * @param {any} o resolved options
 * @param {number} threads
 */
function transcodeBatch(docs, layout, o, threads) {
  if (VIEWS && Array.isArray(docs) && docs.length >= VIEWS_MIN && !types.isProxy(docs)) return transcodeViews(docs, layout, o, threads)
  return b.transcodeBatch(docs, layout, o.packed, o.maxOutputBytes, threads, o.shaper)
}

/**
 * An array of documents as a views table (the native addon): each element's `ArrayBuffer`,
 * byte offset and byte length, read here through the intrinsic `%TypedArray%.prototype`
 * getters (which no own property or subclass can change), and the distinct buffers; the
 * binding's `transcodeBatchViews` then looks up each distinct buffer once, instead of reading
 * every element and its memory through Node-API (calls that cost more than a small document's
 * transcoding; ARCHITECTURE.md decision 17). The binding checks every range against its buffer as it stands
 * at the call; when anything is not as the table says (an element that is not a Uint8Array,
 * a view that ends past 4 GiB, a view on a `SharedArrayBuffer`, a buffer detached or shrunk by
 * a getter of a later element) it returns `undefined` and `transcodeBatch` gets the elements as read here (each element is
 * read exactly once, as the binding itself reads them), which is also the plain twin the tests
 * compare.
 */
const VIEWS = backend.name === 'native'
/** Fewer documents than this take the element path: the table costs more than it saves. */
const VIEWS_MIN = 4
/** Distinct buffers searched for each element's (the most recent ones); a miss adds one. */
const VIEWS_SEARCH = 4
/**
 * `get` (an intrinsic getter) as a function of its receiver: `call` bound to it, so a call runs
 * `get` itself, with no property read (`call` and `bind` are read once, here). Held in a
 * module constant, each is a known call target, which TurboFan inlines (`byteOffset`,
 * `byteLength`, the tag; `buffer` stays a call into C++).
 */
const uncurry = (get) => Reflect.apply(Function.prototype.bind, Function.prototype.call, [get])
const typedArrayGetter = (key) => uncurry(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), key).get)
const tagOf = typedArrayGetter(Symbol.toStringTag)
const bufferOf = typedArrayGetter('buffer')
const offsetOf = typedArrayGetter('byteOffset')
const lengthOf = typedArrayGetter('byteLength')
/** The views table, reused; `null` while a call fills it (a getter may call back in). */
let viewTable = new Uint32Array(3 * 256)
/** The largest number the table holds. */
const VIEWS_MAX = 0xffffffff

function transcodeViews(docs, layout, o, threads) {
  const n = docs.length
  let table = viewTable
  viewTable = null
  if (table === null || table.length < 3 * n) table = new Uint32Array(3 * Math.max(n, 256))
  // preallocated (a holey array of more than ~100k elements would be a dictionary: grown instead)
  const elements = n <= 65536 ? Array(n) : []
  const buffers = []
  let plain = true
  let last = null
  let at = -1
  for (let i = 0; i < n; i++) {
    const d = docs[i]
    elements[i] = d
    if (!plain) continue
    if (tagOf(d) !== 'Uint8Array') {
      plain = false
      continue
    }
    const buffer = bufferOf(d)
    if (buffer !== last) {
      at = -1
      for (let k = buffers.length - 1; k >= 0 && k >= buffers.length - VIEWS_SEARCH; k--) {
        if (buffers[k] === buffer) {
          at = k
          break
        }
      }
      if (at < 0) {
        at = buffers.length
        buffers.push(buffer)
      }
      last = buffer
    }
    // An element read of a typed array runs no JavaScript (no prototype, no accessor, not even
    // on a detached buffer); its feedback gives TurboFan the element's map, without which it
    // calls the `byteOffset` and `byteLength` getters as builtins instead of inlining them
    // (benchmark/call-instructions.sh counts the difference; ARCHITECTURE.md decision 17). Nothing
    // between it and them may call out (the map would no longer be known there).
    void d[0]
    const offset = offsetOf(d)
    const length = lengthOf(d)
    // A view that ends past 4 GiB (in a larger buffer) does not fit the table: the elements.
    if (offset + length > VIEWS_MAX) {
      plain = false
      continue
    }
    table[3 * i] = at
    table[3 * i + 1] = offset
    table[3 * i + 2] = length
  }
  try {
    if (plain) {
      const r = b.transcodeBatchViews(buffers, table, n, layout, o.packed, o.maxOutputBytes, threads, o.shaper)
      if (r !== undefined) return r
    }
    return b.transcodeBatch(elements, layout, o.packed, o.maxOutputBytes, threads, o.shaper)
  } finally {
    if (table.length <= 3 * 65536) viewTable = table
  }
}

/**
 * {@link transcodeBatch} on the libuv pool (the shaping too); `isCursor` when `input` is a raw
 * reply's `cursor`.
 * @returns {Promise<any>}
 */
function transcodeBatchAsync(input, layout, o, threads, isCursor) {
  return b.transcodeBatchAsync(input, layout, o.packed, o.maxOutputBytes, threads, isCursor, o.shaper)
}

/**
 * A raw cursor reply's `cursor` document: `{ id, ns, postBatchResumeToken, count, docs }`, its
 * documents shaped first as {@link transcodeBatch}'s.
 * @param {Uint8Array} cursor
 * @param {number} layout
 * @param {any} o resolved options
 */
function transcodeCursor(cursor, layout, o) {
  return b.transcodeCursor(cursor, layout, o.packed, o.maxOutputBytes, o.shaper)
}

/**
 * A change stream reply's `cursor` document: `{ id, ns, postBatchResumeToken, events }`, each
 * event in `format` (an {@link EventFormat}: event objects, or Kafka records), its parts shaped
 * first, in the same native call, when the options have a projection or redaction. A resume
 * token is `{ _data }`, or, in any other shape, a copy of its BSON. The binding packs the events
 * (crates/bson2json-core/src/mongo/layout.rs) and the generated `./events.js` unpacks them.
 * @param {Uint8Array} cursor
 * @param {number} format
 * @param {any} o resolved options
 * @param {boolean} [rawFragments] a fragment of a split event as `{ resumeToken, splitEvent, raw }`
 *   (its BSON, for {@link transcodeChangeFragments}) instead of transcoded
 * @param {{ name: string, version: string, atT?: number, atI?: number }} [kafka] with a
 *   connector's format (`RecordMongoKafka*`, `RecordDebezium*`): what its records name besides the event
 */
function transcodeChangeBatch(cursor, format, o, rawFragments = false, kafka = undefined) {
  let r
  if (format === EventFormat.Rows) r = b.transcodeChangeBatchPacked(cursor, format, o.packed, o.maxOutputBytes, rawFragments, o.shaper, o.rowMode)
  else if (o.shaper === undefined && kafka === undefined) r = b.transcodeChangeBatchPacked(cursor, format, o.packed, o.maxOutputBytes, rawFragments)
  else r = b.transcodeChangeBatchPacked(cursor, format, o.packed, o.maxOutputBytes, rawFragments, o.shaper, undefined, kafka)
  r.events = unpackEventsWithRows(r.events)
  return r
}

/**
 * Events of a packed batch, with the batch's rows when it has them (an `EventFormat.Rows`
 * batch: the binding hands them over as the property `rows` of the packed events).
 * @param {any} packed
 */
function unpackEventsWithRows(packed) {
  return unpackEvents(packed, packed.rows === undefined ? null : unpackRows(packed.rows))
}

/**
 * The fragments of one split event (their BSON, in order, already shaped) merged and
 * transcoded: the event {@link transcodeChangeBatch} gives for it unsplit.
 * @param {Uint8Array[]} fragments
 * @param {number} format an {@link EventFormat}
 * @param {any} o resolved options
 * @param {any} [kafka] as {@link transcodeChangeBatch}'s
 */
function transcodeChangeFragments(fragments, format, o, kafka = undefined) {
  const rowMode = format === EventFormat.Rows ? o.rowMode : undefined
  return unpackEventsWithRows(b.transcodeChangeFragmentsPacked(fragments, format, o.packed, o.maxOutputBytes, rowMode, kafka))[0]
}

/**
 * CSV rows with mongoexport's cells of a raw cursor reply's `cursor` document:
 * `{ id, ns, count, rows }` (`rows`: a Buffer, one line per document).
 * @param {Uint8Array} cursor
 * @param {string[]} fields dotted paths
 */
function csvCursor(cursor, fields) {
  return b.csvCursor(cursor, fields)
}

/**
 * The CSV header line of `fields`, quoted as the cells are.
 * @param {string[]} fields
 * @returns {Buffer}
 */
function csvHeader(fields) {
  return b.csvHeader(fields)
}

/**
 * A compiled projection and redaction (lib/shape.js validates the specification first).
 * @returns {any} the binding's `Shaper`
 */
function createShaper(paths, include, redactPaths, key) {
  return new b.Shaper(paths, include, redactPaths, key)
}

/** Compiles `shaper` again, in place, from the arguments {@link createShaper} takes. */
function recompileShaper(shaper, paths, include, redactPaths, key) {
  shaper.recompile(paths, include, redactPaths, key)
}

/**
 * The projected and redacted BSON of `input`, read as `kind` (a {@link ShapeInput}).
 * @returns {Buffer}
 */
function shape(shaper, kind, input) {
  return shaper.shape(kind, input)
}

/** The tags of packed rows (the binding's `RowTag`, core `row::packed::Tag`). */
const RowTag = Object.freeze({ ...b.RowTag })
const decodeRows = rowDecoder(RowTag)

/**
 * The rows of a packed result `[words, bins, ...texts]` (crates/bson2json-node/src/rows.rs).
 * @param {any[]} packed
 */
function unpackRows(packed) {
  let w = packed[0]
  if (!(w instanceof Uint32Array)) {
    // the WASI build: Buffers that view wasm memory, copied now (and the words aligned)
    w = new Uint32Array(new Uint8Array(w).buffer)
    if (packed[1] !== null) packed[1] = new Uint8Array(packed[1])
  }
  return decodeRows(w, new DataView(w.buffer, w.byteOffset, w.byteLength), 0, w.length, packed)
}

/**
 * `toRow`'s words come back in this scratch when they fit (their count, then the words): one
 * `ArrayBuffer` made per call costs more than a small row's walk. It grows when a row does not
 * fit; a call made while another is decoding (JavaScript run mid-call) goes without it.
 */
let rowScratch = new Uint8Array(4096)
let rowWords = new Uint32Array(rowScratch.buffer)
let rowView = new DataView(rowScratch.buffer)
let rowBusy = false
const ROW_SCRATCH_MAX = 4 * 1024 * 1024

/**
 * One document's row (`toRow`): its top-level fields as values, shaped first when the options
 * have a projection or redaction.
 * @param {Uint8Array} bson
 * @param {any} o resolved options
 * @param {number} rowMode `rowFormat | dateRenderMode << 2`
 * @returns {object}
 */
function transcodeRow(bson, o, rowMode) {
  // the WASI build sees a copy of a typed array argument in wasm memory: no scratch there
  if (rowBusy || !POOLED) return unpackRows(b.transcodeRow(bson, o.packed, o.maxOutputBytes, rowMode, undefined, o.shaper))[0]
  rowBusy = true
  try {
    let r = b.transcodeRow(bson, o.packed, o.maxOutputBytes, rowMode, rowScratch, o.shaper)
    if (typeof r === 'string') r = [null, null, r]
    else if (r === undefined) r = [null, null]
    else if (r[0] !== null) {
      // too large for the scratch: a larger one for the next calls
      const need = 4 * r[0].length + 4
      if (need <= ROW_SCRATCH_MAX) {
        rowScratch = new Uint8Array(Math.max(2 * rowScratch.length, 2 ** Math.ceil(Math.log2(need))))
        rowWords = new Uint32Array(rowScratch.buffer)
        rowView = new DataView(rowScratch.buffer)
      }
      return unpackRows(r)[0]
    }
    return decodeRows(rowWords, rowView, 1, 1 + rowWords[0], r)[0]
  } finally {
    rowBusy = false
  }
}

/**
 * The rows of many documents: an array of documents, concatenated documents, or (`isCursor`)
 * a raw reply's `cursor` document.
 * @param {Uint8Array | Uint8Array[]} docs
 * @param {any} o resolved options
 * @param {number} rowMode
 * @param {boolean} isCursor
 * @returns {object[]}
 */
function transcodeRows(docs, o, rowMode, isCursor) {
  return unpackRows(b.transcodeRows(docs, o.packed, o.maxOutputBytes, rowMode, isCursor, o.shaper))
}

/** Input bytes per pool task of {@link transcodeRowsAsync}. */
const ROWS_TASK_BYTES = 1024 * 1024

/**
 * Pool tasks of one {@link transcodeRowsAsync} call that run at once: one core is left to the
 * event loop, which makes each task's rows while the next ones run (with every core taken by
 * the pool, the event loop's thread waited for one mid-stretch).
 */
const ROWS_TASKS_AT_ONCE = Math.max(1, Math.min(4, availableParallelism() - 1))

/**
 * {@link transcodeRows} on the libuv pool (the input is copied before this returns). A batch
 * of more than {@link ROWS_TASK_BYTES} is cut at document boundaries into tasks of about that
 * size, every one copied now and run {@link ROWS_TASKS_AT_ONCE} at a time: each task's strings
 * and row objects are then made on the event loop in a stretch of their own, not all in one. A
 * failure is the first in input order, with its index and offset in the whole input, as one
 * task would report it.
 * @returns {Promise<object[]>}
 */
function transcodeRowsAsync(docs, o, rowMode, isCursor) {
  const parts = (isCursor ? undefined : rowsTasks(docs)) ?? [{ input: docs, index: 0, offset: 0 }]
  // every task's input is copied now, before any runs
  const prepared = parts.map((p) => b.prepareRows(p.input, o.packed, o.maxOutputBytes, rowMode, isCursor, o.shaper))
  const tasks = []
  /** Runs the tasks up to `i` not yet running. */
  const runUpTo = (i) => {
    for (let k = tasks.length; k <= i && k < parts.length; k++) {
      tasks.push(b.runRows(prepared[k]))
      // a task rejected (a panic) after an earlier failure is not an unhandled rejection
      tasks[k].catch(() => {})
    }
  }
  runUpTo(ROWS_TASKS_AT_ONCE - 1)
  const rows = []
  let chain = Promise.resolve()
  for (let i = 0; i < parts.length; i++) {
    // in input order, each task's rows made in a turn of the event loop of its own (the
    // first error in input order is the one reported; later tasks' rows are never made)
    chain = chain
      .then(() => tasks[i])
      .then((pending) => {
        runUpTo(i + ROWS_TASKS_AT_ONCE)
        return i === 0 ? pending : new Promise((resolve) => setImmediate(resolve, pending))
      })
      .then((pending) => {
        let packed
        try {
          packed = pending.take()
        } catch (e) {
          if (e !== null && typeof e === 'object') {
            if (typeof e.index === 'number') e.index += parts[i].index
            if (typeof e.offset === 'number') e.offset += parts[i].offset
          }
          throw e
        }
        for (const r of unpackRows(packed)) rows.push(r)
      })
  }
  return chain.then(() => rows)
}

/**
 * The tasks of a large batch (an array of documents, or one Uint8Array of concatenated
 * documents framed here by their length prefixes: a prefix that does not frame ends the
 * cutting, and the binding reports it), each `{ input, index, offset }` (its first document's
 * index and, for concatenated input, its byte offset); `undefined` for one task.
 * @returns {{ input: any, index: number, offset: number }[] | undefined}
 */
function rowsTasks(docs) {
  const parts = []
  if (Array.isArray(docs) && !types.isProxy(docs)) {
    // each element read once (an accessor may return something else the next time)
    const list = []
    let from = 0
    let bytes = 0
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]
      list.push(d)
      bytes += ArrayBuffer.isView(d) ? d.byteLength : 0
      if (bytes >= ROWS_TASK_BYTES && i + 1 < docs.length) {
        parts.push({ input: list.slice(from, i + 1), index: from, offset: 0 })
        from = i + 1
        bytes = 0
      }
    }
    if (parts.length === 0) return docs.length === list.length ? [{ input: list, index: 0, offset: 0 }] : undefined
    parts.push({ input: list.slice(from), index: from, offset: 0 })
    return parts
  }
  if (!(docs instanceof Uint8Array) || docs.byteLength <= ROWS_TASK_BYTES) return undefined
  const view = new DataView(docs.buffer, docs.byteOffset, docs.byteLength)
  let start = 0
  let at = 0
  let index = 0
  let count = 0
  while (at + 4 <= docs.byteLength) {
    const n = view.getInt32(at, true)
    if (n < 5 || at + n > docs.byteLength) break
    at += n
    count++
    if (at - start >= ROWS_TASK_BYTES && at < docs.byteLength) {
      parts.push({ input: docs.subarray(start, at), index, offset: start })
      index += count
      count = 0
      start = at
    }
  }
  if (parts.length === 0) return undefined
  parts.push({ input: docs.subarray(start), index, offset: start })
  return parts
}

/** Whether this build has the native dump pipeline ({@link dumpFile}): the native addon on a Unix (elsewhere it rejects). */
const DUMP_PIPELINE = backend.name === 'native' && process.platform !== 'win32' && typeof b.dumpFile === 'function'

/** V8's verdict on a `compat` regex for the pipeline: null if `new RegExp` accepts it, else its message. */
function regexMessage(pattern, flags) {
  try {
    new RegExp(pattern, flags) // oxlint-disable-line no-new
    return null
  } catch (e) {
    return e !== null && typeof e === 'object' && typeof e.message === 'string' ? e.message : 'SyntaxError'
  }
}

/**
 * The native dump pipeline: concatenated BSON, plain or gzip, from the file `job.input` (or
 * from the open descriptor `job.inFd` when it is not -1: stdin) to the open file descriptor
 * `job.outFd` as NDJSON (or one JSON array when `job.array`), read, decompressed, transcoded on
 * `job.threads` threads and written in order off the JS thread; a document above
 * `job.maxDocumentBytes` is a fault. `control` ({@link createDumpControl}) gives the progress
 * and cancels. Resolves with how it ended: `{ stop, documents, bytesRead, bsonRead,
 * bytesWritten, gzip, head, consumed?, code?, detail?, index?, offset?, errno?, message? }`.
 * @param {any} control
 * @param {{ input: string, inFd: number, outFd: number, array: boolean, threads: number, maxDocumentBytes: number }} job
 * @param {any} o resolved options
 * @returns {Promise<any>}
 */
function dumpFile(control, job, o) {
  return b.dumpFile(control, job, o.packed, o.maxOutputBytes, regexMessage)
}

/** A {@link dumpFile} control: `progress()` → `[documents, bytesRead, bytesWritten]`, `cancel()`. */
function createDumpControl() {
  return new b.DumpControl()
}

module.exports = {
  /** `'native'` or `'wasi'`: which build of the binding loaded. */
  name: backend.name,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_OUTPUT_BYTES,
  packOptions,
  OptionFlag,
  Layout,
  ShapeInput,
  EventFormat,
  LIST_LAYOUT,
  split,
  transcodeDefault,
  transcodeBufferDefault,
  transcode,
  transcodeBatch,
  transcodeBatchAsync,
  transcodeCursor,
  transcodeChangeBatch,
  transcodeChangeFragments,
  csvCursor,
  csvHeader,
  createShaper,
  recompileShaper,
  shape,
  RowTag,
  transcodeRow,
  transcodeRows,
  transcodeRowsAsync,
  DUMP_PIPELINE,
  dumpFile,
  createDumpControl,
}
