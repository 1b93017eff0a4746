'use strict'

// One line for a MongoDB failure, shared by `export` and `cdc`: who could not be reached or
// authenticated, where (the URI with its password masked) and what was being read.

const { CliError } = require('./usage')

/** The URI without its password, for messages. */
function redact(uri) {
  return uri.replace(/^(mongodb(?:\+srv)?:\/\/[^:/@]*:)[^@/]*@/, '$1****@')
}

/**
 * One line for a failed command.
 * @param {any} e the error
 * @param {{ uri: string, username?: string, authSource?: string, db?: string, collection?: string }} o
 * @param {string} [action] what the server was asked for, as in "the server rejected ACTION"
 */
function describe(e, o, action = `the export of ${o.db}.${o.collection}`) {
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

module.exports = { describe, redact }
