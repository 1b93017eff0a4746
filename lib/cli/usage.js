'use strict'

/**
 * What every subcommand shares before and after its work: one argument parser (it throws, never
 * exits), the typed errors that bin/bson2json.js turns into one line on stderr and an exit code,
 * and the `--help` / `--version` answers.
 */

/** A failure while running: one line on stderr (the message) and `exitCode` (default 1). */
class CliError extends Error {
  constructor(message, exitCode = 1) {
    super(message)
    this.name = 'CliError'
    this.exitCode = exitCode
  }
}

/** A mistake in the command line: exit code 2 and a hint to `--help`. */
class UsageError extends CliError {
  constructor(message) {
    super(message, 2)
    this.name = 'UsageError'
  }
}

function usage(message) {
  throw new UsageError(message)
}

/** Edit distance (for "did you mean"), small strings only. */
function distance(a, b) {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0]
    d[0] = i
    for (let j = 1; j <= b.length; j++) {
      const t = d[j]
      d[j] = Math.min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = t
    }
  }
  return d[b.length]
}

/** The known flag closest to `flag` (case-insensitively equal, or at most 2 edits), or null. */
function suggest(flag, known) {
  let best = null
  let bestD = Infinity
  for (const k of known) {
    if (!k.startsWith('--')) continue
    const d = k.toLowerCase() === flag.toLowerCase() ? 0 : distance(flag, k)
    if (d < bestD) {
      best = k
      bestD = d
    }
  }
  return bestD <= 2 ? best : null
}

/**
 * Parses a command line against a table of flags. `--name=value` and `--name value`; `--` ends
 * the flags; `-` is an argument. `-h`/`--help` and `-v`/`--version` are every command's (they
 * stop the parse: `{ help: true }` / `{ version: true }`).
 *
 * @param {string[]} argv
 * @param {object} spec
 * @param {Record<string, string>} spec.values flags taking a value -> option key
 * @param {Record<string, string>} [spec.flags] flags without a value -> option key (set to true)
 * @param {string[]} [spec.repeatable] keys collected into arrays
 * @param {boolean} [spec.once] a flag given twice is a usage error (default: the last one wins)
 * @returns {{ help?: true, version?: true, opts: Record<string, any>, args: string[], from: Record<string, string> }}
 *   (`from`: the flag that gave each key, as it was spelled, the last one for a repeated key)
 */
function parseOptions(argv, spec) {
  const values = spec.values
  const flags = spec.flags || {}
  const repeatable = new Set(spec.repeatable || [])
  const opts = {}
  const args = []
  const from = {}
  let noMoreFlags = false
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]
    if (noMoreFlags || a === '-' || !a.startsWith('-')) {
      args.push(a)
      continue
    }
    if (a === '--') {
      noMoreFlags = true
      continue
    }
    if (a === '-h' || a === '--help') return { help: true, opts, args, from }
    if (a === '-v' || a === '--version') return { version: true, opts, args, from }
    let inline = null
    const eq = a.startsWith('--') ? a.indexOf('=') : -1
    if (eq !== -1) {
      inline = a.slice(eq + 1)
      a = a.slice(0, eq)
    }
    let key
    let value
    if (Object.hasOwn(values, a)) {
      key = values[a]
      if (inline !== null) value = inline
      else if (i + 1 < argv.length) value = argv[++i]
      else usage(`option ${a} needs a value`)
    } else if (Object.hasOwn(flags, a)) {
      if (inline !== null) usage(`option ${a} takes no value`)
      key = flags[a]
      value = true
    } else {
      const near = suggest(a, [...Object.keys(values), ...Object.keys(flags), '--help', '--version'])
      usage(`unknown option '${a}'${near !== null ? ` (did you mean ${near}?)` : ''}`)
    }
    from[key] = a
    if (repeatable.has(key)) {
      ;(opts[key] ||= []).push(value)
    } else {
      if (spec.once && Object.hasOwn(opts, key)) usage(`${a} given twice`)
      opts[key] = value
    }
  }
  return { opts, args, from }
}

/**
 * The flags of `command` that map to options (lib/option-table.js), as {@link parseOptions}'s
 * `values` (flags taking a value) and `flags` (flags without one) tables: a command adds its
 * own flags to these.
 * @param {string} command
 * @returns {{ values: Record<string, string>, flags: Record<string, string> }}
 */
function optionFlags(command) {
  const values = {}
  const flags = {}
  for (const f of require('../option-table').flagsOf(command)) (f.takesValue ? values : flags)[f.flag] = f.key
  return { values, flags }
}

