'use strict'

/**
 * The one declaration of every option of the public API: its name, type, default, the
 * `OptionFlag` bit it sets (by the enum's name: the numbers come from the binding), the APIs
 * that take it and the CLI flags that map to it, and its documentation. Derived from it:
 * the accepted names and type checks of every API and their "did you mean" hints
 * (lib/options.js, lib/kafka/options.js), the flags of lib/cli/*.js (lib/cli/usage.js's
 * `optionFlags`) and the table of docs/options.md (`node scripts/options-doc.mjs`, checked by
 * __test__/option-table.spec.ts). Adding an option: a row here, its decoding in the binding
 * (`crates/bson2json-node/src/options.rs`) if it crosses it, and the code that uses it.
 *
 * Pure data, no requires: the CLI loads it at start-up.
 */

/** The APIs, by the name rows use: a short `label` for messages, and how docs/options.md names them. */
const APIS = Object.freeze({
  toJSON: { label: 'toJSON', doc: '`toJSON`, `toJSONBuffer`, `toJSONAsync`, `cursorBatch`' },
  batch: { label: 'the batch functions', doc: '`toJSONList`, `toJSONArray`, `toNDJSON` and their `*Async` twins' },
  row: { label: 'the row functions', doc: '`toRow`, `toRows`, `toRowsAsync`' },
  stream: { label: 'createTranscodeStream', doc: '`createTranscodeStream`' },
  find: { label: 'find', doc: '`find`' },
  aggregate: { label: 'aggregate', doc: '`aggregate`' },
  watch: { label: 'watch', doc: '`watch`' },
  kafka: { label: 'changeStreamToKafka', doc: '`changeStreamToKafka` (`bson2json/kafka`)' },
})

/** The CLI commands whose flags map to options. */
const COMMANDS = Object.freeze(['dump', 'export', 'cdc'])

// Types, as data (lib/options.js turns each into a check; docs/options.md prints `text`).
const oneOf = (...values) => ({ kind: 'enum', values, text: values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(' | ') })
const bool = { kind: 'boolean', text: 'boolean' }
const int = (min, max) => ({ kind: 'int', min, max, text: `integer ${max === undefined ? `≥ ${min}` : `${min}-${max}`}` })
const string = { kind: 'string', text: 'non-empty string' }
const fn = { kind: 'function', text: 'function' }
/** Checked by its own code (named in `text`), or passed on to the driver or the server. */
const other = (text) => ({ kind: 'other', text })

/** Every transcoding API: what the per-document options reach. */
const TRANSCODING = ['toJSON', 'batch', 'row', 'stream', 'find', 'aggregate', 'watch']
/** The APIs that run commands on a server through the driver. */
const CURSORS = ['find', 'aggregate']
const SERVER = ['find', 'aggregate', 'watch']

/**
 * One row per option.
 * - `default`: the value an option left out has; `defaultText` says it in words where it is
 *   no one value (the server's, none).
 * - `flags`: value → the binding's `OptionFlag` member set for it.
 * - `compatOnly`: a js-bson option that applies to dialect 'compat' only.
 * - `server`: the APIs where the name is the server's (sent with the command), not this one.
 * - `unsupported`: a js-bson option accepted at its default only; the reason otherwise.
 * - `generalRowOnly`: shapes the general row format's JSON text; not with `rowFormat: 'powersync'`.
 * - `cli`: command → the flags that give the option; `key` names the parsed value when the
 *   command converts it itself (a field list, JSON, seconds), else the flag's value is checked
 *   against `type` (an enum or an integer; `values`/`min`/`max` narrow it for that flag; `int:
 *   [min, max]` makes it an integer where the API's type is the server's) and a flag without a
 *   value (`set`) gives the option that value.
 */
