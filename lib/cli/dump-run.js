'use strict'

// What a `dump` run shares whichever engine runs it (lib/cli/dump-engine.js chooses): the progress
// bar and the run's clock, and the end of the run (the summary line, or the failure's one line
// with the counts). SIGINT/SIGTERM are usage.js's `onSignals`, shared with `export`. Nothing here loads Node's streams or zlib: the native
// dump of a file needs neither (benchmark/cli-startup.sh).

const { CliError, describeIoError } = require('./usage')

const mb = (n) => (n / 1e6).toFixed(1)

function formatEta(s) {
  if (!Number.isFinite(s) || s < 0) return '?'
  if (s < 60) return `${Math.ceil(s)}s`
  const m = Math.floor(s / 60)
  return m < 60 ? `${m}m${String(Math.ceil(s % 60)).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`
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

/** The counts of a run, as its summary and its failure line give them. */
function counts(r, failed) {
  const { output, skipped, bytesSkipped, gzip, bsonIn, bytesRead, elapsed: s } = r
  return (
    `${output.documents} documents${failed ? ' written' : ''}` +
    `${skipped ? ` (${skipped} skipped, ${bytesSkipped} bytes)` : ''}, ` +
    `${mb(bsonIn)} MB BSON in${gzip ? ` (${mb(bytesRead)} MB gzip)` : ''}, ${mb(output.bytes)} MB JSON out, ${s.toFixed(2)} s`
  )
}

/**
 * The end of a run: the summary line (exit 0), or the failure's one line with the counts
 * (a thrown CliError).
 */
function report(opts, r) {
  const { name, output, error, head, gzip, bsonIn, inputOffset, elapsed: s } = r
  const line = counts(r, error !== null || output.error !== null)
  if (output.error !== null) throw new CliError(`${output.describe()} (${line})`)
  if (error !== null) {
    let msg
    if (error instanceof CliError) {
      throw new CliError(`${name}: ${error.message} (${line})`, error.exitCode)
    } else if (typeof error.code === 'string' && error.code.startsWith('BSON_') && typeof error.index === 'number') {
      msg =
        `${name}: corrupt BSON at document ${error.index}, byte offset ${inputOffset(error.index, error.offset)}${gzip ? ' (of the decompressed data)' : ''}: ` +
        `${withoutPosition(error.message)}${error.index === 0 ? notBsonHint(head) : ''}`
    } else if (typeof error.code === 'string' && error.syscall !== undefined) {
      msg = `${name}: cannot read: ${describeIoError(error)}`
    } else {
      msg = `${name}: ${error.message}`
    }
    throw new CliError(`${msg} (${line})`, error.usage === true ? 2 : 1)
  }
  if (!opts.quiet || opts.stats) process.stderr.write(`bson2json: ${line}, ${mb(bsonIn / Math.max(s, 1e-9))} MB/s\n`)
  return 0
}

module.exports = { startRun, report, counts, withoutPosition, mb }
