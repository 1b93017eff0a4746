'use strict'

/**
 * Option validation shared by every call into the binding (native or WASI).
 * Options are resolved once into the numbers the native functions take, so a call costs no
 * property lookups on the native side.
 */

const { OptionFlag, DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES, packOptions } = require('./native')
const { describe, editDistance } = require('./errors')
const { compileShape } = require('./shape')

/** Largest accepted `maxOutputBytes` (4 GiB - 1, the largest Node Buffer on 64-bit hosts). */
const MAX_OUTPUT_BYTES_LIMIT = 2 ** 32 - 1
/** Largest accepted `threads`. */
const MAX_THREADS = 256

// The flag bits of the binding's `flags` argument (its `OptionFlag` enum; bits 0-1 are the dialect).
const FLAG_UTF8_REPLACE = OptionFlag.Utf8Replace
const FLAG_BSON6 = OptionFlag.Bson6
const FLAG_LONGS = OptionFlag.Longs
const FLAG_BUFFERS = OptionFlag.Buffers
const FLAG_BSON_REGEXP = OptionFlag.BsonRegExp
const FLAG_NO_PROMOTE = OptionFlag.NoPromote

/** `dialect` → the low two bits of `flags`. */
const DIALECTS = Object.freeze({ compat: 0, relaxed: OptionFlag.Relaxed, canonical: OptionFlag.Canonical })

/**
 * @typedef {{ flags: number, packed: number, maxDepth: number, maxOutputBytes: number, dialect: string, utf8: string, bsonVersion: number, shaper?: any }} Resolved
 */

/** @type {Resolved} */
const DEFAULTS = Object.freeze({
  flags: 0,
  packed: packOptions(0, DEFAULT_MAX_DEPTH),
  maxDepth: DEFAULT_MAX_DEPTH,
  maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
  dialect: 'compat',
  utf8: 'strict',
  bsonVersion: 7,
  shaper: undefined,
})

/** The option names every transcoding function takes. */
const TRANSCODE_KEYS = [
  'dialect',
  'utf8',
  'maxDepth',
  'maxOutputBytes',
  'bsonVersion',
  'promoteLongs',
  'promoteValues',
  'promoteBuffers',
  'bsonRegExp',
  'validation',
  'projection',
  'redact',
]
const BASE_KEYS = new Set(TRANSCODE_KEYS)
/** Batch functions also take `threads`. */
const BATCH_KEYS = new Set([...TRANSCODE_KEYS, 'threads'])
/** The row functions (`toRow`, `toRows`, `toRowsAsync`) also take `rowFormat` and `dateRenderMode`. */
const ROW_KEYS = new Set([...TRANSCODE_KEYS, 'rowFormat', 'dateRenderMode'])
/** `rowFormat` → its number (core `row::RowFormat`). */
const ROW_FORMATS = Object.freeze({ general: 0, powersync: 1 })
/** Options of the general format's JSON text, which the PowerSync format's own rules replace. */
const GENERAL_ROW_ONLY = ['dialect', 'utf8', 'validation', 'bsonVersion', 'promoteLongs', 'promoteValues', 'promoteBuffers', 'bsonRegExp']

/**
 * js-bson deserialize options bson2json cannot honour: accepted at js-bson's default value,
 * otherwise a TypeError saying why.
 */
const UNSUPPORTED = {
  useBigInt64: [false, "JSON.stringify throws on every BigInt, so there is no text to reproduce; use dialect 'relaxed' for exact int64 digits"],
  raw: [false, 'raw sub-documents are not JSON'],
  fieldsAsRaw: [undefined, 'raw sub-documents are not JSON'],
  allowObjectSmallerThanBufferSize: [false, 'a document must fill its buffer'],
  index: [0, 'pass a subarray instead'],
}

/**
 * The TypeError for an option name the caller does not accept, with a hint: a dialect name used
 * as an option points at `dialect`; a near miss (edit distance at most 2, or 1 for names of up
 * to 4 letters) names the closest accepted option.
 * @param {string} name
 * @param {Iterable<string>} known
 * @param {string} [prefix] the message's prefix (default 'bson2json: ')
 */
