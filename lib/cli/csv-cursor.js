'use strict'

// `export --type csv` on the project's raw-cursor engine (lib/mongo/raw-cursor.js): the same find /
// getMore pump, prefetch, session and kill as find()'s JSON cursors, but each reply's batch is
// turned into CSV rows straight from its raw bytes (lib/cli/csv.js), with no document objects.

const native = require('../native')
const { RawCursor } = require('../mongo/raw-cursor')
const { T, forEachElement } = require('./bson')
const { csvRow } = require('./csv')
const { compileShape } = require('../shape')

const KEY = { id: Buffer.from('id'), ns: Buffer.from('ns'), first: Buffer.from('firstBatch'), next: Buffer.from('nextBatch') }
const is = (buf, ks, ke, key) => ke - ks === key.length && buf.compare(key, 0, key.length, ks, ke) === 0

/** `{ id, ns, docs }` of a raw cursor document (`docs`: subarrays of `cursor`). */
function readCursor(cursor) {
  let id = null
  let ns = ''
  const docs = []
  forEachElement(cursor, 0, (type, ks, ke, vs) => {
    if (is(cursor, ks, ke, KEY.id)) {
      if (type === T.INT64) id = cursor.readBigInt64LE(vs)
      else if (type === T.INT32) id = BigInt(cursor.readInt32LE(vs))
    } else if (is(cursor, ks, ke, KEY.ns) && type === T.STRING) {
      ns = cursor.toString('utf8', vs + 4, vs + 3 + cursor.readInt32LE(vs))
    } else if ((is(cursor, ks, ke, KEY.first) || is(cursor, ks, ke, KEY.next)) && type === T.ARRAY) {
      forEachElement(cursor, vs, (t, _ks, _ke, ds, de) => {
        if (t !== T.DOCUMENT) throw new RangeError('a cursor batch element is not a document')
        docs.push(cursor.subarray(ds, de))
      })
    }
  })
  if (id === null) throw new RangeError('the reply has no cursor id')
  return { id, ns, docs }
}

class CsvCursor extends RawCursor {
  constructor(collection, command, paths, options) {
    const client = collection.client
    super({
      client,
      db: client.db(collection.dbName),
      prefetch: options.prefetch === undefined ? 2 : options.prefetch,
      batchSize: options.batchSize,
      what: 'cursor',
      reportAbort: false,
    })
    this._cmd = command
    this._paths = paths
    this._getMoreColl = collection.collectionName
    // --redact: each batch's documents are redacted (the addon's pass) before the rows are cut
    this._shaper = options.redact === undefined ? undefined : compileShape(undefined, options.redact)
  }

  _initialCommand() {
    return this._cmd
  }

  _accept(reply, isGetMore) {
    let cursor = Buffer.isBuffer(reply.cursor) ? reply.cursor : Buffer.from(reply.cursor.buffer, reply.cursor.byteOffset, reply.cursor.byteLength)
    if (this._shaper !== undefined) cursor = native.shape(this._shaper, native.ShapeInput.Cursor, cursor)
    const c = readCursor(cursor)
    this._setCursor(c.id, c.ns, isGetMore)
    if (c.docs.length > 0) {
      let text = ''
      for (const d of c.docs) text += csvRow(d, this._paths)
      this._push({ docs: Buffer.from(text), count: c.docs.length })
    }
    return null
  }

  /** `{ buf, n }` per server batch: CSV rows and how many. */
  async *rows() {
    try {
      for (;;) {
        const item = await this._take()
        if (item.docs === undefined) {
          await this.close()
          if (item.error) throw item.error
          return
        }
        yield { buf: item.docs, n: item.count }
      }
    } finally {
      await this.close()
    }
  }
}

/** CSV batches of `find` on `coll` (options: projection, sort, skip, limit, batchSize, redact). */
function csvFind(coll, filter, paths, options) {
  const cmd = { find: coll.collectionName, filter }
  for (const k of ['projection', 'sort', 'skip', 'limit', 'batchSize']) if (options[k] !== undefined) cmd[k] = options[k]
  return new CsvCursor(coll, cmd, paths, options).rows()
}

module.exports = { csvFind, readCursor }
