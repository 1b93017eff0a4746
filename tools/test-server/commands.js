'use strict'

/**
 * Command handlers. Each handler receives the decoded command document and a
 * {@link CommandContext}, and returns the reply body (without `ok`,
 * `$clusterTime` and `operationTime`, which {@link runCommand} adds), or throws
 * a {@link CommandError}.
 */

const { BSON, Binary, Long, ObjectId, UUID } = require('bson')
const { CommandError, ErrorCodes } = require('./errors')
const { toNumber, matches, project, computedProject, isComputedProjection, sortDocuments, isPlainObject } = require('./documents')
const { ChangeStreamReader, parseChangeStreamPipeline } = require('./change-streams')

const MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024
const MAX_MESSAGE_SIZE_BYTES = 48000000
const MAX_WRITE_BATCH_SIZE = 100000
const DEFAULT_FIRST_BATCH_SIZE = 101
const DEFAULT_AWAIT_MS = 1000
/** Room left in a 16 MiB reply for the cursor envelope. */
const BATCH_BYTES = MAX_BSON_OBJECT_SIZE - 16 * 1024

/**
 * @typedef {object} ServerState
 * @property {import('./store').Store} store
 * @property {import('./oplog').Oplog} oplog
 * @property {import('./cursors').CursorRegistry} cursors
 * @property {{setName: string, host: string, processId: ObjectId, compressors: string[], splitThresholdBytes: number, version: string, maxWireVersion: number}} config
 */

/**
 * @typedef {object} CommandContext
 * @property {ServerState} state
 * @property {{id: number, compressor: string|null, client?: any, signal: AbortSignal}} conn
 * @property {string} db
 * @property {string} name command name (first key)
 * @property {import('./faults').FaultSpec & {kind: string} | null} fault fault picked for this command
 */

/** @param {any} value @param {number} fallback */
function int(value, fallback) {
  const n = toNumber(value)
  return typeof n === 'number' && Number.isFinite(n) ? n : fallback
}

/** @param {CommandContext} ctx @param {Record<string, any>} cmd */
function collectionName(ctx, cmd) {
  const coll = cmd[ctx.name]
  if (typeof coll !== 'string' || coll.length === 0) throw new CommandError(ErrorCodes.InvalidNamespace, 'InvalidNamespace', `collection name has invalid type ${typeof coll}`)
  return coll
}

/**
 * The hello / isMaster reply for this server.
 * @param {ServerState} state
 * @param {Record<string, any>} cmd
 * @param {{id: number, compressor: string|null}} conn
 * @returns {Record<string, any>}
 */
function helloReply(state, cmd, conn) {
  const { config, oplog } = state
  const legacy = !('hello' in cmd)
  const now = new Date()
  const opTime = { ts: oplog.clock.now(), t: Long.fromNumber(1) }
  return {
    topologyVersion: { processId: config.processId, counter: Long.fromNumber(0) },
    hosts: [config.host],
    setName: config.setName,
    setVersion: 1,
    ...(legacy ? { ismaster: true } : { isWritablePrimary: true }),
    secondary: false,
    primary: config.host,
    me: config.host,
    electionId: new ObjectId('7fffffff0000000000000001'),
    lastWrite: { opTime, lastWriteDate: now, majorityOpTime: opTime, majorityWriteDate: now },
    ...(cmd.helloOk ? { helloOk: true } : {}),
    ...(conn.compressor ? { compression: [conn.compressor] } : {}),
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    maxMessageSizeBytes: MAX_MESSAGE_SIZE_BYTES,
    maxWriteBatchSize: MAX_WRITE_BATCH_SIZE,
    localTime: now,
    ...(config.sessions ? { logicalSessionTimeoutMinutes: 30 } : {}),
    connectionId: conn.id,
    minWireVersion: 0,
    maxWireVersion: config.maxWireVersion,
    readOnly: false,
  }
}

/**
 * Build a `cursor` reply and register the cursor if documents remain.
 * @param {CommandContext} ctx
 * @param {string} ns
 * @param {string} type
 * @param {Record<string, any>[]} docs all result documents
 * @param {number} batchSize
 * @param {boolean} [singleBatch]
 */
function cursorReply(ctx, ns, type, docs, batchSize, singleBatch = false) {
  const firstBatch = takeBatch(docs, batchSize)
  let id = Long.ZERO
  if (docs.length > 0 && !singleBatch) id = ctx.state.cursors.open({ ns, type, connectionId: ctx.conn.id, docs }).id
  return { cursor: { firstBatch, id, ns } }
}