function unknownOptionError(name, known, prefix = 'bson2json: ') {
  let hint = ''
  if (Object.prototype.hasOwnProperty.call(DIALECTS, name)) {
    hint = ` (for ${name === 'compat' ? 'the js-bson text' : 'Extended JSON'} use dialect: '${name}')`
  } else {
    let best = null
    let bestD = Infinity
    for (const k of known) {
      const d = editDistance(name, k)
      if (d < bestD) {
        best = k
        bestD = d
      }
    }
    if (best !== null && bestD <= (name.length <= 4 ? 1 : 2)) hint = ` (did you mean '${best}'?)`
  }
  return new TypeError(`${prefix}unknown option '${name}'${hint}`)
}

function bool(options, name) {
  const v = options[name]
  if (v !== undefined && typeof v !== 'boolean') {
    throw new TypeError(`bson2json: options.${name} must be a boolean, got ${describe(v, 'boolean')}`)
  }
  return v
}

/**
 * Validates `options` (unknown names and wrong types are TypeErrors naming the option) and
 * resolves them into the numbers the native functions take.
 * @param {unknown} options
 * @param {Set<string>} [known] the option names the caller accepts (default: the transcoding ones)
 * @returns {Resolved}
 */
function resolveOptions(options, known = BASE_KEYS) {
  if (options === undefined || options === null) return DEFAULTS
  if (typeof options !== 'object') {
    throw new TypeError(`bson2json: options must be an object, got ${describe(options, 'object')}`)
  }
  for (const k of Object.keys(options)) {
    if (known.has(k) || options[k] === undefined) continue
    if (Object.prototype.hasOwnProperty.call(UNSUPPORTED, k)) {
      const [dflt, why] = UNSUPPORTED[k]
      if (options[k] === dflt || (k === 'fieldsAsRaw' && isEmptyObject(options[k]))) continue
      throw new TypeError(`bson2json: option ${k} is not supported: ${why}`)
    }
    throw unknownOptionError(k, known)
  }
  let flags = 0
  let dialect = 'compat'
  const d = options.dialect
  if (d !== undefined) {
    if (typeof d !== 'string' || !Object.prototype.hasOwnProperty.call(DIALECTS, d)) {
      throw new TypeError(`bson2json: options.dialect must be 'compat', 'relaxed' or 'canonical', got ${describe(d, 'string')}`)
    }
    flags = DIALECTS[d]
    dialect = d
  }
  let utf8 = 'strict'
  const u = options.utf8
  if (u !== undefined) {
    if (u !== 'replace' && u !== 'strict') {
      throw new TypeError(`bson2json: options.utf8 must be 'strict' or 'replace', got ${describe(u, 'string')}`)
    }
    utf8 = u
  }
  const val = options.validation
  if (val !== undefined) {
    // js-bson's form: { utf8: boolean } (its per-key form { utf8: { key: boolean } } is not supported).
    if (val === null || typeof val !== 'object' || Object.keys(val).some((k) => k !== 'utf8') || typeof val.utf8 !== 'boolean') {
      throw new TypeError('bson2json: options.validation must be { utf8: boolean }')
    }
    const v = val.utf8 ? 'strict' : 'replace'
    if (u !== undefined && u !== v) {
      throw new TypeError(`bson2json: options.validation.utf8 (${val.utf8}) contradicts options.utf8 ('${u}')`)
    }
    utf8 = v
  }
  if (utf8 === 'replace') flags |= FLAG_UTF8_REPLACE
  let bsonVersion = 7
  const bv = options.bsonVersion
  if (bv !== undefined) {
    if (bv !== 6 && bv !== 7) throw new TypeError(`bson2json: options.bsonVersion must be 6 or 7, got ${describe(bv, 'number')}`)
    bsonVersion = bv
    if (bv === 6) flags |= FLAG_BSON6
  }
  const promoteLongs = bool(options, 'promoteLongs')
  const promoteValues = bool(options, 'promoteValues')
  const promoteBuffers = bool(options, 'promoteBuffers')
  const bsonRegExp = bool(options, 'bsonRegExp')
  if (promoteLongs === false) flags |= FLAG_LONGS
  if (promoteValues === false) flags |= FLAG_NO_PROMOTE
  if (promoteBuffers === true && promoteValues !== false) flags |= FLAG_BUFFERS
  if (bsonRegExp === true) flags |= FLAG_BSON_REGEXP
  if (dialect !== 'compat' && (flags & (FLAG_LONGS | FLAG_NO_PROMOTE | FLAG_BUFFERS | FLAG_BSON_REGEXP)) !== 0) {
    const name = promoteLongs === false ? 'promoteLongs' : promoteValues === false ? 'promoteValues' : promoteBuffers ? 'promoteBuffers' : 'bsonRegExp'
    throw new TypeError(`bson2json: options.${name} applies to dialect 'compat' only (Extended JSON keeps every type)`)
  }
  let maxDepth = DEFAULT_MAX_DEPTH
  if (options.maxDepth !== undefined) {
    maxDepth = options.maxDepth
    if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > 0xffffffff) {
      throw new RangeError(`bson2json: options.maxDepth must be an integer from 1 to 4294967295, got ${describe(maxDepth, 'number')}`)
    }
  }
  let maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES
  if (options.maxOutputBytes !== undefined) {
    maxOutputBytes = options.maxOutputBytes
    if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 1 || maxOutputBytes > MAX_OUTPUT_BYTES_LIMIT) {
      throw new RangeError(
        `bson2json: options.maxOutputBytes must be an integer from 1 to ${MAX_OUTPUT_BYTES_LIMIT}, got ${describe(maxOutputBytes, 'number')}`,
      )
    }
  }
  // `projection` / `redact`: compiled once here (lib/shape.js), applied per document.
  const shaper = options.projection === undefined && options.redact === undefined ? undefined : compileShape(options.projection, options.redact)
  // `packed` and `maxOutputBytes`: the pair every call of the binding takes (lib/native packs it).
  return { flags, packed: packOptions(flags, maxDepth), maxDepth, maxOutputBytes, dialect, utf8, bsonVersion, shaper }
}

