'use strict'

// `bson2json [dump]`: the fast counterpart of MongoDB's `bsondump`, the default command. Turns
// mongodump `.bson` / `.bson.gz` files (or stdin) into NDJSON or one JSON array.

const fs = require('fs')
const os = require('os')
const zlib = require('zlib')
const { once } = require('events')
const { parseFieldList, pathTree } = require('./fields')
const { Indenter } = require('./pretty')
const { projectChunks } = require('./project-stream')
const { readArchive, isArchive } = require('./archive')

const HELP = `bson2json - BSON to JSON, fast: the counterpart of MongoDB's \`bsondump\`

Usage:
  bson2json [dump] [options] [FILE] FILE: a mongodump .bson or .bson.gz file; none or - reads stdin
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
  -d, --dialect NAME     compat (default) | relaxed | canonical
      --utf8 MODE        strict (default: invalid UTF-8 is an error) | replace (U+FFFD)
      --max-depth N      maximum nesting depth (default 1000)
      --threads N        transcode up to N batches at once, on N cores (default: the number
                         of cores; output order is the input's); 1 transcodes on the main thread
      --skip-invalid     report each corrupt document on stderr and continue after it
      --pretty           indent the JSON (a tab per level, like bsondump --pretty)
  -f, --fields a,b.c     keep only these fields (dotted paths; _id is always kept, as in mongoexport)
      --fieldFile FILE   the same, one field per line
      --nsInclude NS     from a mongodump --archive: the collections DB.COLL to convert (repeatable;
                         '*' matches any run of characters); needed when the archive holds several
  -q, --quiet            no progress bar and no per-document reports
      --progress         show a progress bar on stderr (default: only if stderr is a TTY)
      --no-progress      never show the progress bar
      --stats            print a summary to stderr: documents, bytes in/out, seconds, MB/s
  -h, --help             show this help
  -v, --version          print the version

Exit status: 0 success, 1 corrupt or truncated input (documents before the bad one are
written; the message names the file, document index and byte offset), 2 usage error.
`

/** Batches in flight by default: one per core the process may use. */
function defaultThreads() {
  return Math.max(1, Math.min(256, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length))
}

function usageError(msg) {
  process.stderr.write(`bson2json: ${msg}\nTry 'bson2json --help'.\n`)
  process.exit(2)
}

function parseArgs(argv) {
  const o = {
    file: null,
    out: null,
    array: false,
    dialect: 'compat',
    utf8: 'strict',
    maxDepth: undefined,
    threads: undefined,
    skipInvalid: false,
    quiet: false,
    progress: undefined,
    stats: false,
    pretty: false,
    fields: null,
    nsInclude: [],
  }
  const files = []
  let noMoreFlags = false
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]
    if (noMoreFlags || a === '-' || !a.startsWith('-')) {
      files.push(a)
      continue
    }
    if (a === '--') {
      noMoreFlags = true
      continue
    }
    let inline = null
    const eq = a.indexOf('=')
    if (a.startsWith('--') && eq !== -1) {
      inline = a.slice(eq + 1)
      a = a.slice(0, eq)
    }
    const value = () => {
      if (inline !== null) return inline
      if (i + 1 >= argv.length) usageError(`option ${a} needs a value`)
      return argv[++i]
    }
    const int = (name) => {
      const v = value()
      const n = Number(v)
      if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) usageError(`${name} must be a positive integer, got '${v}'`)
      return n
    }
    switch (a) {
      case '-h':
      case '--help':
        process.stdout.write(HELP)
        process.exit(0)
        break
      case '-v':
      case '--version':
        process.stdout.write(`${require('../../package.json').version}\n`)
        process.exit(0)
        break
      case '-o':
      case '--out':
        o.out = value()
        break
      case '-a':
      case '--array':
        o.array = true
        break
      case '-d':
      case '--dialect':
        o.dialect = value()
        if (!['compat', 'relaxed', 'canonical'].includes(o.dialect)) {
          usageError(`--dialect must be compat, relaxed or canonical, got '${o.dialect}'`)
        }
        break
      case '--utf8':
        o.utf8 = value()
        if (o.utf8 !== 'strict' && o.utf8 !== 'replace') usageError(`--utf8 must be strict or replace, got '${o.utf8}'`)
        break
      case '--max-depth':
        o.maxDepth = int('--max-depth')
        break
      case '--threads':
        o.threads = int('--threads')
        if (o.threads > 256) usageError('--threads must be at most 256')
        break
      case '--skip-invalid':
        o.skipInvalid = true
        break
      case '-q':
      case '--quiet':
        o.quiet = true
        break
      case '--progress':
        o.progress = true
        break
      case '--no-progress':
        o.progress = false
        break
      case '--stats':
        o.stats = true
        break
      case '--pretty':
        o.pretty = true
        break
      case '-f':
      case '--fields':
        o.fields = fieldList(value(), false)
        break
      case '--fieldFile':
        o.fields = fieldFile(value())
        break
      case '--nsInclude':
        o.nsInclude.push(value())
        break
      default:
        usageError(`unknown option '${a}'`)
    }
    if (inline !== null && !['--out', '--dialect', '--utf8', '--max-depth', '--threads', '--fields', '--fieldFile', '--nsInclude'].includes(a)) {
      usageError(`option ${a} takes no value`)
    }
  }
  if (files.length > 1) usageError('at most one input file (or - for stdin)')
  o.file = files.length === 1 && files[0] !== '-' ? files[0] : null
  return o
}

