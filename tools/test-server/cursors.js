'use strict'

/**
 * Server-side cursors: plain query cursors (find / aggregate results held in
 * memory) and change-stream cursors (backed by a ChangeStreamReader).
 */

const crypto = require('node:crypto')
const { Long } = require('bson')

/**
 * @typedef {object} Cursor
 * @property {Long} id
 * @property {string} ns 'db.coll' (or 'db.$cmd.aggregate')
 * @property {'find'|'aggregate'|'changeStream'|'listCollections'|'listIndexes'} type
 * @property {number} connectionId connection that opened it
 * @property {Date} createdAt
 * @property {Date} lastUsedAt
 * @property {Record<string, any>[]} [docs] remaining documents (query cursors)
 * @property {import('./change-streams').ChangeStreamReader} [reader] (change-stream cursors)
 * @property {AbortController} abort aborted when the cursor is killed
 * @property {number} getMores getMore commands served
 */

class CursorRegistry {
  /** @param {{ cursorIdBits?: number }} [options] */
  constructor(options = {}) {
    /** Cursor ids are drawn below 2^cursorIdBits (default 63: any positive int64, as a real server does). */
    this.cursorIdBits = Math.min(63, Math.max(8, options.cursorIdBits ?? 63))
    /** @type {Map<string, Cursor>} */
    this.cursors = new Map()
    /** killCursors commands received */
    this.killCursorsCommands = 0
    /** cursor ids killed (by killCursors) */
    this.killedCursorIds = []
    /** cursor ids named in killCursors that did not exist */
    this.notFoundCursorIds = []
  }

  /**
   * Register a cursor and assign it a random positive 64-bit id below 2^cursorIdBits.
   * @param {Omit<Cursor, 'id'|'createdAt'|'lastUsedAt'|'abort'|'getMores'>} fields
   * @returns {Cursor}
   */
  open(fields) {
    let id
    do {
      id = Long.fromBigInt(BigInt.asUintN(this.cursorIdBits, crypto.randomBytes(8).readBigUInt64LE(0)))
    } while (id.isZero() || this.cursors.has(id.toString()))
    const now = new Date()
    const cursor = { ...fields, id, createdAt: now, lastUsedAt: now, abort: new AbortController(), getMores: 0 }
    this.cursors.set(id.toString(), cursor)
    return cursor
  }

  /** @param {any} id Long, bigint or number @returns {Cursor | undefined} */
  get(id) {
    return this.cursors.get(String(id))
  }

  /**
   * Close a cursor (exhausted, invalidated, or killed).
   * @param {any} id
   * @returns {boolean} whether it existed
   */
  close(id) {
    const cursor = this.get(id)
    if (!cursor) return false
    this.cursors.delete(String(id))
    cursor.abort.abort()
    return true
  }

  /** @returns {Array<{id: string, ns: string, type: string, connectionId: number, createdAt: Date, lastUsedAt: Date, getMores: number}>} */
  list() {
    return [...this.cursors.values()].map(({ id, ns, type, connectionId, createdAt, lastUsedAt, getMores }) => ({ id: id.toString(), ns, type, connectionId, createdAt, lastUsedAt, getMores }))
  }

  /** Close every cursor. */
  closeAll() {
    for (const id of this.cursors.keys()) this.close(id)
  }
}

module.exports = { CursorRegistry }
