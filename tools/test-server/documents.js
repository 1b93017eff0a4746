'use strict'

/**
 * Document helpers: value comparison, query matching, update operators,
 * projection and sort. Only the subset a test fixture needs is implemented;
 * unsupported operators throw a {@link CommandError} with code 2 (BadValue).
 */

const { BSON, EJSON, Int32, Double, Long } = require('bson')
const { CommandError } = require('./errors')

/**
 * Convert a BSON numeric wrapper (Int32, Double, Long, Decimal128) or JS number
 * to a JS number; anything else is returned unchanged.
 * @param {any} value
 * @returns {any}
 */
function toNumber(value) {
  if (value == null || typeof value !== 'object') return value
  switch (value._bsontype) {
    case 'Int32':
    case 'Double':
      return value.valueOf()
    case 'Long':
      return value.toNumber()
    case 'Decimal128':
      return Number(value.toString())
    default:
      return value
  }
}

/** @param {any} value @returns {boolean} */
function isNumeric(value) {
  return typeof value === 'number' || (value != null && ['Int32', 'Double', 'Long', 'Decimal128'].includes(value._bsontype))
}

/** @param {any} value @returns {boolean} a plain embedded document */
function isPlainObject(value) {
  return value != null && typeof value === 'object' && !Array.isArray(value) && value._bsontype === undefined && !(value instanceof Date) && !(value instanceof RegExp) && !ArrayBuffer.isView(value)
}

/** Canonical type order used for sorting mixed types (subset of the server's). */
function typeRank(value) {
  if (value === undefined || value === null) return 1
  if (isNumeric(value)) return 2
  if (typeof value === 'string') return 3
  if (isPlainObject(value)) return 4
  if (Array.isArray(value)) return 5
  if (value._bsontype === 'Binary' || ArrayBuffer.isView(value)) return 6
  if (value._bsontype === 'ObjectId') return 7
  if (typeof value === 'boolean') return 8
  if (value instanceof Date) return 9
  if (value._bsontype === 'Timestamp') return 10
  return 11
}

/**
 * Total order over BSON values (close enough to the server's for tests).
 * @param {any} a
 * @param {any} b
 * @returns {number} negative, zero or positive
 */
/** `$type` aliases by the typeRank() bracket they fall in. */
const TYPE_ALIAS_RANKS = {
  null: 1,
  undefined: 1,
  double: 2,
  int: 2,
  long: 2,
  decimal: 2,
  number: 2,
  string: 3,
  symbol: 3,
  object: 4,
  array: 5,
  binData: 6,
  objectId: 7,
  bool: 8,
  date: 9,
  timestamp: 10,
  regex: 11,
  minKey: 0,
  maxKey: 12,
}

function compareValues(a, b) {
  const ra = typeRank(a)
  const rb = typeRank(b)
  if (ra !== rb) return ra - rb
  switch (ra) {
    case 1:
      return 0
    case 2: {
      const x = toNumber(a)
      const y = toNumber(b)
      return x < y ? -1 : x > y ? 1 : 0
    }
    case 3:
      return a < b ? -1 : a > b ? 1 : 0
    case 7:
      return a.toHexString().localeCompare(b.toHexString())
    case 8:
      return Number(a) - Number(b)
    case 9:
      return a.getTime() - b.getTime()
    case 10:
      return a.compare(b)
    case 4: {
      // Like the server: element by element (type, then name, then value); a prefix is smaller.
      const x = Object.entries(a)
      const y = Object.entries(b)
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = typeRank(x[i][1]) - typeRank(y[i][1]) || (x[i][0] < y[i][0] ? -1 : x[i][0] > y[i][0] ? 1 : 0) || compareValues(x[i][1], y[i][1])
        if (c !== 0) return c
      }
      return x.length - y.length
    }
    default: {
      const x = canonical(a)
      const y = canonical(b)
      return x < y ? -1 : x > y ? 1 : 0
    }
  }
}

/** @param {any} value @returns {string} relaxed EJSON, numbers unified */
function canonical(value) {
  return EJSON.stringify(value, { relaxed: true })
}

