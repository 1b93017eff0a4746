'use strict'

// `_id` ranges: split the documents matching a query into N ranges read by N cursors (`export
// --parallel N`, lib/cli/export.js; change capture's parallel snapshot, lib/kafka/sink.js).
//
// The bounds are `_id`s in the server's own order, strictly increasing, found one of two ways:
// - `$sample`: one aggregation samples up to 100 `_id`s per range and sorts them on the server
//   (`[{$sample}, {$project: {_id: 1}}, {$sort: {_id: 1}}]`); the bounds are its quantiles. On
//   mongod a small `$sample` first in a pipeline reads a random cursor, not the collection.
// - `_id` seeks, where `$sample` is refused: the smallest matching `_id`, then each next bound
//   is the `_id` `step` places after the previous bound among the matching documents
//   (`{_id: {$gt: previous}}`, sorted, skipped).
// The first two requests (the smallest and the largest `_id`) are timed, and each limited to
// `budgetMs` (1 s) by maxTimeMS: where one `_id` lookup (the faster of the two) is so slow that
// the ranges' n + 2 requests would exceed the budget, the export reads with one plain cursor,
// as without --parallel, and says so.
// Either way the bounds are strictly increasing by the server's comparison, whatever happens
// to the collection meanwhile (ranges only need to be disjoint and cover everything). Range i is
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

async function one(coll, filter, sort, skip = 0, raw = false, maxTimeMS = undefined) {
  const options = { projection: { _id: 1 }, sort, skip, limit: 1, ...(raw ? { raw: true } : READ), ...(maxTimeMS ? { maxTimeMS } : {}) }
  const docs = await coll.find(filter, options).toArray()
  return docs.length === 0 ? null : docs[0]
}

function and(query, extra) {
  return Object.keys(query).length === 0 ? extra : { $and: [query, extra] }
}

/**
 * Up to `n` ranges `{ lo, hi }` (undefined: open), and how they were found: `{ ranges, method,
 * note }`. One range `{}` when the matching `_id`s are of different kinds, there are fewer
 * documents than ranges, or computing ranges would take longer than `budgetMs`.
 */
async function splitRanges(coll, query, n, { budgetMs = 1000 } = {}) {
  let minRaw
  let maxRaw
  let lookup
  try {
    let started = Date.now()
    minRaw = await one(coll, query, { _id: 1 }, 0, true, budgetMs)
    if (minRaw === null) return { ranges: [{}], method: 'one cursor', note: 'no matching document' }
    const first = Date.now() - started
    started = Date.now()
    maxRaw = await one(coll, query, { _id: -1 }, 0, true, budgetMs)
    // One sorted _id lookup's cost on this server: the faster of the two (the first may also
    // pay for a connection the pool opens, and either for a moment of load on this host).
    lookup = Math.min(first, Date.now() - started)
  } catch (e) {
    if (!(e && (e.code === 50 || e.codeName === 'MaxTimeMSExpired'))) throw e
    return { ranges: [{}], method: 'one cursor', note: `an _id lookup took over ${(budgetMs / 1000).toFixed(1)} s on this server` }
  }
  // Ranges take at least n + 2 such requests (the smallest and the largest _id, then $sample or
  // n - 1 seeks): on a server that slow they cost more than they can save, so the export reads
  // one cursor at once.
  if (lookup * (n + 2) > budgetMs) {
    return {
      ranges: [{}],
      method: 'one cursor',
      note: `one _id lookup took ${(lookup / 1000).toFixed(2)} s on this server: ${n} ranges would take ~${((lookup * (n + 2)) / 1000).toFixed(1)} s`,
    }
  }
  const kind = kindOf(idType(minRaw))
  if (kind === null || maxRaw === null || kindOf(idType(maxRaw)) !== kind) {
    return { ranges: [{}], method: 'one cursor', note: '_ids of different kinds' }
  }
  const toRanges = (bounds) => {
    const ranges = []
    for (let i = 0; i <= bounds.length; i++) ranges.push({ lo: i === 0 ? undefined : bounds[i - 1], hi: i < bounds.length ? bounds[i] : undefined })
    return ranges
  }

  // 1. $sample, sorted by the server: the bounds are quantiles of the sample.
  let sample = null
  try {
    const pipeline = [{ $sample: { size: 100 * n } }, { $project: { _id: 1 } }, { $sort: { _id: 1 } }]
    sample = (await coll.aggregate(pipeline, { ...READ, raw: true }).toArray()).filter((raw) => kindOf(idType(raw)) === kind)
  } catch {
    sample = null // $sample refused (an older or partial server): seeks below
  }
  if (sample !== null && sample.length < n) return { ranges: [{}], method: 'one cursor', note: `${sample.length} documents` }
  if (sample !== null) {
    const { deserialize } = require('bson')
    // Sorted by the server and unique, and the indexes increase (sample.length >= n): the
    // bounds increase strictly.
    const bounds = []
    for (let i = 1; i < n; i++) bounds.push(deserialize(sample[Math.floor((i * sample.length) / n)], READ)._id)
    return { ranges: toRanges(bounds), method: '$sample', note: `${sample.length} sampled _ids` }
  }

  // 2. _id seeks.
  const count = Object.keys(query).length === 0 ? await coll.estimatedDocumentCount() : await coll.countDocuments(query)
  const step = Math.floor(count / n)
  if (step < 1) return { ranges: [{}], method: 'one cursor', note: `${count} matching documents` }
  const bounds = []
  let prev = null
  for (let i = 1; i < n; i++) {
    const filter = prev === null ? query : and(query, { _id: { $gt: prev } })
    const doc = await one(coll, filter, { _id: 1 }, prev === null ? step : step - 1)
    if (doc === null) break
    bounds.push(doc._id)
    prev = doc._id
  }
  return { ranges: toRanges(bounds), method: '_id seeks ($sample refused)', note: `step ${step}` }
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
