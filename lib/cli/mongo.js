'use strict'

// One line for a MongoDB failure, shared by `export` and `cdc`: who could not be reached or
// authenticated, where (the URI with its secrets masked by lib/errors.js `redactAddress`, the one
// redaction of addresses) and what was being read; and the client made from a --uri, whose
// mistakes are usage errors.

const { CliError, UsageError } = require('./usage')
const { redactAddress: redact } = require('../errors')

/**
 * `new MongoClient(uri, options)`: the constructor parses the URI and does no I/O, so whatever it
 * throws (a malformed URI, a wrong scheme, a bad port, an option the driver refuses) is a usage
 * error of `flag`, quoting the URI redacted.
 * @param {any} mongodb the driver module
 * @param {string} uri
 * @param {object} options
 * @param {string} [flag]
 */
function mongoClient(mongodb, uri, options, flag = '--uri') {
  try {
    return new mongodb.MongoClient(uri, options)
  } catch (e) {
    throw new UsageError(`${flag} ${redact(uri)}: ${redact(e && e.message ? String(e.message).split('\n')[0] : e)}`)
  }
}

/**
 * One line for a failed command.
 * @param {any} e the error
 * @param {{ uri: string, username?: string, authSource?: string, db?: string, collection?: string }} o
 * @param {string} [action] what the server was asked for, as in "the server rejected ACTION"
 */
function describe(e, o, action = `the export of ${o.db}.${o.collection}`) {
  // the driver's text may quote an address too
  return redact(line(e, o, action))
}

function line(e, o, action) {
  const name = e && e.name
  const msg = e && e.message ? String(e.message).split('\n')[0] : String(e)
  const ns = o.collection !== undefined ? `${o.db}.${o.collection}` : o.db !== undefined ? `database ${o.db}` : 'the cluster'
  if (name === 'MongoServerSelectionError' || name === 'MongoNetworkError' || name === 'MongoNetworkTimeoutError') {
    // Before the connection: unreachable; after it: the server went away mid-export.
    return e.duringConnect ? `cannot reach ${redact(o.uri)}: ${msg}` : `lost the connection to ${redact(o.uri)} while reading ${ns}: ${msg}`
  }
  const auth = () => {
    // The server says only "Authentication failed."; say who and where instead of repeating it.
    const user = o.username ?? (/^mongodb(?:\+srv)?:\/\/([^:@/]+)[:@]/.exec(o.uri) || [])[1]
    const source = o.authSource ?? (/[?&]authSource=([^&]+)/.exec(o.uri) || [])[1]
    const who = user !== undefined ? ` for user '${decodeURIComponent(user)}'${source !== undefined ? ` (authentication database '${source}')` : ''}` : ''
    const why = /^auth(entication)? failed\.?$/i.test(msg) ? '' : `: ${msg.replace(/^auth(entication)? failed[.:]?\s*/i, '')}`
    return `authentication failed${who} on ${redact(o.uri)}${why}`
  }
  if (e && e.code === 'BSON2JSON_TIMEOUT') return `no reply from ${redact(o.uri)} to ${e.command} within ${e.timeoutMS} ms (--timeoutMS) while reading ${ns}`
  if (e && (e.syscall === 'querySrv' || e.syscall === 'queryTxt')) {
    // mongodb+srv:// names a DNS record: its lookup failed before any server was asked
    return `cannot resolve ${redact(o.uri)}: the DNS lookup of its ${e.syscall === 'querySrv' ? 'SRV' : 'TXT'} record failed: ${msg}`
  }
  if (e && (e.code === 18 || e.codeName === 'AuthenticationFailed' || name === 'MongoMissingCredentialsError')) return auth()
  if (e && e.duringConnect) {
    // The handshake and authentication run in connect(): with credentials, a server error there
    // is an authentication failure (wrong mechanism, unknown user, no auth support).
    const withCredentials = o.username !== undefined || /^mongodb(?:\+srv)?:\/\/[^/]*@/.test(o.uri)
    if (withCredentials) return auth()
    return `cannot connect to ${redact(o.uri)}: ${msg}`
  }
  if (e && typeof e.code === 'number' && name === 'MongoServerError') {
    return `the server rejected ${action}: ${msg} (${e.codeName || 'code'} ${e.code})`
  }
  if (e && typeof e.code === 'string' && e.code.startsWith('BSON_')) return `corrupt document from the server in ${ns}: ${msg}`
  if (e instanceof CliError) return msg
  if (e && String(name).startsWith('Mongo')) return `reading ${ns} from ${redact(o.uri)}: ${msg}`
  return msg
}

module.exports = { describe, redact, mongoClient }
