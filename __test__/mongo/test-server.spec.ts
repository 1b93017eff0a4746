import { spawn } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { BSON, Long, MongoClient, Timestamp } from 'mongodb'
import type { ChangeStream, ChangeStreamDocument, Collection, Db } from 'mongodb'
import { startTestServer } from '../../tools/test-server'
import type { TestServer } from '../../tools/test-server'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const wire = require('../../tools/test-server/wire')

let server: TestServer
let client: MongoClient
let db: Db
let counter = 0
const clients: MongoClient[] = []

/** A fresh collection name per test. */
function freshCollection(): Collection {
  counter += 1
  return db.collection(`c${counter}`)
}

async function connect(uri: string, options = {}): Promise<MongoClient> {
  const c = new MongoClient(uri, { serverSelectionTimeoutMS: 3000, ...options })
  clients.push(c)
  await c.connect()
  return c
}

/** Events already pulled off a stream by {@link watch}. */
const stashed = new WeakMap<ChangeStream<any, any>, any[]>()

/** Read `n` events from a driver change stream. */
async function take<T extends ChangeStreamDocument>(stream: ChangeStream<any, T>, n: number): Promise<T[]> {
  const out: T[] = stashed.get(stream)?.splice(0, n) ?? []
  while (out.length < n) out.push(await stream.next())
  return out
}

/** Open a driver change stream and wait until its initial aggregate was answered. */
async function watch(target: Collection | Db | MongoClient, pipeline: any[] = [], options: any = {}): Promise<ChangeStream<any, any>> {
  const stream = target.watch(pipeline, { maxAwaitTimeMS: 50, ...options })
  const first = await stream.tryNext()
  stashed.set(stream, first ? [first] : [])
  return stream
}

/**
 * `{raw: true}` replies: driver 7 leaves embedded documents (`cursor`, `$clusterTime`) as raw BSON bytes.
 * Int64 values stay `Long` (see `db` below).
 */
function asDocument(reply: any): any {
  const parse = (bytes: Uint8Array) => BSON.deserialize(bytes, { promoteLongs: false })
  if (reply instanceof Uint8Array) return parse(reply)
  return Object.fromEntries(Object.entries(reply).map(([k, v]) => [k, v instanceof Uint8Array ? parse(v) : v]))
}

/**
 * `db.command()` with int64 values kept as `Long` (the driver does not inherit BSON options for it).
 * Cursor ids are random positive int64s, as on a real server: with the default `promoteLongs`, one in
 * ~1024 fits in 53 bits and comes back as a JS number, which the driver would send back as a double.
 */
const command = (target: Db, cmd: any, options: any = {}): Promise<any> => target.command(cmd, { promoteLongs: false, ...options })

const isType = (value: any, type: string) => value?._bsontype === type

beforeAll(async () => {
  server = await startTestServer({ port: 0 })
  client = await connect(server.uri)
  db = client.db('app')
})

afterAll(async () => {
  for (const c of clients) await c.close()
  await server?.close()
})

