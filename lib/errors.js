'use strict'

/**
 * The one error module: how bson2json's errors are recognised, built and moved, and how a wrong
 * argument is quoted in a TypeError.
 *
 * A `TranscodeError` is an `Error` named `TranscodeError` with string `code` (`BSON_*`), `detail`
 * (the fault, without its position), numeric `offset` (bytes from the start of the input) and,
 * for many documents, `index`. The binding builds the ones it finds and sets those properties;
 * {@link transcodeError} builds the ones JavaScript finds (a stream's framing) the same way, and
 * {@link rebase} moves one onto a stream's positions. No message is ever parsed.
 */

/**
 * A value as an error message quotes it: strings in quotes, and the type named when it is not
 * the one expected (`'7' (a string)`, `null`, `[1] (an array)`).
 * @param {unknown} v
 * @param {string} [expected] the `typeof` the caller wanted; the type is named when `v` has another
 */
function describe(v, expected) {
  let text
  let kind
  if (v === null) return 'null'
  if (v === undefined) return 'undefined'
  switch (typeof v) {
    case 'string':
      text = `'${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`
      kind = 'a string'
      break
    case 'number':
      text = String(v)
      kind = 'a number'
      break
    case 'bigint':
      text = `${v}n`
      kind = 'a bigint'
      break
    case 'boolean':
      text = String(v)
      kind = 'a boolean'
      break
    case 'symbol':
      return v.toString()
    case 'function':
      return 'a function'
    default:
      if (Array.isArray(v)) return `an array of ${v.length}`
      if (ArrayBuffer.isView(v)) return `a ${v.constructor && v.constructor.name ? v.constructor.name : 'typed array'}`
      return v instanceof Map ? 'a Map' : 'an object'
  }
  return expected !== undefined && typeof v !== expected ? `${text} (${kind})` : text
}

/** Levenshtein distance, for "did you mean" suggestions (names are short). */
function editDistance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1))
    }
    prev = cur
  }
  return prev[b.length]
}

/**
 * True for the errors bson2json throws for bad input: an `Error` with a string `code`
 * starting with `BSON_` and a numeric byte `offset`. Works across realms (no `instanceof`).
 * @param {unknown} e
 * @returns {boolean}
 */
function isTranscodeError(e) {
  return (
    e !== null &&
    typeof e === 'object' &&
    typeof e.code === 'string' &&
    e.code.startsWith('BSON_') &&
    typeof e.offset === 'number' &&
    typeof e.message === 'string'
  )
}


/**
 * A TranscodeError found in JavaScript, at `index` / `offset` of a stream; without `index`, at
 * `offset` of one input (as the binding words one: `CODE: detail at byte N`).
 * @param {string} code
 * @param {string} detail
 * @param {number | undefined} index
 * @param {number} offset
 */
function transcodeError(code, detail, index, offset) {
  const e = new Error(index === undefined ? `${code}: ${detail} at byte ${offset}` : `${code}: ${detail} (document ${index}, byte offset ${offset} in the stream)`)
  e.name = 'TranscodeError'
  e.code = code
  e.detail = detail
  e.offset = offset
  if (index !== undefined) e.index = index
  return e
}

/**
 * A batch's TranscodeError moved onto a stream: its document index and byte offset become
 * stream-wide, its message says both (and the byte within the document, which the batch's
 * offset minus the document's start gives).
 * @param {any} e the binding's error (anything else is returned as it is)
 * @param {number} baseIndex the batch's first document in the stream
 * @param {number} baseOffset the batch's first byte in the stream
 * @param {number[]} [starts] each document's start in the batch
 */
function rebase(e, baseIndex, baseOffset, starts) {
  if (!isTranscodeError(e) || typeof e.index !== 'number' || typeof e.detail !== 'string') return e
  const index = baseIndex + e.index
  const offset = baseOffset + e.offset
  const inDoc = starts !== undefined && e.index < starts.length ? `byte ${e.offset - starts[e.index]} of the document, ` : ''
  e.message = `${e.code}: ${e.detail} (document ${index}, ${inDoc}byte offset ${offset} in the stream)`
  e.index = index
  e.offset = offset
  return e
}

/**
 * An argument error given the code Node gives its own (`ERR_INVALID_ARG_TYPE` for a TypeError,
 * `ERR_OUT_OF_RANGE` for a RangeError), unless it has one: find(), aggregate() and watch() hand
 * it to their consumers rather than throwing it, and a consumer tells it by its code.
 * @param {any} e
 */
function argumentError(e) {
  if (e !== null && typeof e === 'object' && e.code === undefined) {
    if (e instanceof RangeError) e.code = 'ERR_OUT_OF_RANGE'
    else if (e instanceof TypeError) e.code = 'ERR_INVALID_ARG_TYPE'
  }
  return e
}

// ---- addresses in messages ------------------------------------------------------------

