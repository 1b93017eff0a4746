'use strict'

// `bson2json export`: a live collection to JSON or CSV, the counterpart of `mongoexport`, with
// its argument names where the meaning is the same. JSON output runs on the project's raw
// cursors (`find()` of lib/cursor.js: one native call per server batch, the next batch
// prefetched, memory bounded by `prefetch` batches); CSV runs on the same engine, rows written
// from each reply's raw bytes (lib/cli/csv-cursor.js).
// `--parallel N` splits the collection into N `_id` ranges read by N cursors (lib/cli/ranges.js).

const fs = require('fs')
const { once } = require('events')
const { parseFieldList, serverProjection, topLevelProjection } = require('./fields')
const { Indenter } = require('./pretty')
const { compilePaths, csvHeader } = require('./csv')
const { csvFind } = require('./csv-cursor')
const { splitRanges, rangeFilter } = require('./ranges')

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
      --batchSize N      documents per server batch

Output:
  -o, --out FILE         write to FILE instead of stdout
      --type json|csv    output format (default json)
      --jsonFormat F     relaxed (default, as mongoexport) | canonical
      --dialect NAME     relaxed | canonical | compat (JSON.stringify(BSON.deserialize(doc)))
      --jsonArray, --array   one JSON array instead of one document per line
      --pretty           indent the JSON (a tab per level, like mongoexport --pretty)
      --noHeaderLine     CSV without the header line
      --parallel N       read N _id ranges with N cursors at once (output in _id order)
      --unordered        with --parallel: write batches as they arrive instead of in _id order
      --quiet            no progress and no summary
      --progress / --no-progress   progress on stderr (default: only on a terminal)
  -h, --help             show this help

Exit status: 0 success; 1 the export failed (unreachable server, authentication, a query the
server rejects, a write error): the documents written before are flushed and the message
says how many; 2 usage error (bad or unknown option, malformed JSON argument).
`

const { UsageError, parseCommandLine } = require('./usage')

function usage(msg) {
  throw new UsageError(msg)
}

function parseJSONArg(name, text) {
  const { EJSON } = require('bson')
  let v
  try {
    v = EJSON.parse(text, { relaxed: false })
  } catch (e) {
    usage(`${name} is not valid Extended JSON: ${e.message}`)
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) usage(`${name} must be a JSON object`)
  return v
}

function readFile(name, path) {
  try {
    return fs.readFileSync(path, 'utf8')
  } catch (e) {
    return usage(`${name} ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`)
  }
}

const VALUE_FLAGS = {
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
  '--sort': 'sort',
  '--skip': 'skip',
  '--limit': 'limit',
  '-f': 'fields',
  '--fields': 'fields',
  '--fieldFile': 'fieldFile',
  '--projection': 'projection',
  '--batchSize': 'batchSize',
  '-o': 'out',
  '--out': 'out',
  '--type': 'type',
  '--jsonFormat': 'jsonFormat',
  '--dialect': 'dialect',
  '--parallel': 'parallel',
}
const BOOL_FLAGS = {
  '--jsonArray': 'array',
  '--array': 'array',
  '--pretty': 'pretty',
  '--noHeaderLine': 'noHeaderLine',
  '--unordered': 'unordered',
  '--quiet': 'quiet',
  '--progress': 'progress',
  '--no-progress': 'noProgress',
}

function nonNegative(name, v, min = 0) {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < min) {
    usage(`${name} must be an integer >= ${min}, got '${v}'`)
  }
  return Number(v)
}

function parseArgs(argv) {
  const raw = {}
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]
    if (a === '-h' || a === '--help') return { help: true }
    let inline = null
    const eq = a.indexOf('=')
    if (a.startsWith('--') && eq !== -1) {
      inline = a.slice(eq + 1)
      a = a.slice(0, eq)
    }
    if (Object.hasOwn(VALUE_FLAGS, a)) {
      if (inline === null && i + 1 >= argv.length) usage(`option ${a} needs a value`)
      raw[VALUE_FLAGS[a]] = inline !== null ? inline : argv[++i]
    } else if (Object.hasOwn(BOOL_FLAGS, a)) {
      if (inline !== null) usage(`option ${a} takes no value`)
      raw[BOOL_FLAGS[a]] = true
    } else if (a.startsWith('-')) {
      usage(`unknown option '${a}'`)
    } else {
      usage(`unexpected argument '${a}' (export reads from a server: --uri, --db, --collection)`)
    }
  }
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
  if (raw.jsonFormat !== undefined && raw.jsonFormat !== 'relaxed' && raw.jsonFormat !== 'canonical') {
    usage(`--jsonFormat must be relaxed or canonical, got '${raw.jsonFormat}'`)
  }
  if (raw.dialect !== undefined && !['relaxed', 'canonical', 'compat'].includes(raw.dialect)) {
    usage(`--dialect must be compat, relaxed or canonical, got '${raw.dialect}'`)
  }
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
  if (!/^mongodb(\+srv)?:\/\//.test(o.uri)) usage(`--uri must start with mongodb:// or mongodb+srv://, got '${o.uri}'`)
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
  o.skip = raw.skip === undefined ? undefined : nonNegative('--skip', raw.skip)
  o.limit = raw.limit === undefined ? undefined : nonNegative('--limit', raw.limit)
  o.batchSize = raw.batchSize === undefined ? undefined : nonNegative('--batchSize', raw.batchSize, 1)
  o.timeout = raw.timeout === undefined ? 10 : nonNegative('--timeout', raw.timeout, 1)
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
  o.username = raw.username
  o.password = raw.password
  o.authSource = raw.authSource
  if (o.password !== undefined && o.username === undefined) usage('--password needs --username')
  return o
}

