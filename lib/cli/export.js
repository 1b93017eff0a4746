'use strict'

// `bson2json export`: a live collection to JSON or CSV, the counterpart of `mongoexport`, with
// its argument names where the meaning is the same. JSON output runs on the project's raw
// cursors (`find()` of lib/mongo/cursor.js: one native call per server batch, the next batch
// prefetched, memory bounded by `prefetch` batches); CSV runs on the same engine, rows written
// from each reply's raw bytes (lib/cli/csv-cursor.js).
// `--parallel N` splits the collection into N `_id` ranges read by N cursors (lib/mongo/ranges.js).

const fs = require('fs')
const { CliError, UsageError, usage, parseOptions, optionFlags, optionValues, choices, answer, onSignals } = require('./usage')
const { parseFieldList, serverProjection, topLevelProjection } = require('./fields')
const { checkShape: checkShapeSpec } = require('../shape')
const { Indenter } = require('./pretty')
const native = require('../native')
const { csvFind } = require('./csv-cursor')
const { splitRanges, rangeFilter } = require('../mongo/ranges')

const HELP = `bson2json export - a live collection to JSON or CSV, the counterpart of \`mongoexport\`

Usage:
  bson2json export --uri URI --db DB --collection COLL [options]
  bson2json export --uri mongodb://127.0.0.1/shop -c orders -q '{"status":"open"}' -o open.json
  bson2json export --uri URI -d shop -c orders --type csv --fields _id,total,address.city

Connection (names as in mongoexport):
      --uri URI          mongodb:// connection string (its path names the database if --db is not given)
      --host HOST        host[:port] when there is no --uri (default 127.0.0.1:27017)
      --port N           port when there is no --uri
  -u, --username NAME    user name
  -p, --password PASS    password
      --authenticationDatabase DB   database holding the user (default: the URI's or admin)
      --readPreference MODE         primary (default) | primaryPreferred | secondary | secondaryPreferred | nearest
      --timeout S        give up after S seconds without a usable server (default 10)
      --timeoutMS N      give up when a reply of the server takes more than N ms to arrive,
                         however slowly it trickles in (default 0: no limit)

What (names as in mongoexport):
  -d, --db DB            database
  -c, --collection COLL  collection
  -q, --query JSON       filter, Extended JSON (canonical or relaxed; keys quoted)
      --queryFile FILE   the filter from a file
      --sort JSON        sort order, e.g. '{"total":-1}'
      --skip N           skip the first N documents
      --limit N          at most N documents (0: all)
  -f, --fields a,b.c     only these fields (dotted paths; _id is kept in JSON, as in mongoexport)
      --fieldFile FILE   the same, one field per line
      --projection JSON  a server projection (JSON output; instead of --fields)
      --exclude a,b.c    a server exclusion projection of these paths (JSON output; instead of
                         --fields/--projection)
      --redact a,b.c     these fields' values become null on this side (JSON and CSV), or with
      --redact-key-file FILE   the hex HMAC-SHA256 under the file's bytes (less one newline)
      --batchSize N      documents per server batch

Output:
  -o, --out FILE         write to FILE instead of stdout
      --type json|csv    output format (default json)
      --jsonFormat F     relaxed (default, as mongoexport) | canonical
      --dialect NAME     ${choices('dialect', 'relaxed')} (compat: JSON.stringify(BSON.deserialize(doc)))
      --jsonArray, --array   one JSON array instead of one document per line
      --pretty           indent the JSON (a tab per level, like mongoexport --pretty)
      --noHeaderLine     CSV without the header line
      --parallel N       read N _id ranges with N cursors at once (output in _id order)
      --unordered        with --parallel: write batches as they arrive instead of in _id order
      --quiet            no progress, no "exported N documents" summary (errors still print)
      --progress / --no-progress   progress on stderr (default: only on a terminal)
      --assertExists     accepted for mongoexport's command lines (a missing collection is
                         always an error here)
  -h, --help             show this help
  -v, --version          print the version

At the end stderr says "exported N documents" (with MB out and seconds). A failure prints one
line instead, naming the cause and the host, collection or file, with the count: the output
holds exactly that many complete documents.

Exit status: 0 success (also when the reader of stdout goes away, as in | head); 1 the export
failed (unreachable server, authentication, a collection that does not exist, a query the
server rejects, an error mid-cursor, a write error); 2 usage error (bad or unknown option,
malformed JSON argument, the mongodb package missing); 130/143 interrupted by SIGINT/SIGTERM.
`