describe('connection and handshake', () => {
  it('connects as a replica-set primary and answers hello, ping and buildInfo', async () => {
    expect(server.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/\?replicaSet=rs0$/)
    expect(await command(db, { ping: 1 })).toMatchObject({ ok: 1 })
    const hello = await db.admin().command({ hello: 1 })
    expect(hello).toMatchObject({ isWritablePrimary: true, setName: 'rs0', minWireVersion: 0, maxWireVersion: 21, logicalSessionTimeoutMinutes: 30, maxBsonObjectSize: 16777216, maxMessageSizeBytes: 48000000, maxWriteBatchSize: 100000, ok: 1 })
    expect(hello.hosts).toEqual([`127.0.0.1:${server.port}`])
    expect(hello.me).toBe(`127.0.0.1:${server.port}`)
    expect(hello.topologyVersion.processId).toBeDefined()
    expect(hello.localTime).toBeInstanceOf(Date)
    expect(isType(hello.operationTime, 'Timestamp')).toBe(true)
    expect(hello.$clusterTime.signature.hash.buffer.length).toBe(20)
    expect((await db.admin().command({ buildInfo: 1 })).version).toBe('8.0.0')
    // The driver's first handshake is a legacy OP_QUERY isMaster.
    expect(server.commandLog[0].name).toMatch(/^(isMaster|ismaster|hello)$/)
    expect(server.commandNames({ includeHello: true }).some((n) => /^(isMaster|ismaster)$/.test(n))).toBe(true)
  })

  it('works with directConnection=true and with zlib compression', async () => {
    const direct = await connect(server.directUri)
    expect(await direct.db('admin').command({ ping: 1 })).toMatchObject({ ok: 1 })
    const zipped = await connect(`${server.uri}&compressors=zlib`)
    const coll = zipped.db('app').collection('zipped')
    await coll.insertOne({ _id: 1, text: 'x'.repeat(2000) } as any)
    expect(await coll.findOne({ _id: 1 } as any)).toEqual({ _id: 1, text: 'x'.repeat(2000) })
    expect(server.connections().some((c) => c.compressor === 'zlib')).toBe(true)
    await vi.waitFor(() => expect(server.connections().some((c) => c.isMonitor)).toBe(true), { timeout: 3000 })
  })

  it('accepts OP_MSG kind 1 document sequences on a raw socket', async () => {
    const socket = net.connect(server.port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    const request = wire.encodeOpMsgRequest({ insert: 'rawseq', $db: 'app' }, { sequences: { documents: [{ _id: 1 }, { _id: 2 }, { _id: 3 }] } })
    socket.write(request)
    const reply: Buffer = await new Promise((resolve) => {
      const splitter = new wire.MessageSplitter()
      socket.on('data', (chunk) => {
        const [message] = splitter.push(chunk, 48000000)
        if (message) resolve(message)
      })
    })
    socket.destroy()
    expect(reply.readInt32LE(8)).toBe(request.readInt32LE(4)) // responseTo
    expect(reply.readInt32LE(12)).toBe(2013)
    const body = BSON.deserialize(reply.subarray(21))
    expect(body).toMatchObject({ n: 3, ok: 1 })
    expect(await db.collection('rawseq').countDocuments()).toBe(3)
  })
})

describe('CRUD and cursors', () => {
  it('find returns batches through getMore and killCursors closes cursors', async () => {
    const coll = freshCollection()
    await coll.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, n: i, even: i % 2 === 0 })) as any[])
    server.clearCommandLog()
    const all = await coll.find({}, { batchSize: 3 }).toArray()
    expect(all.map((d) => d._id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(server.commandNames().filter((n) => n === 'getMore')).toHaveLength(3)

    const before = server.killCursorsStats().commands
    const cursor = coll.find({}, { batchSize: 2 })
    await cursor.next()
    expect(server.openCursors().filter((c) => c.type === 'find')).toHaveLength(1)
    await cursor.close()
    expect(server.killCursorsStats().commands).toBe(before + 1)
    expect(server.openCursors()).toEqual([])

    const raw = await command(db, { find: coll.collectionName, batchSize: 4 })
    expect(isType(raw.cursor.id, 'Long')).toBe(true)
    expect(raw.cursor.firstBatch).toHaveLength(4)
    const killed = await command(db, { killCursors: coll.collectionName, cursors: [raw.cursor.id, Long.fromNumber(12345)] })
    expect(killed.cursorsKilled.map(String)).toEqual([raw.cursor.id.toString()])
    expect(killed.cursorsNotFound.map(String)).toEqual(['12345'])
    await expect(command(db, { getMore: raw.cursor.id, collection: coll.collectionName })).rejects.toMatchObject({ code: 43 })

    // The id must be an int64 on the wire, as on a real server; a JS number is sent as int32 or double.
    const open = await command(db, { find: coll.collectionName, batchSize: 1 })
    await expect(db.command({ getMore: 12345, collection: coll.collectionName })).rejects.toMatchObject({ code: 14, codeName: 'TypeMismatch' })
    await expect(db.command({ getMore: 2 ** 40, collection: coll.collectionName })).rejects.toThrow(/wrong type 'double', expected type 'long'/)
    await command(db, { killCursors: coll.collectionName, cursors: [open.cursor.id] })
  })

  it('supports filters, sort, skip, limit and projection', async () => {
    const coll = freshCollection()
    await coll.insertMany(Array.from({ length: 6 }, (_, i) => ({ _id: i, n: i, tag: i % 2 ? 'odd' : 'even', sub: { v: i } })) as any[])
    expect(await coll.find({ tag: 'odd' }).sort({ n: -1 }).toArray()).toHaveLength(3)
    expect((await coll.find({ tag: 'odd' }).sort({ n: -1 }).limit(2).toArray()).map((d) => d._id)).toEqual([5, 3])
    expect((await coll.find({ n: { $gte: 2, $lt: 5 } }).skip(1).toArray()).map((d) => d._id)).toEqual([3, 4])
    expect(await coll.findOne({ 'sub.v': 4 } as any, { projection: { tag: 1 } })).toEqual({ _id: 4, tag: 'even' })
    expect(await coll.countDocuments({ tag: 'even' })).toBe(3)
    expect(await coll.estimatedDocumentCount()).toBe(6)
  })

  it('updates with operators, replacement and upsert; deletes', async () => {
    const coll = freshCollection()
    await coll.insertOne({ _id: 1, a: 1, b: 'x', n: 5 } as any)
    const r1 = await coll.updateOne({ _id: 1 } as any, { $set: { a: 2 }, $unset: { b: '' }, $inc: { n: 3 } })
    expect(r1).toMatchObject({ matchedCount: 1, modifiedCount: 1 })
    expect(await coll.findOne({ _id: 1 } as any)).toEqual({ _id: 1, a: 2, n: 8 })
    await coll.replaceOne({ _id: 1 } as any, { z: true })
    expect(await coll.findOne({ _id: 1 } as any)).toEqual({ _id: 1, z: true })
    const up = await coll.updateOne({ _id: 2 } as any, { $set: { y: 1 } }, { upsert: true })
    expect(up.upsertedId).toBe(2)
    await expect(coll.insertOne({ _id: 2 } as any)).rejects.toMatchObject({ code: 11000 })
    expect((await coll.deleteMany({})).deletedCount).toBe(2)
    expect(await coll.countDocuments()).toBe(0)
  })
})

