'use strict'

/**
 * Fault injection: a queue of one-shot (or counted) faults matched against
 * incoming commands, plus an optional seeded random fault mode for fuzz-style
 * resume tests.
 */

const { codeNameFor } = require('./errors')

/** Fault kinds understood by the server. */
const FAULT_KINDS = Object.freeze([
  'error', // reply {ok: 0} with the given code / codeName / errorLabels
  'resumableError', // code 6 HostUnreachable + ResumableChangeStreamError label
  'nonResumableError', // code 280 ChangeStreamFatalError, no labels
  'cursorNotFound', // kill the cursor, then reply code 43 CursorNotFound
  'closeSocket', // destroy the connection without replying
  'delay', // wait delayMs, then run the command normally
  'emptyBatch', // (getMore on a change stream) reply with an empty batch at once
  'silence', // never reply (the connection stays open): a server that hangs
  'drip', // run the command, then send its reply one byte every dripMs (default 50)
  'lengthLie', // send the reply with `length` (default 0) as its header's messageLength
  'reply', // answer with the document `reply` instead of running the command (a malformed reply)
])

/** Handshake / monitoring commands are never matched by the '*' wildcard. */
const HELLO_COMMANDS = new Set(['hello', 'isMaster', 'ismaster'])

const DEFAULT_RANDOM_KINDS = Object.freeze(['closeSocket', 'resumableError', 'cursorNotFound', 'emptyBatch', 'delay'])

/**
 * Small seeded PRNG (mulberry32) so random fault runs are reproducible.
 * @param {number} seed
 * @returns {() => number} uniform in [0, 1)
 */
