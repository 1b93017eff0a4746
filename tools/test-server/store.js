'use strict'

/**
 * In-memory databases and collections. Every write is recorded in the
 * {@link Oplog} with pre- and post-images so change streams can replay it.
 */

const crypto = require('node:crypto')
const { ObjectId, EJSON } = require('bson')
const { CommandError, ErrorCodes } = require('./errors')
const { matches, applyUpdate, cloneDocument, sortDocuments, valuesEqual } = require('./documents')

/** @param {any} id @returns {string} a key identifying an _id value */
function idKey(id) {
  return EJSON.stringify({ id }, { relaxed: true })
}

/** One collection: documents in insertion order, keyed by `_id`. */
class Collection {
  /** @param {string} db @param {string} name */
  constructor(db, name) {
    this.db = db
    this.name = name
    this.uuid = crypto.randomUUID()
    /** @type {Map<string, Record<string, any>>} insertion-ordered documents by _id key */
    this.docs = new Map()
  }
}

/** All databases; every write is appended to the oplog. */
class Store {
  /** @param {import('./oplog').Oplog} oplog */
  constructor(oplog) {
    this.oplog = oplog
    /** @type {Map<string, Map<string, Collection>>} */
    this.databases = new Map()
  }

  /** @param {string} db @param {string} coll @returns {Collection | undefined} */
  getCollection(db, coll) {
    return this.databases.get(db)?.get(coll)
  }

  /**
   * Get or implicitly create a collection (implicit creation logs a `create` event).
   * @param {string} db
   * @param {string} coll
   * @returns {Collection}
   */
  ensureCollection(db, coll) {
    const existing = this.getCollection(db, coll)
    if (existing) return existing
    return this.createCollection(db, coll)
  }

