'use strict'

// `bson2json [dump]`: the fast counterpart of MongoDB's `bsondump`, the default command. Turns
// mongodump `.bson` / `.bson.gz` files (or stdin) into NDJSON or one JSON array.

const fs = require('fs')
const { CliError, usage, parseOptions, optionFlags, optionValues, choices, answer, describeIoError } = require('./usage')
const { Output } = require('./output')
const { isArchive } = require('./archive')
// Everything else is required where it is used: the native dump of a file (the common run,
// ~0.3 s for 200 MB) needs neither the transcode stream (and Node's streams), zlib, --pretty's
// indenter, the archive reader nor the --fields / --redact compilers, and start-up is part of
// every run (benchmark/cli-startup.sh).

const HELP = `bson2json - BSON to JSON, fast: the counterpart of MongoDB's \`bsondump\`

Usage:
  bson2json [dump] [options] [FILE]   FILE: a mongodump .bson or .bson.gz file; - reads stdin
  npx bson2json dump/db/orders.bson.gz -o orders.ndjson --stats

(A file named like a command needs a path or 'dump' before it: bson2json ./export.)

Reads concatenated BSON documents, or a mongodump --archive stream (gzip and the archive are
detected from their magic bytes, whatever the file name), and writes one JSON document per line
(NDJSON), or one JSON array with --array.
Default output is the compat dialect, byte-identical to JSON.stringify(BSON.deserialize(doc));
--dialect relaxed or canonical gives MongoDB Extended JSON v2 like bsondump.

Options:
  -o, --out FILE         write to FILE instead of stdout
  -a, --array            write one JSON array instead of NDJSON
  -d, --dialect NAME     ${choices('dialect')}
      --utf8 MODE        strict (default: invalid UTF-8 is an error) | replace (U+FFFD)
      --max-depth N      maximum nesting depth (default ${require('../option-table').OPTIONS.maxDepth.default})
      --threads N        transcode up to N batches at once, on N cores (default: the number
                         of cores; output order is the input's); 1 transcodes on one thread
      --skip-invalid     report each corrupt document on stderr and continue after it; after
                         a bad length, continue at the next plausible document (bytes skipped
                         are reported)
      --pretty           indent the JSON (a tab per level, like bsondump --pretty)
  -f, --fields a,b.c     keep only these fields (dotted paths through documents and arrays of
                         documents; _id is always kept, as in mongoexport)
      --fieldFile FILE   the same, one field per line
      --exclude a,b.c    drop these fields (dotted paths, like --fields; not with --fields)
      --redact a,b.c     keep these fields' keys but write null for their values, or with
                         --redact-key-file a stable pseudonym: the hex HMAC-SHA256 of the value
      --redact-key-file FILE  the HMAC key: the file's bytes (less one trailing newline)
      --nsInclude NS     from a mongodump --archive: the collections DB.COLL to convert (repeatable;
                         '*' matches any run of characters); needed when the archive holds several
  -q, --quiet            no progress bar, no per-document reports, no summary (errors still print)
      --progress         show a progress bar on stderr (default: only if stderr is a TTY)
      --no-progress      never show the progress bar
      --stats            print the summary even with --quiet (it adds MB/s)
  -h, --help             show this help
  -v, --version          print the version

At the end a summary goes to stderr: documents written (and skipped), MB of BSON in, MB of JSON
out, seconds. A failure prints one line instead, naming the file and the cause, with the same
counts: the documents written are complete (the output is a whole number of documents).

Exit status: 0 success (also when the reader of stdout goes away, as in | head); 1 corrupt or
truncated input, an unreadable input or an output that cannot be written (documents before the
failure are written; the message says where and how many); 2 usage error; 130/143 interrupted by
SIGINT/SIGTERM (the documents converted so far are written).
`

/** Batches in flight by default: one per core the process may use. */
function defaultThreads() {
  const os = require('os')
  return Math.max(1, Math.min(256, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length))
}

/** The option flags (lib/option-table.js) and dump's own. */
const OPTION_FLAGS = optionFlags('dump')
const SPEC = {
  values: {
    ...OPTION_FLAGS.values,
    '-o': 'out',
    '--out': 'out',
    '--nsInclude': 'nsInclude',
  },
  flags: {
    ...OPTION_FLAGS.flags,
    '-q': 'quiet',
    '--quiet': 'quiet',
    '--progress': 'progress',
    '--no-progress': 'noProgress',
    '--stats': 'stats',
    '--pretty': 'pretty',
  },
  repeatable: ['nsInclude'],
}