/**
 * Remove and return up to `batchSize` docs (Infinity = no count limit) within the byte budget.
 * @param {Record<string, any>[]} docs mutated
 * @param {number} batchSize
 */
function takeBatch(docs, batchSize) {
  const out = []
  let bytes = 0
  while (docs.length > 0 && out.length < batchSize) {
    const size = BSON.calculateObjectSize(docs[0])
    if (out.length > 0 && bytes + size > BATCH_BYTES) break
    bytes += size
    out.push(docs.shift())
  }
  return out
}

/**
 * Run the non-$changeStream aggregation stages this fixture supports.
 * @param {Record<string, any>[]} docs
 * @param {any[]} pipeline
 */
function runPipeline(docs, pipeline) {
  let out = docs
  for (const stage of pipeline) {
    const [name, arg] = Object.entries(stage)[0] ?? []
    switch (name) {
      case '$match':
        out = out.filter((d) => matches(d, arg))
        break
      case '$sort':
        out = sortDocuments(out, arg)
        break
      case '$skip':
        out = out.slice(int(arg, 0))
        break
      case '$limit':
        out = out.slice(0, int(arg, 0))
        break
      case '$project':
        out = out.map((d) => (isComputedProjection(arg) ? computedProject(d, arg) : project(d, arg)))
        break
      case '$count':
        out = out.length ? [{ [arg]: out.length }] : []
        break
      case '$group':
        out = group(out, arg)
        break
      default:
        throw new CommandError(ErrorCodes.BadValue, 'BadValue', `the test server does not support the ${name} aggregation stage`)
    }
  }
  return out
}

/**
 * Minimal $group: constant `_id` (or a `$field` path) with `$sum` accumulators.
 * @param {Record<string, any>[]} docs
 * @param {Record<string, any>} spec
 */
function group(docs, spec) {
  const groups = new Map()
  for (const doc of docs) {
    const key = typeof spec._id === 'string' && spec._id.startsWith('$') ? doc[spec._id.slice(1)] : spec._id
    const k = JSON.stringify(key ?? null)
    if (!groups.has(k)) groups.set(k, { _id: key ?? null, ...Object.fromEntries(Object.keys(spec).filter((f) => f !== '_id').map((f) => [f, 0])) })
    const g = groups.get(k)
    for (const [field, acc] of Object.entries(spec)) {
      if (field === '_id') continue
      if (!isPlainObject(acc) || !('$sum' in acc)) throw new CommandError(ErrorCodes.BadValue, 'BadValue', 'the test server only supports $sum in $group')
      const v = acc.$sum
      g[field] += typeof v === 'string' && v.startsWith('$') ? int(doc[v.slice(1)], 0) : int(v, 0)
    }
  }
  return [...groups.values()]
}