/** @param {any} a @param {any} b @returns {boolean} BSON-ish equality (1 == 1.0 == Long(1)) */
function valuesEqual(a, b) {
  return compareValues(a, b) === 0
}

/**
 * Values found at a dotted path; arrays along the path fan out like the server.
 * @param {any} doc
 * @param {string} path
 * @returns {any[]} candidate values (empty when the path is missing)
 */
function valuesAtPath(doc, path) {
  const parts = path.split('.')
  let current = [doc]
  for (const part of parts) {
    const next = []
    for (const value of current) {
      if (Array.isArray(value)) {
        if (/^\d+$/.test(part) && Number(part) < value.length) next.push(value[Number(part)])
        else for (const element of value) if (isPlainObject(element) && part in element) next.push(element[part])
      } else if (isPlainObject(value) && Object.prototype.hasOwnProperty.call(value, part)) {
        next.push(value[part])
      }
    }
    current = next
  }
  return current
}

/**
 * Expand candidate values: an array matches if it or any element matches.
 * @param {any[]} values
 */
function withArrayElements(values) {
  const out = []
  for (const value of values) {
    out.push(value)
    if (Array.isArray(value)) out.push(...value)
  }
  return out
}

/**
 * Test whether a document matches a query filter.
 * Supports equality (top-level and dotted paths), $eq $ne $gt $gte $lt $lte
 * $in $nin $exists, and $and / $or / $nor.
 * @param {Record<string, any>} doc
 * @param {Record<string, any>} [filter]
 * @returns {boolean}
 */
function matches(doc, filter) {
  if (!filter) return true
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and') {
      if (!condition.every((f) => matches(doc, f))) return false
    } else if (key === '$or') {
      if (!condition.some((f) => matches(doc, f))) return false
    } else if (key === '$nor') {
      if (condition.some((f) => matches(doc, f))) return false
    } else if (key === '$comment') {
      continue
    } else if (key.startsWith('$')) {
      throw new CommandError(2, 'BadValue', `unknown top level operator: ${key}`)
    } else if (!matchesCondition(valuesAtPath(doc, key), condition)) {
      return false
    }
  }
  return true
}

/**
 * @param {any[]} values values at the path
 * @param {any} condition equality value or operator document
 */
function matchesCondition(values, condition) {
  const isOperatorDoc = isPlainObject(condition) && Object.keys(condition).length > 0 && Object.keys(condition).every((k) => k.startsWith('$'))
  if (!isOperatorDoc) return matchesEquality(values, condition)
  const candidates = withArrayElements(values)
  for (const [op, operand] of Object.entries(condition)) {
    let ok
    switch (op) {
      case '$eq':
        ok = matchesEquality(values, operand)
        break
      case '$ne':
        ok = !matchesEquality(values, operand)
        break
      case '$gt':
        ok = candidates.some((v) => typeRank(v) === typeRank(operand) && compareValues(v, operand) > 0)
        break
      case '$gte':
        ok = candidates.some((v) => typeRank(v) === typeRank(operand) && compareValues(v, operand) >= 0)
        break
      case '$lt':
        ok = candidates.some((v) => typeRank(v) === typeRank(operand) && compareValues(v, operand) < 0)
        break
      case '$lte':
        ok = candidates.some((v) => typeRank(v) === typeRank(operand) && compareValues(v, operand) <= 0)
        break
      case '$in':
        ok = operand.some((o) => matchesEquality(values, o))
        break
      case '$nin':
        ok = !operand.some((o) => matchesEquality(values, o))
        break
      case '$mod': {
        // { $mod: [divisor, remainder] } on numbers, truncated toward zero like the server
        if (!Array.isArray(operand) || operand.length !== 2) throw new CommandError(2, 'BadValue', 'malformed mod, needs to be an array of 2 elements')
        const [d, r] = operand.map((x) => Math.trunc(toNumber(x)))
        if (d === 0) throw new CommandError(2, 'BadValue', 'divisor cannot be 0')
        ok = candidates.some((v) => {
          const x = v !== null && typeof v === 'object' && !['Int32', 'Double', 'Long'].includes(v._bsontype) ? NaN : toNumber(v)
          return typeof x === 'number' && Number.isFinite(x) && Math.trunc(x) % d === r
        })
        break
      }
      case '$exists':
        ok = (values.length > 0) === Boolean(toNumber(operand))
        break
      case '$type': {
        // By comparison bracket (this fixture keeps int32 and double apart no better than that).
        const ranks = (Array.isArray(operand) ? operand : [operand]).map((a) => TYPE_ALIAS_RANKS[a])
        if (ranks.includes(undefined)) throw new CommandError(2, 'BadValue', `the test server does not support $type ${JSON.stringify(operand)}`)
        ok = values.some((v) => ranks.includes(typeRank(v)))
        break
      }
      default:
        throw new CommandError(2, 'BadValue', `unknown operator: ${op}`)
    }
    if (!ok) return false
  }
  return true
}

