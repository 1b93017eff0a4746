'use strict'

// The transcode-stream engine of `dump` (lib/cli/dump-engine.js chooses it): stdin, a .bson or
// .bson.gz file or a mongodump --archive, read in chunks, gunzipped and unpacked (lib/cli/archive.js)
// as needed, transcoded by `createTranscodeStream` (up to `threads` 1 MiB batches at once on the
// libuv pool) and written by the Output, with --pretty, --skip-invalid, --fields/--exclude/--redact.

const fs = require('fs')
const { Readable } = require('stream')
const { CliError, onSignals } = require('./usage')
const { isArchive } = require('./archive')
const { isPlainBson, isGzip } = require('./dump-engine')
const { startRun, report, counts, withoutPosition } = require('./dump-run')
const { createTranscodeStream } = require('../transcode/stream')

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
  async function* chunks() {
    if (first.length > 0) yield first
    if (done) return
    for (;;) {
      const r = await it.next()
      if (r.done) return
      yield r.value
    }
  }
  return { gzip: isGzip(first), head: first, chunks: chunks() }
}

/** `head`, then the chunks of `rest` (stdin after the bytes the native pipeline read). */
async function* replayed(head, rest) {
  if (head.length > 0) yield head
  yield* rest
}

function countLines(buf) {
  let n = 0
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n++
  return n
}

const OPEN = Buffer.from('[')
const COMMA = Buffer.from(',')
const CLOSE = Buffer.from(']')
const EMPTY_ARRAY = Buffer.from('[]')
const NEWLINE = Buffer.from('\n')

/**
 * Runs the dump through the transcode stream; resolves the exit status (failures throw a CliError).
 * @param {any} opts the parsed flags
 * @param {{ name: string, file: string | null, head: Buffer | null, regular: boolean, size: number | null }} input
 * @param {import('./output').Output} output
 * @param {number} threads
 * @param {Buffer | null} replay the bytes of stdin the native pipeline read before it found an archive
 */
async function dumpStream(opts, input, output, threads, replay) {
  const name = input.name
  const source =
    replay !== null
      ? Readable.from(replayed(replay, process.stdin), { objectMode: false })
      : input.file === null
        ? process.stdin
        : fs.createReadStream(input.file, { highWaterMark: 1 << 20 })

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
  const r = { name, output, error: null, head: input.head, gzip: false, bsonIn: 0, bytesRead: 0, skipped: 0, bytesSkipped: 0, inputOffset: null, elapsed: 0 }
  // A mongodump --archive (after gzip, if any) is unpacked to the documents of the selected
  // namespaces. `archive.origin` maps a document index back to the input's bytes for error messages.
  let archive = null
  // An input fault after which the documents before it are still written: the archive reader
  // yields whole documents only, so its errors (and a gzip or read error under it) end the
  // documents cleanly and are reported once the transcoder has written them.
  let deferred = null
  let documents = source
  if (replay === null && input.regular && isPlainBson(input.head) && opts.nsInclude.length === 0) {
    // A regular file of plain BSON goes straight from the file into the transcoder, without
    // the generators that unpack the other inputs (they cost a fifth of the throughput).
    source.on('data', (c) => {
      r.bytesRead += c.length
      r.bsonIn += c.length
    })
    source.on('error', fail)
    source.pipe(transcoder)
  } else {
    documents = Readable.from(unpack(), { objectMode: false })
    documents.on('error', fail)
    documents.pipe(transcoder)
  }

  async function* unpack() {
    let archiveInput = false
    let gzipError = null
    const counted = (async function* () {
      for await (const c of source) {
        r.bytesRead += c.length
        yield c
      }
    })()
    const sniffed = await sniff(counted)
    r.gzip = sniffed.gzip
    let bson = Readable.from(sniffed.chunks, { objectMode: false })
    bson.on('error', fail)
    if (r.gzip) {
      const gunzip = require('zlib').createGunzip()
      gunzip.on('error', (e) => {
        gzipError = Object.assign(new Error(`the gzip data is truncated or corrupt: ${e.message}`), { gzipError: true })
        if (!archiveInput) fail(gzipError)
      })
      bson = bson.pipe(gunzip)
    }
    const s = await sniff(bson)
    r.head = s.head
    // The input's BSON bytes, before any projection (what --stats reports as "in").
    const inBytes = (async function* () {
      for await (const c of s.chunks) {
        r.bsonIn += c.length
        yield c
      }
    })()
    if (!isArchive(s.head)) {
      if (opts.nsInclude.length > 0) throw Object.assign(new Error('--nsInclude applies to a mongodump --archive input only'), { usage: true })
      yield* inBytes
      return
    }
    archiveInput = true
    archive = require('./archive').readArchive(inBytes, opts.nsInclude)
    try {
      yield* archive.chunks
    } catch (e) {
      if (e.usage === true) throw e
      deferred = gzipError ?? e
    }
  }

  const indenter = opts.pretty ? new (require('./pretty').Indenter)() : null
  const run = startRun(opts, input.size, () => r.bytesRead, () => transcoder.documents)
  // Error positions are the transcoder's (in the input, with a projection too); from an archive
  // they are mapped back.
  r.inputOffset = (index, offset) => {
    const o = archive === null ? offset : archive.origin(index, offset)
    return o === null ? `${offset} (of the archive documents)` : o
  }
  transcoder.on('skip', ({ index, offset: at, error, bytesSkipped: bytes }) => {
    r.skipped++
    r.bytesSkipped += bytes
    if (!opts.quiet) {
      const what = bytes === undefined ? '' : ` (${bytes} byte${bytes === 1 ? '' : 's'})`
      process.stderr.write(
        `${run.clearLine()}bson2json: ${name}: skipped corrupt document ${index} at byte offset ${r.inputOffset(index, at)}${what}: ${withoutPosition(error.message)}\n`,
      )
    }
  })

  // SIGINT / SIGTERM: stop reading, write what is converted (whole documents), say so.
  const offSignals = onSignals(
    (sig, exitCode) => fail(new CliError(`interrupted by ${sig}`, exitCode)),
    (sig) => `${name}: interrupted by ${sig} (${counts({ ...r, elapsed: run.elapsed() }, true)})`,
  )
  try {
    r.error = await writeAll(opts, transcoder, finished, output, indenter)
    if (r.error === null && deferred !== null) r.error = deferred
    run.stop()
    source.unpipe?.()
    if (documents !== source) documents.destroy()
    source.destroy() // stdin too: a pipe still open would keep the process alive after an error
    if (replay !== null) process.stdin.destroy()
    await output.finish()
    if (output.closedByReader) return 0 // `bson2json x.bson | head`: the reader is gone
    return report(opts, { ...r, elapsed: run.elapsed() })
  } finally {
    offSignals()
  }
}

/**
 * Writes the transcoder's NDJSON to the output (as one array with --array, indented with
 * --pretty), pausing while the output is behind. Resolves the run's error, or null.
 */
async function writeAll(opts, transcoder, finished, output, indenter) {
  const OUTPUT_FAILED = new Error('output failed')
  let first = true
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
    return null
  } catch (e) {
    return e === OUTPUT_FAILED ? null : e
  }
}

module.exports = { dumpStream }