describe('change streams through the driver', () => {
  it('delivers insert, update, replace and delete events shaped like a real server', async () => {
    const coll = freshCollection()
    const stream = await watch(coll, [], { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable' })
    await coll.insertOne({ _id: 1, a: 1, b: 2 } as any)
    await coll.updateOne({ _id: 1 } as any, { $set: { a: 5 }, $unset: { b: '' } })
    await coll.replaceOne({ _id: 1 } as any, { c: 3 })
    await coll.deleteOne({ _id: 1 } as any)
    const [ins, upd, rep, del] = await take(stream, 4)
    await stream.close()

    expect(ins).toMatchObject({ operationType: 'insert', ns: { db: 'app', coll: coll.collectionName }, documentKey: { _id: 1 }, fullDocument: { _id: 1, a: 1, b: 2 } })
    expect(Object.keys(ins)).toEqual(['_id', 'operationType', 'clusterTime', 'wallTime', 'fullDocument', 'ns', 'documentKey'])
    expect((ins._id as any)._data).toMatch(/^82[0-9A-F]+$/)
    expect(isType(ins.clusterTime, 'Timestamp')).toBe(true)
    expect(ins.wallTime).toBeInstanceOf(Date)
    expect(upd).toMatchObject({
      operationType: 'update',
      documentKey: { _id: 1 },
      updateDescription: { updatedFields: { a: 5 }, removedFields: ['b'], truncatedArrays: [] },
      fullDocumentBeforeChange: { _id: 1, a: 1, b: 2 },
    })
    // updateLookup reads the current document (by now it was deleted).
    expect(upd.operationType === 'update' && upd.fullDocument).toBeNull()
    expect(rep).toMatchObject({ operationType: 'replace', fullDocument: { _id: 1, c: 3 }, fullDocumentBeforeChange: { _id: 1, a: 5 } })
    expect(del).toMatchObject({ operationType: 'delete', documentKey: { _id: 1 }, fullDocumentBeforeChange: { _id: 1, c: 3 } })
    const times = [ins, upd, rep, del].map((e) => e.clusterTime as Timestamp)
    for (let i = 1; i < times.length; i++) expect(times[i].greaterThan(times[i - 1])).toBe(true)
    expect(server.decodeResumeToken(del._id as any)).toMatchObject({ type: 'event', fragment: 0 })
  })

  it('resumes automatically after a resumable error, a closed socket and CursorNotFound', async () => {
    const coll = freshCollection()
    const stream = await watch(coll)
    for (const kind of ['resumableError', 'closeSocket', 'cursorNotFound'] as const) {
      server.clearCommandLog()
      const fault = server.injectFault({ command: 'getMore', kind, changeStreamOnly: true })
      await coll.insertOne({ kind } as any)
      const [event] = await take(stream, 1)
      expect(event).toMatchObject({ operationType: 'insert', fullDocument: { kind } })
      expect(fault.hits).toBe(1)
      const resumed = server.commandLog.filter((e) => e.name === 'aggregate')
      expect(resumed.length).toBeGreaterThanOrEqual(1)
      expect(resumed[0].command.pipeline[0].$changeStream.resumeAfter).toBeDefined()
    }
    await stream.close()
  })

  it('surfaces non-resumable errors', async () => {
    const coll = freshCollection()
    const stream = await watch(coll)
    server.injectFault({ command: 'getMore', kind: 'nonResumableError', changeStreamOnly: true })
    await expect(stream.next()).rejects.toMatchObject({ code: 280 })
    await stream.close()
    const again = await watch(coll)
    server.injectFault({ command: 'getMore', kind: 'error', code: 2, changeStreamOnly: true })
    await expect(again.next()).rejects.toMatchObject({ code: 2, codeName: 'BadValue' })
    await again.close()
  })

  it('emits drop then invalidate and closes the stream when the collection is dropped', async () => {
    const coll = freshCollection()
    await coll.insertOne({ _id: 1 } as any)
    const stream = await watch(coll)
    await coll.drop()
    const [drop, invalidate] = await take(stream, 2)
    expect(drop).toMatchObject({ operationType: 'drop', ns: { db: 'app', coll: coll.collectionName } })
    expect(invalidate.operationType).toBe('invalidate')
    expect(Object.keys(invalidate)).toEqual(['_id', 'operationType', 'clusterTime', 'wallTime'])
    expect(server.decodeResumeToken(invalidate._id as any)?.type).toBe('invalidate')
    await expect(stream.next()).rejects.toThrow()
    expect(stream.closed).toBe(true)
    // startAfter an invalidate starts a new stream after the drop.
    const after = await watch(coll, [], { startAfter: invalidate._id })
    await coll.insertOne({ _id: 'again' } as any)
    expect((await take(after, 1))[0]).toMatchObject({ operationType: 'insert', documentKey: { _id: 'again' } })
    await after.close()
  })

  it('filters database-level and cluster-level streams by namespace', async () => {
    const other = client.db('otherdb')
    const dbStream = await watch(db)
    const clusterStream = await watch(client)
    const a = freshCollection()
    await other.collection('x').insertOne({ where: 'other' })
    await a.insertOne({ where: 'app' } as any)
    const [fromDb] = await take(dbStream, 1)
    expect(fromDb).toMatchObject({ ns: { db: 'app', coll: a.collectionName }, fullDocument: { where: 'app' } })
    const fromCluster = await take(clusterStream, 2)
    expect(fromCluster.map((e: any) => e.ns.db)).toEqual(['otherdb', 'app'])
    await dbStream.close()
    await clusterStream.close()
  })

  it('invalidates database streams on dropDatabase and shows expanded events', async () => {
    const scratch = client.db('scratch')
    const stream = await watch(scratch, [], { showExpandedEvents: true })
    await scratch.collection('k').insertOne({ _id: 1 })
    await scratch.dropDatabase()
    const events = await take(stream, 5)
    expect(events.map((e: any) => e.operationType)).toEqual(['create', 'insert', 'drop', 'dropDatabase', 'invalidate'])
    expect(events[0]).toMatchObject({ ns: { db: 'scratch', coll: 'k' }, operationDescription: { idIndex: { name: '_id_' } } })
    expect(isType(events[1].collectionUUID, 'Binary')).toBe(true)
    expect(events[3].ns).toEqual({ db: 'scratch' })
    await expect(stream.next()).rejects.toThrow()
  })

  it('honours resumeAfter, startAfter and startAtOperationTime', async () => {
    const coll = freshCollection()
    const stream = await watch(coll)
    await coll.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }] as any[])
    const events = await take(stream, 3)
    await stream.close()
    const ids = (s: any[]) => s.map((e) => e.documentKey._id)

    const resumed = await watch(coll, [], { resumeAfter: events[0]._id })
    expect(ids(await take(resumed, 2))).toEqual([2, 3])
    await resumed.close()
    const started = await watch(coll, [], { startAfter: events[1]._id })
    expect(ids(await take(started, 1))).toEqual([3])
    await started.close()
    const atTime = await watch(coll, [], { startAtOperationTime: events[1].clusterTime })
    expect(ids(await take(atTime, 2))).toEqual([2, 3])
    await atTime.close()
  })
})