/** @param {any[]} values @param {any} expected */
function matchesEquality(values, expected) {
  if (expected === null && values.length === 0) return true
  return withArrayElements(values).some((v) => valuesEqual(v, expected))
}

/**
 * Deep clone through BSON so stored documents never alias caller objects.
 * @template T
 * @param {T} doc
 * @returns {T}
 */
function cloneDocument(doc) {
  return BSON.deserialize(BSON.serialize(doc), { promoteValues: false, promoteLongs: false, promoteBuffers: false })
}

/**
 * @typedef {object} UpdateResult
 * @property {Record<string, any>} document the new document
 * @property {boolean} isReplacement the update was a replacement document
 * @property {Record<string, any>} updatedFields dotted path -> new value
 * @property {string[]} removedFields dotted paths removed
 */

/**
 * Apply an update (replacement document or operator document) to a document.
 * Supports $set, $unset, $inc, $setOnInsert (on upsert), $push and $rename.
 * @param {Record<string, any>} original
 * @param {Record<string, any>} update
 * @param {{isUpsertInsert?: boolean}} [options]
 * @returns {UpdateResult}
 */
function applyUpdate(original, update, { isUpsertInsert = false } = {}) {
  if (Array.isArray(update)) throw new CommandError(2, 'BadValue', 'pipeline updates are not supported by the test server')
  const keys = Object.keys(update)
  const isReplacement = keys.length === 0 || !keys[0].startsWith('$')
  if (isReplacement) {
    if (keys.some((k) => k.startsWith('$'))) throw new CommandError(2, 'BadValue', 'replacement document must not contain operators')
    const replacement = cloneDocument(update)
    if (original._id !== undefined && replacement._id !== undefined && !valuesEqual(original._id, replacement._id)) {
      throw new CommandError(66, 'ImmutableField', "After applying the update, the (immutable) field '_id' was found to have been altered")
    }
    const document = { _id: original._id, ...replacement }
    if (original._id !== undefined) document._id = original._id
    return { document, isReplacement: true, updatedFields: {}, removedFields: [] }
  }
  const document = cloneDocument(original)
  const updatedFields = {}
  const removedFields = []
  for (const [op, fields] of Object.entries(update)) {
    for (const [path, value] of Object.entries(fields)) {
      if (path === '_id' || path.startsWith('_id.')) {
        if (op !== '$setOnInsert' && op !== '$set') throw new CommandError(66, 'ImmutableField', "Performing an update on the path '_id' would modify the immutable field '_id'")
        if (!isUpsertInsert && !valuesEqual(getPath(document, path), value)) throw new CommandError(66, 'ImmutableField', "Performing an update on the path '_id' would modify the immutable field '_id'")
      }
      switch (op) {
        case '$set':
          setPath(document, path, cloneValue(value))
          updatedFields[path] = cloneValue(value)
          break
        case '$setOnInsert':
          if (isUpsertInsert) setPath(document, path, cloneValue(value))
          break
        case '$unset':
          if (unsetPath(document, path)) removedFields.push(path)
          break
        case '$inc': {
          const current = getPath(document, path)
          const next = addNumbers(current, value)
          setPath(document, path, next)
          updatedFields[path] = next
          break
        }
        case '$push': {
          const current = getPath(document, path)
          const items = isPlainObject(value) && Array.isArray(value.$each) ? value.$each : [value]
          const next = [...(Array.isArray(current) ? current : []), ...items.map(cloneValue)]
          setPath(document, path, next)
          updatedFields[path] = next
          break
        }
        case '$rename': {
          const current = getPath(document, path)
          if (current !== undefined) {
            unsetPath(document, path)
            removedFields.push(path)
            setPath(document, value, current)
            updatedFields[value] = current
          }
          break
        }
        default:
          throw new CommandError(9, 'FailedToParse', `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`)
      }
    }
  }
  // Drop paths that were set back to their original value (the server logs no-ops as nothing).
  for (const path of Object.keys(updatedFields)) {
    if (valuesEqual(getPath(original, path), updatedFields[path]) && getPath(original, path) !== undefined) delete updatedFields[path]
  }
  return { document, isReplacement: false, updatedFields, removedFields }
}