/** @type {Record<string, (cmd: Record<string, any>, ctx: CommandContext) => Promise<Record<string, any>> | Record<string, any>>} */
const handlers = {
  hello: (cmd, ctx) => helloReply(ctx.state, cmd, ctx.conn),
  ping: () => ({}),
  buildInfo: (_cmd, ctx) => {
    const version = ctx.state.config.version
    return { version, gitVersion: 'test-server', versionArray: [...version.split('.').map(Number), 0], bits: 64, debug: false, maxBsonObjectSize: MAX_BSON_OBJECT_SIZE, storageEngines: ['inMemory'], modules: [] }
  },
  endSessions: () => ({}),
  getParameter: () => ({}),
  getLog: () => ({ totalLinesWritten: 0, log: [] }),
  serverStatus: (_cmd, ctx) => ({ host: ctx.state.config.host, version: ctx.state.config.version, process: 'mongod', uptime: process.uptime(), localTime: new Date() }),
  createIndexes: () => ({ numIndexesBefore: 1, numIndexesAfter: 1, note: 'indexes are ignored by the test server' }),
  listIndexes: (cmd, ctx) => {
    const coll = collectionName(ctx, cmd)
    if (!ctx.state.store.getCollection(ctx.db, coll)) throw new CommandError(ErrorCodes.NamespaceNotFound, 'NamespaceNotFound', `ns does not exist: ${ctx.db}.${coll}`)
    return cursorReply(ctx, `${ctx.db}.${coll}`, 'listIndexes', [{ v: 2, key: { _id: 1 }, name: '_id_' }], int(cmd.cursor?.batchSize, DEFAULT_FIRST_BATCH_SIZE))
  },
  listDatabases: (_cmd, ctx) => ({
    databases: [...ctx.state.store.databases.keys()].map((name) => ({ name, sizeOnDisk: 0, empty: ctx.state.store.listCollections(name).length === 0 })),
    totalSize: 0,
  }),
  listCollections: (cmd, ctx) => {
    const docs = ctx.state.store.listCollections(ctx.db).map((name) => {
      const coll = ctx.state.store.getCollection(ctx.db, name)
      return { name, type: 'collection', options: {}, info: { readOnly: false, uuid: new UUID(coll.uuid) }, idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } }
    })
    const filtered = docs.filter((d) => matches(d, cmd.filter)).map((d) => (cmd.nameOnly ? { name: d.name, type: d.type } : d))
    return cursorReply(ctx, `${ctx.db}.$cmd.listCollections`, 'listCollections', filtered, int(cmd.cursor?.batchSize, DEFAULT_FIRST_BATCH_SIZE))
  },
  create: (cmd, ctx) => {
    ctx.state.store.createCollection(ctx.db, collectionName(ctx, cmd))
    return {}
  },
  drop: (cmd, ctx) => {
    const coll = collectionName(ctx, cmd)
    const existed = ctx.state.store.dropCollection(ctx.db, coll)
    return existed ? { nIndexesWas: 1, ns: `${ctx.db}.${coll}` } : {}
  },
  dropDatabase: (_cmd, ctx) => {
    ctx.state.store.dropDatabase(ctx.db)
    return { dropped: ctx.db }
  },
  insert: (cmd, ctx) => {
    const coll = collectionName(ctx, cmd)
    const docs = cmd.documents ?? []
    const ordered = cmd.ordered !== false
    const writeErrors = []
    let n = 0
    for (const [index, doc] of docs.entries()) {
      try {
        ctx.state.store.insertOne(ctx.db, coll, doc)
        n++
      } catch (error) {
        if (!(error instanceof CommandError)) throw error
        writeErrors.push({ index, code: error.code, errmsg: error.message })
        if (ordered) break
      }
    }
    return writeErrors.length ? { n, writeErrors } : { n }
  },
  update: (cmd, ctx) => {
    const coll = collectionName(ctx, cmd)
    const ordered = cmd.ordered !== false
    const writeErrors = []
    const upserted = []
    let n = 0
    let nModified = 0
    for (const [index, statement] of (cmd.updates ?? []).entries()) {
      try {
        const result = ctx.state.store.update(ctx.db, coll, { q: statement.q ?? {}, u: statement.u ?? {}, multi: Boolean(statement.multi), upsert: Boolean(statement.upsert) })
        n += result.n
        nModified += result.nModified
        if (result.upserted !== undefined) upserted.push({ index, _id: result.upserted })
      } catch (error) {
        if (!(error instanceof CommandError)) throw error
        writeErrors.push({ index, code: error.code, errmsg: error.message })
        if (ordered) break
      }
    }
    return { n, nModified, ...(upserted.length ? { upserted } : {}), ...(writeErrors.length ? { writeErrors } : {}) }
  },
  delete: (cmd, ctx) => {
    const coll = collectionName(ctx, cmd)
    let n = 0
    for (const statement of cmd.deletes ?? []) n += ctx.state.store.delete(ctx.db, coll, { q: statement.q ?? {}, limit: int(statement.limit, 0) })
    return { n }
  },
  count: (cmd, ctx) => {
    const coll = collectionName(ctx, cmd)
    return { n: ctx.state.store.find(ctx.db, coll, { filter: cmd.query, skip: int(cmd.skip, 0), limit: int(cmd.limit, 0) }).length }
  },
  find: (cmd, ctx) => {
    const coll = collectionName(ctx, cmd)
    let limit = int(cmd.limit, 0)
    const singleBatch = Boolean(cmd.singleBatch) || limit < 0
    limit = Math.abs(limit)
    const docs = ctx.state.store.find(ctx.db, coll, { filter: cmd.filter, sort: cmd.sort, skip: int(cmd.skip, 0), limit }).map((d) => project(d, cmd.projection))
    let batchSize = int(cmd.batchSize, DEFAULT_FIRST_BATCH_SIZE)
    if (limit > 0 && batchSize > limit) batchSize = limit
    return cursorReply(ctx, `${ctx.db}.${coll}`, 'find', docs, batchSize, singleBatch)
  },
  aggregate: (cmd, ctx) => aggregate(cmd, ctx),
  getMore: (cmd, ctx) => getMore(cmd, ctx),
  killCursors: (cmd, ctx) => {
    const { cursors } = ctx.state
    cursors.killCursorsCommands++
    const cursorsKilled = []
    const cursorsNotFound = []
    for (const id of cmd.cursors ?? []) {
      const long = Long.fromValue(typeof id === 'object' && id._bsontype === 'Long' ? id : Long.fromNumber(toNumber(id)))
      if (cursors.close(long)) {
        cursorsKilled.push(long)
        cursors.killedCursorIds.push(long.toString())
      } else {
        cursorsNotFound.push(long)
        cursors.notFoundCursorIds.push(long.toString())
      }
    }
    return { cursorsKilled, cursorsNotFound, cursorsAlive: [], cursorsUnknown: [] }
  },
}
handlers.isMaster = handlers.hello
handlers.ismaster = handlers.hello
handlers.buildinfo = handlers.buildInfo