const { Output } = require('./output')
const { requirePeer } = require('./peer')
const { describe, redact, mongoClient } = require('./mongo')

function parseJSONArg(name, text) {
  const { EJSON } = require('bson')
  let v
  try {
    v = EJSON.parse(text, { relaxed: false })
  } catch (e) {
    usage(`${name} is not valid Extended JSON: ${e.message}${shellHint(text)}`)
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) usage(`${name} must be a JSON object`)
  return v
}

/** A hint for mongo shell syntax (`{status: "open"}`, single quotes): JSON needs quoted keys. */
function shellHint(text) {
  if (/[{,]\s*[A-Za-z_$][\w$]*\s*:/.test(text) || /'/.test(text)) {
    return ' (this looks like mongo shell syntax: quote every key and string with double quotes, e.g. \'{"status": "open"}\')'
  }
  return ''
}

function readFile(name, path, encoding = 'utf8') {
  try {
    return fs.readFileSync(path, encoding)
  } catch (e) {
    return usage(`${name} ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`)
  }
}

/** The option flags (lib/option-table.js) and export's own. */
const OPTION_FLAGS = optionFlags('export')
const VALUE_FLAGS = {
  ...OPTION_FLAGS.values,
  '--uri': 'uri',
  '--host': 'host',
  '--port': 'port',
  '-u': 'username',
  '--username': 'username',
  '-p': 'password',
  '--password': 'password',
  '--authenticationDatabase': 'authSource',
  '--readPreference': 'readPreference',
  '--timeout': 'timeout',
  '-d': 'db',
  '--db': 'db',
  '-c': 'collection',
  '--collection': 'collection',
  '-q': 'query',
  '--query': 'query',
  '--queryFile': 'queryFile',
  '-o': 'out',
  '--out': 'out',
  '--type': 'type',
  '--parallel': 'parallel',
}
const BOOL_FLAGS = {
  ...OPTION_FLAGS.flags,
  '--jsonArray': 'array',
  '--array': 'array',
  '--pretty': 'pretty',
  '--noHeaderLine': 'noHeaderLine',
  '--unordered': 'unordered',
  '--quiet': 'quiet',
  '--progress': 'progress',
  '--no-progress': 'noProgress',
  '--assertExists': 'assertExists',
}

function nonNegative(name, v, min = 0) {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < min) {
    usage(`${name} must be an integer >= ${min}, got '${v}'`)
  }
  return Number(v)
}

