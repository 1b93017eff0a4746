'use strict'

/**
 * `projection` and `redact`: validated here (a TypeError naming the bad path or option) and
 * compiled into the addon's `Shaper` (crates/bson2json-core/src/project.rs), a BSON → BSON pass
 * that runs ahead of the unchanged transcoder.
 *
 * Both are read as data, once per call: own properties only (nothing on `Object.prototype`
 * counts), and a compiled shape is found by its content, never by the identity of the caller's
 * objects, so an edit between calls (`opts.redact.paths.push('ssn')`) is honoured.
 *
 * Memory stays bounded however many distinct shapes a program compiles, even in a loop that
 * never yields (ARCHITECTURE.md, decision "Compiled shapes: a bounded pool"): the per-call
 * APIs take their `Shaper` from a pool of at most {@link POOL_MAX}, keyed by content; a miss
 * recompiles the least recently used one in place (`Shaper.recompile`) rather than creating a
 * new one (whose native memory Node-API would free only once the event loop turns). A call
 * leases its `Shaper` ({@link release} ends the lease): a leased one is never recompiled, so
 * JavaScript that runs mid-call (a getter, a patched `RegExp`) and compiles other shapes cannot
 * change the shape of the call under way. Long-lived users (streams, cursors, change streams)
 * get a `Shaper` of their own.
 */

const native = require('./native')
const { describe } = require('./errors')

const REDACT_KEYS = new Set(['paths', 'with', 'key'])

/** The caller's own property `k` of `o` (undefined when it is only inherited), read once. */
function own(o, k) {
  return Object.hasOwn(o, k) ? o[k] : undefined
}

function optionTypeError(message) {
  const e = new TypeError(message)
  e.code = 'ERR_INVALID_ARG_VALUE'
  return e
}

/**
 * MongoDB's projection document → `[paths, include]`. Values are MongoDB's: a number (0 excludes,
 * any other includes) or a boolean; anything else is an operator or expression bson2json does
 * not support.
 * @param {unknown} projection
 * @param {string} name the option's name in messages
 */
function projectionFields(projection, name) {
  if (projection === null || typeof projection !== 'object' || Array.isArray(projection) || ArrayBuffer.isView(projection)) {
    throw optionTypeError(`bson2json: options.${name} must be a projection document ({ a: 1, 'b.c': 1 } or { secret: 0 }), got ${describe(projection, 'object')}`)
  }
  const paths = Object.keys(projection)
  const include = []
  for (const path of paths) {
    const v = projection[path]
    if (typeof v === 'boolean') include.push(v)
    else if (typeof v === 'number' && !Number.isNaN(v)) include.push(v !== 0)
    else if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).some((k) => k.startsWith('$'))) {
      const op = Object.keys(v).find((k) => k.startsWith('$'))
      throw optionTypeError(`bson2json: options.${name}['${path}']: the operator ${op} is not supported (only inclusion 1/true and exclusion 0/false)`)
    } else {
      throw optionTypeError(`bson2json: options.${name}['${path}'] must be 1/true (include) or 0/false (exclude), got ${describe(v)} (expressions are not supported)`)
    }
  }
  return [paths, include]
}

/**
 * `{ paths, with?, key? }` → `[paths, key | null]` (the paths and the key copied).
 * @param {unknown} redact
 */