/** @param {any} value */
function cloneValue(value) {
  return cloneDocument({ v: value }).v
}

/** @param {any} current @param {any} delta */
function addNumbers(current, delta) {
  if (current === undefined) return delta
  if (!isNumeric(current)) throw new CommandError(14, 'TypeMismatch', 'Cannot apply $inc to a value of non-numeric type')
  const sum = toNumber(current) + toNumber(delta)
  const types = [current._bsontype, delta._bsontype]
  if (types.includes('Double') || typeof current === 'number' || !Number.isInteger(sum)) return new Double(sum)
  if (types.includes('Long') || sum > 0x7fffffff || sum < -0x80000000) return Long.fromNumber(sum)
  return new Int32(sum)
}

/** @param {any} doc @param {string} path */
function getPath(doc, path) {
  let current = doc
  for (const part of path.split('.')) {
    if (current == null || typeof current !== 'object') return undefined
    current = current[part]
  }
  return current
}

/** @param {any} doc @param {string} path @param {any} value */
function setPath(doc, path, value) {
  const parts = path.split('.')
  let current = doc
  for (const part of parts.slice(0, -1)) {
    if (current[part] == null || typeof current[part] !== 'object') current[part] = {}
    current = current[part]
  }
  current[parts[parts.length - 1]] = value
}

/** @param {any} doc @param {string} path @returns {boolean} whether a field was removed */
function unsetPath(doc, path) {
  const parts = path.split('.')
  let current = doc
  for (const part of parts.slice(0, -1)) {
    if (current == null || typeof current !== 'object') return false
    current = current[part]
  }
  const last = parts[parts.length - 1]
  if (current == null || typeof current !== 'object' || !(last in current)) return false
  delete current[last]
  return true
}

/**
 * Apply an inclusion or exclusion projection (top-level and dotted paths).
 * @param {Record<string, any>} doc
 * @param {Record<string, any>} [projection]
 * @returns {Record<string, any>}
 */
function project(doc, projection) {
  if (!projection || Object.keys(projection).length === 0) return doc
  const entries = Object.entries(projection).map(([k, v]) => [k, Boolean(toNumber(v))])
  const id = entries.find(([k]) => k === '_id')
  // Inclusion when any field but _id is included, or the projection is just {_id: 1}.
  const inclusive = entries.some(([k, v]) => v && k !== '_id') || (entries.length === 1 && id !== undefined && id[1])
  if (inclusive) {
    // Like the server: the result keeps the document's field order; `a.b` keeps `a` as a
    // document holding only `b` (`{}` without it), applies to every document of an array `a`
    // (arrays in arrays too; other elements are dropped) and drops a scalar `a`.
    const tree = {}
    const add = (path) => {
      const parts = path.split('.')
      let node = tree
      for (let i = 0; i < parts.length; i++) {
        if (node[parts[i]] === true) return
        if (i === parts.length - 1) node[parts[i]] = true
        else node = node[parts[i]] = node[parts[i]] || {}
      }
    }
    if (!id || id[1]) add('_id')
    for (const [path, include] of entries) if (include && path !== '_id') add(path)
    return includeTree(doc, tree)
  }
  // Exclusion, like the server: `a.b` removes `b` from the document `a` and from every document
  // of an array `a` (arrays in arrays too); other elements stay.
  const out = cloneDocument(doc)
  const exclude = (value, parts) => {
    if (Array.isArray(value)) {
      for (const el of value) exclude(el, parts)
    } else if (isPlainObject(value) && Object.prototype.hasOwnProperty.call(value, parts[0])) {
      if (parts.length === 1) delete value[parts[0]]
      else exclude(value[parts[0]], parts.slice(1))
    }
  }
  for (const [path] of entries) exclude(out, path.split('.'))
  return out
}