function parseArgs(argv) {
  const parsed = parseOptions(argv, { values: VALUE_FLAGS, flags: BOOL_FLAGS })
  if (parsed.help || parsed.version) return parsed
  if (parsed.args.length > 0) usage(`unexpected argument '${parsed.args[0]}' (export reads from a server: --uri, --db, --collection)`)
  const raw = optionValues('export', parsed)
  const o = {
    uri: raw.uri,
    db: raw.db,
    collection: raw.collection,
    out: raw.out ?? null,
    type: raw.type ?? 'json',
    array: raw.array === true,
    pretty: raw.pretty === true,
    noHeaderLine: raw.noHeaderLine === true,
    unordered: raw.unordered === true,
    quiet: raw.quiet === true,
    progress: raw.progress === true ? true : raw.noProgress === true ? false : undefined,
  }
  if (o.type !== 'json' && o.type !== 'csv') usage(`--type must be json or csv, got '${o.type}'`)
  if (raw.dialect !== undefined && raw.jsonFormat !== undefined && raw.dialect !== raw.jsonFormat) {
    usage('--dialect and --jsonFormat disagree')
  }
  o.dialect = raw.dialect ?? raw.jsonFormat ?? 'relaxed'
  if (o.uri === undefined) {
    let host = raw.host ?? '127.0.0.1'
    if (raw.port !== undefined) host = `${host.replace(/:\d+$/, '')}:${nonNegative('--port', raw.port, 1)}`
    o.uri = `mongodb://${host}/`
  } else if (raw.host !== undefined || raw.port !== undefined) {
    usage('--host/--port and --uri are exclusive')
  }
  if (!/^mongodb(\+srv)?:\/\//.test(o.uri)) usage(`--uri must start with mongodb:// or mongodb+srv://, got '${redact(o.uri)}'`)
  if (o.db === undefined) {
    const m = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]+)/.exec(o.uri)
    if (m) o.db = decodeURIComponent(m[1])
  }
  if (!o.db) usage('--db is required (or a database in the --uri path)')
  if (!o.collection) usage('--collection is required')
  if (raw.query !== undefined && raw.queryFile !== undefined) usage('--query and --queryFile are exclusive')
  const q = raw.queryFile !== undefined ? readFile('--queryFile', raw.queryFile) : raw.query
  o.query = q === undefined ? {} : parseJSONArg(raw.queryFile !== undefined ? '--queryFile' : '--query', q)
  o.sort = raw.sort === undefined ? undefined : parseJSONArg('--sort', raw.sort)
  o.skip = raw.skip
  o.limit = raw.limit
  o.batchSize = raw.batchSize
  o.timeout = raw.timeout === undefined ? 10 : nonNegative('--timeout', raw.timeout, 1)
  o.timeoutMS = raw.timeoutMS
  o.parallel = raw.parallel === undefined ? 1 : nonNegative('--parallel', raw.parallel, 1)
  if (o.parallel > 64) usage('--parallel must be at most 64')
  if (raw.fields !== undefined && raw.fieldFile !== undefined) usage('--fields and --fieldFile are exclusive')
  try {
    if (raw.fields !== undefined) o.fields = parseFieldList(raw.fields)
    if (raw.fieldFile !== undefined) o.fields = parseFieldList(readFile('--fieldFile', raw.fieldFile), { lines: true })
  } catch (e) {
    if (e instanceof UsageError) throw e
    usage(e.message)
  }
  if (raw.projection !== undefined) {
    if (o.fields !== undefined) usage('--projection and --fields are exclusive')
    if (o.type === 'csv') usage('--type csv takes --fields, not --projection')
    o.projection = parseJSONArg('--projection', raw.projection)
  } else if (o.fields !== undefined) {
    o.projection = o.type === 'csv' ? topLevelProjection(o.fields) : serverProjection(o.fields)
  }
  if (raw.exclude !== undefined) {
    if (raw.projection !== undefined || o.fields !== undefined) usage('--exclude is exclusive with --fields and --projection')
    if (o.type === 'csv') usage('--type csv takes --fields, not --exclude')
    let paths
    try {
      paths = parseFieldList(raw.exclude)
    } catch (e) {
      usage(e.message.replace('--fields', '--exclude'))
    }
    o.projection = Object.fromEntries(paths.map((f) => [f, 0]))
    checkShape(o.projection, undefined, '--exclude')
  }
  o.redact = redactOption(raw)
  if (o.type === 'csv') {
    if (o.fields === undefined) usage('--type csv needs --fields or --fieldFile')
    if (o.array || o.pretty) usage('--jsonArray and --pretty apply to JSON output only')
    if (raw.dialect !== undefined || raw.jsonFormat !== undefined) usage('--dialect/--jsonFormat apply to JSON output only')
  } else if (o.noHeaderLine) {
    usage('--noHeaderLine applies to --type csv only')
  }
  if (o.unordered && o.parallel === 1) usage('--unordered needs --parallel N (N > 1)')
  if (o.parallel > 1 && (o.sort !== undefined || o.skip !== undefined || o.limit !== undefined)) {
    usage('--parallel reads _id ranges: it cannot be combined with --sort, --skip or --limit')
  }
  if (raw.readPreference !== undefined) {
    const modes = ['primary', 'primaryPreferred', 'secondary', 'secondaryPreferred', 'nearest']
    if (!modes.includes(raw.readPreference)) usage(`--readPreference must be one of ${modes.join(', ')}`)
    o.readPreference = raw.readPreference
  }
  o.argFiles = [raw.queryFile, raw.fieldFile, raw.redactKeyFile].filter((f) => f !== undefined)
  o.username = raw.username
  o.password = raw.password
  o.authSource = raw.authSource
  if (o.password !== undefined && o.username === undefined) usage('--password needs --username')
  return o
}

