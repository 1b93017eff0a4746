'use strict'

/**
 * Option validation shared by every call into the binding (native or WASI), derived from the
 * one options table (lib/option-table.js): which names each API accepts, each value's type
 * check, the flag bit it sets (the binding's `OptionFlag` enum, by name) and the "did you mean"
 * hints. Options are resolved once per call into the numbers the native functions take, so a
 * call costs no property lookups on the native side.
 *
 * Options are data, read once: only the caller's own enumerable properties count (a name on
 * `Object.prototype` changes nothing), each read exactly once (a getter runs once).
 */

const { OptionFlag, DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES, packOptions } = require('./native')
const { describe, editDistance } = require('./errors')
const { compileShape, leaseShape, release } = require('./shape')
const { APIS, OPTIONS, ROWS, rowOf, namesOf, apisOf } = require('./option-table')

/** Largest accepted `maxOutputBytes` (4 GiB - 1, the largest Node Buffer on 64-bit hosts). */
const MAX_OUTPUT_BYTES_LIMIT = OPTIONS.maxOutputBytes.type.max
/** Largest accepted `threads`. */
const MAX_THREADS = OPTIONS.threads.type.max

/** `dialect` → the low two bits of `flags`. */
const DIALECTS = Object.freeze(Object.fromEntries(OPTIONS.dialect.type.values.map((d) => [d, flagOf(OPTIONS.dialect, d)])))

/**
 * Each table row's value → the `OptionFlag` bits it sets (a Map; no entry: no bit). A flag
 * named in the table that the binding does not export is an error here, at load.
 */
function flagOf(row, value) {
  const name = row.flags && row.flags[String(value)]
  if (name === undefined) return 0
  const bit = OptionFlag[name]
  if (typeof bit !== 'number') throw new Error(`bson2json: the binding has no OptionFlag.${name} (option ${row.name})`)
  return bit
}
/** name → Map(value → bits), for the rows that set flags. */
const FLAG_VALUES = Object.create(null)
for (const row of ROWS) {
  if (row.flags === undefined) continue
  const m = new Map()
  for (const v of row.type.values || [true, false]) if (flagOf(row, v) !== 0) m.set(v, flagOf(row, v))
  FLAG_VALUES[row.name] = m
}
/** The js-bson options that apply to dialect 'compat' only, in the table's order, and their bits. */
const COMPAT_ONLY = ROWS.filter((r) => r.compatOnly).map((r) => [r.name, [...FLAG_VALUES[r.name].values()].reduce((a, b) => a | b, 0)])
const COMPAT_ONLY_BITS = COMPAT_ONLY.reduce((a, [, bits]) => a | bits, 0)

/**
 * @typedef {{ flags: number, packed: number, maxDepth: number, maxOutputBytes: number, dialect: string, utf8: string, bsonVersion: number, threads: number, shaper?: any, lease?: any }} Resolved
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
  threads: 1,
  shaper: undefined,
})

/** API name → the Set of the option names it accepts. */
const KNOWN = Object.create(null)
for (const api of Object.keys(APIS)) KNOWN[api] = new Set(namesOf(api))
/** The option names every transcoding function takes (toJSON's). */
const BASE_KEYS = KNOWN.toJSON
/** The batch functions': also `threads`. */
const BATCH_KEYS = KNOWN.batch
/** The APIs whose resolved options live for one call only: their `Shaper` is pooled. */
const ONE_CALL = new Set(['toJSON', 'batch', 'row'])

/**
 * What resolving one option takes, compiled once from its row: `check` (the row's type check,
 * returning the value), `bits` (value → `OptionFlag` bits, or null) and `shape` (the name is a
 * client-side projection or redaction for this API).
 * @typedef {{ row: any, check: (v: unknown) => any, bits: Map<unknown, number> | null }} Entry
 */