/**
 * Whether a $project specification computes fields (a `$path`, `$$ROOT`, `{$literal}` or an
 * object of those) rather than only including or excluding them.
 * @param {Record<string, any>} [spec]
 */
function isComputedProjection(spec) {
  return !!spec && Object.values(spec).some((v) => typeof v === 'string' || (isPlainObject(v) && Object.keys(v).length > 0))
}

/**
 * The aggregation `$project` with computed fields, as far as this fixture goes: each field is
 * included (`1`/`true`), excluded (`_id: 0`) or an expression: `'$a.b'` (the value at the path),
 * `'$$ROOT'` (the whole document), `{ $literal: v }`, or an object of expressions. `_id` is kept
 * unless given. Fields in the specification's order, `_id` first.
 * @param {Record<string, any>} doc
 * @param {Record<string, any>} spec
 */
function computedProject(doc, spec) {
  const evaluate = (e) => {
    if (typeof e === 'string' && e === '$$ROOT') return cloneDocument(doc)
    if (typeof e === 'string' && e.startsWith('$')) return getPath(doc, e.slice(1))
    if (isPlainObject(e) && Object.hasOwn(e, '$literal')) return e.$literal
    if (isPlainObject(e)) {
      const out = {}
      for (const [k, v] of Object.entries(e)) {
        if (k.startsWith('$')) throw new CommandError(2, 'BadValue', `the test server does not support the expression ${k}`)
        const x = evaluate(v)
        if (x !== undefined) out[k] = x
      }
      return out
    }
    return e
  }
  const out = {}
  if (!Object.hasOwn(spec, '_id') && doc._id !== undefined) out._id = doc._id
  for (const [k, v] of Object.entries(spec)) {
    if (typeof v === 'number' || typeof v === 'boolean') {
      if (toNumber(v) && doc[k] !== undefined) out[k] = doc[k]
      continue
    }
    const x = evaluate(v)
    if (x !== undefined) out[k] = x
  }
  return out
}

function includeTree(value, tree) {
  const out = {}
  for (const [k, v] of Object.entries(value)) {
    const sub = Object.prototype.hasOwnProperty.call(tree, k) ? tree[k] : undefined
    if (sub === undefined) continue
    if (sub === true) out[k] = v
    else if (Array.isArray(v)) out[k] = includeArray(v, sub)
    else if (isPlainObject(v)) out[k] = includeTree(v, sub)
  }
  return out
}

function includeArray(array, tree) {
  return array.filter((e) => Array.isArray(e) || isPlainObject(e)).map((e) => (Array.isArray(e) ? includeArray(e, tree) : includeTree(e, tree)))
}

/**
 * Sort documents by a sort specification ({field: 1 | -1}).
 * @param {Record<string, any>[]} docs
 * @param {Record<string, any>} [sort]
 * @returns {Record<string, any>[]} a new sorted array
 */
function sortDocuments(docs, sort) {
  if (!sort || Object.keys(sort).length === 0) return [...docs]
  const keys = Object.entries(sort).map(([k, v]) => [k, toNumber(v) < 0 ? -1 : 1])
  return [...docs].sort((a, b) => {
    for (const [path, direction] of keys) {
      const c = compareValues(getPath(a, path), getPath(b, path))
      if (c !== 0) return c * direction
    }
    return 0
  })
}

module.exports = {
  isComputedProjection,
  computedProject,
  toNumber,
  isPlainObject,
  compareValues,
  valuesEqual,
  matches,
  applyUpdate,
  cloneDocument,
  project,
  sortDocuments,
  getPath,
}