const ROWS = [
  // -- transcoding ------------------------------------------------------------------------
  {
    name: 'dialect',
    generalRowOnly: true,
    type: oneOf('compat', 'relaxed', 'canonical'),
    default: 'compat',
    flags: { relaxed: 'Relaxed', canonical: 'Canonical' },
    apis: [...TRANSCODING, 'kafka'],
    cli: {
      dump: [{ flags: ['-d', '--dialect'] }],
      export: [{ flags: ['--dialect'], default: 'relaxed' }, { flags: ['--jsonFormat'], key: 'jsonFormat', values: ['relaxed', 'canonical'] }],
      cdc: [{ flags: ['--dialect'] }],
    },
    doc: "`'compat'` (byte-identical to `JSON.stringify(BSON.deserialize(buf))`), `'relaxed'` or `'canonical'` Extended JSON v2",
  },
  {
    name: 'utf8',
    generalRowOnly: true,
    type: oneOf('strict', 'replace'),
    default: 'strict',
    flags: { replace: 'Utf8Replace' },
    apis: TRANSCODING,
    cli: { dump: [{ flags: ['--utf8'] }] },
    doc: "invalid UTF-8 in string values: `'strict'` throws `BSON_INVALID_UTF8`; `'replace'` writes U+FFFD per maximal invalid subpart, exactly as `TextDecoder` and `Buffer#toString` do",
  },
  {
    name: 'maxDepth',
    type: int(1, 0xffffffff),
    default: 1000,
    apis: TRANSCODING,
    cli: { dump: [{ flags: ['--max-depth'] }] },
    doc: 'nesting limit (the top-level document is depth 1). MongoDB stores at most 100 levels; change events add a few. Deeper input throws `BSON_TOO_DEEP`. Nesting is handled with a heap stack, never recursion, so any value is safe',
  },
  {
    name: 'maxOutputBytes',
    type: int(1, 2 ** 32 - 1),
    default: 256 * 1024 * 1024,
    apis: TRANSCODING,
    doc: 'output limit; beyond it `BSON_OUTPUT_TOO_LARGE` instead of exhausting memory. Every valid 16 MiB document fits (worst case ≈ 6.5× its size)',
  },
  {
    name: 'bsonVersion',
    generalRowOnly: true,
    type: oneOf(6, 7),
    default: 7,
    flags: { 6: 'Bson6' },
    apis: TRANSCODING,
    doc: "`compat` only: the js-bson major reproduced, `6` or `7` ([which driver, which js-bson](dialects.md#which-driver-which-js-bson); `find`/`aggregate`/`watch`: the driver's)",
  },
  {
    name: 'promoteLongs',
    generalRowOnly: true,
    type: bool,
    default: true,
    flags: { false: 'Longs' },
    compatOnly: true,
    apis: TRANSCODING,
    doc: "`compat` only, js-bson's option: `false` prints every int64, even `0`, as a `Long` object `{\"high\",\"low\",\"unsigned\"}` (js-bson 6: `{\"low\",\"high\",\"unsigned\"}`)",
  },
  {
    name: 'promoteValues',
    generalRowOnly: true,
    type: bool,
    default: true,
    flags: { false: 'NoPromote' },
    compatOnly: true,
    apis: TRANSCODING,
    doc: "`compat` only, js-bson's option: `false` does what `promoteLongs: false` does (int32, double and symbol print unchanged), switches `promoteBuffers` off, and a `$ref`/`$db` held as a symbol no longer makes a DBRef",
  },
  {
    name: 'promoteBuffers',
    generalRowOnly: true,
    type: bool,
    default: false,
    flags: { true: 'Buffers' },
    compatOnly: true,
    apis: TRANSCODING,
    doc: "`compat` only, js-bson's option: every binary, UUIDs included, as a Node Buffer's JSON `{\"type\":\"Buffer\",\"data\":[…]}` (subtype 2: the inner payload)",
  },
  {
    name: 'bsonRegExp',
    generalRowOnly: true,
    type: bool,
    default: false,
    flags: { true: 'BsonRegExp' },
    compatOnly: true,
    apis: TRANSCODING,
    doc: "`compat` only, js-bson's option: a regex as `{\"pattern\",\"options\"}` with the options sorted; options outside `imxlsu` throw `BSON_INVALID_REGEX` (js-bson: a `BSONError`), patterns V8 rejects do not",
  },
  {
    name: 'validation',
    generalRowOnly: true,
    type: other('`{ utf8: boolean }`'),
    defaultText: '`{ utf8: true }`',
    apis: TRANSCODING,
    doc: "js-bson's option: `{ utf8: false }` is `utf8: 'replace'`, `{ utf8: true }` is `'strict'` (a contradiction with `utf8` is a `TypeError`; the per-key form is not supported)",
  },
  {
    name: 'projection',
    type: other('projection document (lib/shape.js)'),
    defaultText: 'none',
    apis: ['toJSON', 'batch', 'row', 'stream', 'find', 'watch', 'kafka'],
    server: ['find'],
    cli: {
      dump: [{ flags: ['-f', '--fields'], key: 'fields' }, { flags: ['--fieldFile'], key: 'fieldFile' }, { flags: ['--exclude'], key: 'exclude' }],
      export: [{ flags: ['-f', '--fields'], key: 'fields' }, { flags: ['--fieldFile'], key: 'fieldFile' }, { flags: ['--projection'], key: 'projection' }, { flags: ['--exclude'], key: 'exclude' }],
      cdc: [{ flags: ['--projection'], key: 'projection' }],
    },
    doc: "MongoDB's projection document, applied while transcoding ([projection.md](projection.md)); in `find` this name is the server's projection (the client-side one is `clientProjection`)",
  },
  {
    name: 'redact',
    type: other('`{ paths, with?, key? }` (lib/shape.js)'),
    defaultText: 'none',
    apis: [...TRANSCODING, 'kafka'],
    cli: {
      dump: [{ flags: ['--redact'], key: 'redact' }, { flags: ['--redact-key-file'], key: 'redactKeyFile' }],
      export: [{ flags: ['--redact'], key: 'redact' }, { flags: ['--redact-key-file'], key: 'redactKeyFile' }],
      cdc: [{ flags: ['--redact'], key: 'redact' }, { flags: ['--redact-key-file'], key: 'redactKeyFile' }],
    },
    doc: "`{ paths, with?, key? }`: the values at these paths become `null` or an HMAC-SHA256 pseudonym ([projection.md](projection.md))",
  },
  {
    name: 'clientProjection',
    type: other('projection document (lib/shape.js)'),
    defaultText: 'none',
    apis: CURSORS,
    doc: "the client-side `projection` of `find` and `aggregate`, applied to whatever the server returned",
  },
  {
    name: 'enableUtf8Validation',
    type: bool,
    defaultText: "the driver's",
    apis: SERVER,
    doc: "the driver's option: `false` is `utf8: 'replace'`",
  },
  // js-bson deserialize options bson2json cannot honour: accepted at js-bson's default only.
  {
    name: 'useBigInt64',
    type: oneOf(false),
    default: false,
    unsupported: "JSON.stringify throws on every BigInt, so there is no text to reproduce; use dialect 'relaxed' for exact int64 digits",
    apis: TRANSCODING,
    doc: "js-bson's option, accepted at its default only (`JSON.stringify` throws on every BigInt)",
  },
  {
    name: 'raw',
    type: oneOf(false),
    default: false,
    unsupported: 'raw sub-documents are not JSON',
    apis: TRANSCODING,
    doc: "js-bson's option, accepted at its default only",
  },
  {
    name: 'fieldsAsRaw',
    type: other('`{}`'),
    defaultText: 'none',
    unsupported: 'raw sub-documents are not JSON',
    apis: TRANSCODING,
    doc: "js-bson's option, accepted empty only",
  },
  {
    name: 'allowObjectSmallerThanBufferSize',
    type: oneOf(false),
    default: false,
    unsupported: 'a document must fill its buffer',
    apis: TRANSCODING,
    doc: "js-bson's option, accepted at its default only",
  },
  {
    name: 'index',
    type: oneOf(0),
    default: 0,
    unsupported: 'pass a subarray instead',
    apis: TRANSCODING,
    doc: "js-bson's option, accepted at its default only (pass a subarray)",
  },
  // -- rows -------------------------------------------------------------------------------
  {
    name: 'rows',
    type: bool,
    default: false,
    apis: ['watch'],
    doc: "each event's document parts as rows (`rowFormat`, `dateRenderMode`) rather than JSON text; not with `whole`",
  },
  {
    name: 'rowFormat',
    type: oneOf('general', 'powersync'),
    default: 'general',
    apis: ['row', 'watch'],
    doc: "the rows' values: `'general'` (values for SQL drivers, nested values as JSON text in the call's dialect) or `'powersync'` (PowerSync's `bufferToSqlite`; docs/rows.md)",
  },
  {
    name: 'dateRenderMode',
    type: { ...oneOf(0, 1, 2), range: true },
    default: 0,
    apis: ['row', 'watch'],
    doc: "`rowFormat: 'powersync'` only: PowerSync's `DateRenderMode`",
  },
  // -- batches and the stream -------------------------------------------------------------
  {
    name: 'threads',
    type: int(1, 256),
    default: 1,
    apis: ['batch', 'stream'],
    doc: 'spread a batch over this many threads; output order is kept (the final copy into one Buffer is serial; `node benchmark/threads.mjs` measures the gain)',
  },
  {
    name: 'format',
    type: oneOf('ndjson', 'array'),
    default: 'ndjson',
    apis: ['stream'],
    cli: { dump: [{ flags: ['-a', '--array'], set: 'array' }] },
    doc: 'output: newline-delimited JSON or one JSON array',
  },
  {
    name: 'chunkSize',
    type: int(1),
    defaultText: 'none',
    apis: ['stream'],
    doc: 'emit output in chunks of at most this many bytes (also the BSON sub-batch size)',
  },
  {
    name: 'batchBytes',
    type: int(1),
    default: 1024 * 1024,
    apis: ['stream'],
    doc: 'BSON bytes transcoded per native call when `chunkSize` is not set',
  },
  {
    name: 'concurrency',
    type: int(1, 256),
    default: 1,
    apis: ['stream'],
    cli: { dump: [{ flags: ['--threads'] }] },
    doc: "sub-batches transcoded at once on the libuv thread pool while the stream reads on; output order, errors and `'skip'` events are those of `1`. The CLI uses one per core",
  },
  {
    name: 'maxDocumentBytes',
    type: int(1),
    default: 64 * 1024 * 1024,
    apis: ['stream'],
    doc: 'largest accepted declared document length; larger is `BSON_BAD_LENGTH`',
  },
  {
    name: 'skipInvalid',
    type: bool,
    default: false,
    apis: ['stream'],
    cli: { dump: [{ flags: ['--skip-invalid'], set: true }] },
    doc: "skip a corrupt document (a `'skip'` event) and go on with the next one",
  },
  ...['highWaterMark', 'readableHighWaterMark', 'writableHighWaterMark'].map((name) => ({
    name,
    type: other("Node's"),
    defaultText: "Node's",
    apis: ['stream'],
    doc: "the `Transform`'s option of this name",
  })),
  // -- find and aggregate -----------------------------------------------------------------
  {
    name: 'batchSize',
    type: int(0),
    defaultText: "the server's",
    apis: [...SERVER, 'kafka'],
    cli: { export: [{ flags: ['--batchSize'], min: 1 }], cdc: [{ flags: ['--batch-size'], min: 1 }] },
    doc: 'documents (events) per server batch',
  },
  {
    name: 'timeoutMS',
    type: int(0),
    default: 0,
    apis: SERVER,
    cli: { export: [{ flags: ['--timeoutMS'] }] },
    doc: 'give up when a reply of the server takes longer than this (a drip-feeding one included): the cursor or change stream fails with `BSON2JSON_TIMEOUT`; 0: no bound (docs/reliability.md)',
  },
  {
    name: 'maxAwaitTimeMS',
    type: int(0),
    defaultText: "the server's",
    apis: [...SERVER, 'kafka'],
    cli: { cdc: [{ flags: ['--max-await-ms'], min: 1 }] },
    doc: '`getMore` wait on a tailable cursor or an idle change stream',
  },
  {
    name: 'prefetch',
    type: int(0),
    defaultText: '1 (`watch`: 4)',
    apis: [...SERVER, 'kafka'],
    doc: 'batches fetched ahead of the consumer',
  },
  {
    name: 'session',
    type: other('a driver `ClientSession`'),
    defaultText: 'one per cursor',
    apis: CURSORS,
    doc: 'the driver session the commands run in',
  },
  {
    name: 'signal',
    type: other('an `AbortSignal`'),
    defaultText: 'none',
    apis: [...SERVER, 'kafka'],
    doc: 'aborting it ends the cursor, the change stream or the run with an error',
  },
  {
    name: 'sort',
    type: other("every form the driver's `find` takes"),
    defaultText: 'none',
    apis: ['find'],
    server: ['find'],
    cli: { export: [{ flags: ['--sort'], key: 'sort' }] },
    doc: "the server's sort",
  },
  {
    name: 'limit',
    type: other("the server's (a negative limit: one batch)"),
    defaultText: 'none',
    apis: ['find'],
    server: ['find'],
    cli: { export: [{ flags: ['--limit'], int: [0] }] },
    doc: "`find`'s option",
  },
  {
    name: 'skip',
    type: other("the server's"),
    defaultText: 'none',
    apis: ['find'],
    server: ['find'],
    cli: { export: [{ flags: ['--skip'], int: [0] }] },
    doc: "`find`'s option",
  },
  ...[
    ['hint', CURSORS],
    ['maxTimeMS', CURSORS],
    ['collation', CURSORS],
    ['comment', CURSORS],
    ['let', CURSORS],
    ['allowDiskUse', CURSORS],
    ['readConcern', CURSORS],
    ['min', ['find']],
    ['max', ['find']],
    ['returnKey', ['find']],
    ['showRecordId', ['find']],
    ['bypassDocumentValidation', ['aggregate']],
  ].map(([name, apis]) => ({ name, type: other("the server's"), defaultText: "the server's", apis, server: apis, doc: "the command's field of this name, sent to the server" })),
  // -- watch ------------------------------------------------------------------------------
  {
    name: 'whole',
    type: bool,
    default: false,
    apis: ['watch'],
    doc: 'each event carries `json`, the whole event',
  },
  {
    name: 'splitLargeEvents',
    type: bool,
    default: false,
    apis: ['watch', 'kafka'],
    doc: 'append `$changeStreamSplitLargeEvent` and reassemble the fragments into one event',
  },
  {
    name: 'fullDocument',
    type: oneOf('default', 'updateLookup', 'whenAvailable', 'required'),
    default: 'default',
    apis: ['watch', 'kafka'],
    cli: { cdc: [{ flags: ['--full-document'] }] },
    doc: "the change stream's `fullDocument`",
  },
  {
    name: 'fullDocumentBeforeChange',
    type: oneOf('off', 'whenAvailable', 'required'),
    default: 'off',
    apis: ['watch', 'kafka'],
    doc: "the change stream's `fullDocumentBeforeChange`",
  },
  {
    name: 'showExpandedEvents',
    type: bool,
    default: false,
    apis: ['watch', 'kafka'],
    doc: "the change stream's `showExpandedEvents`",
  },
  {
    name: 'resumeAfter',
    type: other('a resume token'),
    defaultText: 'none',
    apis: ['watch', 'kafka'],
    cli: { cdc: [{ flags: ['--resume-after'], key: 'resumeAfterText' }] },
    doc: 'start after this resume token (`changeStreamToKafka`: first start only)',
  },
  {
    name: 'startAfter',
    type: other('a resume token'),
    defaultText: 'none',
    apis: ['watch'],
    doc: 'start after this resume token, even past an invalidate',
  },
  {
    name: 'startAtOperationTime',
    type: other('a BSON `Timestamp`'),
    defaultText: 'now',
    apis: ['watch', 'kafka'],
    cli: { cdc: [{ flags: ['--start-at-operation-time'], key: 'startAt' }] },
    doc: 'start at this cluster time (`changeStreamToKafka`: first start only)',
  },
  // -- changeStreamToKafka ----------------------------------------------------------------
  {
    name: 'source',
    type: other('a driver `MongoClient`, `Db` or `Collection`'),
    defaultText: 'required',
    apis: ['kafka'],
    doc: 'what to watch: a collection, a database or the cluster (the CLI: `--uri`, `--db`, `--collection`)',
  },
  {
    name: 'pipeline',
    type: other('an array of stages'),
    defaultText: '`[]`',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--pipeline'], key: 'pipeline' }] },
    doc: 'stages after `$changeStream`',
  },
  {
    name: 'brokers',
    type: other('`"HOST:PORT"` strings (an array or a comma-separated string)'),
    defaultText: 'required',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--kafka'], key: 'kafka' }] },
    doc: 'the bootstrap brokers',
  },
  { name: 'topic', type: string, defaultText: 'required', apis: ['kafka'], cli: { cdc: [{ flags: ['--topic'] }] }, doc: 'the events topic' },
  {
    name: 'checkpointTopic',
    type: string,
    defaultText: 'required',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--checkpoint-topic'] }] },
    doc: 'the compacted topic of the resume tokens, keyed by `id`',
  },
  { name: 'id', type: string, defaultText: 'required', apis: ['kafka'], cli: { cdc: [{ flags: ['--id'] }] }, doc: 'the stream id: one running process per id' },
  {
    name: 'topicPrefix',
    type: string,
    defaultText: 'none',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--topic-prefix'] }] },
    doc: 'one topic per collection, `PREFIX.db.coll`, each created when its collection is first seen (instead of `topic`)',
  },
  {
    name: 'topics',
    type: other('`{ "db.coll" or "db": topic }`'),
    defaultText: 'none',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--topic-map'], key: 'topicMap' }] },
    doc: 'these namespaces into these topics',
  },
  {
    name: 'include',
    type: other('namespace patterns (`db`, `db.coll`, `*`)'),
    defaultText: 'all',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--include'], key: 'include' }] },
    doc: 'capture only these namespaces (a `$match` after `$changeStream`)',
  },
  {
    name: 'exclude',
    type: other('namespace patterns (`db`, `db.coll`, `*`)'),
    defaultText: 'none',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--exclude'], key: 'exclude' }] },
    doc: 'leave these namespaces out',
  },
  {
    name: 'heartbeatTopic',
    type: string,
    defaultText: 'none',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--heartbeat-topic'] }] },
    doc: "a heartbeat record per idle checkpoint, as each format's connector writes them",
  },
  {
    name: 'format',
    type: other('`FORMAT_NAMES` of lib/kafka/records.js'),
    default: 'bson2json',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--format'], key: 'format' }] },
    doc: "the records' format: `'bson2json'`, `'mongo-kafka'` (the MongoDB source connector's) or `'debezium'` (docs/kafka.md)",
  },
  {
    name: 'value',
    type: oneOf('event', 'fullDocument'),
    default: 'event',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--value'] }] },
    doc: 'the message value: the whole event or its `fullDocument` (deletes: no value)',
  },
  {
    name: 'overrideCheckpoint',
    type: bool,
    default: false,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--override-checkpoint'], set: true }] },
    doc: 'start from `resumeAfter`, `startAtOperationTime` or now even though a checkpoint exists',
  },
  {
    name: 'snapshot',
    type: bool,
    default: false,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--snapshot'], set: true }] },
    doc: 'first start: copy the collection into the topic first, then stream from before the copy',
  },
  {
    name: 'snapshotBatchSize',
    type: int(1),
    default: 1000,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--snapshot-batch-size'] }] },
    doc: 'documents per snapshot batch',
  },
  {
    name: 'snapshotParallel',
    type: int(1, 64),
    default: 1,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--snapshot-parallel'] }] },
    doc: '`_id` ranges copied at once, one cursor each',
  },
  {
    name: 'onHistoryLost',
    type: oneOf('fail', 'snapshot'),
    default: 'fail',
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--on-history-lost'] }] },
    doc: 'lost history at the checkpoint: reject, or copy the collection again',
  },
  { name: 'createTopics', type: bool, default: true, apis: ['kafka'], doc: 'create missing topics' },
  {
    name: 'partitions',
    type: int(1),
    default: 1,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--partitions'] }] },
    doc: 'partitions of a newly created events topic',
  },
  {
    name: 'idleCheckpointMS',
    type: int(0),
    default: 5000,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--heartbeat-interval'], min: 1 }] },
    doc: 'checkpoint an idle stream (and write a heartbeat) at most this often',
  },
  {
    name: 'commitIntervalMS',
    type: int(0),
    default: 100,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--commit-interval-ms'] }] },
    doc: 'commit the open transaction once it is this old (0: every batch)',
  },
  {
    name: 'maxTransactionBytes',
    type: int(1),
    default: 8 * 1024 * 1024,
    apis: ['kafka'],
    doc: 'commit the open transaction once its records reach this many bytes',
  },
  { name: 'maxRequestBytes', type: int(1), default: 512 * 1024, apis: ['kafka'], doc: 'bytes per produce request inside a transaction' },
  { name: 'retryDelayMS', type: int(1), default: 500, apis: ['kafka'], doc: 'first back-off after a Kafka error (doubling up to 10 s)' },
  {
    name: 'connectTimeoutMS',
    type: int(1),
    default: 10_000,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--kafka-timeout'], key: 'kafkaTimeout' }] },
    doc: 'reject when Kafka cannot be reached at start within this (the CLI flag: seconds)',
  },
  {
    name: 'retryTimeoutMS',
    type: int(1),
    default: 120_000,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--kafka-retry-timeout'], key: 'kafkaRetryTimeout' }] },
    doc: 'once running, reject when Kafka stays unreachable this long (the CLI flag: seconds)',
  },
  {
    name: 'mongoRetryTimeoutMS',
    type: int(1),
    default: 120_000,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--mongo-retry-timeout'], key: 'mongoRetryTimeout' }] },
    doc: 'once running, reject when MongoDB has not answered this long (the CLI flag: seconds)',
  },
  {
    name: 'timeoutMS',
    type: int(1),
    default: 60_000,
    apis: ['kafka'],
    cli: { cdc: [{ flags: ['--reply-timeout'], key: 'replyTimeout' }] },
    doc: "give up on a reply of MongoDB (a change stream's or the snapshot's command) after this and retry from the checkpoint: a server or network that stops answering is not waited on for ever (the CLI flag: seconds)",
  },
  {
    name: 'kafka',
    type: other('an object'),
    defaultText: 'none',
    apis: ['kafka'],
    cli: { cdc: ['--kafka-tls', '--kafka-ca', '--kafka-cert', '--kafka-key', '--kafka-sasl', '--kafka-user', '--kafka-password-file'].map((f) => ({ flags: [f], key: f.slice(2).replace(/-(\w)/g, (_, c) => c.toUpperCase()), ...(f === '--kafka-tls' ? { set: true } : {}) })) },
    doc: 'extra `@platformatic/kafka` client options (`tls`, `sasl`)',
  },
  { name: 'onProgress', type: fn, defaultText: 'none', apis: ['kafka'], doc: 'called after each committed transaction with the run\'s statistics' },
  { name: 'onRestart', type: fn, defaultText: 'none', apis: ['kafka'], doc: 'called when a Kafka error restarts the stream from the last checkpoint' },
  { name: 'onMongoRetry', type: fn, defaultText: 'none', apis: ['kafka'], doc: 'called when a transient MongoDB error is about to be retried' },
]

