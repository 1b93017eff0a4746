'use strict'

// --fields a,b.c: parsing the list (and --fieldFile), the server projection for `export`, and
// the same projection applied to raw BSON for dumps, with the server's inclusion semantics:
// `_id` is always kept, documents keep their field order, `b.c` keeps `b` as a document holding
// only `c` (`{}` when `b` is a document without `c`), applies to every document in an array `b`
// (arrays in arrays too; other array elements are dropped, the rest renumbered), and drops `b`
// when it is neither a document nor an array.

const { T, forEachElement } = require('./bson')

/** Splits `a,b.c` (or one name per line for --fieldFile); throws on empty names. */
function parseFieldList(text, { lines = false } = {}) {
  const raw = lines ? text.split(/\r?\n/) : text.split(',')
  const out = []
  for (const f of raw) {
    const name = f.trim()
    if (name === '') {
      if (lines) continue
      throw new Error(`empty field name in --fields '${text}'`)
    }
    if (name.split('.').some((p) => p === '')) throw new Error(`bad field name '${name}' (empty path part)`)
    if (name.startsWith('$')) throw new Error(`bad field name '${name}' (starts with $)`)
    out.push(name)
  }
  if (out.length === 0) throw new Error('no field names given')
  return out
}

/**
 * `{ a: 1, 'b.c': 1 }` for the server; a path under another one in the list is left out (`a`
 * covers `a.b`), since servers reject such a pair as a path collision.
 */
function serverProjection(fields) {
  const p = {}
  const sorted = [...new Set(fields)].sort((x, y) => x.length - y.length)
  for (const f of sorted) {
    const parts = f.split('.')
    let covered = false
    for (let i = 1; i < parts.length && !covered; i++) covered = Object.hasOwn(p, parts.slice(0, i).join('.'))
    if (!covered) p[f] = 1
  }
  return p
}

/**
 * What mongoexport asks the server for with --fields: `_id` and the top-level name of each
 * path; CSV then reads the dotted paths (`a.0.b` included) out of the whole top-level values.
 */
function topLevelProjection(fields) {
  const p = { _id: 1 }
  for (const f of fields) p[f.split('.')[0]] = 1
  return p
}

const WHOLE = true

/**
 * Path tree keyed by each part's UTF-8 bytes read as latin1 (so keys read from raw BSON with
 * `latin1` compare byte for byte). A leaf is WHOLE; a shorter path wins over a longer one.
 */
function pathTree(fields, keepId = true) {
  const root = new Map()
  const add = (parts) => {
    let node = root
    for (let i = 0; i < parts.length; i++) {
      const k = Buffer.from(parts[i], 'utf8').toString('latin1')
      const last = i === parts.length - 1
      const cur = node.get(k)
      if (cur === WHOLE) return
      if (last) {
        node.set(k, WHOLE)
        return
      }
      if (cur === undefined) node.set(k, new Map())
      node = node.get(k)
    }
  }
  if (keepId) add(['_id'])
  for (const f of fields) add(f.split('.'))
  return root
}

class Writer {
  constructor() {
    this.parts = []
    this.length = 0
  }
  push(b) {
    this.parts.push(b)
    this.length += b.length
  }
}

/** The projected copy of the document (or array, renumbered) at `start`. */
function projectDocument(buf, start, tree, isArray) {
  const w = new Writer()
  w.push(Buffer.alloc(4))
  let index = 0
  forEachElement(buf, start, (type, ks, ke, vs, ve) => {
    let sub
    if (isArray) {
      sub = tree // the subtree applies to every element of an array
      if (type === T.DOCUMENT) {
        const v = projectDocument(buf, vs, sub, false)
        w.push(Buffer.from([T.DOCUMENT]))
        w.push(Buffer.from(`${index++}\0`, 'latin1'))
        w.push(v)
      } else if (type === T.ARRAY) {
        const v = projectDocument(buf, vs, sub, true)
        w.push(Buffer.from([T.ARRAY]))
        w.push(Buffer.from(`${index++}\0`, 'latin1'))
        w.push(v)
      }
      return true
    }
    sub = tree.get(buf.toString('latin1', ks, ke))
    if (sub === undefined) return true
    if (sub === WHOLE) {
      w.push(buf.subarray(ks - 1, ve))
    } else if (type === T.DOCUMENT || type === T.ARRAY) {
      w.push(buf.subarray(ks - 1, vs))
      w.push(projectDocument(buf, vs, sub, type === T.ARRAY))
    }
    return true
  })
  w.push(Buffer.from([0]))
  const out = Buffer.concat(w.parts, w.length)
  out.writeInt32LE(out.length, 0)
  return out
}

/** Projects one raw document; throws a RangeError if it is malformed. */
function projectRaw(doc, tree) {
  return projectDocument(doc, 0, tree, false)
}

module.exports = { parseFieldList, serverProjection, topLevelProjection, pathTree, projectRaw }
