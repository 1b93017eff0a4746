/**
 * `bson2json dump FILE` through the native pipeline (lib/native `dumpFile`) against the same
 * command through the transcode stream (`BSON2JSON_DUMP=stream`): the same bytes out, the same
 * exit status and the same stderr line (time and rate aside), on generated dumps of several
 * batches (the pipeline reads 2 MiB per batch), in every dialect, NDJSON and --array, at
 * several thread counts, and with faults: a corrupt document, a bad length, a truncated file,
 * a regex V8 refuses, a full device, a file size limit, a signal.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { createRequire } from 'node:module'
import { spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { gzipSync } from 'node:zlib'
import { join, resolve } from 'node:path'
import { BSON } from 'bson'
import { Gen } from './gen'

const require = createRequire(import.meta.url)
const { toJSON } = require('../index.js')
const native = require('../lib/native')
const BIN = resolve(__dirname, '../bin/bson2json.js')

interface Result {
  code: number | null
  signal: string | null
  stderr: string
  out: Buffer
}

interface RunOptions {
  /** the transcode stream instead of the native pipeline */
  stream?: boolean
  /** stdout redirected to the output file instead of `-o` */
  redirect?: boolean
  /** the output path (default: a fresh file in the test directory) */
  out?: string
  ulimitKiB?: number
  /** stdin: a file opened as fd 0 (a path), or bytes written to a pipe (a Buffer) */
  stdin?: string | Buffer
  onSpawn?: (child: ReturnType<typeof spawn>) => void
}

let dir: string
let runs = 0

/** Runs `bson2json ARGS` writing to a file (`-o`, or stdout redirected to it); returns its bytes. */
function run(args: string[], o: RunOptions = {}): Promise<Result> {
  const out = o.out ?? join(dir, `out-${runs++}.json`)
  const env = { ...process.env }
  if (o.stream) env.BSON2JSON_DUMP = 'stream'
  else delete env.BSON2JSON_DUMP
  const argv = o.redirect ? args : [...args, '-o', out]
  return new Promise((done, fail) => {
    const fd = o.redirect ? openSync(out, 'w') : null
    const inFd = typeof o.stdin === 'string' ? openSync(o.stdin, 'r') : null
    const stdio: any[] = [inFd ?? (o.stdin === undefined ? 'ignore' : 'pipe'), fd ?? 'ignore', 'pipe']
    const child =
      o.ulimitKiB === undefined
        ? spawn(process.execPath, [BIN, ...argv], { stdio, env })
        : spawn('bash', ['-c', `ulimit -f ${o.ulimitKiB}; exec "$0" "$@"`, process.execPath, BIN, ...argv], { stdio, env })
    if (fd !== null) closeSync(fd)
    if (inFd !== null) closeSync(inFd)
    if (Buffer.isBuffer(o.stdin)) {
      child.stdin!.on('error', () => {}) // a run that stops early closes its end
      child.stdin!.end(o.stdin)
    }
    const err: Buffer[] = []
    child.stderr!.on('data', (c) => err.push(c))
    child.on('error', fail)
    o.onSpawn?.(child)
    child.on('close', (code, signal) => {
      const bytes = out.startsWith('/dev/') ? Buffer.alloc(0) : readFileSync(out)
      done({ code, signal, stderr: Buffer.concat(err).toString(), out: bytes })
    })
  })
}

/**
 * stderr without what differs between two runs: seconds and MB/s, and after a failure the BSON
 * read by then (both paths read ahead of the documents written, by as much as the timing lets).
 */
function steady(stderr: string): string {
  return stderr
    .replace(/, [\d.]+ s(\)|,)/g, ', T s$1')
    .replace(/, [\d.]+ MB\/s\n/g, ', R MB/s\n')
    .replace(/( documents written, )[\d.]+( MB BSON in)/g, '$1X$2')
}

/** Runs ARGS both ways and expects the same output, status and message. */
async function same(args: string[], o: RunOptions = {}): Promise<Result> {
  const [a, b] = await Promise.all([run(args, o), run(args, { ...o, stream: true })])
  expect(a.code, `${args.join(' ')}: ${a.stderr} / ${b.stderr}`).toBe(b.code)
  expect(steady(a.stderr), args.join(' ')).toBe(steady(b.stderr))
  expect(a.out.equals(b.out), `${args.join(' ')}: ${a.out.length} vs ${b.out.length} bytes`).toBe(true)
  return a
}

/** Documents of the generator that every dialect transcodes (no invalid UTF-8, no regex V8 refuses). */
function cleanDocs(seed: number, bytes: number): Buffer[] {
  const g = new Gen(seed, { badStringRate: 0 })
  const docs: Buffer[] = []
  let total = 0
  while (total < bytes) {
    const d = Buffer.from(g.root())
    try {
      for (const dialect of ['compat', 'relaxed', 'canonical']) toJSON(d, { dialect })
    } catch {
      continue
    }
    docs.push(d)
    total += d.length
  }
  return docs
}

let docs: Buffer[]
let starts: number[]
let dump: Buffer
let file: string