/** @returns {Entry} */
function entryOf(row) {
  const t = row.type
  let check
  if (t.kind === 'enum') check = (v) => (t.values.includes(v) ? v : checkValue(row, v))
  else if (t.kind === 'boolean') check = (v) => (typeof v === 'boolean' ? v : checkValue(row, v))
  else if (t.kind === 'int') check = (v) => (Number.isInteger(v) && v >= t.min && (t.max === undefined || v <= t.max) ? v : checkValue(row, v))
  else check = (v) => checkValue(row, v)
  return { row, check, bits: FLAG_VALUES[row.name] || null }
}
/** API → Map(name → Entry); names with no row (a caller's own, in a Set) use {@link ANY_ENTRY}. */
const ENTRIES = new Map(Object.keys(APIS).map((api) => [api, new Map(namesOf(api).map((n) => [n, entryOf(rowOf(api, n))]))]))
/** name → Entry of its first row, for callers that pass their own Set of names. */
const ANY_ENTRY = new Map(Object.keys(OPTIONS).map((n) => [n, entryOf(OPTIONS[n])]))

/**
 * A TypeError or RangeError about an option, with Node's `code` for it, as every argument error
 * of bson2json has (lib/errors.js `argumentError`): `ERR_INVALID_ARG_TYPE` (a value of the wrong
 * type), `ERR_INVALID_ARG_VALUE` (an unknown name, a value not among the accepted ones),
 * `ERR_OUT_OF_RANGE` (a number out of range).
 */
function optionError(Ctor, message, code = Ctor === RangeError ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARG_TYPE') {
  const e = new Ctor(message)
  e.code = code
  return e
}