/**
 * aggregate: plain pipelines over a collection, or a `$changeStream`.
 * @param {Record<string, any>} cmd
 * @param {CommandContext} ctx
 */
function aggregate(cmd, ctx) {
  const target = cmd.aggregate
  const isCollectionless = toNumber(target) === 1
  const batchSize = int(cmd.cursor?.batchSize, DEFAULT_FIRST_BATCH_SIZE)
  const changeStream = parseChangeStreamPipeline(cmd.pipeline)
  if (!changeStream) {
    if (isCollectionless) throw new CommandError(ErrorCodes.InvalidNamespace, 'InvalidNamespace', '{aggregate: 1} is only supported with $changeStream by the test server')
    const coll = collectionName(ctx, cmd)
    const docs = runPipeline(ctx.state.store.find(ctx.db, coll), cmd.pipeline ?? [])
    return cursorReply(ctx, `${ctx.db}.${coll}`, 'aggregate', docs, batchSize)
  }
  /** @type {import('./change-streams').ChangeStreamScope} */
  let scope
  if (!isCollectionless) {
    scope = { type: 'collection', db: ctx.db, coll: collectionName(ctx, cmd) }
  } else if (ctx.db === 'admin') {
    if (!changeStream.spec.allChangesForCluster) throw new CommandError(ErrorCodes.InvalidNamespace, 'InvalidNamespace', '$changeStream may not be opened on the internal admin database')
    scope = { type: 'cluster' }
  } else {
    scope = { type: 'database', db: ctx.db }
  }
  if (changeStream.spec.allChangesForCluster && scope.type !== 'cluster') {
    throw new CommandError(ErrorCodes.BadValue, 'BadValue', 'A $changeStream with \'allChangesForCluster:true\' may only be opened on the \'admin\' database, and with no collection name')
  }
  const { state } = ctx
  const reader = new ChangeStreamReader({
    oplog: state.oplog,
    store: state.store,
    scope,
    spec: changeStream.spec,
    stages: changeStream.stages,
    split: changeStream.split,
    splitThresholdBytes: () => state.config.splitThresholdBytes,
  })
  const ns = scope.type === 'collection' ? `${scope.db}.${scope.coll}` : `${scope.type === 'cluster' ? 'admin' : scope.db}.$cmd.aggregate`
  const firstBatch = ctx.fault?.kind === 'emptyBatch' ? [] : reader.readBatch(batchSize, BATCH_BYTES)
  const id = reader.invalidated ? Long.ZERO : state.cursors.open({ ns, type: 'changeStream', connectionId: ctx.conn.id, reader }).id
  return { cursor: { firstBatch, postBatchResumeToken: reader.postBatchResumeToken(), id, ns } }
}

/** The server's name of a decoded (promoteValues: false) BSON value's type, for type-mismatch errors. */
function bsonTypeName(value) {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'object' && typeof value._bsontype === 'string') {
    return { Int32: 'int', Double: 'double', Long: 'long', Decimal128: 'decimal', ObjectId: 'objectId', Timestamp: 'timestamp', Binary: 'binData' }[value._bsontype] ?? value._bsontype
  }
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'double'
  if (value instanceof Date) return 'date'
  if (Array.isArray(value)) return 'array'
  return 'object'
}

/**
 * getMore for query cursors and (awaiting) change-stream cursors.
 * @param {Record<string, any>} cmd
 * @param {CommandContext} ctx
 */