/** The URI without its password, for messages. */
function redact(uri) {
  return uri.replace(/^(mongodb(?:\+srv)?:\/\/[^:/@]*:)[^@/]*@/, '$1****@')
}

/** One line for a failed export. */
function describe(e, o) {
  const name = e && e.name
  const msg = e && e.message ? String(e.message).split('\n')[0] : String(e)
  if (name === 'MongoServerSelectionError' || name === 'MongoNetworkError' || name === 'MongoNetworkTimeoutError') {
    return `cannot reach ${redact(o.uri)}: ${msg}`
  }
  if (e && (e.code === 18 || e.codeName === 'AuthenticationFailed' || name === 'MongoMissingCredentialsError')) {
    return `authentication failed: ${msg}`
  }
  if (e && e.duringConnect) {
    // The handshake and authentication run in connect(): with credentials, a server error there
    // is an authentication failure (wrong mechanism, unknown user, no auth support).
    const withCredentials = o.username !== undefined || /^mongodb(?:\+srv)?:\/\/[^/]*@/.test(o.uri)
    if (withCredentials) return `authentication failed: ${msg}`
    return `cannot connect to ${redact(o.uri)}: ${msg}`
  }
  if (e && typeof e.code === 'number' && name === 'MongoServerError') {
    return `the server rejected the export: ${msg} (${e.codeName || 'code'} ${e.code})`
  }
  if (e && typeof e.code === 'string' && e.code.startsWith('BSON_')) return `corrupt document from the server: ${msg}`
  return msg
}