function parseArgs(argv) {
  const parsed = parseOptions(argv, SPEC)
  if (parsed.help || parsed.version) return parsed
  const r = optionValues('dump', parsed)
  const o = {
    file: null,
    out: r.out ?? null,
    array: r.format === 'array',
    dialect: r.dialect ?? 'compat',
    utf8: r.utf8 ?? 'strict',
    maxDepth: r.maxDepth,
    threads: r.concurrency,
    skipInvalid: r.skipInvalid === true,
    quiet: r.quiet === true,
    progress: r.progress === true ? true : r.noProgress === true ? false : undefined,
    stats: r.stats === true,
    pretty: r.pretty === true,
    fields: null,
    projection: undefined,
    redact: undefined,
    nsInclude: r.nsInclude ?? [],
    argFiles: [r.fieldFile, r.redactKeyFile].filter((f) => f !== undefined),
  }
  if (r.fields !== undefined && r.fieldFile !== undefined) usage('--fields and --fieldFile are exclusive')
  if (r.fields !== undefined) o.fields = fieldList(r.fields, false)
  if (r.fieldFile !== undefined) o.fields = fieldFile(r.fieldFile)
  Object.assign(o, shapeOptions(r, o.fields))
  const files = parsed.args
  if (files.length > 1) usage('at most one input file (or - for stdin)')
  o.file = files.length === 1 && files[0] !== '-' ? files[0] : null
  return o
}

/**
 * --fields / --exclude / --redact / --redact-key-file → the `projection` and `redact` options of
 * the transcode stream (the addon's projection: lib/shape.js), checked here (exit 2).
 * @param {Record<string, string>} r the parsed flags
 * @param {string[] | null} fields --fields or --fieldFile
 */