/** `a`, `a or b`, `a, b or c`. */
function orList(items) {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`
}

/**
 * The values of `command`'s option flags in `parsed.opts` ({@link parseOptions}'s result for
 * the tables of {@link optionFlags}) checked and converted as the options table says: an enum
 * flag's value is one of its values, an integer flag's a decimal integer in its range, a flag
 * without a value gives its option's value (`set`). Flags whose values the command converts
 * itself (a field list, JSON, seconds) are left as they are. A bad value is a usage error
 * naming the flag as it was given.
 * @param {string} command
 * @param {{ opts: Record<string, any>, from: Record<string, string> }} parsed changed in place
 * @returns {Record<string, any>} `parsed.opts`
 */
function optionValues(command, parsed) {
  const opts = parsed.opts
  for (const f of require('../option-table').flagsOf(command)) {
    // the flag that gave the value (of -d and --dialect, the one used)
    if (!Object.hasOwn(opts, f.key) || parsed.from[f.key] !== f.flag) continue
    const v = opts[f.key]
    if (!f.takesValue) {
      opts[f.key] = f.spec.set
      continue
    }
    // a value the command converts itself (a field list, JSON, seconds)
    if (f.key !== f.option && f.spec.values === undefined && f.spec.int === undefined) continue
    const t = f.row.type
    const values = f.spec.values || (t.kind === 'enum' ? t.values : null)
    if (values !== null) {
      if (!values.includes(v)) usage(`${f.flag} must be ${orList(values.map(String))}, got '${v}'`)
    } else if (t.kind === 'int' || f.spec.int !== undefined) {
      const min = f.spec.min ?? (f.spec.int ? f.spec.int[0] : t.min)
      const max = f.spec.max ?? (f.spec.int ? f.spec.int[1] : t.max)
      const n = Number(v)
      if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min) usage(`${f.flag} must be an integer >= ${min}, got '${v}'`)
      if (max !== undefined && n > max) usage(`${f.flag} must be at most ${max}`)
      opts[f.key] = n
    }
  }
  return opts
}

/**
 * An option's values for a command's help text: `compat (default) | relaxed | canonical`.
 * @param {string} option
 * @param {unknown} [dflt] the default to mark (the table's by default)
 */
function choices(option, dflt) {
  const row = require('../option-table').OPTIONS[option]
  const d = dflt === undefined ? row.default : dflt
  return row.type.values.map((v) => (v === d ? `${v} (default)` : String(v))).join(' | ')
}

/** How long a run may take to stop after SIGINT/SIGTERM before it is ended where it stands. */
const STOP_GRACE_MS = 700
const SIGNALS = { SIGINT: 130, SIGTERM: 143 }

/**
 * SIGINT / SIGTERM for a command's run: `handler(signal, exitCode)` is called (once) to stop the
 * run, which then reports as usual (its line, its exit status 130 / 143). A run still there
 * STOP_GRACE_MS after the signal (a read or a write blocked in the kernel on a pipe nobody feeds
 * or drains, a server that never answers, sockets the driver keeps open) is ended where it
 * stands: `lastWords(sig)` on stderr (unless it has reported), then the process dies of the
 * signal itself (status 130 / 143 all the same). Not `process.exit`: it waits for the libuv pool,
 * where a blocked read would hold it forever. A second signal ends it at once. So a signal is
 * answered within a second in every state. Returns `off()`, to call once the run has reported:
 * it stops listening (the deadline of a signal received stays armed until the process ends).
 * @param {(sig: string, exitCode: number) => void} handler
 * @param {(sig: string) => string} lastWords the line (after the command's prefix) when ended where it stands
 * @param {string} [prefix] the command's prefix on stderr (`bson2json`, `bson2json export`)
 */
function onSignals(handler, lastWords, prefix = 'bson2json') {
  let timer = null
  let reported = false
  const end = (sig) => {
    try {
      if (!reported) process.stderr.write(`${prefix}: ${lastWords(sig)}\n`)
    } finally {
      for (const s of Object.keys(SIGNALS)) process.removeAllListeners(s)
      process.kill(process.pid, sig) // the default action now: the process ends with the signal
    }
  }
  const onSignal = (sig) => {
    if (timer !== null) return end(sig)
    timer = setTimeout(() => end(sig), STOP_GRACE_MS)
    timer.unref()
    handler(sig, SIGNALS[sig])
  }
  for (const sig of Object.keys(SIGNALS)) process.on(sig, onSignal)
  return () => {
    reported = true
    for (const sig of Object.keys(SIGNALS)) process.off(sig, onSignal)
  }
}

/** The package's version. */
function version() {
  return require('../../package.json').version
}

/**
 * Answers `--help` / `--version` from a parse result: writes to stdout and returns exit code 0,
 * or returns null when the command should run.
 */
function answer(parsed, help) {
  if (parsed.help) {
    process.stdout.write(help)
    return 0
  }
  if (parsed.version) {
    process.stdout.write(`${version()}\n`)
    return 0
  }
  return null
}

/** Characters a terminal acts on or that reorder text: C0 and C1 controls, DEL, line and bidi controls. */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_IN_NAME = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

/**
 * A file name as a message prints it: as it is, or, when it holds a character a terminal would
 * act on (a newline, an escape sequence, a bidi override), quoted with each such character
 * escaped (`"a\nb"`, `"\u001b[31m"`), so one message stays one line and says what it means.
 * @param {string} name
 */
function quoteName(name) {
  const s = String(name)
  if (!UNSAFE_IN_NAME.test(s)) return s
  return JSON.stringify(s).replace(/[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** The name of an errno code for messages (`ENOSPC` -> "no space left on device (ENOSPC)"). */
function describeIoError(e) {
  const text = {
    ENOSPC: 'no space left on device',
    EFBIG: 'file too large (the file size limit, ulimit -f)',
    EDQUOT: 'disk quota exceeded',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    ENOENT: 'no such file or directory',
    EISDIR: 'is a directory',
    ENOTDIR: 'a path component is not a directory',
    EROFS: 'read-only file system',
    EIO: 'input/output error',
    EPIPE: 'broken pipe',
  }
  if (e && typeof e.code === 'string' && Object.hasOwn(text, e.code)) return `${text[e.code]} (${e.code})`
  return e && e.message ? String(e.message).split('\n')[0] : String(e)
}

module.exports = { CliError, UsageError, usage, parseOptions, optionFlags, optionValues, choices, answer, version, describeIoError, suggest, quoteName, onSignals, STOP_GRACE_MS }