function redactSpec(redact) {
  if (redact === null || typeof redact !== 'object' || Array.isArray(redact)) {
    throw optionTypeError(`bson2json: options.redact must be { paths: string[], with?: 'null' | 'hmac-sha256', key?: Uint8Array }, got ${describe(redact, 'object')}`)
  }
  for (const k of Object.keys(redact)) {
    if (!REDACT_KEYS.has(k) && redact[k] !== undefined) {
      const e = optionTypeError(`bson2json: unknown option 'redact.${k}' (redact takes paths, with, key)`)
      e.code = 'ERR_INVALID_ARG_VALUE'
      throw e
    }
  }
  const given = own(redact, 'paths')
  const paths = []
  let ok = Array.isArray(given) && given.length > 0
  for (let i = 0; ok && i < given.length; i++) {
    // a hole would be read from Array.prototype / Object.prototype
    const p = Object.hasOwn(given, i) ? given[i] : undefined
    if (typeof p === 'string') paths.push(p)
    else ok = false
  }
  if (!ok) throw optionTypeError(`bson2json: options.redact.paths must be a non-empty array of strings, got ${describe(given)}`)
  const key = own(redact, 'key')
  const w0 = own(redact, 'with')
  const w = w0 === undefined ? (key === undefined ? 'null' : 'hmac-sha256') : w0
  if (w !== 'null' && w !== 'hmac-sha256') {
    throw optionTypeError(`bson2json: options.redact.with must be 'null' or 'hmac-sha256', got ${describe(w, 'string')}`)
  }
  if (w === 'null') {
    if (key !== undefined) throw optionTypeError("bson2json: options.redact.key is only used with with: 'hmac-sha256'")
    return [paths, null]
  }
  if (!(key instanceof Uint8Array) || key.length === 0) {
    throw optionTypeError(`bson2json: options.redact.key must be a non-empty Uint8Array for with: 'hmac-sha256', got ${describe(key)}`)
  }
  return [paths, Buffer.from(key)]
}

/** Pooled `Shaper`s at most (each a few hundred bytes to a few KB of native memory). */
const POOL_MAX = 256
/** content key → `{ shaper, key, leases, used }`. */
const pool = new Map()
/** Advances at every pooled use: an entry's `used` is when it was last used. */
let clock = 0

/** The validated spec of `projection` and `redact`, and the key that names its content. */
function specOf(projection, redact, projectionName) {
  const [paths, include] = projection === undefined ? [[], []] : projectionFields(projection, projectionName)
  const [redactPaths, key] = redact === undefined ? [[], null] : redactSpec(redact)
  // Unambiguous: JSON quotes every string (NUL included; the addon rejects NUL in paths).
  const content = JSON.stringify([paths, include, redactPaths, key === null ? null : key.toString('base64')])
  // Frozen objects cannot change: their spec needs no check at the next call (a key's bytes
  // can change, so a redaction with a key is always checked).
  const frozen =
    (projection === undefined || Object.isFrozen(projection)) &&
    (redact === undefined || (key === null && Object.isFrozen(redact) && Object.isFrozen(own(redact, 'paths'))))
  return { projection, redact, paths, include, redactPaths, key, content, frozen, entry: undefined }
}

/**
 * The spec last made from these objects, kept by the identity of the projection (or the redact
 * object): used again only while their content is still the spec's, checked property by
 * property at each call (cheaper than making the content key again). An edit in place makes a
 * new spec.
 */
const lastSpec = new WeakMap()

/** Whether `projection` (own properties) is still `paths` → `include`, in order. */
function sameProjection(projection, paths, include) {
  if (projection === undefined) return paths.length === 0
  const keys = Object.keys(projection)
  if (keys.length !== paths.length) return false
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== paths[i]) return false
    const v = projection[keys[i]]
    const inc = typeof v === 'boolean' ? v : typeof v === 'number' && !Number.isNaN(v) ? v !== 0 : null
    if (inc !== include[i]) return false
  }
  return true
}

/** Whether `redact` (own properties) still gives `paths` and `key`. */
function sameRedact(redact, paths, key) {
  if (redact === undefined) return paths.length === 0
  const keys = Object.keys(redact)
  for (let i = 0; i < keys.length; i++) if (!REDACT_KEYS.has(keys[i])) return false
  const given = own(redact, 'paths')
  if (!Array.isArray(given) || given.length !== paths.length || paths.length === 0) return false
  for (let i = 0; i < paths.length; i++) if (!Object.hasOwn(given, i) || given[i] !== paths[i]) return false
  const k = own(redact, 'key')
  const w = own(redact, 'with')
  if (key === null) return k === undefined && (w === undefined || w === 'null')
  if (w !== undefined && w !== 'hmac-sha256') return false
  if (!(k instanceof Uint8Array) || k.length !== key.length) return false
  for (let i = 0; i < key.length; i++) if (k[i] !== key[i]) return false
  return true
}