/** `a`, `a or b`, `a, b or c`. */
function orList(items) {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`
}

/**
 * The TypeError (code `ERR_INVALID_ARG_VALUE`) for an option name the caller does not
 * accept, with a hint: a dialect name used as an option points at `dialect`; a near miss (edit
 * distance at most 2, or 1 for names of up to 4 letters) names the closest accepted option; an
 * option of other APIs names them.
 * @param {string} name
 * @param {Iterable<string>} known
 * @param {string} [prefix] the message's prefix (default 'bson2json: ')
 */
function unknownOptionError(name, known, prefix = 'bson2json: ') {
  let hint = ''
  if (Object.hasOwn(DIALECTS, name)) {
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
    else if (apisOf(name).length > 0) hint = ` (an option of ${orList(apisOf(name).map((a) => APIS[a].label))} only)`
  }
  return optionError(TypeError, `${prefix}unknown option '${name}'${hint}`, 'ERR_INVALID_ARG_VALUE')
}

/**
 * Checks `v` against the table row's type (enum, boolean, integer, string, function; other
 * types are checked by their own code) and returns it; a TypeError (RangeError for an integer
 * out of range) naming `options.NAME` otherwise.
 * @param {any} row
 * @param {unknown} v
 * @param {string} [prefix]
 */
function checkValue(row, v, prefix = 'bson2json: ') {
  const t = row.type
  const what = `${prefix}options.${row.name}`
  switch (t.kind) {
    case 'enum':
      if (!t.values.includes(v)) {
        const quoted = t.values.map((x) => (typeof x === 'string' ? `'${x}'` : String(x)))
        const message = `${what} must be ${orList(quoted)}, got ${describe(v, typeof t.values[0])}`
        // an enum of numbers that is a range (`dateRenderMode`): a RangeError, as for an integer
        throw t.range === true ? optionError(RangeError, message) : optionError(TypeError, message, typeof v === typeof t.values[0] ? 'ERR_INVALID_ARG_VALUE' : 'ERR_INVALID_ARG_TYPE')
      }
      return v
    case 'boolean':
      if (typeof v !== 'boolean') throw optionError(TypeError, `${what} must be a boolean, got ${describe(v, 'boolean')}`)
      return v
    case 'int':
      if (!Number.isInteger(v) || v < t.min || (t.max !== undefined && v > t.max)) {
        const range = t.max === undefined ? `>= ${t.min}` : `from ${t.min} to ${t.max}`
        throw optionError(RangeError, `${what} must be an integer ${range}, got ${describe(v, 'number')}`)
      }
      return v
    case 'string':
      if (typeof v !== 'string' || v.length === 0) throw optionError(TypeError, `${what} must be a non-empty string, got ${describe(v, 'string')}`)
      return v
    case 'function':
      if (typeof v !== 'function') throw optionError(TypeError, `${what} must be a function, got ${describe(v, 'function')}`)
      return v
    default:
      return v
  }
}

/**
 * The caller's options as data: a null-prototype copy of their own enumerable properties, each
 * read once (undefined values left out). Anything else than an object is returned as it is.
 * @param {unknown} options
 */
function ownOptions(options) {
  if (options === null || typeof options !== 'object') return options
  const out = Object.create(null)
  for (const k of Object.keys(options)) {
    const v = options[k]
    if (v !== undefined) out[k] = v
  }
  return out
}

/**
 * Validates `options` (unknown names and wrong types are coded TypeErrors naming the option) and
 * resolves them into the numbers the native functions take. Reads only own enumerable
 * properties, each once.
 * @param {unknown} options
 * @param {string | Set<string>} [api] the API (a name of the table's `APIS`), or the names it
 *   accepts; left out: `toJSON`'s names. Named `toJSON` or `batch`, the result's `Shaper` is
 *   pooled and leased for one call: end it with {@link releaseOptions}.
 * @returns {Resolved}
 */
function resolveOptions(options, api) {
  if (options === undefined || options === null) return DEFAULTS
  if (typeof options !== 'object') {
    throw optionError(TypeError, `bson2json: options must be an object, got ${describe(options, 'object')}`)
  }
  const named = api === undefined ? 'toJSON' : typeof api === 'string' ? api : null
  const entries = named === null ? ANY_ENTRY : ENTRIES.get(named)
  let flags = 0
  let dialect = 'compat'
  let utf8
  let validation
  let bsonVersion = 7
  let maxDepth = DEFAULT_MAX_DEPTH
  let maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES
  let threads = 1
  let projection
  let projectionName = 'projection'
  let redact
  let promoteValues
  let rowFormat
  let dateRenderMode
  let generalOnly
  const keys = Object.keys(options)
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    const v = options[k]
    if (v === undefined) continue
    let e
    if (named !== null) {
      e = entries.get(k)
      if (e === undefined) throw unknownOptionError(k, KNOWN[named])
    } else {
      if (!api.has(k)) throw unknownOptionError(k, api)
      e = ANY_ENTRY.get(k)
      if (e === undefined) continue // a name the caller (its own Set) handles itself
    }
    const row = e.row
    if (row.unsupported !== undefined) {
      if (v === row.default || (k === 'fieldsAsRaw' && isEmptyObject(v))) continue
      throw optionError(TypeError, `bson2json: option ${k} is not supported: ${row.unsupported}`, 'ERR_INVALID_ARG_VALUE')
    }
    switch (k) {
      case 'dialect':
        dialect = e.check(v)
        break
      case 'maxDepth':
        maxDepth = e.check(v)
        continue
      case 'maxOutputBytes':
        maxOutputBytes = e.check(v)
        continue
      case 'threads':
        threads = e.check(v)
        continue
      case 'projection':
        // in `find`, the server's projection (the client-side one is `clientProjection`)
        if (named === null || row.server === undefined || !row.server.includes(named)) projection = v
        continue
      case 'clientProjection':
        projection = v
        projectionName = k
        continue
      case 'redact':
        redact = v
        continue
      case 'validation':
        validation = v
        if (generalOnly === undefined) generalOnly = k
        continue
      case 'utf8':
        utf8 = e.check(v)
        break
      case 'bsonVersion':
        bsonVersion = e.check(v)
        break
      case 'promoteValues':
        promoteValues = e.check(v)
        break
      case 'rowFormat':
        rowFormat = e.check(v)
        continue
      case 'dateRenderMode':
        dateRenderMode = e.check(v)
        continue
      default:
        e.check(v)
    }
    if (row.generalRowOnly === true && generalOnly === undefined) generalOnly = k
    if (e.bits !== null) flags |= e.bits.get(v) || 0
  }
  if (validation !== undefined) {
    // js-bson's form: { utf8: boolean } (its per-key form { utf8: { key: boolean } } is not supported).
    const names = validation === null || typeof validation !== 'object' ? null : Object.keys(validation)
    const vu = names !== null && names.length === 1 && names[0] === 'utf8' ? validation.utf8 : undefined
    if (typeof vu !== 'boolean') throw optionError(TypeError, 'bson2json: options.validation must be { utf8: boolean }')
    const v = vu ? 'strict' : 'replace'
    if (utf8 !== undefined && utf8 !== v) {
      throw optionError(TypeError, `bson2json: options.validation.utf8 (${vu}) contradicts options.utf8 ('${utf8}')`)
    }
    if (utf8 === undefined) flags |= FLAG_VALUES.utf8.get(v) || 0
    utf8 = v
  }
  // js-bson: promoteValues: false switches promoteBuffers off.
  if (promoteValues === false) flags &= ~(FLAG_VALUES.promoteBuffers.get(true) || 0)
  if (dialect !== 'compat' && (flags & COMPAT_ONLY_BITS) !== 0) {
    const name = COMPAT_ONLY.find(([, bits]) => (flags & bits) !== 0)[0]
    throw optionError(TypeError, `bson2json: options.${name} applies to dialect 'compat' only (Extended JSON keeps every type)`)
  }
  // The row functions: `rowMode` (`rowFormat | dateRenderMode << 2`, as the binding takes it).
  let rowMode = 0
  if (named === 'row') rowMode = rowModeFrom(rowFormat, dateRenderMode, generalOnly)
  // `projection` / `redact`: compiled here, last (nothing after it throws), applied per document;
  // a one-call API's is leased from the pool (releaseOptions ends the lease)
  let shaper
  let lease
  if (projection !== undefined || redact !== undefined) {
    if (typeof api === 'string' && ONE_CALL.has(api)) {
      lease = leaseShape(projection, redact, projectionName)
      shaper = lease.shaper
    } else {
      shaper = compileShape(projection, redact, projectionName)
    }
  }
  // `packed` and `maxOutputBytes`: the pair every call of the binding takes (lib/native packs it).
  const packed = packOptions(flags, maxDepth)
  const u = utf8 === undefined ? 'strict' : utf8
  if (named === 'row') return { flags, packed, maxDepth, maxOutputBytes, dialect, utf8: u, bsonVersion, threads, shaper, lease, rowMode }
  return { flags, packed, maxDepth, maxOutputBytes, dialect, utf8: u, bsonVersion, threads, shaper, lease }
}

/**
 * `rowFormat | dateRenderMode << 2`. `dateRenderMode` (PowerSync's `DateRenderMode`) goes with
 * `rowFormat: 'powersync'` only, and the options of the general format's JSON text (`dialect`,
 * `utf8`, js-bson's) do not go with it.
 */
function rowModeFrom(rowFormat, dateRenderMode, generalOnly) {
  const format = rowFormat === 'powersync' ? 1 : 0
  if (dateRenderMode !== undefined && format !== 1) throw optionError(TypeError, "bson2json: options.dateRenderMode applies to rowFormat 'powersync' only")
  if (format === 1 && generalOnly !== undefined) {
    throw optionError(TypeError, `bson2json: options.${generalOnly} does not apply to rowFormat 'powersync' (PowerSync's rules fix every value)`)
  }
  return format | ((dateRenderMode === undefined ? 0 : dateRenderMode) << 2)
}

