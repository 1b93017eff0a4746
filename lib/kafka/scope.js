'use strict'

/**
 * What a database- or deployment-wide run captures and where each namespace's records go:
 * `include` / `exclude` namespace patterns (`db.coll`, `*` for any run of characters; a pattern
 * without a dot names a database), pushed to the server as one `$match` right after
 * `$changeStream` (names without `*` as equality, so the server can use them as they are, the
 * others as anchored `$regex`), the same patterns applied to the collections the snapshot copies,
 * and the topic of each namespace: `topics` (an explicit map, `db.coll` or `db` to a topic),
 * else `topicPrefix` + `.db.coll` (as both connectors name them), else `topic`.
 */

const SYSTEM_DBS = new Set(['admin', 'config', 'local'])

/** `{ db, coll }` of a pattern: each a string (exact), a RegExp source (with `*`), or null (any). */
function parsePattern(p) {
  const dot = p.indexOf('.')
  const db = dot < 0 ? p : p.slice(0, dot)
  const coll = dot < 0 ? '*' : p.slice(dot + 1)
  const part = (x) => (x === '*' ? null : x.includes('*') ? { regex: `^${x.split('*').map(escapeRegex).join('.*')}$` } : x)
  return { db: part(db), coll: part(coll) }
}

function escapeRegex(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** The query clause of one pattern on the change events' `ns`. */
function clauseOf(p) {
  const { db, coll } = parsePattern(p)
  const c = {}
  const cond = (x) => (typeof x === 'string' ? x : { $regex: x.regex })
  if (db !== null) c['ns.db'] = cond(db)
  if (coll !== null) c['ns.coll'] = cond(coll)
  return c
}

/** The `$match` stage of `include` / `exclude`, or null when neither is given. */
function namespaceMatch(include, exclude) {
  const m = {}
  if (include !== undefined && include.length > 0) m.$or = include.map(clauseOf)
  if (exclude !== undefined && exclude.length > 0) m.$nor = exclude.map(clauseOf)
  return Object.keys(m).length === 0 ? null : { $match: m }
}

/** Whether namespace `db.coll` is captured by `include` / `exclude` (the snapshot's choice of collections). */
function captured(db, coll, include, exclude) {
  const hit = (p) => {
    const x = parsePattern(p)
    const ok = (part, name) => part === null || (typeof part === 'string' ? part === name : new RegExp(part.regex).test(name))
    return ok(x.db, db) && ok(x.coll, coll)
  }
  if (include !== undefined && include.length > 0 && !include.some(hit)) return false
  if (exclude !== undefined && exclude.some(hit)) return false
  return true
}

/**
 * The collections a snapshot copies: the source's own (a Collection), or every collection of
 * the database (a Db) or of every database but admin, config and local (a MongoClient), less
 * views and `system.*`, filtered by `include` / `exclude`; `timeoutMS` bounds each listing
 * (the driver's). @returns {Promise<{db: string, coll: string}[]>}
 */
async function capturedCollections(source, include, exclude, timeoutMS = undefined) {
  const bound = timeoutMS === undefined ? {} : { timeoutMS }
  if (typeof source.collectionName === 'string') return [{ db: source.dbName, coll: source.collectionName }]
  const dbs = typeof source.databaseName === 'string' ? [source] : (await source.db('admin').admin().listDatabases({ nameOnly: true, ...bound })).databases.filter((d) => !SYSTEM_DBS.has(d.name)).map((d) => source.db(d.name))
  const out = []
  for (const db of dbs) {
    const colls = await db.listCollections({}, { nameOnly: false, ...bound }).toArray()
    for (const c of colls) {
      if (c.type === 'view' || c.name.startsWith('system.')) continue
      if (captured(db.databaseName, c.name, include, exclude)) out.push({ db: db.databaseName, coll: c.name })
    }
  }
  out.sort((a, b) => (a.db === b.db ? (a.coll < b.coll ? -1 : 1) : a.db < b.db ? -1 : 1))
  return out
}

/** The collection `ns` ('db.coll') of the run's source (itself when it is that collection). */
function collectionOf(source, ns) {
  if (ns === undefined || ns === null) return source
  const dot = ns.indexOf('.')
  const db = ns.slice(0, dot)
  const coll = ns.slice(dot + 1)
  if (typeof source.collectionName === 'string') return source
  const client = typeof source.databaseName === 'string' ? source.client : source
  return client.db(db).collection(coll)
}

/**
 * The topic of each namespace: `topics[db.coll]`, `topics[db]`, `topicPrefix.db.coll` (an event
 * without a collection, such as dropDatabase: `topicPrefix.db`), else `topic`.
 * @returns {(ns: {db?: string, coll?: string} | undefined) => string}
 */
function router(o) {
  const map = o.topics || {}
  const prefix = o.topicPrefix
  if (prefix === undefined && Object.keys(map).length === 0) return () => o.topic
  const cache = new Map()
  return (ns) => {
    const db = ns && ns.db !== undefined ? String(ns.db) : ''
    const coll = ns && ns.coll !== undefined ? String(ns.coll) : ''
    const k = coll === '' ? db : `${db}.${coll}`
    let t = cache.get(k)
    if (t === undefined) {
      t = map[k] ?? map[db] ?? (prefix === undefined ? o.topic : [prefix, db, coll].filter((x) => x !== '').join('.'))
      if (cache.size < 10_000) cache.set(k, t)
    }
    return t
  }
}

module.exports = { namespaceMatch, captured, capturedCollections, collectionOf, router }
