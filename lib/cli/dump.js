'use strict'

// `bson2json [dump]`: the fast counterpart of MongoDB's `bsondump`, the default command. Turns
// mongodump `.bson` / `.bson.gz` files (or stdin) into NDJSON or one JSON array.

const fs = require('fs')
const { CliError, usage, parseOptions, optionFlags, optionValues, choices, answer, describeIoError, quoteName, onSignals } = require('./usage')
const { Output } = require('./output')
const { chooseEngine, fileHead } = require('./dump-engine')
const { startRun, report } = require('./dump-run')
// Everything else is required where it is used: the native dump of a file (the common run)
// needs neither the transcode stream (lib/cli/dump-stream.js, and Node's streams), zlib,
// --pretty's indenter, the archive reader nor the --fields / --redact compilers, and start-up
// is part of every run (benchmark/cli-startup.sh).

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
 * The input: a file (stat, first bytes) or stdin. A missing file, a directory (also on stdin) and
 * a bare word that is neither a command nor a file are usage errors.
 * @returns {{ name: string, file: string | null, st: import('fs').Stats | null, regular: boolean,
 *   size: number | null, head: Buffer | null }}
 */
function openInput(opts, argv, context) {
  const input = { name: opts.file === null ? '<stdin>' : quoteName(opts.file), file: opts.file, st: null, regular: false, size: null, head: null }
  if (opts.file === null) {
    let st = null
    try {
      st = fs.fstatSync(0)
    } catch {
      // no stdin: the read reports it
    }
    if (st !== null && st.isDirectory()) usage('stdin is a directory: give a FILE, or pipe BSON into stdin')
    return input
  }
  try {
    input.st = fs.statSync(opts.file)
  } catch (e) {
    if (e.code !== 'ENOENT') throw new CliError(`${input.name}: ${describeIoError(e)}`)
    if (context.implicit && argv[0] === opts.file && !/[./\\]/.test(opts.file)) {
      throw new CliError(`'${input.name}' is neither a command nor a file (commands: ${COMMANDS})`, 2)
    }
    throw new CliError(`${input.name}: no such file`, 2)
  }
  if (input.st.isDirectory()) usage(`${input.name} is a directory`)
  if (input.st.isFile()) {
    input.regular = true
    input.size = input.st.size
    input.head = fileHead(opts.file)
  }
  return input
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
  const input = openInput(opts, argv, context)
  const threads = opts.threads === undefined ? defaultThreads() : opts.threads
  // The pool runs the batches and the file reads: one thread more than the batches in flight.
  // libuv reads the variable when the pool first starts, which is after this point.
  if (process.env.UV_THREADPOOL_SIZE === undefined && threads + 1 > 4) process.env.UV_THREADPOOL_SIZE = String(threads + 1)
  const layout = opts.array ? 'chunks' : opts.pretty ? 'pretty' : 'ndjson'
  const output = Output.open(opts.out, layout, inputFiles(opts, input.st)) // throws: cannot write FILE: … (or the output is an input)
  let replay = null
  const { engine, stdin } = chooseEngine(opts, input, output)
  if (engine === 'native') {
    const done = await dumpNative(opts, input, output, threads, stdin)
    if (done.archive === undefined) return done.status
    // a mongodump --archive (perhaps gzip): the stream unpacks it; nothing was written
    replay = stdin ? done.archive : null
  } else if (process.env.BSON2JSON_DUMP === 'native') {
    // the tests' check that a dump they compare ran natively (an archive goes to the stream)
    throw new CliError('BSON2JSON_DUMP=native: this dump takes the transcode stream', 2)
  }
  return require('./dump-stream').dumpStream(opts, input, output, threads, replay)
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
async function dumpNative(opts, input, output, threads, stdin) {
  const native = require('../native')
  const { resolveOptions } = require('../options')
  const { transcodeError } = require('../errors')
  const o = resolveOptions({ dialect: opts.dialect, utf8: opts.utf8, maxDepth: opts.maxDepth })
  const control = native.createDumpControl()
  const progress = () => control.progress()
  const run = startRun(opts, input.size, () => progress()[1], () => progress()[0])
  let interrupted = null
  const offSignals = onSignals(
    (sig, exitCode) => {
      if (interrupted === null) interrupted = new CliError(`interrupted by ${sig}`, exitCode)
      control.cancel()
    },
    // a pipeline that does not stop (a write blocked on a pipe nobody reads): what it converted
    (sig) => `${input.name}: interrupted by ${sig} (${progress()[0]} documents converted, the last ones perhaps not written)`,
  )
  try {
    let outcome
    try {
      const job = { input: stdin ? '' : opts.file, inFd: stdin ? 0 : -1, outFd: output.fd, array: opts.array, threads, maxDocumentBytes: MAX_DOCUMENT_BYTES }
      outcome = await native.dumpFile(control, job, o)
    } finally {
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
      name: input.name,
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
  } finally {
    offSignals()
  }
}

/**
 * The largest document the native pipeline accepts: the transcode stream's default
 * (lib/transcode/stream.js `DEFAULT_MAX_DOCUMENT_BYTES`, which __test__/cli/cli-startup.spec.ts checks
 * this equals), written here so that the native path does not load the stream module.
 */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024


module.exports = { main, parseArgs, HELP, MAX_DOCUMENT_BYTES }
