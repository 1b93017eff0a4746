'use strict'

// `bson2json cdc`: a MongoDB change stream (collection, database or cluster) into a Kafka topic,
// exactly once for read_committed consumers, until SIGTERM/SIGINT. The work is lib/kafka/
// `changeStreamToKafka()`; this file parses arguments, connects, logs progress and maps the
// outcome to an exit status.

const { usage, parseOptions, optionFlags, optionValues, choices, answer } = require('./usage')

const HELP = `bson2json cdc - a MongoDB change stream into Kafka, exactly once (whole server batches per transaction)

Usage:
  bson2json cdc --uri URI [--db DB [--collection COLL]] --kafka HOST:PORT[,HOST:PORT...]
                (--topic TOPIC | --topic-prefix P) --checkpoint-topic TOPIC --id NAME [options]

  Without --collection the stream covers the database; without --db, the whole cluster: one
  change stream and one checkpoint, whatever the number of collections.

Options:
      --uri URI                mongodb:// connection string (a replica set or sharded cluster)
      --db DB                  database to watch
      --collection COLL        collection to watch (needs --db)
      --kafka BROKERS          bootstrap brokers, HOST:PORT[,HOST:PORT...]
      --topic TOPIC            events topic (created with --partitions when missing)
      --topic-prefix P         one topic per collection, P.DB.COLL (as the connectors name them),
                               each created when its collection is first seen
      --topic-map NS=TOPIC[,NS=TOPIC...]  these namespaces (DB.COLL or DB) into these topics
      --include NS[,NS...]     capture only these namespaces: DB, DB.COLL, * for any characters
                               (pushed to the server as a $match after $changeStream)
      --exclude NS[,NS...]     leave these namespaces out (same patterns)
      --checkpoint-topic TOPIC compacted topic for the resume tokens, keyed by --id (created when missing)
      --id NAME                stream id: one running process per id (it names the transactional.id)
      --dialect NAME           ${choices('dialect')}
      --format NAME            the records' format: bson2json (default: the event in --dialect,
                               documentKey as the key, headers) | mongo-kafka (what the MongoDB
                               Kafka source connector writes with its defaults) | debezium
                               (Debezium's MongoDB envelope, JSON without schemas, tombstones
                               after deletes); docs/kafka.md has what a consumer sees of each
      --value event|fullDocument  message value: the whole event (default) or only fullDocument
                               (deletes become tombstones: a key with no value)
      --full-document MODE     the change stream's fullDocument: ${choices('fullDocument')}
      --pipeline JSON          stages after $changeStream, an Extended JSON array
      --projection JSON        a MongoDB projection applied to every event on this side:
                               fullDocument, fullDocumentBeforeChange, documentKey (its _id is
                               kept), updateDescription's updatedFields and removedFields
      --redact a,b.c           these paths' values become null, or with --redact-key-file a stable
                               pseudonym (hex HMAC-SHA256), wherever they appear in an event (an
                               update of 'card' holding 'card.number' included)
      --redact-key-file FILE   the HMAC key: the file's bytes (less one trailing newline)
      --start-at-operation-time T[.I]  first start (no checkpoint yet): from this cluster time
                               (seconds since the epoch[.increment]); default: now
      --resume-after TOKEN     first start: after this resume token (Extended JSON such as
                               '{"_data":"8263..."}', or the _data hex alone)
      --snapshot               first start (no checkpoint yet, or with --override-checkpoint): copy
                               the collection (with --db alone or none, every captured one) first (operationType "snapshot" records,
                               a "snapshot" header), then stream every change made since the copy
                               began; a restart resumes the copy after its last committed batch
      --snapshot-batch-size N  documents per snapshot batch (default 1000)
      --snapshot-parallel N    copy N _id ranges at once, one cursor each (default 1, at
                               most 64); each transaction holds the batches ready, one per range
      --on-history-lost fail|snapshot  when the history at the checkpoint is lost: exit 6
                               (default), or copy the collection again (records marked
                               "history-lost") and stream from there
      --override-checkpoint    start from --start-at-operation-time, --resume-after or now even
                               though a checkpoint exists (after lost history, or to skip ahead);
                               once: a restart with the same override resumes from the checkpoint
      --partitions N           partitions of a newly created events topic (default 1)
      --batch-size N           change-stream batch size
      --max-await-ms N         getMore wait on an idle stream (default 1000)
      --timeout S              at start, give up after S seconds without a usable MongoDB server
                               (default 10; a connection cut meanwhile is retried)
      --mongo-retry-timeout S  once running, give up after S seconds of MongoDB failures with no
                               batch received (default 120; a closed connection, CursorNotFound or
                               a resumable error is retried meanwhile: a snapshot range after its
                               last committed _id, the change stream from the last checkpoint)
      --reply-timeout S        give up on a reply of MongoDB after S seconds and retry as above
                               (default 60): a server or network that stops answering mid-command
      --kafka-tls              connect to Kafka over TLS (the system's CAs)
      --kafka-ca FILE          TLS, trusting the CA certificates in FILE (PEM)
      --kafka-cert FILE, --kafka-key FILE  TLS client certificate and key (PEM)
      --kafka-sasl MECHANISM   SASL: PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 (with --kafka-user)
      --kafka-user NAME        SASL user name
      --kafka-password-file FILE  SASL password: the file's first line (or the environment
                               variable BSON2JSON_KAFKA_PASSWORD; never on the command line)
      --kafka-timeout S        give up when Kafka cannot be reached at start within S seconds
                               (default 10; exit 3 naming the brokers and the cause)
      --kafka-retry-timeout S  once running, give up when Kafka stays unreachable for S seconds
                               (default 120; retried meanwhile from the last checkpoint)
      --heartbeat-interval MS  while nothing captured arrives, checkpoint the server's position at
                               most every MS milliseconds (default 5000; the connectors'
                               heartbeat.interval.ms), so a quiet collection on a busy server keeps a
                               resume point inside the oplog window
      --heartbeat-topic TOPIC  with each of those checkpoints, a heartbeat record into TOPIC (as the
                               --format's connector writes them)
      --commit-interval-ms N   commit the open transaction (whole server batches and their
                               checkpoint) once it is N ms old (default 100; 0: every batch)
      --progress-interval S    seconds between progress lines on stderr (default 10; 0: none)
      --quiet                  no progress lines (errors still go to stderr)
  -h, --help                   show this help
  -v, --version                print the version

Delivery: every event is written once to TOPIC for consumers with isolation.level=read_committed,
across crashes, restarts and broker restarts, as long as one process runs per --id (a second one
fences the first, which then exits with status 4). Per-document order holds: the key is the
event's documentKey JSON and partitions follow the Java client's default partitioner.

Exit status: 0 stopped by SIGTERM/SIGINT (the open transaction finished, the cursor closed);
1 MongoDB error that is not retried (authentication, a rejected pipeline), MongoDB failing for
--mongo-retry-timeout, or not reachable at start within --timeout;
2 usage error; 3 Kafka unreachable (at start within --kafka-timeout, or for --kafka-retry-timeout
while running: every committed event stays committed) or topics not creatable; 4 fenced by another process
with the same --id; 5 the change stream was invalidated (collection/database dropped or renamed);
6 the change stream's history at the checkpoint is lost (the oplog rolled past it: restart with
--override-checkpoint, which skips the lost events).
`

