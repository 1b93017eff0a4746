'use strict'

// `export --type csv` on the project's raw-cursor engine (lib/mongo/raw-cursor.js): the same find /
// getMore pump, prefetch, session and kill as find()'s JSON cursors, but each reply's batch is
// turned into CSV rows straight from its raw bytes by the addon (core `csv`: mongoexport's cells),
// with no document objects.

const native = require('../native')
const { RawCursor, replyCursor } = require('../mongo/raw-cursor')
const { compileShape } = require('../shape')

class CsvCursor extends RawCursor {
  constructor(collection, command, fields, options) {
    const client = collection.client
    super({
      client,
      db: client.db(collection.dbName),
      prefetch: options.prefetch === undefined ? 2 : options.prefetch,
      batchSize: options.batchSize,
      timeoutMS: options.timeoutMS,
      what: 'cursor',
    })
    this._cmd = command
    this._fields = fields
    this._getMoreColl = collection.collectionName
    // --redact: each batch's documents are redacted (the addon's pass) before the rows are cut
    this._shaper = options.redact === undefined ? undefined : compileShape(undefined, options.redact)
  }

  _initialCommand() {
    return this._cmd
  }

  _accept(reply, isGetMore) {
    const raw = replyCursor(reply)
    const cursor = this._shaper === undefined ? raw : native.shape(this._shaper, native.ShapeInput.Cursor, raw)
    const c = native.csvCursor(cursor, this._fields)
    this._setCursor(c.id, c.ns ?? '', isGetMore)
    if (c.count > 0) this._push({ docs: c.rows, count: c.count })
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
function csvFind(coll, filter, fields, options) {
  const cmd = { find: coll.collectionName, filter }
  for (const k of ['projection', 'sort', 'skip', 'limit', 'batchSize']) if (options[k] !== undefined) cmd[k] = options[k]
  return new CsvCursor(coll, cmd, fields, options).rows()
}

module.exports = { csvFind }