/**
 * The `rowMode` of `options` (own properties), for a call that resolved them with another API
 * (`watch` with `rows: true`): their `rowFormat` and `dateRenderMode`, checked as the row
 * functions check them.
 * @param {any} options
 * @returns {number}
 */
function rowModeOf(options) {
  const o = ownOptions(options)
  let generalOnly
  for (const k of Object.keys(o)) if (generalOnly === undefined && OPTIONS[k] !== undefined && OPTIONS[k].generalRowOnly === true) generalOnly = k
  const rowFormat = o.rowFormat === undefined ? undefined : ANY_ENTRY.get('rowFormat').check(o.rowFormat)
  const dateRenderMode = o.dateRenderMode === undefined ? undefined : ANY_ENTRY.get('dateRenderMode').check(o.dateRenderMode)
  return rowModeFrom(rowFormat, dateRenderMode, generalOnly)
}

/** @typedef {Resolved & { rowMode: number }} ResolvedRow */

/** @type {ResolvedRow} */
const ROW_DEFAULTS = Object.freeze({ ...DEFAULTS, rowMode: 0 })

/**
 * The row calls' options (`toRow`, `toRows`, `toRowsAsync`): {@link resolveOptions}' with `row`,
 * whose result carries `rowMode`. A pooled `Shaper`: end the call with {@link releaseOptions}.
 * @param {unknown} options
 * @returns {ResolvedRow}
 */