function fieldList(text, lines) {
  try {
    return parseFieldList(text, { lines })
  } catch (e) {
    return usageError(e.message)
  }
}

function fieldFile(path) {
  let text
  try {
    text = fs.readFileSync(path, 'utf8')
  } catch (e) {
    return usageError(`--fieldFile ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`)
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

/** Whether a regular file starts like plain BSON: neither gzip's nor an archive's magic number. */
function isPlainBson(file) {
  const head = Buffer.alloc(4)
  let n
  try {
    const fd = fs.openSync(file, 'r')
    try {
      n = fs.readSync(fd, head, 0, 4, 0)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return false // the general path reports the error
  }
  return n === 4 && !(head[0] === 0x1f && head[1] === 0x8b) && !isArchive(head)
}

async function main(argv) {
  const opts = parseArgs(argv)
  const { createTranscodeStream } = require('../..')
  const name = opts.file === null ? '<stdin>' : opts.file
  const threads = opts.threads === undefined ? defaultThreads() : opts.threads
  // The pool runs the batches and the file reads: one thread more than the batches in flight.
  // libuv reads the variable when the pool first starts, which is after this point.
  if (process.env.UV_THREADPOOL_SIZE === undefined && threads + 1 > 4) process.env.UV_THREADPOOL_SIZE = String(threads + 1)

  let input
  let totalIn = null
  if (opts.file === null) {
    input = process.stdin
  } else {
    let st
    try {
      st = fs.statSync(opts.file)
    } catch (e) {
      process.stderr.write(`bson2json: ${opts.file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}\n`)
      process.exit(2)
    }
    if (st.isDirectory()) usageError(`${opts.file} is a directory`)
    if (st.isFile()) totalIn = st.size
    input = fs.createReadStream(opts.file, { highWaterMark: 1 << 20 })
  }

  // Up to `threads` 1 MiB batches are transcoded at once on the libuv thread pool while the main
  // thread reads and writes (benchmark/vs-bsondump.sh measures the speed-up).
  const transcoder = createTranscodeStream({
    format: opts.array ? 'array' : 'ndjson',
    dialect: opts.dialect,
    utf8: opts.utf8,
    maxDepth: opts.maxDepth,
    concurrency: threads,
    skipInvalid: opts.skipInvalid,
  })
  const fail = (e) => transcoder.destroy(e)
  let bytesRead = 0
  let gzip = false
  // A mongodump --archive (after gzip, if any) is unpacked to the documents of the selected
  // namespaces; --fields projects documents before the transcoder. `archive.origin` and
  // `projection.origin` map a document index back to the input's bytes for error messages.
  let archive = null
  let projection = null
  if (totalIn !== null && opts.fields === null && opts.nsInclude.length === 0 && isPlainBson(opts.file)) {
    // A regular file of plain BSON goes straight from the file into the transcoder, without
    // the generators that unpack the other inputs (they cost a fifth of the throughput).
    input.on('data', (c) => {
      bytesRead += c.length
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
    const sniffed = await sniff(counted)
    gzip = sniffed.gzip
    const { Readable } = require('stream')
    const source = Readable.from(sniffed.chunks, { objectMode: false })
    source.on('error', fail)
    let bson = source
    if (gzip) {
      const gunzip = zlib.createGunzip()
      gunzip.on('error', (e) => fail(Object.assign(new Error(`gzip: ${e.message}`), { gzipError: true })))
      bson = source.pipe(gunzip)
    }
    async function* documents() {
      const s = await sniff(bson)
      if (isArchive(s.head)) {
        archive = readArchive(s.chunks, opts.nsInclude)
        yield* archive.chunks
      } else {
        if (opts.nsInclude.length > 0) throw Object.assign(new Error('--nsInclude applies to a mongodump --archive input only'), { usage: true })
        yield* s.chunks
      }
    }
    const docs = documents()
    projection = opts.fields === null ? null : projectChunks(docs, pathTree(opts.fields))
    Readable.from(projection === null ? docs : projection.chunks, { objectMode: false })
      .on('error', fail)
      .pipe(transcoder)
  }

  let out = process.stdout
  if (opts.out !== null) {
    out = fs.createWriteStream(opts.out)
    try {
      await once(out, 'open')
    } catch (e) {
      process.stderr.write(`bson2json: cannot write ${opts.out}: ${e.message}\n`)
      process.exit(2)
    }
  }
  const indenter = opts.pretty ? new Indenter() : null
  let outError = null
  out.on('error', (e) => {
    outError = e
    if (e.code === 'EPIPE') process.exit(0) // `bson2json x.bson | head`: the reader is gone
    transcoder.destroy(e)
  })

  let skipped = 0
  // Error positions are the transcoder's; with --fields or an archive they are mapped back.
  const inputOffset = (index, offset) => {
    let o = offset
    if (projection !== null) o = projection.origin(index, o)
    if (o !== null && archive !== null) o = archive.origin(index, o)
    return o === null ? `${offset} (of the ${archive !== null ? 'archive documents' : 'projected stream'})` : o
  }
  const plainMessage = (e) =>
    projection === null && archive === null ? e.message : e.message.replace(/ \(document \d+, .*byte offset \d+ in the stream\)$/s, '')
  transcoder.on('skip', ({ index, offset: at, error }) => {
    const offset = inputOffset(index, at)
    error = { message: plainMessage(error) }
    skipped++
    if (!opts.quiet) {
      process.stderr.write(`${clearLine()}bson2json: ${name}: skipped corrupt document ${index} at byte offset ${offset}: ${error.message}\n`)
    }
  })

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
    const rate = bytesRead / Math.max(s, 1e-9)
    let line = `${mb(bytesRead)} MB`
    if (totalIn !== null) {
      const pct = totalIn > 0 ? Math.min(100, (bytesRead / totalIn) * 100) : 100
      line += ` / ${mb(totalIn)} MB ${pct.toFixed(0).padStart(3)}%`
    }
    line += `  ${transcoder.documents.toLocaleString('en-US')} docs  ${mb(rate)} MB/s`
    if (totalIn !== null) line += `  ETA ${formatEta((totalIn - bytesRead) / rate)}`
    process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}${line}${process.stderr.isTTY ? '' : '\n'}`)
    progressShown = process.stderr.isTTY === true
  }
  const timer = showProgress ? setInterval(drawProgress, 250) : null

  let bytesOut = 0
  let error = null
  try {
    // 'data' events hand over each output chunk as pushed (async iteration would join the
    // chunks buffered meanwhile into one new Buffer: a copy of the whole output).
    await new Promise((resolve, reject) => {
      transcoder.on('data', (chunk) => {
        const text = indenter === null ? chunk : indenter.push(chunk)
        bytesOut += text.length
        if (!out.write(text)) {
          transcoder.pause()
          out.once('drain', () => transcoder.resume())
        }
      })
      transcoder.once('end', resolve)
      transcoder.once('error', reject)
    })
    if (opts.array) {
      out.write('\n')
      bytesOut++
    }
  } catch (e) {
    error = e
  }
  if (timer !== null) {
    clearInterval(timer)
    drawProgress()
    process.stderr.write(clearLine())
  }
  if (outError !== null && error === outError) error = null
  if (out !== process.stdout) {
    out.end()
    await once(out, 'close').catch(() => {})
  } else if (out.writableLength > 0) {
    await new Promise((resolve) => out.write('', resolve))
  }
  if (outError !== null) {
    process.stderr.write(`bson2json: cannot write ${opts.out === null ? 'stdout' : opts.out}: ${outError.message}\n`)
    process.exitCode = 1
    return
  }

  if (opts.stats) {
    const s = elapsed()
    const bsonBytes = transcoder.bytesIn
    process.stderr.write(
      `bson2json: ${transcoder.documents} documents${skipped ? ` (${skipped} skipped)` : ''}, ` +
        `${mb(bsonBytes)} MB BSON in${gzip ? ` (${mb(bytesRead)} MB gzip)` : ''}, ${mb(bytesOut)} MB JSON out, ` +
        `${s.toFixed(2)} s, ${mb(bsonBytes / Math.max(s, 1e-9))} MB/s\n`,
    )
  }
  if (error !== null) {
    let msg
    if (typeof error.code === 'string' && error.code.startsWith('BSON_') && typeof error.index === 'number') {
      msg = `${name}: corrupt BSON at document ${error.index}, byte offset ${inputOffset(error.index, error.offset)}${gzip ? ' (of the decompressed data)' : ''}: ${plainMessage(error)}`
    } else {
      msg = `${name}: ${error.message}`
    }
    process.stderr.write(`bson2json: ${msg}\n`)
    process.exitCode = error.usage === true ? 2 : 1
  } else if (skipped > 0 && !opts.quiet && !opts.stats) {
    process.stderr.write(`bson2json: ${name}: skipped ${skipped} corrupt document${skipped === 1 ? '' : 's'}\n`)
  }
}

module.exports = { main }