describe('raw change-stream commands', () => {
  it('aggregate + getMore with raw replies carry postBatchResumeToken and cluster time', async () => {
    const coll = freshCollection()
    const rawReply = await command(db, { aggregate: coll.collectionName, pipeline: [{ $changeStream: {} }], cursor: {} }, { raw: true } as any)
    expect(rawReply.cursor).toBeInstanceOf(Uint8Array)
    const reply = asDocument(rawReply)
    expect(Object.keys(reply.cursor)).toEqual(['firstBatch', 'postBatchResumeToken', 'id', 'ns'])
    expect(reply.cursor.firstBatch).toEqual([])
    expect(isType(reply.cursor.id, 'Long')).toBe(true)
    expect(Number(reply.$clusterTime.signature.keyId)).toBe(0)
    expect(isType(reply.operationTime, 'Timestamp')).toBe(true)
    expect(server.decodeResumeToken(reply.cursor.postBatchResumeToken)?.type).toBe('highWaterMark')

    // An empty getMore waits maxTimeMS before answering.
    const started = Date.now()
    const empty = asDocument((await command(db, { getMore: reply.cursor.id, collection: coll.collectionName, maxTimeMS: 150 }, { raw: true } as any)) as any)
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    expect(empty.cursor.nextBatch).toEqual([])
    expect(empty.cursor.postBatchResumeToken).toBeDefined()

    // A waiting getMore wakes up on a write.
    const pending = command(db, { getMore: reply.cursor.id, collection: coll.collectionName, maxTimeMS: 5000, batchSize: 10 }, { raw: true } as any)
    const writer = await connect(server.uri)
    await writer.db('app').collection(coll.collectionName).insertOne({ _id: 'w' } as any)
    const next = asDocument(await pending)
    expect(next.cursor.nextBatch.map((e: any) => e.documentKey._id)).toEqual(['w'])
    expect(next.cursor.postBatchResumeToken).toEqual(next.cursor.nextBatch[0]._id)
    expect(next.ok).toBe(1)
    await command(db, { killCursors: coll.collectionName, cursors: [reply.cursor.id] })
  })

  it('fails with ChangeStreamHistoryLost for tokens no longer in the oplog', async () => {
    const coll = freshCollection()
    await coll.insertMany([{ _id: 1 }, { _id: 2 }] as any[])
    const reply = await command(db, { aggregate: coll.collectionName, pipeline: [{ $changeStream: { startAtOperationTime: new Timestamp({ t: 1, i: 1 }) } }], cursor: {} }).catch((e) => e)
    // Full history is kept by default, so starting at time 1 is fine.
    expect(reply.cursor.firstBatch.length).toBeGreaterThan(0)
    const token = reply.cursor.firstBatch[0]._id
    server.truncateOplog()
    await coll.insertOne({ _id: 3 } as any)
    await expect(command(db, { aggregate: coll.collectionName, pipeline: [{ $changeStream: { resumeAfter: token } }], cursor: {} })).rejects.toMatchObject({ code: 286, codeName: 'ChangeStreamHistoryLost' })
    await command(db, { killCursors: coll.collectionName, cursors: [reply.cursor.id] })
  })

  it('rejects resume tokens from another server instance and matches faults selectively', async () => {
    const other = await startTestServer()
    try {
      const otherClient = await connect(other.directUri)
      const coll = otherClient.db('app').collection('foreign')
      const open = await command(otherClient.db('app'), { aggregate: 'foreign', pipeline: [{ $changeStream: {} }], cursor: {} })
      await coll.insertOne({ _id: 1 } as any)
      const more = await command(otherClient.db('app'), { getMore: open.cursor.id, collection: 'foreign' })
      const foreignToken = more.cursor.nextBatch[0]._id
      expect(other.decodeResumeToken(foreignToken)?.seq).toBeGreaterThan(0)
      await expect(command(db, { aggregate: 'foreign', pipeline: [{ $changeStream: { resumeAfter: foreignToken } }], cursor: {} })).rejects.toMatchObject({ code: 286 })
      await expect(command(db, { aggregate: 'foreign', pipeline: [{ $changeStream: { resumeAfter: { _data: 'zz' } } }], cursor: {} })).rejects.toMatchObject({ code: 2 })
      await otherClient.close()
    } finally {
      await other.close()
    }

    server.clearCommandLog()
    const fault = server.injectFault({ command: ['find', 'count'], kind: 'error', code: 11601, skip: 1, count: 2, ns: 'app.faulty' })
    const faulty = db.collection('faulty')
    await faulty.findOne({})
    await expect(faulty.findOne({})).rejects.toMatchObject({ code: 11601, codeName: 'Interrupted' })
    await expect(faulty.estimatedDocumentCount()).rejects.toMatchObject({ code: 11601 })
    await faulty.findOne({})
    expect(fault.hits).toBe(2)
    expect(server.commandLog.filter((e) => e.fault === 'error')).toHaveLength(2)
    const empty = await command(db, { find: 'faulty', batchSize: 0 })
    expect(empty.cursor.firstBatch).toEqual([])
  })

  it('splits large events with $changeStreamSplitLargeEvent and rejects them without it', async () => {
    const coll = freshCollection()
    server.splitThresholdBytes = 4096
    try {
      const open = (pipeline: any[], spec: any = {}) =>
        command(db, { aggregate: coll.collectionName, pipeline: [{ $changeStream: { fullDocumentBeforeChange: 'whenAvailable', ...spec } }, ...pipeline], cursor: { batchSize: 0 } })
      const split = await open([{ $changeStreamSplitLargeEvent: {} }])
      const unsplit = await open([])
      await coll.insertOne({ _id: 1, big: 'a'.repeat(3000) } as any)
      await coll.replaceOne({ _id: 1 } as any, { big: 'b'.repeat(3000) })

      const more = await command(db, { getMore: split.cursor.id, collection: coll.collectionName, batchSize: 2 })
      const [small, first] = more.cursor.nextBatch
      expect(small.operationType).toBe('insert')
      expect(small.splitEvent).toBeUndefined()
      expect(first.splitEvent).toEqual({ fragment: 1, of: 2 })
      expect(more.cursor.postBatchResumeToken).toEqual(first._id)
      const rest = await command(db, { getMore: split.cursor.id, collection: coll.collectionName })
      const [second] = rest.cursor.nextBatch
      expect(second.splitEvent).toEqual({ fragment: 2, of: 2 })
      const merged = { ...first, ...second }
      expect(merged.operationType).toBe('replace')
      expect(merged.fullDocument.big).toHaveLength(3000)
      expect(merged.fullDocumentBeforeChange.big).toHaveLength(3000)
      expect(Object.keys(first).slice(0, 3)).toEqual(['_id', 'splitEvent', 'operationType'])
      expect(server.decodeResumeToken(second._id)).toMatchObject({ type: 'event', fragment: 2 })

      // Resuming after fragment 1 yields fragment 2.
      const resumed = await open([{ $changeStreamSplitLargeEvent: {} }], { resumeAfter: first._id })
      const again = await command(db, { getMore: resumed.cursor.id, collection: coll.collectionName })
      expect(again.cursor.nextBatch[0].splitEvent).toEqual({ fragment: 2, of: 2 })

      await command(db, { getMore: unsplit.cursor.id, collection: coll.collectionName, batchSize: 1 })
      await expect(command(db, { getMore: unsplit.cursor.id, collection: coll.collectionName })).rejects.toMatchObject({ code: 10334 })
      await command(db, { killCursors: coll.collectionName, cursors: [split.cursor.id, unsplit.cursor.id, resumed.cursor.id] })
    } finally {
      server.splitThresholdBytes = 16 * 1024 * 1024
    }
  })

  it('splits a real >16 MiB event for the driver with the default threshold', async () => {
    const coll = freshCollection()
    const stream = await watch(coll, [{ $changeStreamSplitLargeEvent: {} }], { fullDocument: 'required', fullDocumentBeforeChange: 'required' })
    await coll.insertOne({ _id: 1, a: 'a'.repeat(9e6) } as any)
    await coll.replaceOne({ _id: 1 } as any, { b: 'b'.repeat(9e6) })
    const [insert, first, second] = await take(stream, 3)
    await stream.close()
    expect(insert.operationType).toBe('insert')
    expect((insert as any).splitEvent).toBeUndefined()
    expect((first as any).splitEvent).toEqual({ fragment: 1, of: 2 })
    expect((second as any).splitEvent).toEqual({ fragment: 2, of: 2 })
    expect(Object.keys(second)).toEqual(['_id', 'splitEvent', 'fullDocumentBeforeChange'])
    expect((first as any).fullDocument.b).toHaveLength(9e6)
  })

  it('injects empty batches and delays', async () => {
    const coll = freshCollection()
    const open = await command(db, { aggregate: coll.collectionName, pipeline: [{ $changeStream: {} }], cursor: {} })
    await coll.insertOne({ _id: 1 } as any)
    server.faults.push({ command: 'getMore', kind: 'emptyBatch' })
    const empty = await command(db, { getMore: open.cursor.id, collection: coll.collectionName })
    expect(empty.cursor.nextBatch).toEqual([])
    server.injectFault({ command: 'getMore', kind: 'delay', delayMs: 120 })
    const started = Date.now()
    const full = await command(db, { getMore: open.cursor.id, collection: coll.collectionName })
    expect(Date.now() - started).toBeGreaterThanOrEqual(110)
    expect(full.cursor.nextBatch).toHaveLength(1)
    expect(server.faults.history.slice(-2).map((h) => h.kind)).toEqual(['emptyBatch', 'delay'])
    await command(db, { killCursors: coll.collectionName, cursors: [open.cursor.id] })
  })
})

