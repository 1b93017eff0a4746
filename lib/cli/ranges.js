'use strict'

// `export --parallel N`: split the documents matching a query into N `_id` ranges.
//
// The bounds come from the server's `_id` index: the smallest matching `_id`, then each next
// bound is the `_id` `step` places after the previous bound among the matching documents
// (`{_id: {$gt: previous}}`, sorted, skipped), so the bounds are strictly increasing by the
// server's own comparison, whatever happens to the collection meanwhile. Range i is
// `bound[i] <= _id < bound[i+1]`, the first open below and the last open above: the ranges are
// disjoint and together cover every possible `_id` of the same kind.
//
// The server compares `_id`s of different kinds (numbers, strings, ObjectIds, dates, …) by
// "type bracketing": `{_id: {$lt: ObjectId(…)}}` never matches a string `_id`. So ranges are
// used only when the smallest and the largest matching `_id` are of the same kind (then, by the
// server's sort order of kinds, every `_id` is); otherwise the export uses one range.

const NUMBER = 'number'

function kindOf(type) {
  switch (type) {
    case 0x01:
    case 0x10:
    case 0x12:
    case 0x13:
      return NUMBER
    case 0x02:
    case 0x0e:
      return 'string'
    case 0x07:
      return 'objectId'
    case 0x09:
      return 'date'
    case 0x11:
      return 'timestamp'
    case 0x05:
      return 'binary'
    default:
      return null // a kind with no useful order for ranges (objects, booleans, null, …)
  }
}

/** The BSON type byte of the `_id` of a raw document whose only field is `_id`. */
function idType(raw) {
  return raw[4]
}

const READ = { promoteValues: false, promoteLongs: false, promoteBuffers: false }

async function one(coll, filter, sort, skip = 0, raw = false) {
  const options = { projection: { _id: 1 }, sort, skip, limit: 1, ...(raw ? { raw: true } : READ) }
  const docs = await coll.find(filter, options).toArray()
  return docs.length === 0 ? null : docs[0]
}

function and(query, extra) {
  return Object.keys(query).length === 0 ? extra : { $and: [query, extra] }
}

/**
 * Up to `n` ranges `{ lo, hi }` (undefined: open). One range `{}` when the matching `_id`s are
 * of different kinds, or there are fewer documents than ranges.
 */
async function splitRanges(coll, query, n) {
  const minRaw = await one(coll, query, { _id: 1 }, 0, true)
  if (minRaw === null) return [{}]
  const maxRaw = await one(coll, query, { _id: -1 }, 0, true)
  const kind = kindOf(idType(minRaw))
  if (kind === null || maxRaw === null || kindOf(idType(maxRaw)) !== kind) return [{}]
  const count = Object.keys(query).length === 0 ? await coll.estimatedDocumentCount() : await coll.countDocuments(query)
  const step = Math.floor(count / n)
  if (step < 1) return [{}]
  const bounds = []
  let prev = null
  for (let i = 1; i < n; i++) {
    const filter = prev === null ? query : and(query, { _id: { $gt: prev } })
    const doc = await one(coll, filter, { _id: 1 }, prev === null ? step : step - 1)
    if (doc === null) break
    bounds.push(doc._id)
    prev = doc._id
  }
  const ranges = []
  for (let i = 0; i <= bounds.length; i++) ranges.push({ lo: i === 0 ? undefined : bounds[i - 1], hi: i < bounds.length ? bounds[i] : undefined })
  return ranges
}

/** The query restricted to one range. */
function rangeFilter(query, range) {
  const id = {}
  if (range.lo !== undefined) id.$gte = range.lo
  if (range.hi !== undefined) id.$lt = range.hi
  if (Object.keys(id).length === 0) return query
  return and(query, { _id: id })
}

module.exports = { splitRanges, rangeFilter, kindOf }