function mulberry32(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * @typedef {object} FaultSpec
 * @property {string|string[]} [command] command name(s) to match, or '*' (default 'getMore')
 * @property {string} [kind] one of FAULT_KINDS (default 'error')
 * @property {number} [code] error code for kind 'error'
 * @property {string} [codeName]
 * @property {string} [errmsg]
 * @property {string[]} [errorLabels]
 * @property {number} [count] how many matching commands to fault (default 1; Infinity = forever)
 * @property {number} [skip] let this many matching commands through first (default 0)
 * @property {number} [delayMs] wait before applying the fault (for kind 'delay': then run normally)
 * @property {boolean} [changeStreamOnly] only match commands on change streams
 * @property {string} [ns] only match this namespace ('db.coll')
 * @property {number} [dripMs] kind 'drip': milliseconds between two bytes of the reply (default 50)
 * @property {number} [length] kind 'lengthLie': the messageLength in the reply's header (default 0)
 * @property {object} [reply] kind 'reply': the document sent instead of the command's reply
 */

/**
 * @typedef {object} FaultContext
 * @property {string} command command name
 * @property {boolean} isChangeStream the command targets a change-stream cursor / opens one
 * @property {string} ns 'db.coll' namespace of the command
 */

class FaultInjector {
  /**
   * @param {{faultRate?: number, seed?: number, randomFaultCommands?: string[], randomFaultKinds?: string[], randomFaultChangeStreamOnly?: boolean}} [options]
   */
  constructor({ faultRate = 0, seed = 1, randomFaultCommands = ['getMore'], randomFaultKinds = DEFAULT_RANDOM_KINDS, randomFaultChangeStreamOnly = true } = {}) {
    /** @type {Array<FaultSpec & {id: number, remaining: number, skipped: number, hits: number}>} */
    this.queue = []
    this.nextId = 1
    this.randomFaultCommands = [...randomFaultCommands]
    this.randomFaultKinds = [...randomFaultKinds]
    this.randomFaultChangeStreamOnly = randomFaultChangeStreamOnly
    /** @type {Array<{command: string, kind: string, code?: number, random: boolean, at: Date}>} faults applied */
    this.history = []
    this.setFaultRate(faultRate, seed)
  }

  /**
   * Queue a fault.
   * @param {FaultSpec} spec
   * @returns {FaultSpec & {id: number}} the queued fault (inspect `hits`)
   */
  inject(spec) {
    const kind = spec.kind ?? 'error'
    if (!FAULT_KINDS.includes(kind)) throw new TypeError(`unknown fault kind ${kind}; expected one of ${FAULT_KINDS.join(', ')}`)
    const fault = { command: 'getMore', ...spec, kind, id: this.nextId++, remaining: spec.count ?? 1, skipped: 0, hits: 0 }
    this.queue.push(fault)
    return fault
  }

  /**
   * Queue several faults (array-like alias of {@link FaultInjector#inject}).
   * @param {...FaultSpec} specs
   * @returns {number} number of queued faults
   */
  push(...specs) {
    for (const spec of specs) this.inject(spec)
    return this.queue.length
  }

  /** Remove every queued fault and disable random faults. */
  clear() {
    this.queue = []
    this.faultRate = 0
  }

  /**
   * Enable random faults.
   * @param {number} rate probability 0..1 that an eligible command is faulted
   * @param {number} [seed] PRNG seed (default: keep the current sequence)
   */
  setFaultRate(rate, seed) {
    if (!(rate >= 0 && rate <= 1)) throw new RangeError('faultRate must be within 0..1')
    this.faultRate = rate
    if (seed !== undefined || !this.random) this.random = mulberry32(seed ?? 1)
  }

  /**
   * Pick the fault (if any) to apply to a command, consuming it.
   * @param {FaultContext} context
   * @returns {(FaultSpec & {kind: string}) | null}
   */
  take(context) {
    for (const fault of this.queue) {
      if (!this.applies(fault, context)) continue
      if (fault.skipped < (fault.skip ?? 0)) {
        fault.skipped++
        continue
      }
      fault.remaining--
      fault.hits++
      if (fault.remaining <= 0) this.queue.splice(this.queue.indexOf(fault), 1)
      return this.record(resolveFault(fault), context, false)
    }
    if (this.faultRate > 0 && this.randomFaultCommands.includes(context.command) && (!this.randomFaultChangeStreamOnly || context.isChangeStream)) {
      if (this.random() < this.faultRate) {
        const kind = this.randomFaultKinds[Math.floor(this.random() * this.randomFaultKinds.length)]
        const delayMs = kind === 'delay' ? Math.floor(this.random() * 50) : 0
        return this.record(resolveFault({ kind, delayMs }), context, true)
      }
    }
    return null
  }

  /** @param {FaultSpec} fault @param {FaultContext} context */
  applies(fault, context) {
    const commands = [].concat(fault.command ?? 'getMore')
    const wildcard = commands.includes('*') && !HELLO_COMMANDS.has(context.command)
    if (!wildcard && !commands.includes(context.command)) return false
    if (fault.changeStreamOnly && !context.isChangeStream) return false
    if (fault.ns && fault.ns !== context.ns) return false
    return true
  }

  /** @template T @param {T & {kind: string, code?: number}} fault @param {FaultContext} context @param {boolean} random @returns {T} */
  record(fault, context, random) {
    this.history.push({ command: context.command, kind: fault.kind, code: fault.code, random, at: new Date() })
    return fault
  }
}

/**
 * Fill in the error code / labels implied by a fault kind.
 * @param {FaultSpec & {kind: string}} fault
 */
function resolveFault(fault) {
  switch (fault.kind) {
    case 'resumableError':
      return { code: 6, codeName: 'HostUnreachable', errmsg: 'injected resumable error', errorLabels: ['ResumableChangeStreamError'], ...fault }
    case 'nonResumableError':
      return { code: 280, codeName: 'ChangeStreamFatalError', errmsg: 'injected non-resumable error', errorLabels: [], ...fault }
    case 'cursorNotFound':
      return { code: 43, codeName: 'CursorNotFound', errmsg: 'cursor id not found (injected)', ...fault }
    case 'error': {
      const code = fault.code ?? 2
      return { ...fault, code, codeName: fault.codeName ?? codeNameFor(code), errmsg: fault.errmsg ?? `injected error ${code}` }
    }
    default:
      return { ...fault }
  }
}

module.exports = { FaultInjector, FAULT_KINDS, DEFAULT_RANDOM_KINDS, mulberry32 }
