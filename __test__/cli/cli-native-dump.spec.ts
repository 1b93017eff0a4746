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
import { constants as zlibConstants, gzipSync, inflateRawSync } from 'node:zlib'
import { join, resolve } from 'node:path'
import { BSON } from 'bson'
import { Gen } from '../support/gen'

const require = createRequire(import.meta.url)
const { toJSON } = require('../../index.js')
const native = require('../../lib/native')
const BIN = resolve(__dirname, '../../bin/bson2json.js')

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
  /**
   * stdin: a file opened as fd 0 (a path), or bytes written to a pipe (a Buffer; Buffers: one
   * after the other, 300 ms apart)
   */
  stdin?: string | Buffer | Buffer[]
  onSpawn?: (child: ReturnType<typeof spawn>) => void
}

let dir: string
let runs = 0

/** Runs `bson2json ARGS` writing to a file (`-o`, or stdout redirected to it); returns its bytes. */
function run(args: string[], o: RunOptions = {}): Promise<Result> {
  const out = o.out ?? join(dir, `out-${runs++}.json`)
  const env = { ...process.env }
  if (o.stream) env.BSON2JSON_DUMP = 'stream'
  else env.BSON2JSON_DUMP = 'native' // exit 2 if the dump would take the stream
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
    if (o.stdin !== undefined && typeof o.stdin !== 'string') {
      child.stdin!.on('error', () => {}) // a run that stops early closes its end
      const parts = Buffer.isBuffer(o.stdin) ? [o.stdin] : o.stdin
      const next = (i: number) => {
        if (i === parts.length - 1) child.stdin!.end(parts[i])
        else child.stdin!.write(parts[i], () => setTimeout(() => next(i + 1), 300))
      }
      next(0)
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
    .replace(/( documents written, )[\d.]+( MB BSON in)(?: \([\d.]+( MB gzip\)))?/g, '$1X$2 (X$3')
}

/**
 * stderr after a gzip fault, which the stream finds while its transcoding runs behind (by as
 * much as the timing lets): the documents written, the bytes read and written are left out.
 */
function steadyGzip(stderr: string): string {
  return steady(stderr)
    .replace(/\(\d+ documents written, /g, '(N documents written, ')
    .replace(/[\d.]+ MB JSON out/g, 'Y MB JSON out')
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
        else env.BSON2JSON_DUMP = 'native'
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

describe.skipIf(!native.DUMP_PIPELINE)('dump: stdin and .gz through the native pipeline, as through the transcode stream', () => {
  let gz: string

  beforeAll(() => {
    gz = join(dir, 'gen.bson.gz')
    writeFileSync(gz, gzipSync(dump))
  })

  it('a .gz file, stdin from a file, a pipe, gzip on a pipe: the same bytes, status and message', async () => {
    const inputs: [string[], RunOptions][] = [
      [[gz], {}],
      [['-'], { stdin: file }],
      [['-'], { stdin: gz }],
      [[], { stdin: dump }],
      [[], { stdin: readFileSync(gz) }],
    ]
    for (const [args, o] of inputs) {
      for (const flags of [[], ['--array', '--threads', '1'], ['--dialect', 'canonical', '--threads', '3']]) {
        const r = await same([...flags, ...args], o)
        expect(r.code).toBe(0)
        expect(r.stderr).toMatch(new RegExp(`^bson2json: ${docs.length} documents, [\\d.]+ MB BSON in${args[0] === gz || o.stdin === gz || (Buffer.isBuffer(o.stdin) && o.stdin[0] === 0x1f) ? ' \\([\\d.]+ MB gzip\\)' : ''}, `))
      }
    }
    // two gzip members, and zero padding after the last (zlib's rules, as Node's gunzip)
    const members = join(dir, 'members.bson.gz')
    writeFileSync(members, Buffer.concat([gzipSync(dump.subarray(0, at(700))), gzipSync(dump.subarray(at(700))), Buffer.alloc(100)]))
    expect((await same([members])).stderr).toMatch(new RegExp(`^bson2json: ${docs.length} documents, `))
    // nothing at all on stdin; an empty gzip member
    expect((await same(['--array'], { stdin: Buffer.alloc(0) })).out.toString()).toBe('[]\n')
    expect((await same([], { stdin: gzipSync(Buffer.alloc(0)) })).code).toBe(0)
  })

  it('a corrupt document after decompression: the documents before it, the offset in the decompressed data', async () => {
    const bad = Buffer.from(dump)
    bad[at(1001) + 4] = 0x42
    const f = join(dir, 'corrupt.bson.gz')
    writeFileSync(f, gzipSync(bad))
    for (const [args, o] of [[[f], {}], [[], { stdin: readFileSync(f) }]] as [string[], RunOptions][]) {
      for (const threads of ['1', '2']) {
        const r = await same(['--threads', threads, ...args], o)
        expect(r.code).toBe(1)
        expect(r.stderr).toMatch(
          new RegExp(`: corrupt BSON at document 1001, byte offset ${at(1001) + 4} \\(of the decompressed data\\): BSON_UNKNOWN_TYPE: [^(]*\\(1001 documents written, [\\d.]+ MB BSON in \\([\\d.]+ MB gzip\\)`),
        )
      }
    }
  })

  it("truncated or corrupt gzip: zlib's message, the whole documents decompressed before it", async () => {
    const whole = readFileSync(gz)
    // The BSON zlib decompresses before the fault: gzipSync writes a 10-byte header.
    const cut = whole.subarray(0, whole.length >> 1)
    const cases: [string, Buffer, RegExp, Buffer][] = [
      ['cut', cut, /unexpected end of file/, inflateRawSync(cut.subarray(10), { finishFlush: zlibConstants.Z_SYNC_FLUSH })],
      ['cut-in-header', whole.subarray(0, 6), /unexpected end of file/, Buffer.alloc(0)],
      ['crc', Buffer.concat([whole.subarray(0, -8), Buffer.from([0, 0, 0, 0]), whole.subarray(-4)]), /incorrect data check/, dump],
      ['size', Buffer.concat([whole.subarray(0, -4), Buffer.from([1, 2, 3, 4])]), /incorrect length check/, dump],
      ['method', Buffer.concat([whole.subarray(0, 2), Buffer.from([7]), whole.subarray(3)]), /unknown compression method/, Buffer.alloc(0)],
      ['trailing', Buffer.concat([whole, Buffer.from('garbage')]), /incorrect header check/, dump],
    ]
    for (const [name, bytes, message, plain] of cases) {
      const f = join(dir, `${name}.bson.gz`)
      writeFileSync(f, bytes)
      expect(plain.length < dump.length, name).toBe(name === 'cut' || plain.length === 0)
      // the whole documents of what zlib decompresses
      const k = starts.filter((st, i) => st + docs[i].length <= plain.length).length
      const expected = Buffer.from(docs.slice(0, k).map((d) => `${toJSON(d)}\n`).join(''))
      for (const [args, o] of [[[f], {}], [[], { stdin: bytes }]] as [string[], RunOptions][]) {
        const [a, b] = await Promise.all([run(args, o), run(args, { ...o, stream: true })])
        expect(a.code, name).toBe(1)
        expect(b.code, name).toBe(1)
        expect(a.stderr, name).toMatch(new RegExp(`^bson2json: \\S+: the gzip data is truncated or corrupt: ${message.source} \\(${k} documents written, `))
        expect(steadyGzip(a.stderr), name).toBe(steadyGzip(b.stderr))
        expect(a.out.equals(expected), `${name}: ${a.out.length} vs ${expected.length} bytes`).toBe(true)
        // the stream stops where its transcoding was when the fault came: a prefix
        expect(expected.subarray(0, b.out.length).equals(b.out), name).toBe(true)
      }
    }
  })

  it('an archive on stdin (plain and gzip, arriving in two parts) is handed to the stream: the same words', async () => {
    const archive = resolve(__dirname, '../support/fixtures/mongodump.archive')
    for (const bytes of [readFileSync(archive), readFileSync(`${archive}.gz`)]) {
      const parts = [bytes.subarray(0, 100), bytes.subarray(100)]
      // no --nsInclude (with it, the stream reads stdin from the start): the pipeline reads
      // the first part, sees the archive and hands it back, and the stream reads its prelude
      for (const flags of [[], ['--array', '--threads', '1']]) {
        const a = await same(flags, { stdin: parts })
        expect(a.code).toBe(2)
        expect(a.stderr).toMatch(/^bson2json: <stdin>: mongodump archive holds 3 collections \([^)]*crm\.notes[^)]*\): choose with --nsInclude /)
      }
      const r = await run(['--nsInclude', 'shop.*'], { stdin: parts, stream: true })
      expect(r.code).toBe(0)
      expect(r.stderr).toMatch(/^bson2json: 7 documents, /)
    }
  })

  it('SIGINT on stdin (a pipe that stays open) and on a .gz: exit 130, the documents written whole and counted', async () => {
    // long enough to be still running 200 ms after its first progress line, on a fast machine
    const copies = 40
    const long = join(dir, 'long.bson.gz')
    writeFileSync(long, gzipSync(Buffer.concat(Array.from({ length: copies }, () => dump)), { level: 1 }))
    // `until`: SIGINT once the progress line shows it (else 200 ms after the first progress line)
    const interrupted = async (args: string[], o: RunOptions, until?: string) => {
      let killed = 0
      const kill = (c: ReturnType<typeof spawn>) => {
        if (killed !== 0) return
        killed = Date.now()
        c.kill('SIGINT')
      }
      const onSpawn = (c: ReturnType<typeof spawn>) => {
        if (until === undefined) c.stderr!.once('data', () => setTimeout(() => kill(c), 200))
        else c.stderr!.on('data', (d) => String(d).includes(until) && kill(c))
      }
      const r = await run(['--progress', '--threads', '1', ...args], { ...o, onSpawn })
      expect(r.code).toBe(130)
      // at once, though stdin is still open (the next part of the pipe comes 12 s later)
      expect(Date.now() - killed).toBeLessThan(4000)
      const last = r.stderr.trimEnd().split('\n').pop()!
      expect(last).toMatch(/^bson2json: \S+: interrupted by SIGINT \((\d+) documents written, /)
      const n = Number(/\((\d+) documents written/.exec(last)![1])
      const text = r.out.toString()
      if (n > 0) expect(text.endsWith('\n')).toBe(true)
      expect(text.split('\n').length - 1).toBe(n)
      for (let i = 0; i < Math.min(n, 50); i++) expect(text.split('\n', 50)[i]).toBe(toJSON(docs[i % docs.length]))
      return n
    }
    for (const stream of [false, true]) {
      // the whole dump, then the pipe stays open (the next part comes too late)
      const n = await interrupted([], { stream, stdin: [dump, ...Array.from({ length: 40 }, () => Buffer.alloc(0))] }, `${docs.length.toLocaleString('en-US')} docs`)
      expect(n, `stream ${stream}`).toBe(docs.length)
      expect(await interrupted([long], { stream })).toBeLessThan(copies * docs.length)
    }
  })
})