/** The files named by --queryFile, --fieldFile and --redact-key-file, which the output must not be. */
function argFileStats(files) {
  const out = []
  for (const f of files) {
    try {
      out.push({ name: f, st: fs.statSync(f) })
    } catch {
      // read already; gone since: nothing to compare
    }
  }
  return out
}

/**
 * Whether `db.collection` exists (a view counts), or null when the server does not say
 * (listCollections refused, e.g. a user allowed to find but not to list).
 */
async function collectionExists(client, o) {
  try {
    const names = (await client.db(o.db).listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name)
    if (names.includes(o.collection)) return { exists: true }
    return { exists: false, names }
  } catch {
    return null
  }
}

/**
 * @param {string[]} argv
 * @returns {Promise<number>} the exit status; failures throw a CliError
 */
async function main(argv) {
  const o = parseArgs(argv)
  const answered = answer(o, HELP)
  if (answered !== null) return answered
  const mongodb = requirePeer({ mongodb: 'mongodb' })

  const clientOptions = { serverSelectionTimeoutMS: o.timeout * 1000, appName: 'bson2json export' }
  if (o.username !== undefined) clientOptions.auth = { username: o.username, password: o.password }
  if (o.authSource !== undefined) clientOptions.authSource = o.authSource
  if (o.readPreference !== undefined) clientOptions.readPreference = o.readPreference
  const client = mongoClient(mongodb, o.uri, clientOptions) // a URI the driver refuses: exit 2, before the output is opened

  const layout = o.type === 'csv' || o.array ? 'chunks' : o.pretty ? 'pretty' : 'ndjson'
  const out = Output.open(o.out, layout, argFileStats(o.argFiles)) // throws: cannot write FILE: … (or the output is an input)
  const log = (line) => process.stderr.write(`bson2json export: ${line}\n`)

  const showProgress = !o.quiet && (o.progress === undefined ? process.stderr.isTTY === true : o.progress)
  const started = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
  let total = null
  let progressShown = false
  const drawProgress = () => {
    const s = elapsed()
    const written = out.documents
    let line = `${written.toLocaleString('en-US')}`
    if (total !== null) line += ` / ~${total.toLocaleString('en-US')} docs ${total > 0 ? Math.min(100, (written / total) * 100).toFixed(0) : 100}%`
    else line += ' docs'
    line += `  ${Math.round(written / Math.max(s, 1e-9)).toLocaleString('en-US')} docs/s`
    process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}${line}${process.stderr.isTTY ? '' : '\n'}`)
    progressShown = process.stderr.isTTY === true
  }
  const clearProgress = () => {
    if (progressShown) process.stderr.write('\r\x1b[K')
    progressShown = false
  }
  let timer = null

  // A write error stops the export at the next batch; the output keeps its complete documents.
  const OUTPUT_FAILED = new Error('output failed')
  let stopping = false
  const write = async (chunk, docs) => {
    if (stopping) throw OUTPUT_FAILED
    if (!out.write(chunk, docs)) await out.drained()
    if (out.error !== null) throw OUTPUT_FAILED
  }
  // SIGINT / SIGTERM: stop reading; what is written is complete; say so.
  const signals = { SIGINT: 130, SIGTERM: 143 }
  let interrupted = null
  let interrupt = null
  const stopped = new Promise((resolve) => (interrupt = resolve))
  const countsLine = () => `${out.documents} document${out.documents === 1 ? '' : 's'} written, ${mb(out.bytes)} MB, ${elapsed().toFixed(2)} s`
  // answered within a second in every state (usage.js onSignals): a connect to a server that
  // never answers, a reply that never comes, a stdout nobody reads
  const offSignals = onSignals(
    (sig) => {
      interrupted = sig
      interrupt()
    },
    (sig) => `interrupted by ${sig} (${countsLine()})`,
    'bson2json export',
  )

  let error = null
  try {
    try {
      const connecting = client.connect()
      connecting.catch(() => {})
      await Promise.race([connecting, stopped]) // Ctrl-C during server selection stops at once
      if (interrupted === null) await connecting
    } catch (e) {
      if (e && typeof e === 'object') e.duringConnect = true
      throw e
    }
    if (interrupted !== null) throw new CliError(`interrupted by ${interrupted}`, signals[interrupted])
    const coll = client.db(o.db).collection(o.collection)
    if (showProgress) {
      try {
        total = Object.keys(o.query).length === 0 ? await coll.estimatedDocumentCount() : await coll.countDocuments(o.query)
        if (o.skip) total = Math.max(0, total - o.skip)
        if (o.limit) total = Math.min(total, o.limit)
      } catch {
        total = null
      }
      timer = setInterval(drawProgress, 250)
    }
    const say = (line) => {
      if (o.quiet) return
      clearProgress()
      log(line)
    }
    const done = runExport(coll, o, write, say)
    done.catch(() => {})
    await Promise.race([done, stopped])
    if (interrupted !== null) {
      stopping = true
      throw new CliError(`interrupted by ${interrupted}`, signals[interrupted])
    }
    if (out.documents === 0 && out.error === null) {
      // Nothing matched: say whether the collection is there at all (a typo exports nothing).
      const found = await collectionExists(client, o)
      if (found !== null && !found.exists) {
        const near = found.names.filter((n) => n.toLowerCase() === o.collection.toLowerCase() || n.startsWith(o.collection.slice(0, 3)))
        throw new CliError(
          found.names.length === 0
            ? `database '${o.db}' has no collections on ${redact(o.uri)} (no collection '${o.collection}')`
            : `collection '${o.collection}' does not exist in database '${o.db}'${near.length > 0 ? ` (did you mean ${near.slice(0, 3).map((n) => `'${n}'`).join(', ')}?)` : ''}`,
        )
      }
    }
  } catch (e) {
    error = e
  }
  try {
    if (timer !== null) clearInterval(timer)
    // An interrupted export: the cursors are closed by client.close(); the output stops here.
    await client.close().catch(() => {})
    await out.finish()
    if (timer !== null) {
      drawProgress() // the final count, then the line is wiped for the summary
      clearProgress()
    }
    if (out.closedByReader) return 0 // `bson2json export … | head`: the reader is gone

    const n = out.documents
    const counts = countsLine()
    if (out.error !== null) throw new CliError(`${out.describe()} (${counts})`)
    if (error !== null && error !== OUTPUT_FAILED) {
      throw new CliError(`${describe(error, o)} (${counts})`, error instanceof CliError ? error.exitCode : 1)
    }
    if (!o.quiet) log(`exported ${n} document${n === 1 ? '' : 's'} (${mb(out.bytes)} MB, ${elapsed().toFixed(2)} s)`)
    return 0
  } finally {
    offSignals()
  }
}

const mb = (n) => (n / 1e6).toFixed(1)

function countLines(buf) {
  let n = 0
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n++
  return n
}

/** A projection / redact checked with the addon (a usage error naming the flag). */
function checkShape(projection, redact, flag) {
  try {
    checkShapeSpec(projection, redact)
  } catch (e) {
    usage(e.message.replace(/^bson2json: options\.(projection|redact)(?=[:[])/, flag).replace(/^bson2json: /, ''))
  }
}

/** --redact a,b.c [--redact-key-file FILE] → the `redact` option (undefined without --redact). */
function redactOption(raw) {
  if (raw.redactKeyFile !== undefined && raw.redact === undefined) usage('--redact-key-file needs --redact')
  if (raw.redact === undefined) return undefined
  let paths
  try {
    paths = parseFieldList(raw.redact)
  } catch (e) {
    usage(e.message.replace('--fields', '--redact'))
  }
  let redact = { paths }
  if (raw.redactKeyFile !== undefined) {
    let key = Buffer.from(readFile('--redact-key-file', raw.redactKeyFile, null))
    if (key.length > 0 && key[key.length - 1] === 0x0a) key = key.subarray(0, key.length - (key.length > 1 && key[key.length - 2] === 0x0d ? 2 : 1))
    if (key.length === 0) usage(`--redact-key-file ${raw.redactKeyFile}: the file is empty`)
    redact = { paths, with: 'hmac-sha256', key }
  }
  checkShape(undefined, redact, '--redact')
  return redact
}

/** NDJSON Buffers, one per server batch, from the project's raw cursor. */
async function* jsonBatches(coll, filter, options) {
  const { find } = require('../mongo/cursor')
  const cursor = find(coll, filter, options)
  try {
    for await (const batch of cursor.ndjson()) {
      const buf = Buffer.isBuffer(batch) ? batch : Buffer.from(batch.buffer, batch.byteOffset, batch.byteLength)
      yield { buf, n: countLines(buf) }
    }
  } finally {
    await cursor.close()
  }
}

/**
 * Runs the export: one source of batches, or with --parallel one per `_id` range. Ordered:
 * every range's cursor starts at once (each buffers at most `prefetch` batches) and the output
 * takes them in range order; --unordered: batches are written as they arrive.
 */
async function runExport(coll, o, write, say) {
  const fields = o.type === 'csv' ? o.fields : null
  const options = { dialect: o.dialect, prefetch: 2 }
  for (const k of ['projection', 'sort', 'skip', 'limit', 'batchSize', 'redact', 'timeoutMS']) if (o[k] !== undefined) options[k] = o[k]
  const source = (filter, extra) => (fields === null ? jsonBatches(coll, filter, { ...options, ...extra }) : csvFind(coll, filter, fields, { ...options, ...extra }))

  const indenter = o.pretty ? new Indenter() : null
  let first = true
  const emit = async ({ buf, n }) => {
    if (n === 0) return
    if (o.array) {
      buf = Buffer.from(buf)
      for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) buf[i] = 0x2c
      buf = Buffer.concat([Buffer.from(first ? '[' : ','), buf.subarray(0, buf.length - 1)])
    }
    first = false
    await write(indenter === null ? buf : indenter.push(buf), n)
  }

  if (fields !== null && !o.noHeaderLine) await write(native.csvHeader(fields), 0)
  if (o.parallel === 1) {
    for await (const b of source(o.query, {})) await emit(b)
  } else {
    say(`--parallel ${o.parallel}: computing _id ranges…`)
    const t = Date.now()
    const { ranges, method, note } = await splitRanges(coll, o.query, o.parallel)
    const took = ((Date.now() - t) / 1000).toFixed(2)
    say(
      ranges.length > 1
        ? `--parallel ${o.parallel}: ${ranges.length} _id ranges from ${method} (${note}) in ${took} s, read by ${ranges.length} cursors`
        : `--parallel ${o.parallel}: reading with one cursor, as without --parallel: ${note} (${took} s)`,
    )
    // One range: one plain cursor, exactly as without --parallel (no sort to pay for).
    const sources = ranges.length === 1 ? [source(o.query, {})] : ranges.map((r) => source(rangeFilter(o.query, r), o.unordered ? {} : { sort: { _id: 1 } }))
    try {
      if (o.unordered) {
        let chain = Promise.resolve()
        await Promise.all(
          sources.map(async (it) => {
            for await (const b of it) {
              chain = chain.then(() => emit(b))
              await chain
            }
          }),
        )
      } else {
        const heads = sources.map((it) => {
          const next = it.next() // starts this range's cursor now
          next.catch(() => {})
          return next
        })
        for (let i = 0; i < sources.length; i++) {
          for (let r = await heads[i]; !r.done; r = await sources[i].next()) await emit(r.value)
        }
      }
    } finally {
      await Promise.all(sources.map((it) => it.return(undefined).catch(() => {})))
    }
  }
  if (o.array) await write(indenter === null ? Buffer.from(first ? '[]\n' : ']\n') : indenter.push(Buffer.from(first ? '[]\n' : ']\n')), 0)
}

module.exports = { main, parseArgs, HELP }