/** The spec of `projection` and `redact`: the last one made from these objects if their content is unchanged. */
function currentSpec(projection, redact, projectionName) {
  const holder = projection !== null && typeof projection === 'object' ? projection : redact !== null && typeof redact === 'object' ? redact : null
  if (holder !== null) {
    const last = lastSpec.get(holder)
    if (
      last !== undefined &&
      last.projection === projection &&
      last.redact === redact &&
      (last.frozen || (sameProjection(projection, last.paths, last.include) && sameRedact(redact, last.redactPaths, last.key)))
    ) {
      return last
    }
  }
  const spec = specOf(projection, redact, projectionName)
  if (holder !== null) lastSpec.set(holder, spec)
  return spec
}

/** `native.createShaper`, with a projection error renamed after the caller's option. */
function renamed(projectionName, f) {
  try {
    return f()
  } catch (e) {
    if (e instanceof TypeError) {
      if (projectionName !== 'projection') e.message = e.message.replace('options.projection', `options.${projectionName}`)
      if (e.code === undefined) e.code = 'ERR_INVALID_ARG_VALUE'
    }
    throw e
  }
}

/**
 * The compiled shape of `projection` and `redact` (either may be undefined, not both) in a
 * `Shaper` of the caller's own: a stream, a cursor, a change stream, which use it for as long
 * as they live, or a check of the options.
 * @param {unknown} projection
 * @param {unknown} redact
 * @param {string} [projectionName] the projection option's name in messages
 */
function compileShape(projection, redact, projectionName = 'projection') {
  if (projection === undefined && redact === undefined) return undefined
  const spec = specOf(projection, redact, projectionName)
  return renamed(projectionName, () => native.createShaper(spec.paths, spec.include, spec.redactPaths, spec.key))
}

/**
 * A pooled `Shaper` of the shape of `projection` and `redact` (either may be undefined, not
 * both), leased to one call of the per-document and batch functions: `{ shaper }`, to give
 * back to {@link release} when the call ends. Until then it is not compiled again for other
 * options.
 * @param {unknown} projection
 * @param {unknown} redact
 * @param {string} [projectionName] the projection option's name in messages
 * @returns {{ shaper: any }}
 */
function leaseShape(projection, redact, projectionName = 'projection') {
  const spec = currentSpec(projection, redact, projectionName)
  let entry = spec.entry
  // the spec's entry, unless it was compiled again for other options since
  if (entry === undefined || entry.key !== spec.content) entry = pool.get(spec.content)
  if (entry === undefined) {
    entry = pool.size >= POOL_MAX ? evictable() : null
    if (entry !== null) {
      // A bad spec throws here and leaves the entry as it was.
      const e = entry
      renamed(projectionName, () => native.recompileShaper(e.shaper, spec.paths, spec.include, spec.redactPaths, spec.key))
      pool.delete(entry.key)
    } else {
      const shaper = renamed(projectionName, () => native.createShaper(spec.paths, spec.include, spec.redactPaths, spec.key))
      entry = { shaper, key: '', leases: 0, used: 0 }
      // Every entry leased (calls nested that deep): this one stays out of the pool.
      if (pool.size >= POOL_MAX) return entry
    }
    entry.key = spec.content
    pool.set(spec.content, entry)
  }
  spec.entry = entry
  entry.used = ++clock
  entry.leases++
  return entry
}

/**
 * Checks `projection` and `redact` as {@link compileShape} would (a TypeError naming the bad
 * path or option) without making a `Shaper` of their own: the pooled one is compiled and
 * given back at once.
 * @param {unknown} projection
 * @param {unknown} redact
 * @param {string} [projectionName]
 */
function checkShape(projection, redact, projectionName = 'projection') {
  if (projection === undefined && redact === undefined) return
  release(leaseShape(projection, redact, projectionName))
}

/** The least recently used entry with no lease, or null. */
function evictable() {
  let best = null
  for (const e of pool.values()) if (e.leases === 0 && (best === null || e.used < best.used)) best = e
  return best
}

/** Ends a lease {@link leaseShape} gave. */
function release(lease) {
  if (lease.leases > 0) lease.leases--
}

module.exports = { compileShape, checkShape, leaseShape, release, own, POOL_MAX }