/** @typedef {Resolved & { rowMode: number }} ResolvedRow */

/** @type {ResolvedRow} */
const ROW_DEFAULTS = Object.freeze({ ...DEFAULTS, rowMode: 0 })

/**
 * The row calls' options: {@link resolveOptions}' plus `rowMode` (`rowFormat |
 * dateRenderMode << 2`, as the binding takes it). `dateRenderMode` (PowerSync's
 * `DateRenderMode`: 0, 1 or 2) goes with `rowFormat: 'powersync'` only, and the options of the
 * general format's JSON text (`dialect`, `utf8`, js-bson's) do not go with it.
 * @param {unknown} options
 * @returns {ResolvedRow}
 */
function resolveRowOptions(options) {
  if (options === undefined || options === null) return ROW_DEFAULTS
  const o = resolveOptions(options, ROW_KEYS)
  // `o` is a new object here (only the defaults are shared, for no options); a spread copy
  // of it cost microseconds a call.
  const row = /** @type {ResolvedRow} */ (o)
  row.rowMode = rowModeOf(options)
  return row
}

/**
 * `rowFormat | dateRenderMode << 2` of `options` (validated as {@link resolveRowOptions} says;
 * the other options are validated apart).
 * @param {any} opts
 * @returns {number}
 */
function rowModeOf(opts) {
  let format = 0
  const f = opts.rowFormat
  if (f !== undefined) {
    if (typeof f !== 'string' || !Object.prototype.hasOwnProperty.call(ROW_FORMATS, f)) {
      throw new TypeError(`bson2json: options.rowFormat must be 'general' or 'powersync', got ${describe(f, 'string')}`)
    }
    format = ROW_FORMATS[f]
  }
  let mode = 0
  const m = opts.dateRenderMode
  if (m !== undefined) {
    if (format !== ROW_FORMATS.powersync) throw new TypeError("bson2json: options.dateRenderMode applies to rowFormat 'powersync' only")
    if (m !== 0 && m !== 1 && m !== 2) throw new RangeError(`bson2json: options.dateRenderMode must be 0, 1 or 2 (PowerSync's DateRenderMode), got ${describe(m, 'number')}`)
    mode = m
  }
  // named reads (one keyed read per name cost more than the rest of the call's options)
  if (
    format === ROW_FORMATS.powersync &&
    (opts.dialect !== undefined ||
      opts.utf8 !== undefined ||
      opts.validation !== undefined ||
      opts.bsonVersion !== undefined ||
      opts.promoteLongs !== undefined ||
      opts.promoteValues !== undefined ||
      opts.promoteBuffers !== undefined ||
      opts.bsonRegExp !== undefined)
  ) {
    const k = GENERAL_ROW_ONLY.find((name) => opts[name] !== undefined)
    throw new TypeError(`bson2json: options.${k} does not apply to rowFormat 'powersync' (PowerSync's rules fix every value)`)
  }
  return format | (mode << 2)
}

/**
 * The batch calls' `threads` (1 when left out). Apart from {@link resolveOptions}, which every
 * one-document call runs: they take no `threads`.
 * @param {any} options
 * @returns {number}
 */