const { requirePeer } = require('./peer')
const { describe, redact, mongoClient } = require('./mongo')
const { tokenClusterTime } = require('../kafka/sink')
const { isTransientSourceError } = require('../kafka/errors')
const { DEFAULTS } = require('../kafka/options')

/** The option flags (lib/option-table.js) and cdc's own. */
const OPTION_FLAGS = optionFlags('cdc')
const VALUE_FLAGS = {
  ...OPTION_FLAGS.values,
  '--uri': 'uri',
  '--db': 'db',
  '--collection': 'collection',
  '--progress-interval': 'progressInterval',
  '--timeout': 'timeout',
}

function intArg(name, text, min) {
  if (!/^\d+$/.test(text)) usage(`${name} must be an integer, got ${JSON.stringify(text)}`)
  const n = Number(text)
  if (n < min) usage(`${name} must be >= ${min}`)
  return n
}

function readArgFile(flag, file) {
  try {
    return require('node:fs').readFileSync(file)
  } catch (e) {
    usage(`cannot read ${flag} ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`)
  }
}

/** The Kafka client's `tls` and `sasl` options from the --kafka-* flags (files read now). */
function kafkaSecurity(o, env) {
  const out = {}
  if (o.kafkaTls === true || o.kafkaCa !== undefined || o.kafkaCert !== undefined || o.kafkaKey !== undefined) {
    if ((o.kafkaCert === undefined) !== (o.kafkaKey === undefined)) usage('--kafka-cert and --kafka-key go together')
    const tls = {}
    if (o.kafkaCa !== undefined) tls.ca = readArgFile('--kafka-ca', o.kafkaCa)
    if (o.kafkaCert !== undefined) tls.cert = readArgFile('--kafka-cert', o.kafkaCert)
    if (o.kafkaKey !== undefined) tls.key = readArgFile('--kafka-key', o.kafkaKey)
    out.tls = tls
  }
  if (o.kafkaSasl !== undefined || o.kafkaUser !== undefined || o.kafkaPasswordFile !== undefined) {
    const mechanisms = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']
    if (!mechanisms.includes(o.kafkaSasl)) usage(`--kafka-sasl must be ${mechanisms.join(', ')}`)
    if (o.kafkaUser === undefined) usage('--kafka-sasl needs --kafka-user')
    let password
    if (o.kafkaPasswordFile !== undefined) password = String(readArgFile('--kafka-password-file', o.kafkaPasswordFile)).split(/\r?\n/)[0]
    else if (env.BSON2JSON_KAFKA_PASSWORD !== undefined) password = env.BSON2JSON_KAFKA_PASSWORD
    else usage('--kafka-sasl needs a password: --kafka-password-file FILE or BSON2JSON_KAFKA_PASSWORD')
    out.sasl = { mechanism: o.kafkaSasl, username: o.kafkaUser, password }
  }
  return Object.keys(out).length === 0 ? undefined : out
}