function resolveRowOptions(options) {
  if (options === undefined || options === null) return ROW_DEFAULTS
  return /** @type {ResolvedRow} */ (resolveOptions(options, 'row'))
}

/**
 * Ends a one-call resolution ({@link resolveOptions} with `toJSON` or `batch`): its pooled
 * `Shaper` may be compiled again for other options from now on.
 * @param {Resolved} o
 */
function releaseOptions(o) {
  if (o.lease !== undefined) release(o.lease)
}

/**
 * The batch calls' `threads` (1 when left out). Kept for callers that resolve it apart;
 * {@link resolveOptions} resolves it too (`threads` of its result).
 * @param {any} options
 * @returns {number}
 */
function threadsOf(options) {
  return intOption(options, 'threads', 1, MAX_THREADS, 1)
}

/**
 * An integer option: `fallback` when it is left out, a RangeError naming it otherwise. Reads
 * the caller's own property only.
 * @param {any} options
 * @param {string} name
 * @param {number} min
 * @param {number} max
 * @param {number | undefined} fallback
 */
function intOption(options, name, min, max, fallback) {
  const v = options == null || !Object.hasOwn(options, name) ? undefined : options[name]
  if (v === undefined) return fallback
  if (!Number.isInteger(v) || v < min || v > max) {
    const range = max === Infinity ? `>= ${min}` : `from ${min} to ${max}`
    throw optionError(RangeError, `bson2json: options.${name} must be an integer ${range}, got ${describe(v, 'number')}`)
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

/** The driver's resolved BSON options that `compat` reproduces. */
const DRIVER_BSON_KEYS = ['promoteLongs', 'promoteValues', 'promoteBuffers', 'bsonRegExp', 'useBigInt64', 'raw']

/**
 * Transcoding options for `find`/`aggregate`/`watch`: the BSON options the driver resolved
 * for `target` (client → db → collection; a Collection or Db exposes them as `bsonOptions`)
 * and the js-bson major the driver uses, under the call's own options. Driver options bson2json
 * cannot honour (useBigInt64, raw, fieldsAsRaw) are an error here, at call time. Own
 * properties only, of the call's options and of the driver's `bsonOptions`.
 * @param {any} target a driver Collection, Db or MongoClient
 * @param {object} options the call's options
 * @param {string | Set<string>} api the API (`find`, `aggregate`, `watch`), or the names it accepts
 */
function resolveDriverOptions(target, options, api) {
  if (options !== undefined && options !== null && typeof options !== 'object') resolveOptions(options, api)
  const o = options == null ? Object.create(null) : ownOptions(options)
  const merged = Object.create(null)
  const b = ownOptions((target && target.bsonOptions) || {})
  const dialect = o.dialect === undefined ? 'compat' : o.dialect
  if (dialect === 'compat') {
    if (o.bsonVersion === undefined) merged.bsonVersion = driverBsonVersion(target)
    for (const k of DRIVER_BSON_KEYS) {
      if (o[k] === undefined && typeof b[k] === 'boolean') merged[k] = b[k]
    }
    if (o.fieldsAsRaw === undefined && b.fieldsAsRaw !== undefined) merged.fieldsAsRaw = b.fieldsAsRaw
  }
  // The driver's enableUtf8Validation (resolved, or on this call) is js-bson's validation.utf8.
  const enable = o.enableUtf8Validation === undefined ? b.enableUtf8Validation : o.enableUtf8Validation
  if (enable !== undefined && typeof enable !== 'boolean') {
    throw optionError(TypeError, `bson2json: options.enableUtf8Validation must be a boolean, got ${describe(enable, 'boolean')}`)
  }
  if (o.utf8 === undefined && o.validation === undefined && enable === false) merged.utf8 = 'replace'
  for (const k of Object.keys(o)) if (k !== 'enableUtf8Validation') merged[k] = o[k]
  return resolveOptions(merged, api)
}

module.exports = {
  DIALECTS,
  BASE_KEYS,
  BATCH_KEYS,
  KNOWN,
  resolveDriverOptions,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_OUTPUT_BYTES,
  MAX_OUTPUT_BYTES_LIMIT,
  resolveOptions,
  releaseOptions,
  resolveRowOptions,
  ownOptions,
  checkValue,
  rowModeOf,
  intOption,
  threadsOf,
  unknownOptionError,
}