function threadsOf(options) {
  return intOption(options, 'threads', 1, MAX_THREADS, 1)
}

/**
 * An integer option: `fallback` when it is left out, a RangeError naming it otherwise.
 * @param {any} options
 * @param {string} name
 * @param {number} min
 * @param {number} max
 * @param {number | undefined} fallback
 */
function intOption(options, name, min, max, fallback) {
  const v = options == null ? undefined : options[name]
  if (v === undefined) return fallback
  if (!Number.isInteger(v) || v < min || v > max) {
    const range = max === Infinity ? `>= ${min}` : `from ${min} to ${max}`
    throw new RangeError(`bson2json: options.${name} must be an integer ${range}, got ${describe(v, 'number')}`)
  }
  return v
}

function isEmptyObject(x) {
  return x !== null && typeof x === 'object' && Object.keys(x).length === 0
}

/** MongoClient class → the js-bson major of its driver package. */
const driverMajors = new WeakMap()

/**
 * The js-bson major the `mongodb` driver of `target` (a Collection, Db or MongoClient) uses:
 * its package is found in the module cache by its `MongoClient` class, and its re-exported
 * `BSON.Long` is probed (js-bson 7 declares `high` before `low`, 6 assigns `low` first: the
 * very difference `compat` reproduces). 7 when the driver cannot be found.
 */
function driverBsonVersion(target) {
  const client = target && (target.client || target)
  const ctor = client && client.constructor
  if (typeof ctor !== 'function') return 7
  let v = driverMajors.get(ctor)
  if (v === undefined) {
    v = 7
    for (const m of Object.values(require.cache)) {
      const e = m && m.exports
      if (e && e.MongoClient === ctor && e.BSON && typeof e.BSON.Long === 'function') {
        v = Object.keys(new e.BSON.Long(1, 2))[0] === 'low' ? 6 : 7
        break
      }
    }
    driverMajors.set(ctor, v)
  }
  return v
}

/**
 * Transcoding options for `find`/`aggregate`/`watch`: the BSON options the driver resolved
 * for `target` (client → db → collection; a Collection or Db exposes them as `bsonOptions`)
 * and the js-bson major the driver uses, under the call's own options. Driver options bson2json
 * cannot honour (useBigInt64, raw, fieldsAsRaw) are an error here, at call time.
 * @param {any} target a driver Collection, Db or MongoClient
 * @param {object} options the call's options
 * @param {Set<string>} known the option names the caller accepts
 */
function resolveDriverOptions(target, options, known) {
  if (options !== undefined && options !== null && typeof options !== 'object') resolveOptions(options, known)
  const o = options == null ? {} : options
  const merged = {}
  const b = (target && target.bsonOptions) || {}
  const dialect = o.dialect === undefined ? 'compat' : o.dialect
  if (dialect === 'compat') {
    if (o.bsonVersion === undefined) merged.bsonVersion = driverBsonVersion(target)
    for (const k of ['promoteLongs', 'promoteValues', 'promoteBuffers', 'bsonRegExp', 'useBigInt64', 'raw']) {
      if (o[k] === undefined && typeof b[k] === 'boolean') merged[k] = b[k]
    }
    if (o.fieldsAsRaw === undefined && b.fieldsAsRaw !== undefined) merged.fieldsAsRaw = b.fieldsAsRaw
  }
  // The driver's enableUtf8Validation (resolved, or on this call) is js-bson's validation.utf8.
  const enable = o.enableUtf8Validation === undefined ? b.enableUtf8Validation : o.enableUtf8Validation
  if (enable !== undefined && typeof enable !== 'boolean') {
    throw new TypeError(`bson2json: options.enableUtf8Validation must be a boolean, got ${describe(enable, 'boolean')}`)
  }
  if (o.utf8 === undefined && o.validation === undefined && enable === false) merged.utf8 = 'replace'
  for (const k of Object.keys(o)) if (o[k] !== undefined && k !== 'enableUtf8Validation') merged[k] = o[k]
  return resolveOptions(merged, known)
}

module.exports = {
  DIALECTS,
  BASE_KEYS,
  BATCH_KEYS,
  resolveDriverOptions,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_OUTPUT_BYTES,
  MAX_OUTPUT_BYTES_LIMIT,
  resolveOptions,
  resolveRowOptions,
  rowModeOf,
  intOption,
  threadsOf,
  unknownOptionError,
}
