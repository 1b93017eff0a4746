/**
 * What `bson2json dump FILE` loads before the native pipeline runs: start-up is part of every run
 * (benchmark/cli-startup.sh), so the dump of a plain file loads neither the transcode stream nor
 * Node's streams, zlib, tty, net or worker_threads, nor the other commands' modules. And the
 * binding's loader still hands the WASI build its quiet `Worker` although a native load no longer
 * requires `node:worker_threads` (lib/native/load.js `quietWasi`).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const native = require('../../lib/native')
const ROOT = resolve(__dirname, '../..')
const BIN = join(ROOT, 'bin/bson2json.js')

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'b2j-startup-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Node's built-in modules and the package's files loaded by `bson2json ARGS` (written at exit). */
function loaded(args: string[], stdout: 'file' | 'null' | 'ignore') {
  const record = join(dir, `loaded-${Math.random().toString(36).slice(2)}.json`)
  const preload = join(dir, 'record.js')
  writeFileSync(
    preload,
    `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify({ builtins: process.moduleLoadList, files: Object.keys(require.cache) })))\n`,
  )
  const out = stdout === 'file' ? ['pipe', require('fs').openSync(join(dir, 'stdout.json'), 'w'), 'pipe'] : stdout === 'null' ? ['pipe', require('fs').openSync('/dev/null', 'w'), 'pipe'] : 'pipe'
  const r = spawnSync(process.execPath, ['-r', preload, BIN, ...args], { stdio: out as any, env: { ...process.env, BSON2JSON_DUMP: 'native' } })
  expect(r.stderr.toString()).toBe('')
  expect(r.status).toBe(0)
  const { builtins, files } = JSON.parse(readFileSync(record, 'utf8'))
  return {
    builtins: (builtins as string[]).filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length)),
    files: (files as string[]).filter((f) => f.startsWith(ROOT) && f !== preload).map((f) => f.slice(ROOT.length + 1)),
  }
}

/** Loaded by none of the runs below: the stream path's, the other commands' and Node's I/O stacks. */
const NOT_BUILTINS = ['stream', 'zlib', 'tty', 'net', 'worker_threads', 'internal/streams/readable', 'child_process']
const NOT_FILES = [
  'lib/transcode/stream.js',
  'lib/transcode/api.js',
  'lib/cli/bson.js',
  'lib/cli/fields.js',
  'lib/cli/pretty.js',
  'lib/cli/export.js',
  'lib/cli/cdc.js',
  'lib/native/wasi.js',
]

describe.skipIf(!native.DUMP_PIPELINE || process.platform !== 'linux')('start-up of a native dump', () => {
  it('a plain file to -o FILE, to stdout redirected to a file, to /dev/null: no streams, zlib, tty or worker_threads', () => {
    const file = join(dir, 'in.bson')
    writeFileSync(file, Buffer.concat([BSON.serialize({ _id: 1, a: 'b' }), BSON.serialize({ _id: 2 })]))
    const runs = [
      loaded(['-q', file, '-o', join(dir, 'o.json')], 'ignore'),
      loaded(['-q', '--dialect', 'canonical', file], 'file'),
      loaded(['dump', '-q', '--threads', '2', file], 'null'),
    ]
    for (const { builtins, files } of runs) {
      expect(files).toContain('lib/cli/dump.js')
      expect(files).toContain('lib/native/index.js') // the dump did run natively (BSON2JSON_DUMP=native)
      expect(builtins.filter((m) => NOT_BUILTINS.includes(m))).toEqual([])
      expect(files.filter((f) => NOT_FILES.includes(f))).toEqual([])
    }
    expect(readFileSync(join(dir, 'stdout.json'), 'utf8')).toBe('{"_id":{"$numberInt":"1"},"a":"b"}\n{"_id":{"$numberInt":"2"}}\n')
  })

  it("the pipeline's largest document is the transcode stream's", () => {
    expect(require('../../lib/cli/dump').MAX_DOCUMENT_BYTES).toBe(require('../../lib/transcode/stream').DEFAULT_MAX_DOCUMENT_BYTES)
  })
})

describe.skipIf(native.name !== 'native')('the quiet Worker of a WASI load', () => {
  it('a loader that requires node:worker_threads gets the subclass (its workers run without the warning); the warning is dropped; both are put back', () => {
    // A stand-in for the WASI loader: NAPI_RS_NATIVE_LIBRARY_PATH is loaded by the generated
    // loader inside `quietWasi`; it takes Worker as the WASI loader does, and warns as it does.
    const fake = join(dir, 'fake-loader.js')
    writeFileSync(
      fake,
      `const { Worker } = require('node:worker_threads')
globalThis.seenWorker = Worker
process.emitWarning('WASI is an experimental feature and might change at any time', 'ExperimentalWarning')
module.exports = require(${JSON.stringify(join(ROOT, 'binding.js'))})\n`,
    )
    const script = `
const native = require(${JSON.stringify(join(ROOT, 'lib/native'))})
const threads = require('node:worker_threads')
const Seen = globalThis.seenWorker
if (Seen === threads.Worker) throw new Error('Worker not put back (or never patched)')
if (Object.getPrototypeOf(Seen) !== threads.Worker) throw new Error('not a subclass of Worker')
const w = new Seen("require('node:worker_threads').parentPort.postMessage(process.execArgv)", { eval: true })
w.on('message', (m) => { console.log(JSON.stringify({ name: native.name, execArgv: m, emitWarning: process.emitWarning.name })); w.terminate() })
`
    const env = { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: fake }
    delete env.NAPI_RS_FORCE_WASI
    const r = spawnSync(process.execPath, ['-e', script], { env })
    expect(r.stderr.toString()).toBe('')
    expect(r.status).toBe(0)
    const got = JSON.parse(r.stdout.toString())
    expect(got.execArgv).toContain('--disable-warning=ExperimentalWarning')
    expect(got.emitWarning).toBe('emitWarning') // Node's own, not the filter
  })
})