  /**
   * @param {string} db
   * @param {string} coll
   * @returns {Collection}
   */
  createCollection(db, coll) {
    if (!coll || coll.includes('$')) throw new CommandError(ErrorCodes.InvalidNamespace, 'InvalidNamespace', `Invalid collection name: ${coll}`)
    if (this.getCollection(db, coll)) throw new CommandError(ErrorCodes.NamespaceExists, 'NamespaceExists', `Collection ${db}.${coll} already exists.`)
    if (!this.databases.has(db)) this.databases.set(db, new Map())
    const collection = new Collection(db, coll)
    this.databases.get(db).set(coll, collection)
    this.oplog.append({ operationType: 'create', ns: { db, coll }, collectionUUID: collection.uuid, operationDescription: { idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } } })
    return collection
  }

  /** @param {string} db @returns {string[]} collection names */
  listCollections(db) {
    return [...(this.databases.get(db)?.keys() ?? [])]
  }

  /**
   * Query documents (clones).
   * @param {string} db
   * @param {string} coll
   * @param {{filter?: Record<string, any>, sort?: Record<string, any>, skip?: number, limit?: number}} [query]
   * @returns {Record<string, any>[]}
   */
  find(db, coll, { filter, sort, skip = 0, limit = 0 } = {}) {
    const collection = this.getCollection(db, coll)
    if (!collection) return []
    let docs = [...collection.docs.values()].filter((d) => matches(d, filter))
    docs = sortDocuments(docs, sort).slice(skip, limit > 0 ? skip + limit : undefined)
    return docs.map(cloneDocument)
  }

  /** @param {string} db @param {string} coll @param {any} id */
  findById(db, coll, id) {
    const doc = this.getCollection(db, coll)?.docs.get(idKey(id))
    return doc ? cloneDocument(doc) : null
  }

  /**
   * Insert one document (adds an ObjectId _id when missing).
   * @param {string} db
   * @param {string} coll
   * @param {Record<string, any>} doc
   * @returns {Record<string, any>} the stored document
   */
  insertOne(db, coll, doc) {
    const collection = this.ensureCollection(db, coll)
    // Like mongod, always store _id as the first field.
    const { _id = new ObjectId(), ...rest } = doc
    const stored = cloneDocument({ _id, ...rest })
    const key = idKey(stored._id)
    if (collection.docs.has(key)) {
      throw new CommandError(ErrorCodes.DuplicateKey, 'DuplicateKey', `E11000 duplicate key error collection: ${db}.${coll} index: _id_ dup key: ${key}`)
    }
    collection.docs.set(key, stored)
    this.oplog.append({ operationType: 'insert', ns: { db, coll }, collectionUUID: collection.uuid, documentKey: { _id: stored._id }, postImage: cloneDocument(stored), preImage: null })
    return stored
  }

  /**
   * Apply one update statement.
   * @param {string} db
   * @param {string} coll
   * @param {{q: Record<string, any>, u: Record<string, any>, multi?: boolean, upsert?: boolean}} statement
   * @returns {{n: number, nModified: number, upserted?: any}}
   */
  update(db, coll, { q, u, multi = false, upsert = false }) {
    const collection = this.getCollection(db, coll)
    const targets = collection ? [...collection.docs.values()].filter((d) => matches(d, q)) : []
    if (targets.length === 0) {
      if (!upsert) return { n: 0, nModified: 0 }
      const seed = {}
      for (const [k, v] of Object.entries(q ?? {})) if (!k.startsWith('$') && !(v && typeof v === 'object' && Object.keys(v).some((x) => x.startsWith('$')))) seed[k] = v
      const { document } = applyUpdate(seed, u, { isUpsertInsert: true })
      if (document._id === undefined) delete document._id
      const stored = this.insertOne(db, coll, document)
      return { n: 1, nModified: 0, upserted: stored._id }
    }
    let nModified = 0
    for (const before of multi ? targets : targets.slice(0, 1)) {
      const result = applyUpdate(before, u)
      const after = result.document
      if (valuesEqual(before, after)) continue
      collection.docs.set(idKey(before._id), after)
      nModified++
      this.oplog.append({
        operationType: result.isReplacement ? 'replace' : 'update',
        ns: { db, coll },
        collectionUUID: collection.uuid,
        documentKey: { _id: before._id },
        preImage: cloneDocument(before),
        postImage: cloneDocument(after),
        updateDescription: result.isReplacement ? undefined : { updatedFields: result.updatedFields, removedFields: result.removedFields, truncatedArrays: [] },
      })
    }
    return { n: multi ? targets.length : 1, nModified }
  }

  /**
   * Apply one delete statement.
   * @param {string} db
   * @param {string} coll
   * @param {{q: Record<string, any>, limit?: number}} statement limit 0 = all, 1 = one
   * @returns {number} documents deleted
   */
  delete(db, coll, { q, limit = 0 }) {
    const collection = this.getCollection(db, coll)
    if (!collection) return 0
    let targets = [...collection.docs.values()].filter((d) => matches(d, q))
    if (limit === 1) targets = targets.slice(0, 1)
    for (const doc of targets) {
      collection.docs.delete(idKey(doc._id))
      this.oplog.append({ operationType: 'delete', ns: { db, coll }, collectionUUID: collection.uuid, documentKey: { _id: doc._id }, preImage: cloneDocument(doc), postImage: null })
    }
    return targets.length
  }

  /**
   * Drop a collection (logs `drop`). Returns false if it did not exist.
   * @param {string} db
   * @param {string} coll
   */
  dropCollection(db, coll) {
    const collection = this.getCollection(db, coll)
    if (!collection) return false
    this.databases.get(db).delete(coll)
    this.oplog.append({ operationType: 'drop', ns: { db, coll }, collectionUUID: collection.uuid })
    return true
  }

  /**
   * Drop a database: a `drop` per collection, then `dropDatabase`.
   * @param {string} db
   */
  dropDatabase(db) {
    for (const coll of this.listCollections(db)) this.dropCollection(db, coll)
    if (this.databases.delete(db)) this.oplog.append({ operationType: 'dropDatabase', ns: { db } })
  }
}

module.exports = { Store, Collection, idKey }