function freezeDeep(x) {
  if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
    Object.freeze(x)
    for (const v of Object.values(x)) freezeDeep(v)
  }
  return x
}

/**
 * name → row, a null-prototype object (a name such as `toString` is not found on it). A name
 * may have two rows when their APIs differ (`format`: the stream's output, Kafka's records):
 * this is the first; {@link rowOf} finds an API's.
 */
const OPTIONS = Object.create(null)
/** API → name → row. */
const BY_API = Object.create(null)
for (const api of Object.keys(APIS)) BY_API[api] = Object.create(null)
for (const row of ROWS) {
  for (const api of row.apis) {
    if (BY_API[api] === undefined) throw new Error(`option ${row.name}: unknown API ${api}`)
    if (BY_API[api][row.name] !== undefined) throw new Error(`option ${row.name} declared twice for ${api}`)
    BY_API[api][row.name] = row
  }
  for (const c of Object.keys(row.cli || {})) if (!COMMANDS.includes(c)) throw new Error(`option ${row.name}: unknown command ${c}`)
  if (OPTIONS[row.name] === undefined) OPTIONS[row.name] = row
}
freezeDeep(ROWS)
Object.freeze(OPTIONS)

/** The row of option `name` for `api`, or undefined when `api` does not take it. */
function rowOf(api, name) {
  return BY_API[api][name]
}

/** The names `api` accepts, in the table's order. */
function namesOf(api) {
  if (APIS[api] === undefined) throw new Error(`unknown API ${api}`)
  return ROWS.filter((r) => r.apis.includes(api)).map((r) => r.name)
}

/** The names `api` sends to the server as fields of its command, in the table's order. */
function serverNamesOf(api) {
  return ROWS.filter((r) => r.server !== undefined && r.server.includes(api)).map((r) => r.name)
}

/** The APIs that take `name` (an empty list for a name that is no option). */
function apisOf(name) {
  return ROWS.filter((r) => r.name === name).flatMap((r) => r.apis)
}

/**
 * The flags of `command` that map to options: `[{ flag, option, key, takesValue, row, spec }]`
 * (`spec` is the row's `cli` entry, `key` the parsed value's name).
 */
function flagsOf(command) {
  const out = []
  for (const row of ROWS) {
    for (const spec of (row.cli && row.cli[command]) || []) {
      for (const flag of spec.flags) out.push({ flag, option: row.name, key: spec.key || row.name, takesValue: spec.set === undefined, row, spec })
    }
  }
  return out
}

module.exports = { APIS, COMMANDS, ROWS, OPTIONS, rowOf, namesOf, serverNamesOf, apisOf, flagsOf }