/**
 * Query parameters of a MongoDB connection string that carry a secret (the driver's names, which
 * it matches case-insensitively, and `sslPEMKeyPassword`, the older name of the key password).
 */
const SECRET_PARAMS = new Set(['password', 'proxypassword', 'tlscertificatekeyfilepassword', 'sslpemkeypassword', 'passphrase'])
/** `authMechanismProperties` keys whose value is not a secret (every other key's value is masked). */
const PUBLIC_MECHANISM_PROPERTIES = new Set(['SERVICE_NAME', 'SERVICE_REALM', 'SERVICE_HOST', 'CANONICALIZE_HOST_NAME', 'ENVIRONMENT', 'TOKEN_RESOURCE', 'ALLOWED_HOSTS', 'AWS_CREDENTIAL_PROVIDER'])
const MASK = '****'

/** One `key=value` of a query string, its secret masked. */
function redactParam(pair) {
  const eq = pair.indexOf('=')
  if (eq === -1) return pair
  const key = pair.slice(0, eq)
  const name = safeDecode(key).toLowerCase()
  if (SECRET_PARAMS.has(name)) return `${key}=${MASK}`
  if (name !== 'authmechanismproperties') return pair
  // KEY:VALUE pairs separated by commas (each separator perhaps percent-encoded)
  const value = pair.slice(eq + 1)
  const props = value.split(/,|%2C/i).map((kv) => {
    const m = /^(.*?)(:|%3A)/i.exec(kv)
    if (m === null) return kv
    return PUBLIC_MECHANISM_PROPERTIES.has(safeDecode(m[1]).toUpperCase()) ? kv : `${m[1]}${m[2]}${MASK}`
  })
  return `${key}=${props.join(',')}`
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/**
 * One address with its secrets masked: a MongoDB connection string in any form (`mongodb://`,
 * `mongodb+srv://`, any case, or none: `bob:pw@host/db`) or a Kafka broker list
 * (`alice:pw@host:9092,host2:9092`). The userinfo keeps its user name (`bob:****@`); every
 * credential-bearing query parameter (`password`, `proxyPassword`, `tlsCertificateKeyFilePassword`,
 * `sslPEMKeyPassword`, `passphrase`, the secret values of `authMechanismProperties` such as
 * `AWS_SESSION_TOKEN`) becomes `****`. It fails closed: an `@` that might end a userinfo (a
 * password with an unescaped `@`, `/` or `?`) masks everything before it.
 * @param {string} text
 */
function redactOne(text) {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)?([\s\S]*)$/.exec(text)
  const scheme = m[1] ?? ''
  let rest = m[2]
  const firstAt = rest.indexOf('@')
  if (firstAt !== -1) {
    // The userinfo ends at the last '@' before the query that follows the first '@' (an '@' in the
    // password is then inside the userinfo; one in a query value after the host is not).
    const q = rest.indexOf('?', firstAt)
    const at = rest.lastIndexOf('@', q === -1 ? rest.length : q)
    const userinfo = rest.slice(0, at)
    const colon = userinfo.indexOf(':')
    const user = colon === -1 ? userinfo : userinfo.slice(0, colon)
    const plainUser = colon !== -1 && !/[/?#&=]/.test(user)
    rest = `${plainUser ? `${user}:` : ''}${MASK}${rest.slice(at)}`
  }
  const query = rest.indexOf('?')
  if (query !== -1) {
    const hash = rest.indexOf('#', query)
    const end = hash === -1 ? rest.length : hash
    rest = `${rest.slice(0, query + 1)}${rest.slice(query + 1, end).split(/([&;])/).map((p) => (p === '&' || p === ';' ? p : redactParam(p))).join('')}${rest.slice(end)}`
  }
  return scheme + rest
}

/**
 * The one redaction of addresses in anything bson2json prints. An address given alone (text that
 * starts with a scheme, or has no whitespace) is redacted whole, so a password with a space in it
 * is masked too; in a longer message, every word that looks like a connection string or a broker
 * address (it has `://`, `@` or a query parameter) is, and the rest of the text is kept. See
 * {@link redactOne} for what is masked. Used for every URI and Kafka address a message quotes
 * (the CLI's usage errors and failure lines, `cdc`'s).
 * @param {unknown} text
 * @returns {string}
 */
function redactAddress(text) {
  const s = String(text)
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(s) || !/\s/.test(s)) return redactOne(s)
  return s.replace(/[^\s'"`()<>[\]{}]*(?::\/\/|@|[?&;][A-Za-z_]+=)[^\s'"`()<>[\]{}]*/g, (word) => {
    // trailing punctuation of the sentence is not part of the address
    const tail = /[.,:;!]+$/.exec(word)
    const core = tail === null ? word : word.slice(0, tail.index)
    return redactOne(core) + (tail === null ? '' : tail[0])
  })
}

module.exports = { describe, editDistance, isTranscodeError, transcodeError, rebase, redactAddress, argumentError }