function at(i: number): number {
  return starts[i]
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bson2json-native-'))
  // ~7 MB: four batches of the pipeline, with a 3 MB document (a batch of its own, read past a
  // block) in the middle.
  docs = cleanDocs(0x5eed, 3 << 20)
  const big = BSON.serialize({ _id: 'big', s: 'x'.repeat(3 << 20), n: [1, 2.5, { d: new Date(0) }] })
  docs = [...docs.slice(0, 1000), Buffer.from(big), ...docs.slice(1000), ...cleanDocs(0xbeef, 1 << 20)]
  starts = []
  let pos = 0
  for (const d of docs) {
    starts.push(pos)
    pos += d.length
  }
  dump = Buffer.concat(docs)
  file = join(dir, 'gen.bson')
  writeFileSync(file, dump)
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

it('the native addon on a Unix has the pipeline (otherwise both runs below would take the stream)', () => {
  if (native.name === 'native' && process.platform !== 'win32') expect(native.DUMP_PIPELINE).toBe(true)
  else expect(native.DUMP_PIPELINE).toBe(false)
})

describe.skipIf(!native.DUMP_PIPELINE)('dump: the native pipeline writes what the transcode stream writes', () => {

  it('every dialect, NDJSON and --array, 1 to 5 threads, -o and stdout redirected to a file', async () => {
    for (const dialect of ['compat', 'relaxed', 'canonical']) {
      for (const array of [[], ['--array']]) {
        for (const threads of ['1', '2', '5']) {
          const r = await same(['--dialect', dialect, ...array, '--threads', threads, file])
          expect(r.code).toBe(0)
          expect(r.stderr).toMatch(new RegExp(`^bson2json: ${docs.length} documents, `))
        }
      }
    }
    await same(['-q', file], { redirect: true })
    await same(['--array', '--stats', '-q', file], { redirect: true })
  })

  it('--utf8 replace and --max-depth reach the pipeline', async () => {
    const bad = Buffer.concat([dump.subarray(0, at(2000)), BSON.serialize({ s: 'ok' }).fill(0xff, 11, 12), dump.subarray(at(2000))])
    const f = join(dir, 'bad-utf8.bson')
    writeFileSync(f, bad)
    expect((await same([f])).code).toBe(1)
    expect((await same(['--utf8', 'replace', f])).code).toBe(0)
    expect((await same(['--max-depth', '3', '--threads', '2', file])).code).toBe(1)
  })

  it('a corrupt document in each batch: the documents before it, the same message', async () => {
    for (const i of [0, 5, 999, 1001, docs.length - 1]) {
      const bad = Buffer.from(dump)
      bad[at(i) + 4] = 0x42 // an unknown element type (or, in `{}`, a bad terminator)
      const f = join(dir, `corrupt-${i}.bson`)
      writeFileSync(f, bad)
      for (const flags of [[], ['--array'], ['--threads', '1']]) {
        const r = await same([...flags, f])
        expect(r.code).toBe(1)
        expect(r.stderr).toMatch(new RegExp(`corrupt BSON at document ${i}, byte offset ${at(i) + 4}: BSON_(UNKNOWN_TYPE|BAD_TERMINATOR): [^(]*\\(${i} documents written, `))
      }
    }
  })

  it('bad lengths, a truncated file, text: the framing faults of the stream', async () => {
    const cases: [string, Buffer][] = []
    const len3 = Buffer.from(dump)
    len3.writeInt32LE(3, at(1500))
    cases.push(['len3', len3])
    const huge = Buffer.from(dump)
    huge.writeInt32LE(0x7fffff00, at(1002))
    cases.push(['huge', huge])
    cases.push(['cut-in-doc', dump.subarray(0, at(1500) + 10)])
    cases.push(['cut-in-big', dump.subarray(0, at(1000) + (1 << 20))])
    cases.push(['cut-in-length', dump.subarray(0, at(docs.length - 1) + 2)])
    cases.push(['text', Buffer.from('hello, this is not BSON\n')])
    for (const [name, bytes] of cases) {
      const f = join(dir, `${name}.bson`)
      writeFileSync(f, bytes)
      for (const flags of [[], ['--array', '--threads', '3']]) {
        const r = await same([...flags, f])
        expect(r.code, name).toBe(1)
        expect(r.stderr, name).toMatch(/corrupt BSON at document \d+, byte offset \d+: BSON_(BAD_LENGTH|TRUNCATED): /)
      }
    }
  })

  it('compat: a regex V8 refuses stops at its document; one it accepts is checked once', async () => {
    const ok = BSON.serialize({ r: new BSON.BSONRegExp('a+b', 'i') })
    const refused = BSON.serialize({ _id: 'bad regex', r: new BSON.BSONRegExp('(', '') })
    const parts = [dump.subarray(0, at(10)), ok, ok, dump.subarray(at(10), at(1300)), ok, refused, dump.subarray(at(1300))]
    const f = join(dir, 'regex.bson')
    writeFileSync(f, Buffer.concat(parts))
    // The pattern's first byte: the document's start, its length, `_id` (4 + 1 + 4 + 10 bytes), the type and key `r`.
    const start = parts.slice(0, 5).reduce((n, p) => n + p.length, 0)
    const gz = join(dir, 'regex.bson.gz')
    writeFileSync(gz, gzipSync(Buffer.concat(parts)))
    const offset = start + 4 + 19 + 3
    const message = (what: string, gzip = false) =>
      new RegExp(
        `^bson2json: ${what}: corrupt BSON at document 1303, byte offset ${offset}${gzip ? ' \\(of the decompressed data\\)' : ''}: BSON_INVALID_REGEX: invalid regular expression \\(Invalid regular expression: /\\(/: Unterminated group\\) \\(1303 documents written, `,
      )
    for (const threads of ['1', '2']) {
      // The input's offset of the pattern, on both paths, from a file, a .gz and stdin.
      const runs: [string[], RunOptions, RegExp][] = [
        [[f], {}, message('\\S+regex\\.bson')],
        [[gz], {}, message('\\S+regex\\.bson\\.gz', true)],
        [['-'], { stdin: f }, message('<stdin>')],
        [[], { stdin: Buffer.concat(parts) }, message('<stdin>')],
        [[], { stdin: gz }, message('<stdin>', true)],
      ]
      for (const [args, o, expected] of runs) {
        for (const stream of [false, true]) {
          const r = await run(['--threads', threads, ...args], { ...o, stream })
          expect(r.code, `${args} ${stream}`).toBe(1)
          expect(r.stderr, `${args} ${stream}`).toMatch(expected)
          expect(r.out.toString().split('\n').length - 1).toBe(1303)
        }
        await same(['--threads', threads, ...args], o)
      }
    }
    expect((await same(['--dialect', 'relaxed', f])).code).toBe(0)
  })

  it('stdout to a pipe: the same bytes and message; a reader that goes away: exit 0, silent', async () => {
    const piped = (args: string[], stream: boolean, close = false): Promise<Result> =>
      new Promise((done, fail) => {
        const env = { ...process.env }
        if (stream) env.BSON2JSON_DUMP = 'stream'
        else delete env.BSON2JSON_DUMP
        const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env })
        const out: Buffer[] = []
        const err: Buffer[] = []
        child.stdout.on('data', (c) => {
          out.push(c)
          if (close) child.stdout.destroy()
        })
        child.stderr.on('data', (c) => err.push(c))
        child.on('error', fail)
        child.on('close', (code, signal) => done({ code, signal, stderr: Buffer.concat(err).toString(), out: Buffer.concat(out) }))
      })
    const bad = Buffer.from(dump)
    bad[at(1800) + 4] = 0x42
    const f = join(dir, 'piped.bson')
    writeFileSync(f, bad)
    for (const args of [['--threads', '2', file], ['--array', file], [f]]) {
      const [a, b] = await Promise.all([piped(args, false), piped(args, true)])
      expect(a.code).toBe(b.code)
      expect(steady(a.stderr)).toBe(steady(b.stderr))
      expect(a.out.equals(b.out)).toBe(true)
    }
    const r = await piped([file], false, true)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
  })

  it('a full device: exit 1, ENOSPC, 0 documents', async () => {
    for (const flags of [[], ['--array']]) {
      const r = await same([...flags, file], { out: '/dev/full' })
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/^bson2json: cannot write \/dev\/full: no space left on device \(ENOSPC\) \(0 documents written, /)
    }
  })

  it('a file size limit (ulimit -f): EFBIG, the file cut to the documents counted', async () => {
    for (const redirect of [false, true]) {
      const r = await run([file], { ulimitKiB: 1000, redirect })
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/file too large \(the file size limit, ulimit -f\) \(EFBIG\) \((\d+) documents written, /)
      const n = Number(/\((\d+) documents written/.exec(r.stderr)![1])
      expect(n).toBeGreaterThan(100)
      const lines = r.out.toString().split('\n')
      expect(lines.pop()).toBe('')
      expect(lines).toHaveLength(n)
      for (let i = 0; i < n; i++) expect(lines[i], `document ${i}`).toBe(toJSON(docs[i]))
    }
  })

  it('SIGINT: exit 130, the documents written so far whole and counted', async () => {
    const f = join(dir, 'long.bson')
    writeFileSync(f, Buffer.concat(Array.from({ length: 30 }, () => dump)))
    const r = await run(['--progress', '--threads', '1', f], {
      onSpawn: (c) => c.stderr!.once('data', () => c.kill('SIGINT')),
    })
    expect(r.code).toBe(130)
    const last = r.stderr.trimEnd().split('\n').pop()!
    expect(last).toMatch(/^bson2json: \S+long\.bson: interrupted by SIGINT \((\d+) documents written, /)
    const n = Number(/\((\d+) documents written/.exec(last)![1])
    expect(n).toBeLessThan(30 * docs.length)
    const text = r.out.toString()
    if (n > 0) expect(text.endsWith('\n')).toBe(true)
    expect(text.split('\n').length - 1).toBe(n)
    expect(statSync(f).size).toBe(30 * dump.length)
  })
})