async function main(argv) {
  const o = parseCommandLine('export', parseArgs, argv, HELP)
  if (o === null) return
  let mongodb
  try {
    mongodb = require('mongodb')
  } catch {
    process.stderr.write("bson2json export: needs the 'mongodb' driver package (npm install mongodb)\n")
    process.exitCode = 2
    return
  }

  let out = process.stdout
  if (o.out !== null) {
    out = fs.createWriteStream(o.out)
    try {
      await once(out, 'open')
    } catch (e) {
      process.stderr.write(`bson2json export: cannot write ${o.out}: ${e.message}\n`)
      process.exitCode = 2
      return
    }
  }
  let outError = null
  out.on('error', (e) => {
    outError = e
    if (e.code === 'EPIPE') process.exit(0)
  })

  const clientOptions = { serverSelectionTimeoutMS: o.timeout * 1000, appName: 'bson2json export' }
  if (o.username !== undefined) clientOptions.auth = { username: o.username, password: o.password }
  if (o.authSource !== undefined) clientOptions.authSource = o.authSource
  if (o.readPreference !== undefined) clientOptions.readPreference = o.readPreference
  const client = new mongodb.MongoClient(o.uri, clientOptions)

  const showProgress = !o.quiet && (o.progress === undefined ? process.stderr.isTTY === true : o.progress)
  const started = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
  let written = 0
  let total = null
  let progressShown = false
  const drawProgress = () => {
    const s = elapsed()
    let line = `${written.toLocaleString('en-US')}`
    if (total !== null) line += ` / ~${total.toLocaleString('en-US')} docs ${total > 0 ? Math.min(100, (written / total) * 100).toFixed(0) : 100}%`
    else line += ' docs'
    line += `  ${Math.round(written / Math.max(s, 1e-9)).toLocaleString('en-US')} docs/s`
    process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}${line}${process.stderr.isTTY ? '' : '\n'}`)
    progressShown = process.stderr.isTTY === true
  }
  let timer = null

  const write = async (chunk) => {
    if (outError !== null) throw outError
    if (!out.write(chunk)) await Promise.race([once(out, 'drain'), once(out, 'error')])
    if (outError !== null) throw outError
  }

  let error = null
  try {
    try {
      await client.connect()
    } catch (e) {
      if (e && typeof e === 'object') e.duringConnect = true
      throw e
    }
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
    await runExport(coll, o, write, (n) => (written += n))
  } catch (e) {
    error = e
  }
  if (timer !== null) {
    clearInterval(timer)
    drawProgress()
    if (progressShown) process.stderr.write('\r\x1b[K')
  }
  await client.close().catch(() => {})
  if (out !== process.stdout) {
    out.end()
    await once(out, 'close').catch(() => {})
  } else if (out.writableLength > 0 && outError === null) {
    await new Promise((resolve) => out.write('', resolve))
  }
  if (outError !== null && (error === null || error === outError)) {
    process.stderr.write(`bson2json export: cannot write ${o.out === null ? 'stdout' : o.out}: ${outError.message} (${written} documents written)\n`)
    process.exitCode = 1
    return
  }
  if (error !== null) {
    process.stderr.write(`bson2json export: ${describe(error, o)} (${written} document${written === 1 ? '' : 's'} written)\n`)
    process.exitCode = 1
    return
  }
  if (!o.quiet && showProgress) {
    process.stderr.write(`bson2json export: ${written} documents, ${elapsed().toFixed(2)} s\n`)
  }
}

function countLines(buf) {
  let n = 0
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n++
  return n
}

/** NDJSON Buffers, one per server batch, from the project's raw cursor. */
async function* jsonBatches(coll, filter, options) {
  const { find } = require('../..')
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
async function runExport(coll, o, write, count) {
  const paths = o.type === 'csv' ? compilePaths(o.fields) : null
  const options = { dialect: o.dialect, prefetch: 2 }
  for (const k of ['projection', 'sort', 'skip', 'limit', 'batchSize']) if (o[k] !== undefined) options[k] = o[k]
  const source = (filter, extra) => (paths === null ? jsonBatches(coll, filter, { ...options, ...extra }) : csvFind(coll, filter, paths, { ...options, ...extra }))

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
    await write(indenter === null ? buf : indenter.push(buf))
    count(n)
  }

  if (paths !== null && !o.noHeaderLine) await write(Buffer.from(csvHeader(o.fields)))
  if (o.parallel === 1) {
    for await (const b of source(o.query, {})) await emit(b)
  } else {
    const ranges = await splitRanges(coll, o.query, o.parallel)
    const sources = ranges.map((r) => source(rangeFilter(o.query, r), o.unordered ? {} : { sort: { _id: 1 } }))
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
  if (o.array) await write(indenter === null ? Buffer.from(first ? '[]\n' : ']\n') : indenter.push(Buffer.from(first ? '[]\n' : ']\n')))
}

module.exports = { main, parseArgs, HELP }