function shapeOptions(r, fields) {
  const out = { projection: undefined, redact: undefined }
  if (fields !== null && fields !== undefined) out.projection = require('./fields').serverProjection(fields)
  if (r.exclude !== undefined) {
    if (out.projection !== undefined) usage('--exclude and --fields are exclusive')
    out.projection = Object.fromEntries(fieldList(r.exclude, false, '--exclude').map((f) => [f, 0]))
  }
  if (r.redactKeyFile !== undefined && r.redact === undefined) usage('--redact-key-file needs --redact')
  if (r.redact !== undefined) {
    const paths = fieldList(r.redact, false, '--redact')
    out.redact = { paths }
    if (r.redactKeyFile !== undefined) {
      let key
      try {
        key = fs.readFileSync(r.redactKeyFile)
      } catch (e) {
        return usage(`--redact-key-file ${r.redactKeyFile}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`)
      }
      if (key.length > 0 && key[key.length - 1] === 0x0a) key = key.subarray(0, key.length - (key.length > 1 && key[key.length - 2] === 0x0d ? 2 : 1))
      if (key.length === 0) usage(`--redact-key-file ${r.redactKeyFile}: the file is empty`)
      out.redact = { paths, with: 'hmac-sha256', key }
    }
  }
  if (out.projection !== undefined || out.redact !== undefined) {
    try {
      require('../shape').checkShape(out.projection, out.redact)
    } catch (e) {
      usage(e.message.replace(/^bson2json: options\.(projection|redact)(?=[:[])/, (_, w) => (w === 'redact' ? '--redact' : r.exclude !== undefined ? '--exclude' : '--fields')).replace(/^bson2json: /, ''))
    }
  }
  return out
}

function fieldList(text, lines, flag) {
  try {
    return require('./fields').parseFieldList(text, { lines })
  } catch (e) {
    return usage(flag === undefined ? e.message : e.message.replace('--fields', flag))
  }
}

function fieldFile(path) {
  let text
  try {
    text = fs.readFileSync(path, 'utf8')
  } catch (e) {
    return usage(`--fieldFile ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`)
  }
  return fieldList(text, true)
}

const mb = (n) => (n / 1e6).toFixed(1)

function formatEta(s) {
  if (!Number.isFinite(s) || s < 0) return '?'
  if (s < 60) return `${Math.ceil(s)}s`
  const m = Math.floor(s / 60)
  return m < 60 ? `${m}m${String(Math.ceil(s % 60)).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`
}

/** Yields the source's chunks, having read the first four bytes (gzip and archive magic numbers). */
async function sniff(source) {
  const it = source[Symbol.asyncIterator]()
  const head = []
  let have = 0
  let done = false
  while (have < 4) {
    const r = await it.next()
    if (r.done) {
      done = true
      break
    }
    head.push(r.value)
    have += r.value.length
  }
  const first = Buffer.concat(head)
  const gzip = first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b
  async function* chunks() {
    if (first.length > 0) yield first
    if (done) return
    for (;;) {
      const r = await it.next()
      if (r.done) return
      yield r.value
    }
  }
  return { gzip, head: first, chunks: chunks() }
}

/** The first bytes of a regular file (up to 4), or null when it cannot be read. */
function fileHead(file) {
  const head = Buffer.alloc(4)
  try {
    const fd = fs.openSync(file, 'r')
    try {
      return head.subarray(0, fs.readSync(fd, head, 0, 4, 0))
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return null // the general path reports the error
  }
}

/** Whether the first bytes of a file look like plain BSON: neither gzip's nor an archive's magic number. */
function isPlainBson(head) {
  return head !== null && head.length === 4 && !(head[0] === 0x1f && head[1] === 0x8b) && !isArchive(head)
}

/** Whether the first bytes of a file are plain BSON's or gzip's (an archive's go to the stream). */
function isBsonOrGzip(head) {
  return head !== null && head.length === 4 && !isArchive(head)
}

/** Whether the native pipeline can read descriptor `fd` (stdin): a file, a pipe or a socket. */
function nativeReadable(fd) {
  try {
    const st = fs.fstatSync(fd)
    return st.isFile() || st.isFIFO() || st.isSocket()
  } catch {
    return false
  }
}

/** `head`, then the chunks of `rest` (stdin after the bytes the pipeline read). */
async function* replayed(head, rest) {
  if (head.length > 0) yield head
  yield* rest
}

/** A hint when the input's first bytes are text: a BSON file starts with a little-endian length. */
function notBsonHint(input) {
  if (input === null || input.length === 0) return ''
  const head = input.subarray(0, 4) // the bytes read as the first document's length
  for (const c of head) if (!(c === 0x09 || c === 0x0a || c === 0x0d || (c >= 0x20 && c < 0x7f))) return ''
  return `; the input does not look like BSON (starts with ${JSON.stringify(head.toString('latin1'))})`
}

/** The transcoder's message without the position it appends (the CLI says the position once). */
function withoutPosition(message) {
  return message.replace(/ \(document \d+, (?:byte \d+ of the document, )?byte offset \d+ in the stream\)$/s, '')
}

function countLines(buf) {
  let n = 0
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n++
  return n
}

const COMMANDS = 'dump, export, cdc, help'

/**
 * The files this dump reads, which its output must not be: the input (`st`: its stat; stdin's
 * when it is a file) and --fieldFile / --redact-key-file.
 */
function inputFiles(opts, st) {
  const inputs = []
  if (st !== null) inputs.push({ name: opts.file, st })
  else if (opts.file === null) {
    try {
      inputs.push({ name: 'stdin', st: fs.fstatSync(0) })
    } catch {
      // no stdin: nothing to compare
    }
  }
  for (const f of opts.argFiles) {
    try {
      inputs.push({ name: f, st: fs.statSync(f) })
    } catch {
      // read already, so there; gone since: nothing to compare
    }
  }
  return inputs
}

/**
 * @param {string[]} argv
 * @param {{ implicit?: boolean }} [context] `implicit`: the command name was not given
 *   (`bson2json FILE`), so a missing bare word may be a mistyped command
 * @returns {Promise<number>} the exit status; failures throw a CliError
 */
async function main(argv, context = {}) {
  const opts = parseArgs(argv)
  const answered = answer(opts, HELP)
  if (answered !== null) return answered
  const name = opts.file === null ? '<stdin>' : opts.file
  const threads = opts.threads === undefined ? defaultThreads() : opts.threads
  // The pool runs the batches and the file reads: one thread more than the batches in flight.
  // libuv reads the variable when the pool first starts, which is after this point.
  if (process.env.UV_THREADPOOL_SIZE === undefined && threads + 1 > 4) process.env.UV_THREADPOOL_SIZE = String(threads + 1)

  let totalIn = null
  let head = null
  let st = null
  if (opts.file !== null) {
    try {
      st = fs.statSync(opts.file)
    } catch (e) {
      if (e.code !== 'ENOENT') throw new CliError(`${opts.file}: ${describeIoError(e)}`)
      if (context.implicit && argv[0] === opts.file && !/[./\\]/.test(opts.file)) {
        throw new CliError(`'${opts.file}' is neither a command nor a file (commands: ${COMMANDS})`, 2)
      }
      throw new CliError(`${opts.file}: no such file`, 2)
    }
    if (st.isDirectory()) usage(`${opts.file} is a directory`)
    if (st.isFile()) {
      totalIn = st.size
      head = fileHead(opts.file)
    }
  }

  const layout = opts.array ? 'chunks' : opts.pretty ? 'pretty' : 'ndjson'
  const output = Output.open(opts.out, layout, inputFiles(opts, st)) // throws: cannot write FILE: … (or the output is an input)
  let plain = totalIn !== null && opts.nsInclude.length === 0 && isPlainBson(head)
  // An archive is handed back by the pipeline (with the bytes of stdin it read) to the stream.
  let handedBack = false
  let replay = null
  if (opts.nsInclude.length === 0 && nativeApplies(opts, output)) {
    const stdin = opts.file === null && nativeReadable(0)
    if (stdin || (totalIn !== null && isBsonOrGzip(head))) {
      const done = await dumpNative(opts, name, output, head, threads, totalIn, stdin)
      if (done.archive === undefined) return done.status
      // a mongodump --archive (perhaps gzip): the stream unpacks it; nothing was written
      handedBack = true
      plain = false
      if (stdin) replay = done.archive
    }
  }
  if (process.env.BSON2JSON_DUMP === 'native' && !handedBack) {
    // the tests' check that a dump they compare ran natively (an archive goes to the stream)
    throw new CliError('BSON2JSON_DUMP=native: this dump takes the transcode stream', 2)
  }
  const { createTranscodeStream } = require('../transcode/stream')
  const input =
    replay !== null
      ? require('stream').Readable.from(replayed(replay, process.stdin), { objectMode: false })
      : opts.file === null
        ? process.stdin
        : fs.createReadStream(opts.file, { highWaterMark: 1 << 20 })

  // Up to `threads` 1 MiB batches are transcoded at once on the libuv thread pool while the main
  // thread reads and writes (benchmark/vs-bsondump.sh measures the speed-up).
  const transcoder = createTranscodeStream({
    format: 'ndjson',
    dialect: opts.dialect,
    utf8: opts.utf8,
    maxDepth: opts.maxDepth,
    concurrency: threads,
    skipInvalid: opts.skipInvalid,
    // --fields / --exclude / --redact: the addon's projection, ahead of the transcoder
    projection: opts.projection,
    redact: opts.redact,
  })
  const fail = (e) => transcoder.destroy(e)
  // Listened to from the start: a failure may come while the input is still being sniffed.
  const finished = new Promise((resolve, reject) => {
    transcoder.once('end', resolve)
    transcoder.once('error', reject)
  })
  finished.catch(() => {})
  let bytesRead = 0
  let bsonIn = 0
  let gzip = false
  // A mongodump --archive (after gzip, if any) is unpacked to the documents of the selected
  // namespaces. `archive.origin` maps a document index back to the input's bytes for error
  // messages.
  let archive = null
  let source = input
  if (plain) {
    // A regular file of plain BSON goes straight from the file into the transcoder, without
    // the generators that unpack the other inputs (they cost a fifth of the throughput).
    input.on('data', (c) => {
      bytesRead += c.length
      bsonIn += c.length
    })
    input.on('error', fail)
    input.pipe(transcoder)
  } else {
    const counted = (async function* () {
      for await (const c of input) {
        bytesRead += c.length
        yield c
      }
    })()
    const { Readable } = require('stream')
    let bson
    try {
      const sniffed = await sniff(counted)
      gzip = sniffed.gzip
      const raw = Readable.from(sniffed.chunks, { objectMode: false })
      raw.on('error', fail)
      bson = raw
      if (gzip) {
        const gunzip = require('zlib').createGunzip()
        gunzip.on('error', (e) => fail(Object.assign(new Error(`the gzip data is truncated or corrupt: ${e.message}`), { gzipError: true })))
        bson = raw.pipe(gunzip)
      }
    } catch (e) {
      fail(e)
    }
    async function* documents() {
      const s = await sniff(bson)
      head = s.head
      // The input's BSON bytes, before any projection (what --stats reports as "in").
      const counted = (async function* () {
        for await (const c of s.chunks) {
          bsonIn += c.length
          yield c
        }
      })()
      if (isArchive(s.head)) {
        archive = require('./archive').readArchive(counted, opts.nsInclude)
        yield* archive.chunks
      } else {
        if (opts.nsInclude.length > 0) throw Object.assign(new Error('--nsInclude applies to a mongodump --archive input only'), { usage: true })
        yield* counted
      }
    }
    if (!transcoder.destroyed) {
      source = Readable.from(documents(), { objectMode: false })
      source.on('error', fail)
      source.pipe(transcoder)
    }
  }

  const indenter = opts.pretty ? new (require('./pretty').Indenter)() : null
  const run = startRun(opts, totalIn, () => bytesRead, () => transcoder.documents)
  const clearLine = run.clearLine
  let skipped = 0
  let bytesSkipped = 0
  // Error positions are the transcoder's (in the input, with a projection too); from an archive
  // they are mapped back.
  const inputOffset = (index, offset) => {
    const o = archive === null ? offset : archive.origin(index, offset)
    return o === null ? `${offset} (of the archive documents)` : o
  }
  transcoder.on('skip', ({ index, offset: at, error, bytesSkipped: bytes }) => {
    skipped++
    bytesSkipped += bytes
    if (!opts.quiet) {
      const what = bytes === undefined ? '' : ` (${bytes} byte${bytes === 1 ? '' : 's'})`
      process.stderr.write(
        `${clearLine()}bson2json: ${name}: skipped corrupt document ${index} at byte offset ${inputOffset(index, at)}${what}: ${withoutPosition(error.message)}\n`,
      )
    }
  })

  // SIGINT / SIGTERM: stop reading, write what is converted (whole documents), say so.
  const offSignals = onSignals((sig, exitCode) => fail(new CliError(`interrupted by ${sig}`, exitCode)))

  const OUTPUT_FAILED = new Error('output failed')
  let first = true
  let error = null
  try {
    // 'data' events hand over each output chunk as pushed (async iteration would join the
    // chunks buffered meanwhile into one new Buffer: a copy of the whole output).
    await new Promise((resolve, reject) => {
      transcoder.on('data', (chunk) => {
        const docs = countLines(chunk)
        if (docs === 0) return
        let text = chunk
        if (opts.array) {
          // NDJSON -> array elements: every '\n' becomes ',' (JSON text has no raw newlines)
          text = Buffer.from(chunk)
          for (let i = text.indexOf(0x0a); i !== -1; i = text.indexOf(0x0a, i + 1)) text[i] = 0x2c
          text = Buffer.concat([first ? OPEN : COMMA, text.subarray(0, text.length - 1)])
        }
        first = false
        if (indenter !== null) text = indenter.push(text)
        if (!output.write(text, docs)) {
          transcoder.pause()
          output.drained().then(() => (output.error !== null ? transcoder.destroy(OUTPUT_FAILED) : transcoder.resume()))
        }
      })
      finished.then(resolve, reject)
    })
    if (opts.array) {
      const close = first ? EMPTY_ARRAY : CLOSE
      output.write(Buffer.concat([indenter === null ? close : indenter.push(close), NEWLINE]), 0)
    }
  } catch (e) {
    error = e === OUTPUT_FAILED ? null : e
  }
  offSignals()
  run.stop()
  input.unpipe?.()
  if (source !== input) source.destroy()
  input.destroy() // stdin too: a pipe still open would keep the process alive after an error
  if (replay !== null) process.stdin.destroy()
  await output.finish()
  if (output.closedByReader) return 0 // `bson2json x.bson | head`: the reader is gone
  return report(opts, { name, output, error, head, gzip, bsonIn, bytesRead, skipped, bytesSkipped, inputOffset, elapsed: run.elapsed() })
}

/**
 * Progress (a bar on stderr, redrawn every 250 ms when asked for) and the run's clock.
 * @param {any} opts
 * @param {number | null} totalIn the input's size, when known
 * @param {() => number} bytesRead
 * @param {() => number} documents
 */
function startRun(opts, totalIn, bytesRead, documents) {
  const showProgress = !opts.quiet && (opts.progress === undefined ? process.stderr.isTTY === true : opts.progress)
  const started = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
  let progressShown = false
  function clearLine() {
    if (!progressShown) return ''
    progressShown = false
    return process.stderr.isTTY ? '\r\x1b[K' : '\n'
  }
  function drawProgress() {
    const s = elapsed()
    const read = bytesRead()
    const rate = read / Math.max(s, 1e-9)
    let line = `${mb(read)} MB`
    if (totalIn !== null) {
      const pct = totalIn > 0 ? Math.min(100, (read / totalIn) * 100) : 100
      line += ` / ${mb(totalIn)} MB ${pct.toFixed(0).padStart(3)}%`
    }
    line += `  ${documents().toLocaleString('en-US')} docs  ${mb(rate)} MB/s`
    if (totalIn !== null) line += `  ETA ${formatEta((totalIn - read) / rate)}`
    process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}${line}${process.stderr.isTTY ? '' : '\n'}`)
    progressShown = process.stderr.isTTY === true
  }
  const timer = showProgress ? setInterval(drawProgress, 250) : null
  return {
    elapsed,
    clearLine,
    stop() {
      if (timer === null) return
      clearInterval(timer)
      drawProgress()
      process.stderr.write(clearLine())
    },
  }
}

/** SIGINT / SIGTERM call `handler(signal, exitCode)` (once each); returns the function that stops listening. */
function onSignals(handler) {
  const signals = { SIGINT: 130, SIGTERM: 143 }
  const onSignal = (sig) => handler(sig, signals[sig])
  for (const sig of Object.keys(signals)) process.once(sig, onSignal)
  return () => {
    for (const sig of Object.keys(signals)) process.off(sig, onSignal)
  }
}

/**
 * The end of a run: the summary line (exit 0), or the failure's one line with the counts
 * (a thrown CliError).
 */
function report(opts, r) {
  const { name, output, error, head, gzip, bsonIn, bytesRead, skipped, bytesSkipped, inputOffset, elapsed: s } = r
  const counts =
    `${output.documents} documents${error === null && output.error === null ? '' : ' written'}` +
    `${skipped ? ` (${skipped} skipped, ${bytesSkipped} bytes)` : ''}, ` +
    `${mb(bsonIn)} MB BSON in${gzip ? ` (${mb(bytesRead)} MB gzip)` : ''}, ${mb(output.bytes)} MB JSON out, ${s.toFixed(2)} s`
  if (output.error !== null) throw new CliError(`${output.describe()} (${counts})`)
  if (error !== null) {
    let msg
    if (error instanceof CliError) {
      throw new CliError(`${name}: ${error.message} (${counts})`, error.exitCode)
    } else if (typeof error.code === 'string' && error.code.startsWith('BSON_') && typeof error.index === 'number') {
      msg =
        `${name}: corrupt BSON at document ${error.index}, byte offset ${inputOffset(error.index, error.offset)}${gzip ? ' (of the decompressed data)' : ''}: ` +
        `${withoutPosition(error.message)}${error.index === 0 ? notBsonHint(head) : ''}`
    } else if (typeof error.code === 'string' && error.syscall !== undefined) {
      msg = `${name}: cannot read: ${describeIoError(error)}`
    } else {
      msg = `${name}: ${error.message}`
    }
    throw new CliError(`${msg} (${counts})`, error.usage === true ? 2 : 1)
  }
  if (!opts.quiet || opts.stats) process.stderr.write(`bson2json: ${counts}, ${mb(bsonIn / Math.max(s, 1e-9))} MB/s\n`)
  return 0
}

/**
 * Whether the native pipeline (lib/native `dumpFile`) runs this dump: a regular file of plain
 * or gzip BSON, or stdin from a file, a pipe or a socket (the caller checks; a mongodump
 * --archive is handed back to the stream), NDJSON or one array, no --pretty, --skip-invalid or
 * projection, to an output the pipeline can write itself (a file, a device, stdout to a pipe or
 * a socket; a terminal stays on process.stdout), in a build that has it. Everything else takes
 * the transcode stream.
 * `BSON2JSON_DUMP=stream` forces the stream (the tests compare the two); `BSON2JSON_DUMP=native`
 * fails a dump that would take the stream for another reason than an archive (exit 2).
 */
function nativeApplies(opts, output) {
  const native = require('../native')
  return (
    native.DUMP_PIPELINE &&
    process.env.BSON2JSON_DUMP !== 'stream' &&
    !opts.pretty &&
    !opts.skipInvalid &&
    opts.projection === undefined &&
    opts.redact === undefined &&
    output.nativeWritable
  )
}

/** An I/O error of the pipeline as Node reports one: `code`, `errno`, `syscall`. */
function ioError(outcome, syscall) {
  let code = 'EIO'
  if (typeof outcome.errno === 'number' && outcome.errno > 0) {
    try {
      code = require('util').getSystemErrorName(-outcome.errno)
    } catch {
      // an errno Node does not name: keep EIO's words
    }
  }
  const e = new Error(`${code}: ${outcome.message}, ${syscall}`)
  return Object.assign(e, { code, errno: -(outcome.errno ?? 0), syscall })
}

/**
 * `dump` through the native pipeline: the file or stdin is read, decompressed (gzip),
 * transcoded on `threads` threads and written to the output's descriptor off the JS thread;
 * JavaScript polls the progress, cancels on a signal, and reports exactly as the stream path
 * does. Resolves with `{ status }`, the exit status, or `{ archive }` when the input is a
 * mongodump --archive (nothing written; `archive`: the bytes of stdin read).
 */
async function dumpNative(opts, name, output, head, threads, totalIn, stdin) {
  const native = require('../native')
  const { resolveOptions } = require('../options')
  const { transcodeError } = require('../errors')
  const o = resolveOptions({ dialect: opts.dialect, utf8: opts.utf8, maxDepth: opts.maxDepth })
  const control = native.createDumpControl()
  const progress = () => control.progress()
  const run = startRun(opts, totalIn, () => progress()[1], () => progress()[0])
  let interrupted = null
  const offSignals = onSignals((sig, exitCode) => {
    if (interrupted === null) interrupted = new CliError(`interrupted by ${sig}`, exitCode)
    control.cancel()
  })
  let outcome
  try {
    outcome = await native.dumpFile(control, stdin ? '' : opts.file, stdin ? 0 : -1, output.fd, opts.array, o, threads, MAX_DOCUMENT_BYTES)
  } finally {
    offSignals()
    run.stop()
  }
  if (outcome.stop === 'archive' && interrupted === null) return { archive: outcome.consumed }
  output.recordNative(outcome.documents, outcome.bytesWritten, outcome.stop === 'write' ? ioError(outcome, 'write') : null)
  await output.finish()
  if (output.closedByReader) return { status: 0 } // `bson2json x.bson | head`: the reader is gone
  let error = null
  if (outcome.stop === 'cancelled') error = interrupted ?? new CliError('interrupted', 130)
  else if (outcome.stop === 'bson') error = transcodeError(outcome.code, outcome.detail, outcome.index, outcome.offset)
  else if (outcome.stop === 'gzip') error = new Error(`the gzip data is truncated or corrupt: ${outcome.message}`)
  else if (outcome.stop === 'read') error = ioError(outcome, 'read')
  const status = report(opts, {
    name,
    output,
    error,
    head: outcome.head,
    gzip: outcome.gzip,
    bsonIn: outcome.bsonRead,
    bytesRead: outcome.bytesRead,
    skipped: 0,
    bytesSkipped: 0,
    inputOffset: (index, offset) => offset,
    elapsed: run.elapsed(),
  })
  return { status }
}

/**
 * The largest document the native pipeline accepts: the transcode stream's default
 * (lib/transcode/stream.js `DEFAULT_MAX_DOCUMENT_BYTES`, which __test__/cli/cli-startup.spec.ts checks
 * this equals), written here so that the native path does not load the stream module.
 */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

const OPEN = Buffer.from('[')
const COMMA = Buffer.from(',')
const CLOSE = Buffer.from(']')
const EMPTY_ARRAY = Buffer.from('[]')
const NEWLINE = Buffer.from('\n')

module.exports = { main, parseArgs, HELP, MAX_DOCUMENT_BYTES }
