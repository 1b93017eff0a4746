'use strict'

/**
 * `projection` and `redact`: validated here (a TypeError naming the bad path or option) and
 * compiled once per call or stream into the addon's `Shaper` (crates/bson2json-core/src/
 * project.rs), a BSON → BSON pass that runs ahead of the unchanged transcoder.
 */

const native = require('./native')
const { describe } = require('./errors')


const REDACT_KEYS = new Set(['paths', 'with', 'key'])

/**
 * MongoDB's projection document → `[paths, include]`. Values are MongoDB's: a number (0 excludes,
 * any other includes) or a boolean; anything else is an operator or expression bson2json does
 * not support.
 * @param {unknown} projection
 * @param {string} name the option's name in messages
 */
function projectionFields(projection, name) {
  if (projection === null || typeof projection !== 'object' || Array.isArray(projection) || ArrayBuffer.isView(projection)) {
    throw new TypeError(`bson2json: options.${name} must be a projection document ({ a: 1, 'b.c': 1 } or { secret: 0 }), got ${describe(projection, 'object')}`)
  }
  const paths = []
  const include = []
  for (const path of Object.keys(projection)) {
    const v = projection[path]
    if (typeof v === 'boolean') include.push(v)
    else if (typeof v === 'number' && !Number.isNaN(v)) include.push(v !== 0)
    else if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).some((k) => k.startsWith('$'))) {
      const op = Object.keys(v).find((k) => k.startsWith('$'))
      throw new TypeError(`bson2json: options.${name}['${path}']: the operator ${op} is not supported (only inclusion 1/true and exclusion 0/false)`)
    } else {
      throw new TypeError(
        `bson2json: options.${name}['${path}'] must be 1/true (include) or 0/false (exclude), got ${describe(v)} (expressions are not supported)`,
      )
    }
    paths.push(path)
  }
  return [paths, include]
}

/**
 * `{ paths, with?, key? }` → `[paths, key | null]`.
 * @param {unknown} redact
 */
function redactSpec(redact) {
  if (redact === null || typeof redact !== 'object' || Array.isArray(redact)) {
    throw new TypeError(`bson2json: options.redact must be { paths: string[], with?: 'null' | 'hmac-sha256', key?: Uint8Array }, got ${describe(redact, 'object')}`)
  }
  for (const k of Object.keys(redact)) {
    if (!REDACT_KEYS.has(k) && redact[k] !== undefined) throw new TypeError(`bson2json: unknown option 'redact.${k}' (redact takes paths, with, key)`)
  }
  const paths = redact.paths
  if (!Array.isArray(paths) || paths.length === 0 || paths.some((p) => typeof p !== 'string')) {
    throw new TypeError(`bson2json: options.redact.paths must be a non-empty array of strings, got ${describe(paths)}`)
  }
  const key = redact.key
  const w = redact.with === undefined ? (key === undefined ? 'null' : 'hmac-sha256') : redact.with
  if (w !== 'null' && w !== 'hmac-sha256') {
    throw new TypeError(`bson2json: options.redact.with must be 'null' or 'hmac-sha256', got ${describe(w, 'string')}`)
  }
  if (w === 'null') {
    if (key !== undefined) throw new TypeError("bson2json: options.redact.key is only used with with: 'hmac-sha256'")
    return [paths, null]
  }
  if (!(key instanceof Uint8Array) || key.length === 0) {
    throw new TypeError(`bson2json: options.redact.key must be a non-empty Uint8Array for with: 'hmac-sha256', got ${describe(key)}`)
  }
  return [paths, Buffer.from(key)]
}

/** (projection, redact) pairs already compiled, by the identity of the two objects. */
const cache = new WeakMap()
/** Compiled shapes by their validated content, for fresh option objects per call (bounded). */
const byContent = new Map()
const BY_CONTENT_MAX = 256

/**
 * The compiled shape of `projection` and `redact` (either may be undefined), or undefined when
 * both are. Compiled once per pair of objects (a projection or redact object changed in place
 * after its first use is not seen: pass a new object).
 * @param {unknown} projection
 * @param {unknown} redact
 * @param {string} [projectionName] the projection option's name in messages
 */
function compileShape(projection, redact, projectionName = 'projection') {
  if (projection === undefined && redact === undefined) return undefined
  const keyObj = projection !== null && typeof projection === 'object' ? projection : redact !== null && typeof redact === 'object' ? redact : null
  if (keyObj !== null) {
    const hit = cache.get(keyObj)
    if (hit !== undefined && hit.projection === projection && hit.redact === redact) return hit.shaper
  }
  const [paths, include] = projection === undefined ? [[], []] : projectionFields(projection, projectionName)
  const [redactPaths, key] = redact === undefined ? [[], null] : redactSpec(redact)
  const content = JSON.stringify([paths, include, redactPaths, key === null ? null : key.toString('hex')])
  let shaper = byContent.get(content)
  if (shaper !== undefined) {
    if (keyObj !== null) cache.set(keyObj, { projection, redact, shaper })
    return shaper
  }
  try {
    shaper = native.createShaper(paths, include, redactPaths, key)
  } catch (e) {
    if (e instanceof TypeError && projectionName !== 'projection') e.message = e.message.replace('options.projection', `options.${projectionName}`)
    throw e
  }
  if (byContent.size >= BY_CONTENT_MAX) byContent.delete(byContent.keys().next().value)
  byContent.set(content, shaper)
  if (keyObj !== null) cache.set(keyObj, { projection, redact, shaper })
  return shaper
}

module.exports = { compileShape }
