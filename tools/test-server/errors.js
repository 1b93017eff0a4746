'use strict'

/**
 * A command failure that is sent back to the client as
 * `{ok: 0, errmsg, code, codeName, errorLabels}`.
 */
class CommandError extends Error {
  /**
   * @param {number} code server error code
   * @param {string} codeName server error code name
   * @param {string} message errmsg
   * @param {{errorLabels?: string[], extra?: Record<string, any>}} [options]
   */
  constructor(code, codeName, message, { errorLabels, extra } = {}) {
    super(message)
    this.name = 'CommandError'
    this.code = code
    this.codeName = codeName
    this.errorLabels = errorLabels
    this.extra = extra
  }

  /** @returns {Record<string, any>} the reply document body (without cluster time) */
  toReply() {
    const reply = { ok: 0, errmsg: this.message, code: this.code, codeName: this.codeName }
    if (this.errorLabels && this.errorLabels.length) reply.errorLabels = [...this.errorLabels]
    return { ...reply, ...this.extra }
  }
}

/** Well-known server error codes used by the test server. */
const ErrorCodes = Object.freeze({
  BadValue: 2,
  FailedToParse: 9,
  TypeMismatch: 14,
  NamespaceNotFound: 26,
  CursorNotFound: 43,
  NamespaceExists: 48,
  CommandNotFound: 59,
  ImmutableField: 66,
  InvalidNamespace: 73,
  Interrupted: 11601,
  DuplicateKey: 11000,
  ChangeStreamFatalError: 280,
  ChangeStreamHistoryLost: 286,
  HostUnreachable: 6,
  ShutdownInProgress: 91,
})

/** @param {number} code @returns {string} the codeName for a known code */
function codeNameFor(code) {
  for (const [name, value] of Object.entries(ErrorCodes)) if (value === code) return name
  return 'UnknownError'
}

module.exports = { CommandError, ErrorCodes, codeNameFor }