async function getMore(cmd, ctx) {
  const { cursors, oplog } = ctx.state
  const id = cmd.getMore
  // As the server's IDL parser: the id must be a BSON int64, even when its value would fit an int32 or a double.
  if (id?._bsontype !== 'Long') {
    throw new CommandError(ErrorCodes.TypeMismatch, 'TypeMismatch', `BSON field 'getMore.getMore' is the wrong type '${bsonTypeName(id)}', expected type 'long'`)
  }
  const cursor = cursors.get(id)
  if (!cursor) throw new CommandError(ErrorCodes.CursorNotFound, 'CursorNotFound', `cursor id ${id} not found`)
  cursor.getMores++
  cursor.lastUsedAt = new Date()
  // getMore without batchSize (or 0) returns as much as fits in a reply.
  const batchSize = int(cmd.batchSize, 0) > 0 ? int(cmd.batchSize, 0) : Infinity
  if (!cursor.reader) {
    const nextBatch = takeBatch(cursor.docs, batchSize)
    if (cursor.docs.length === 0) cursors.close(cursor.id)
    return { cursor: { nextBatch, id: cursor.docs.length === 0 ? Long.ZERO : cursor.id, ns: cursor.ns } }
  }
  const { reader } = cursor
  const deadline = Date.now() + int(cmd.maxTimeMS, DEFAULT_AWAIT_MS)
  const signal = AbortSignal.any([cursor.abort.signal, ctx.conn.signal])
  let nextBatch = []
  if (ctx.fault?.kind !== 'emptyBatch') {
    for (;;) {
      const seen = oplog.lastSeq
      nextBatch = reader.readBatch(batchSize, BATCH_BYTES)
      if (nextBatch.length > 0 || reader.invalidated) break
      const remaining = deadline - Date.now()
      if (remaining <= 0 || signal.aborted) break
      await oplog.waitForEntriesAfter(seen, remaining, signal)
    }
  }
  if (cursor.abort.signal.aborted) throw new CommandError(237, 'CursorKilled', `cursor id ${cursor.id} was killed while a getMore was waiting`)
  if (reader.invalidated) cursors.close(cursor.id)
  return { cursor: { nextBatch, postBatchResumeToken: reader.postBatchResumeToken(), id: reader.invalidated ? Long.ZERO : cursor.id, ns: cursor.ns } }
}

/** @param {ServerState} state */
function clusterTimeFields(state) {
  const clusterTime = state.oplog.clock.now()
  return { $clusterTime: { clusterTime, signature: { hash: new Binary(Buffer.alloc(20), 0), keyId: Long.fromNumber(0) } }, operationTime: clusterTime }
}

/**
 * Whether a command opens or continues a change stream (used for fault matching).
 * @param {ServerState} state
 * @param {string} name
 * @param {Record<string, any>} cmd
 */
function isChangeStreamCommand(state, name, cmd) {
  if (name === 'aggregate') return Array.isArray(cmd.pipeline) && cmd.pipeline[0] != null && '$changeStream' in cmd.pipeline[0]
  if (name === 'getMore') return state.cursors.get(cmd.getMore)?.type === 'changeStream'
  return false
}

/**
 * Run one command and build the full reply document.
 * @param {Record<string, any>} cmd
 * @param {CommandContext} ctx
 * @returns {Promise<Record<string, any>>}
 */
async function runCommand(cmd, ctx) {
  const handler = Object.prototype.hasOwnProperty.call(handlers, ctx.name) ? handlers[ctx.name] : undefined
  try {
    if (!handler) throw new CommandError(ErrorCodes.CommandNotFound, 'CommandNotFound', `no such command: '${ctx.name}'`)
    if (ctx.fault && ['error', 'resumableError', 'nonResumableError', 'cursorNotFound'].includes(ctx.fault.kind)) {
      if (ctx.fault.kind === 'cursorNotFound' && ctx.name === 'getMore') ctx.state.cursors.close(cmd.getMore)
      const { code, codeName, errmsg, errorLabels } = ctx.fault
      throw new CommandError(code, codeName, errmsg, { errorLabels })
    }
    const body = await handler(cmd, ctx)
    return { ...body, ok: 1, ...clusterTimeFields(ctx.state) }
  } catch (error) {
    if (error instanceof CommandError) return { ...error.toReply(), ...clusterTimeFields(ctx.state) }
    return { ok: 0, errmsg: `internal test-server error: ${error && error.stack}`, code: 1, codeName: 'InternalError', ...clusterTimeFields(ctx.state) }
  }
}

module.exports = { runCommand, helloReply, clusterTimeFields, isChangeStreamCommand, handlers, MAX_BSON_OBJECT_SIZE, MAX_MESSAGE_SIZE_BYTES }