function parseArgs(argv) {
  const parsed = parseOptions(argv, { values: VALUE_FLAGS, flags: { ...OPTION_FLAGS.flags, '--quiet': 'quiet' }, once: true })
  if (parsed.help || parsed.version) return parsed
  if (parsed.args.length > 0) usage(`unexpected argument '${parsed.args[0]}'`)
  // enums and integers checked from the table; the rest converted below
  const opts = optionValues('cdc', parsed)
  const o = { ...opts, quiet: opts.quiet === true, overrideCheckpoint: opts.overrideCheckpoint === true, snapshot: opts.snapshot === true }
  for (const [flag, key] of [
    ['--uri', 'uri'],
    ['--kafka', 'kafka'],
    ['--checkpoint-topic', 'checkpointTopic'],
    ['--id', 'id'],
  ]) {
    if (o[key] === undefined || o[key] === '') usage(`${flag} is required`)
  }
  if ((o.topic === undefined || o.topic === '') && (o.topicPrefix === undefined || o.topicPrefix === '')) usage('--topic or --topic-prefix is required')
  if (o.collection !== undefined && o.db === undefined) usage('--collection needs --db')
  for (const k of ['include', 'exclude']) {
    if (o[k] === undefined) continue
    o[k] = o[k].split(',').map((p) => p.trim())
    for (const p of o[k]) if (!/^[^.\s]+(\.\S+)?$/.test(p)) usage(`--${k}: ${JSON.stringify(p)} is not a namespace pattern (DB, DB.COLL, * for any characters)`)
  }
  if (o.topicMap !== undefined) {
    const map = {}
    for (const pair of o.topicMap.split(',')) {
      const m = /^([^=\s]+)=([^=\s]+)$/.exec(pair.trim())
      if (!m) usage(`--topic-map: ${JSON.stringify(pair)} is not NS=TOPIC`)
      map[m[1]] = m[2]
    }
    o.topics = map
    delete o.topicMap
  }
  if (o.topic === o.checkpointTopic) usage('--topic and --checkpoint-topic must differ')
  o.brokers = o.kafka.split(',')
  for (const b of o.brokers) if (!/^[^:\s]+:\d+$/.test(b)) usage(`--kafka: ${JSON.stringify(redact(b))} is not HOST:PORT`)
  const { FORMAT_NAMES } = require('../kafka/records')
  if (o.format !== undefined && !FORMAT_NAMES.includes(o.format)) usage(`--format must be ${FORMAT_NAMES.join(', ')}`)
  if (o.format !== undefined && o.format !== 'bson2json' && (o.dialect !== undefined || o.value === 'fullDocument')) {
    usage(`--format ${o.format} writes the connector's own records: it excludes --dialect and --value fullDocument`)
  }
  if (o.pipeline !== undefined) {
    const { EJSON } = require('bson')
    let p
    try {
      p = EJSON.parse(o.pipeline, { relaxed: false })
    } catch (e) {
      usage(`--pipeline is not valid Extended JSON: ${e.message}`)
    }
    if (!Array.isArray(p) || !p.every((s) => s !== null && typeof s === 'object' && !Array.isArray(s))) usage('--pipeline must be a JSON array of stages')
    o.pipeline = p
  }
  if (o.projection !== undefined) {
    let p
    try {
      p = JSON.parse(o.projection)
    } catch (e) {
      usage(`--projection is not valid JSON: ${e.message}`)
    }
    o.projection = p
  }
  if (o.redactKeyFile !== undefined && o.redact === undefined) usage('--redact-key-file needs --redact')
  if (o.redact !== undefined) {
    const paths = o.redact.split(',').map((f) => f.trim())
    if (paths.some((f) => f === '')) usage(`empty field name in --redact '${o.redact}'`)
    o.redact = { paths }
    if (o.redactKeyFile !== undefined) {
      let key
      try {
        key = require('node:fs').readFileSync(o.redactKeyFile)
      } catch (e) {
        usage(`--redact-key-file ${o.redactKeyFile}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`)
      }
      if (key.length > 0 && key[key.length - 1] === 0x0a) key = key.subarray(0, key.length - (key.length > 1 && key[key.length - 2] === 0x0d ? 2 : 1))
      if (key.length === 0) usage(`--redact-key-file ${o.redactKeyFile}: the file is empty`)
      o.redact = { paths, with: 'hmac-sha256', key }
    }
    delete o.redactKeyFile
  }
  if (o.projection !== undefined || o.redact !== undefined) {
    try {
      require('../shape').checkShape(o.projection, o.redact)
    } catch (e) {
      usage(e.message.replace(/^bson2json: options\.(projection|redact)(?=[:[])/, (_, w) => `--${w}`).replace(/^bson2json: /, ''))
    }
  }
  if (o.startAt !== undefined) {
    const m = /^(\d+)(?:\.(\d+))?$/.exec(o.startAt)
    if (!m || Number(m[1]) > 0xffffffff || (m[2] !== undefined && Number(m[2]) > 0xffffffff)) {
      usage('--start-at-operation-time must be SECONDS[.INCREMENT]')
    }
    const { Timestamp } = require('bson')
    o.startAtOperationTime = new Timestamp({ t: Number(m[1]), i: m[2] === undefined ? 0 : Number(m[2]) })
  }
  if (o.resumeAfterText !== undefined) {
    if (o.startAt !== undefined) usage('--resume-after and --start-at-operation-time are exclusive')
    const text = o.resumeAfterText.trim()
    if (/^[0-9a-fA-F]+$/.test(text)) o.resumeAfter = { _data: text }
    else {
      let t
      try {
        t = require('bson').EJSON.parse(text, { relaxed: false })
      } catch (e) {
        usage(`--resume-after is neither Extended JSON nor hex: ${e.message}`)
      }
      if (t === null || typeof t !== 'object' || Array.isArray(t)) usage('--resume-after must be a resume token document such as {"_data":"8263..."}')
      o.resumeAfter = t
    }
    delete o.resumeAfterText
  }
  if (o.snapshot && (o.startAt !== undefined || o.resumeAfter !== undefined)) usage('--snapshot starts from now: it excludes --start-at-operation-time and --resume-after')
  if (o.heartbeatTopic !== undefined && (o.heartbeatTopic === o.checkpointTopic || o.heartbeatTopic === '')) usage('--heartbeat-topic must differ from --checkpoint-topic')
  o.progressInterval = o.progressInterval === undefined ? 10 : intArg('--progress-interval', o.progressInterval, 0)
  o.timeout = o.timeout === undefined ? 10 : intArg('--timeout', o.timeout, 1)
  o.kafkaTimeout = o.kafkaTimeout === undefined ? DEFAULTS.connectTimeoutMS / 1000 : intArg('--kafka-timeout', o.kafkaTimeout, 1)
  o.kafkaClient = kafkaSecurity(o, process.env)
  o.kafkaRetryTimeout = o.kafkaRetryTimeout === undefined ? DEFAULTS.retryTimeoutMS / 1000 : intArg('--kafka-retry-timeout', o.kafkaRetryTimeout, 1)
  o.mongoRetryTimeout = o.mongoRetryTimeout === undefined ? DEFAULTS.mongoRetryTimeoutMS / 1000 : intArg('--mongo-retry-timeout', o.mongoRetryTimeout, 1)
  o.replyTimeout = o.replyTimeout === undefined ? DEFAULTS.timeoutMS / 1000 : intArg('--reply-timeout', o.replyTimeout, 1)
  if (o.maxAwaitTimeMS !== undefined && Number(o.maxAwaitTimeMS) >= o.replyTimeout * 1000) usage('--max-await-ms must be below --reply-timeout')
  return o
}

/**
 * Where the stream's loop spent its time since the last progress line (lib/kafka/stream-copy.js
 * `stats.phases`): waiting for the source, writing records, waiting for Kafka. Empty before the
 * stream runs.
 */
function phasesText(p, before) {
  if (!p) return ''
  const d = (k) => p[k] - (before ? before[k] : 0)
  const loop = d('source') + d('records') + d('kafka')
  if (loop <= 0) return ''
  const pct = (k) => `${Math.round((d(k) * 100) / loop)}%`
  return `; the stream waited on the source ${pct('source')}, wrote records ${pct('records')}, waited on Kafka ${pct('kafka')}`
}

function fmtTime(ct) {
  return ct ? `${new Date(ct.t * 1000).toISOString()} (${ct.t}.${ct.i})` : 'unknown'
}

async function main(argv) {
  const o = parseArgs(argv)
  const answered = answer(o, HELP)
  if (answered !== null) return answered
  const mongodb = requirePeer({ mongodb: 'mongodb', '@platformatic/kafka': '@platformatic/kafka@~1.35.0' })
  mongoClient(mongodb, o.uri, {}) // a URI the driver refuses: a usage error quoting it redacted
  const kafka = require('../kafka/sink')
  const log = (line) => process.stderr.write(`bson2json cdc: ${line}\n`)
  const client = await connect(mongodb, o, log)
  if (client === null) return 1
  let source = client
  if (o.db !== undefined) source = client.db(o.db)
  if (o.collection !== undefined) source = source.collection(o.collection)
  const what = o.collection !== undefined ? `${o.db}.${o.collection}` : o.db !== undefined ? `database ${o.db}` : 'the cluster'
  const into = o.topicPrefix !== undefined ? `${o.topicPrefix}.<db>.<collection>` : o.topic

  let lastEvents = 0
  let lastAt = Date.now()
  let lastPhases = null
  let announced = false
  let snapshotSeen = null
  let snapshotDone = null
  const stats = { value: null }
  const progress = () => {
    const s = stats.value
    if (!s || !announced) return
    const now = Date.now()
    const rate = ((s.events - lastEvents) * 1000) / Math.max(1, now - lastAt)
    const ct = tokenClusterTime(s.resumeToken) || s.clusterTime
    const lag = ct ? Math.max(0, now / 1000 - ct.t) : null
    const snap = s.snapshot && !s.snapshot.done ? `snapshot ${s.snapshot.records} records (${s.snapshot.reason}), ` : ''
    log(
      `${snap}${s.events} events (+${s.events - lastEvents}, ${rate.toFixed(1)}/s), ${s.transactions} transactions, ` +
        `lag ${lag === null ? 'unknown' : `${lag.toFixed(1)} s`} (at ${fmtTime(ct)})${s.restarts ? `, ${s.restarts} restarts` : ''}${s.mongoRetries ? `, ${s.mongoRetries} MongoDB retries` : ''}` +
        phasesText(s.phases, lastPhases),
    )
    lastEvents = s.events
    lastAt = now
    if (s.phases) lastPhases = { ...s.phases }
  }

  const run = kafka.changeStreamToKafka({
    source,
    pipeline: o.pipeline,
    projection: o.projection,
    redact: o.redact,
    brokers: o.brokers,
    topic: o.topic,
    topicPrefix: o.topicPrefix,
    topics: o.topics,
    include: o.include,
    exclude: o.exclude,
    checkpointTopic: o.checkpointTopic,
    id: o.id,
    dialect: o.dialect,
    format: o.format,
    value: o.value,
    fullDocument: o.fullDocument,
    startAtOperationTime: o.startAtOperationTime,
    resumeAfter: o.resumeAfter,
    overrideCheckpoint: o.overrideCheckpoint,
    snapshot: o.snapshot || undefined,
    snapshotBatchSize: o.snapshotBatchSize,
    snapshotParallel: o.snapshotParallel,
    commitIntervalMS: o.commitIntervalMS,
    idleCheckpointMS: o.idleCheckpointMS,
    heartbeatTopic: o.heartbeatTopic,
    kafka: o.kafkaClient,
    onHistoryLost: o.onHistoryLost,
    partitions: o.partitions,
    batchSize: o.batchSize,
    maxAwaitTimeMS: o.maxAwaitTimeMS,
    connectTimeoutMS: o.kafkaTimeout * 1000,
    retryTimeoutMS: o.kafkaRetryTimeout * 1000,
    onProgress: (s) => {
      const over = s.overridden ? `, overriding the checkpoint at ${fmtTime(tokenClusterTime(s.overridden.resumeToken) || s.overridden.clusterTime)}` : ''
      if (s.snapshot && !s.snapshot.done && s.snapshot !== snapshotSeen) {
        snapshotSeen = s.snapshot
        announced = true
        const ranges = s.snapshot.ranges > 1 ? ` in ${s.snapshot.ranges} _id ranges` : s.snapshot.rangesNote ? ` in one _id range (${s.snapshot.rangesNote})` : ''
        log(`copying ${what} into ${into} as ${o.id}${ranges} (snapshot: ${s.snapshot.reason}${over}, ${s.snapshot.records} records copied before), then streaming`)
      } else if (!announced) {
        announced = true
        log(`streaming ${what} into ${into} as ${o.id} (started from ${s.startedFrom}${over})`)
      }
      if (s.snapshot && s.snapshot.done && s.snapshot !== snapshotDone) {
        snapshotDone = s.snapshot
        log(`snapshot done: ${s.snapshot.records} records; streaming the changes made since it began`)
      }
    },
    mongoRetryTimeoutMS: o.mongoRetryTimeout * 1000,
    timeoutMS: o.replyTimeout * 1000,
    onMongoRetry: (e, s, what) =>
      log(
        `MongoDB at ${redact(o.uri)} failed: ${s.lastMongoError}; reopening ${what} ${/snapshot/.test(what) ? "after its last committed _id" : 'from the last checkpoint'} ` +
          `(retry ${s.mongoRetries}, giving up in ${Math.ceil(s.mongoGiveUpInMS / 1000)} s)`,
      ),
    onRestart: (e, s) =>
      log(
        `Kafka at ${o.kafka} ${announced ? 'failed' : 'not reachable yet'}: ${s.lastError}; ` +
          `${announced ? 'restarting from the last checkpoint' : 'retrying'} (retry ${s.restarts}, giving up in ${Math.ceil(s.giveUpInMS / 1000)} s)`,
      ),
  })
  stats.value = run.stats
  const timer = o.quiet || o.progressInterval === 0 ? null : setInterval(progress, o.progressInterval * 1000)
  let signalled = null
  const onSignal = (sig) => {
    if (signalled !== null) {
      log(`${sig} again: exiting now (the open transaction, if any, is aborted by the next start)`)
      process.exit(130)
    }
    signalled = sig
    log(`${sig}: finishing the open transaction and closing the change stream`)
    run.stop()
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  let code
  try {
    await run.done
    if (!o.quiet) progress()
    const snapped = run.stats.snapshot ? `${run.stats.snapshot.records} snapshot records${run.stats.snapshot.done ? '' : ' (the copy resumes on the next start)'} and ` : ''
    log(`stopped${signalled ? ` (${signalled})` : ''}: ${snapped}${run.stats.events} events in ${run.stats.transactions} transactions`)
    code = 0
  } catch (e) {
    code = failure(e, o, run.stats, log)
  } finally {
    if (timer) clearInterval(timer)
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
    await client.close().catch(() => {})
  }
  return code
}

/**
 * The MongoClient, connected; null (after saying why) when no server answers within --timeout.
 * A connection cut during the start (a network error before the server selection timed out) is
 * retried with a new client, within what is left of --timeout.
 */
async function connect(mongodb, o, log) {
  const end = Date.now() + o.timeout * 1000
  let delay = 100
  for (let retry = 1; ; retry++) {
    const left = Math.max(1, end - Date.now())
    const client = new mongodb.MongoClient(o.uri, { appName: `bson2json cdc ${o.id}`, serverSelectionTimeoutMS: Math.min(left, o.timeout * 1000) })
    try {
      await client.connect()
      return client
    } catch (e) {
      await client.close().catch(() => {})
      const again = end - Date.now()
      if (isTransientSourceError(e) && e.name !== 'MongoServerSelectionError' && again > 100) {
        log(`MongoDB at ${redact(o.uri)} not reachable yet: ${String(e && e.message).split('\n')[0]}; retrying (retry ${retry}, giving up in ${Math.ceil(again / 1000)} s)`)
        await new Promise((r) => setTimeout(r, Math.min(delay, again - 100)))
        delay = Math.min(delay * 2, 2000)
        continue
      }
      if (e && typeof e === 'object') e.duringConnect = true
      log(`${describe(e, o, 'the change stream')}; nothing was written`)
      return null
    }
  }
}

/** Says why the run ended (one line) and returns the exit status. */
function failure(e, o, stats, log) {
  const name = e && e.name
  const committed = `${stats.events} events committed by this run`
  if (name === 'KafkaFencedError') {
    log(`${e.message}; exiting`)
    return 4
  }
  if (name === 'ChangeStreamInvalidatedError') {
    log(`the change stream was invalidated (the collection or database was dropped or renamed); ${committed}`)
    return 5
  }
  if (name === 'KafkaUnavailableError') {
    const ct = tokenClusterTime(stats.resumeToken) || stats.clusterTime
    const as = o.kafkaSasl !== undefined ? ` (${o.kafkaSasl} as ${o.kafkaUser})` : ''
    log(
      e.refused
        ? `Kafka at ${o.kafka} refused the connection: ${e.reason}${/SASL/i.test(e.reason) ? as : ''}; ${e.phase === 'start' ? 'nothing was written' : committed}`
        : e.phase === 'start'
        ? `cannot reach Kafka at ${o.kafka} within ${o.kafkaTimeout} s (${e.reason}); nothing was written`
        : `lost Kafka at ${o.kafka} for ${o.kafkaRetryTimeout} s (${e.reason}); ${committed}, the checkpoint is at ${fmtTime(ct)}: a restart resumes there`,
    )
    return 3
  }
  if (name === 'ChangeStreamHistoryLostError') {
    const oldest = e.oldestClusterTime ? fmtTime(e.oldestClusterTime) : 'unknown (reading local.oplog.rs was not possible)'
    log(
      `the change stream's history is lost: the checkpoint of ${o.id} is at ${fmtTime(e.checkpointClusterTime)}, ` +
        `the oldest entry the server still has is at ${oldest}; ${committed}. ` +
        'To go on without the lost events: restart with --override-checkpoint (from now, or --start-at-operation-time T)',
    )
    return 6
  }
  if (e && (String(name).startsWith('Mongo') || e.source === true)) {
    // A bare socket error (no Mongo name) is the connection's: say so as for a network error.
    const what = String(name).startsWith('Mongo') ? describe(e, o, 'the change stream') : describe(Object.assign(new Error(e.message), { name: 'MongoNetworkError' }), o, 'the change stream')
    const retried = e.retriedMS ? ` (retried for ${Math.round(e.retriedMS / 1000)} s)` : ''
    log(`${what}${retried}; ${committed}`)
    return 1
  }
  log(`Kafka error at ${o.kafka}: ${e && e.message ? String(e.message).split('\n')[0] : e}; ${committed}`)
  return 3
}

module.exports = { main, parseArgs, tokenClusterTime, HELP }