describe('random faults', () => {
  it('the driver sees every event exactly once despite seeded random faults', async () => {
    const coll = freshCollection()
    const stream = await watch(coll)
    server.setFaultRate(0.35, 42)
    try {
      const expected: number[] = []
      const seen: number[] = []
      for (let i = 0; i < 25; i++) {
        await coll.insertOne({ _id: i } as any)
        expected.push(i)
        if (i % 5 === 4) for (const e of await take(stream, 5)) seen.push((e as any).documentKey._id)
      }
      expect(seen).toEqual(expected)
      expect(server.faults.history.filter((h) => h.random).length).toBeGreaterThan(0)
    } finally {
      server.setFaultRate(0)
      await stream.close()
    }
  })
})

describe('CLI', () => {
  it('prints the connection string first and exits on SIGTERM', async () => {
    const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'tools', 'test-server', 'cli.js'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const firstLine: string = await new Promise((resolve, reject) => {
      let buffered = ''
      child.stdout.on('data', (chunk) => {
        buffered += chunk
        if (buffered.includes('\n')) resolve(buffered.split('\n')[0])
      })
      child.once('error', reject)
    })
    expect(firstLine).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/\?replicaSet=rs0$/)
    const cliClient = await connect(firstLine)
    expect(await cliClient.db('admin').command({ ping: 1 })).toMatchObject({ ok: 1 })
    await cliClient.close()
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  })
})
