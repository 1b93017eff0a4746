/**
 * Fault injection for `bson2json dump` and `export`: every row of the failure table in
 * docs/cli.md, run on the CLI as a child process. Each case asserts the exit status, the one
 * line on stderr (cause, file or host, count), and that the output is a complete prefix: every
 * line parses as JSON and their number is the count the message gives.
 *
 * Output faults: /dev/full (ENOSPC at once), a 1 MiB tmpfs (ENOSPC mid-file: needs root and
 * mount), `ulimit -f` (EFBIG), a directory that does not exist (ENOENT), a directory the user
 * may not write (EACCES: run as `nobody`, needs root), a closed pipe (EPIPE: a clean exit), each
 * to `-o FILE` and to stdout redirected to the file. Input faults (dump): a corrupt document, a
 * truncated file, a truncated .gz, text, a bad length under --skip-invalid. Server faults
 * (export): the server process killed mid-export, a failing getMore (the test server's fault
 * injection, or `failCommand` when MONGODB_URI is set, as SecantusDB in .ci/run), a collection
 * that does not exist. Signals: SIGINT mid-run.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { BSON } from 'bson'
import { MongoClient } from 'mongodb'
import { MONGODB_URI, useMongo } from '../support/mongo'

const BIN = resolve(__dirname, '../../bin/bson2json.js')
const URI = MONGODB_URI
const ROOT = typeof process.getuid === 'function' && process.getuid() === 0
/** The EACCES cases run the CLI as `nobody`: root is needed, and `nobody` must reach the checkout. */
const AS_NOBODY = ROOT && spawnSync(process.execPath, ['-e', `require('fs').accessSync(${JSON.stringify(BIN)})`], { uid: 65534, gid: 65534 }).status === 0
const CAN_MOUNT = ROOT && spawnSync('which', ['mount']).status === 0

interface Result {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
}

interface RunOptions {
  /** stdout to this file (as `> FILE`) instead of a pipe */
  stdoutFile?: string
  /** `ulimit -f` (bash's unit: 1024 bytes) */
  ulimitKiB?: number
  uid?: number
  /** bytes for stdin (then closed), or 'open': a pipe the test writes to */
  stdin?: Uint8Array | 'open'
  /** called with the child once started (signals, closing the pipe) */
  onSpawn?: (child: ReturnType<typeof spawn>) => void
}

/** Runs `node bin/bson2json.js ARGS` and collects its exit status and output. */
function run(args: string[], o: RunOptions = {}): Promise<Result> {
  return new Promise((done, fail) => {
    const fd = o.stdoutFile === undefined ? null : openSync(o.stdoutFile, 'w')
    const stdio: any[] = [o.stdin ? 'pipe' : 'ignore', fd === null ? 'pipe' : fd, 'pipe']
    const child =
      o.ulimitKiB === undefined
        ? spawn(process.execPath, [BIN, ...args], { stdio, uid: o.uid, gid: o.uid })
        : spawn('bash', ['-c', `ulimit -f ${o.ulimitKiB}; exec "$0" "$@"`, process.execPath, BIN, ...args], { stdio, uid: o.uid, gid: o.uid })
    if (fd !== null) closeSync(fd)
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout?.on('data', (c) => out.push(c))
    child.stderr!.on('data', (c) => err.push(c))
    child.on('error', fail)
    if (o.stdin) child.stdin!.on('error', () => {})
    if (o.stdin instanceof Uint8Array) child.stdin!.end(o.stdin)
    o.onSpawn?.(child)
    child.on('close', (code, signal) =>
      done({
        code,
        signal,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err)
          .toString()
          .split('\n')
          .filter((l) => !l.includes('BSON2JSON_FALLBACK') && !l.includes('--trace-warnings'))
          .join('\n'),
      }),
    )
  })
}

/** The count in a failure line: `(N documents written, …)`. */
function written(stderr: string): number {
  const m = /\((\d+) documents? written[,)]/.exec(stderr)
  if (m === null) throw new Error(`no count in ${JSON.stringify(stderr)}`)
  return Number(m[1])
}

/** Asserts NDJSON text is a complete prefix of `count` documents; returns the parsed documents. */
function completePrefix(text: string, count: number): any[] {
  if (count === 0) {
    expect(text).toBe('')
    return []
  }
  expect(text.endsWith('\n'), 'the output ends with a whole document').toBe(true)
  const lines = text.slice(0, -1).split('\n')
  const docs = lines.map((l) => JSON.parse(l))
  expect(docs).toHaveLength(count)
  return docs
}

/** Exactly one line on stderr, matching `re`. */
function oneLine(stderr: string, re: RegExp) {
  expect(stderr.endsWith('\n') && stderr.indexOf('\n') === stderr.length - 1, `one line: ${JSON.stringify(stderr)}`).toBe(true)
  expect(stderr).toMatch(re)
}

let dir: string
let dumpFile: string
let docCount: number
let docStarts: number[]
let dumpBytes: Buffer
let tmpfs: string | null = null

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bson2json-faults-'))
  chmodSync(dir, 0o755)
  // ~6 MB of BSON, ~5.5 MB of NDJSON: larger than the 1 MiB tmpfs and the ulimit below.
  const docs: Uint8Array[] = []
  for (let i = 0; i < 50000; i++) docs.push(BSON.serialize({ _id: i, name: `n${i}`, v: i * 3, sub: { a: i, b: [1, 2, { c: 'x' }] }, s: 'x'.repeat(i % 50) }))
  docCount = docs.length
  docStarts = []
  let at = 0
  for (const d of docs) {
    docStarts.push(at)
    at += d.length
  }
  dumpBytes = Buffer.concat(docs)
  dumpFile = join(dir, 'orders.bson')
  writeFileSync(dumpFile, dumpBytes)
  if (CAN_MOUNT) {
    const mnt = join(dir, 'full')
    mkdirSync(mnt)
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt]).status === 0) tmpfs = mnt
  }
})

/** Removes every file from the tmpfs (a full one from an earlier case would fail the next at once). */
function emptyTmpfs() {
  for (const f of readdirSync(tmpfs!)) rmSync(join(tmpfs!, f), { force: true })
}

afterAll(() => {
  if (tmpfs !== null) spawnSync('umount', [tmpfs])
  rmSync(dir, { recursive: true, force: true })
})

const DUMP_COUNTS = /\(\d+ documents written, [\d.]+ MB BSON in, [\d.]+ MB JSON out, [\d.]+ s\)\n$/

describe('dump: output faults', () => {
  it('-o /dev/full and > /dev/full: exit 1, ENOSPC, 0 documents', async () => {
    const a = await run([dumpFile, '-o', '/dev/full'])
    expect(a.code).toBe(1)
    oneLine(a.stderr, /^bson2json: cannot write \/dev\/full: no space left on device \(ENOSPC\) \(0 documents written, /)
    expect(a.stderr).toMatch(DUMP_COUNTS)
    const b = await run([dumpFile], { stdoutFile: '/dev/full' })
    expect(b.code).toBe(1)
    oneLine(b.stderr, /^bson2json: cannot write stdout \(\/dev\/full\): no space left on device \(ENOSPC\) \(0 documents written, /)
  })

  it.skipIf(!CAN_MOUNT)('a full disk (1 MiB tmpfs): exit 1, ENOSPC, the file holds exactly the documents counted', async () => {
    expect(tmpfs, 'tmpfs mounted').not.toBeNull()
    for (const flags of [[], ['--pretty'], ['--threads', '1']]) {
      for (const to of ['-o', '>']) {
        const f = join(tmpfs!, 'out.ndjson')
        emptyTmpfs()
        const r = to === '-o' ? await run([...flags, dumpFile, '-o', f]) : await run([...flags, dumpFile], { stdoutFile: f })
        expect(r.code, `${flags} ${to}`).toBe(1)
        oneLine(r.stderr, /^bson2json: cannot write (stdout \()?\S+out\.ndjson\)?: no space left on device \(ENOSPC\) \(\d+ documents written, /)
        const n = written(r.stderr)
        expect(n).toBeGreaterThan(1000)
        const text = readFileSync(f, 'utf8')
        if (flags[0] === '--pretty') {
          expect(text.endsWith('}\n')).toBe(true)
          expect(text.match(/^}$/gm)).toHaveLength(n)
        } else {
          const docs = completePrefix(text, n)
          expect(docs[n - 1]._id).toBe(n - 1)
        }
      }
    }
  })

  it('a file size limit (ulimit -f): exit 1, EFBIG (not killed by SIGXFSZ), a complete prefix', async () => {
    for (const to of ['-o', '>']) {
      const f = join(dir, `efbig-${to === '-o' ? 'o' : 'redirect'}.ndjson`)
      const r = to === '-o' ? await run([dumpFile, '-o', f], { ulimitKiB: 200 }) : await run([dumpFile], { stdoutFile: f, ulimitKiB: 200 })
      expect(r.signal).toBeNull()
      expect(r.code).toBe(1)
      oneLine(r.stderr, /^bson2json: cannot write (stdout \()?\S+efbig-\w+\.ndjson\)?: file too large \(the file size limit, ulimit -f\) \(EFBIG\) \(\d+ documents written, /)
      const n = written(r.stderr)
      expect(n).toBeGreaterThan(100)
      completePrefix(readFileSync(f, 'utf8'), n)
    }
  })

  it('-o into a directory that does not exist: exit 1 (an I/O error, not usage), ENOENT, 0 documents', async () => {
    const r = await run([dumpFile, '-o', join(dir, 'no/such/dir/out.json')])
    expect(r.code).toBe(1)
    oneLine(r.stderr, /^bson2json: cannot write \S+no\/such\/dir\/out\.json: no such file or directory \(ENOENT\) \(0 documents written\)\n$/)
  })

  it.skipIf(!AS_NOBODY)('-o where the user may not write: exit 1, EACCES', async () => {
    const locked = join(dir, 'locked')
    mkdirSync(locked, { mode: 0o755 })
    const r = await run([dumpFile, '-o', join(locked, 'out.json')], { uid: 65534 })
    expect(r.code).toBe(1)
    oneLine(r.stderr, /^bson2json: cannot write \S+locked\/out\.json: permission denied \(EACCES\) \(0 documents written\)\n$/)
  })

  it('stdout closed by its reader (| head -1): exit 0, nothing on stderr', async () => {
    const r = await run([dumpFile], { onSpawn: (c) => c.stdout!.once('data', () => c.stdout!.destroy()) })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
  })
})

describe('dump: input faults', () => {
  it('a corrupt document: exit 1, the position said once, the documents before it written and counted', async () => {
    const bad = Buffer.from(dumpBytes)
    bad[docStarts[3540] + 4] = 0x42 // an unknown element type: the first of document 3540
    const f = join(dir, 'corrupt.bson')
    writeFileSync(f, bad)
    const r = await run([f])
    expect(r.code).toBe(1)
    oneLine(r.stderr, new RegExp(`^bson2json: \\S+corrupt\\.bson: corrupt BSON at document 3540, byte offset ${docStarts[3540] + 4}: BSON_UNKNOWN_TYPE: [^(]*\\(3540 documents written, `))
    expect(r.stderr).not.toMatch(/in the stream|document 3540.*document 3540/)
    completePrefix(r.stdout, 3540)
  })

  it('a truncated file and a truncated .gz: exit 1 naming the file, the count written', async () => {
    const cut = join(dir, 'cut.bson')
    writeFileSync(cut, dumpBytes.subarray(0, docStarts[1234] + 10))
    const r = await run([cut])
    expect(r.code).toBe(1)
    oneLine(r.stderr, /^bson2json: \S+cut\.bson: corrupt BSON at document 1234, byte offset \d+: BSON_TRUNCATED: .*\(1234 documents written, /)
    completePrefix(r.stdout, 1234)
    const gz = gzipSync(dumpBytes)
    const cutGz = join(dir, 'cut.bson.gz')
    writeFileSync(cutGz, gz.subarray(0, gz.length >> 1))
    const g = await run([cutGz])
    expect(g.code).toBe(1)
    oneLine(g.stderr, /^bson2json: \S+cut\.bson\.gz: the gzip data is truncated or corrupt: unexpected end of file \(\d+ documents written, [\d.]+ MB BSON in \([\d.]+ MB gzip\), /)
    const n = written(g.stderr)
    expect(n).toBeGreaterThan(1000)
    completePrefix(g.stdout, n)
  })

  it('a text file: exit 1 with the hint that it is not BSON', async () => {
    const f = join(dir, 'notes.txt')
    writeFileSync(f, 'hello, this is not BSON\n')
    const r = await run([f])
    expect(r.code).toBe(1)
    oneLine(r.stderr, /^bson2json: \S+notes\.txt: corrupt BSON at document 0, byte offset 0: BSON_BAD_LENGTH: document length 1819043176 exceeds maxDocumentBytes \d+; the input does not look like BSON \(starts with "hell"\) \(0 documents written, /)
    expect(r.stdout).toBe('')
  })

  it('--skip-invalid after a bad length (document 200 says 7 bytes): resyncs, 49,999 documents, the skip reported', async () => {
    const bad = Buffer.from(dumpBytes)
    bad.writeInt32LE(7, docStarts[200])
    const f = join(dir, 'len7.bson')
    writeFileSync(f, bad)
    for (const threads of ['1', '4']) {
      const r = await run(['--skip-invalid', '--threads', threads, f])
      expect(r.code).toBe(0)
      const lines = r.stderr.trimEnd().split('\n')
      expect(lines).toHaveLength(2)
      expect(lines[0]).toBe(
        `bson2json: ${f}: skipped corrupt document 200 at byte offset ${docStarts[200]} (${docStarts[201] - docStarts[200]} bytes): BSON_BAD_TERMINATOR: document length 7 does not end at a document's 0 terminator`,
      )
      expect(lines[1]).toMatch(new RegExp(`^bson2json: ${docCount - 1} documents \\(1 skipped, ${docStarts[201] - docStarts[200]} bytes\\), `))
      const docs = completePrefix(r.stdout, docCount - 1)
      expect(docs.map((d) => d._id)).toEqual([...Array(docCount).keys()].filter((i) => i !== 200))
    }
  })

  it('SIGINT while reading stdin: exit 130, the documents converted so far written and counted', async () => {
    const r = await run([], {
      onSpawn: (c) => {
        // Half the input, then wait: the signal comes once the CLI has written those documents
        // (their 25,000 NDJSON lines have arrived), while it waits for more input.
        c.stdin!.write(dumpBytes.subarray(0, docStarts[25000]))
        let lines = 0
        c.stdout!.on('data', (d: Buffer) => {
          for (let i = d.indexOf(10); i !== -1; i = d.indexOf(10, i + 1)) lines++
          if (lines === 25000) setTimeout(() => c.kill('SIGINT'), 50)
        })
      },
      stdin: 'open',
    })
    expect(r.code).toBe(130)
    oneLine(r.stderr, /^bson2json: <stdin>: interrupted by SIGINT \(\d+ documents written, /)
    completePrefix(r.stdout, written(r.stderr))
    expect(written(r.stderr)).toBe(25000)
  })
})

describe('export: output, server and signal faults', () => {
  const mongo = useMongo({ direct: true })
  const DB = mongo.dbName('faults')
  let uri: string
  let client: MongoClient
  const N = 3000
  const exp = (args: string[], o: RunOptions = {}) => run(['export', '--uri', uri, '--db', DB, '-c', 'orders', '--batchSize', '100', ...args], o)
  const EXPORT_COUNTS = /\(\d+ documents? written, [\d.]+ MB, [\d.]+ s\)\n$/

  beforeAll(async () => {
    uri = mongo.uri
    client = await MongoClient.connect(uri)
    await client.db(DB).dropDatabase()
    const docs = []
    for (let i = 0; i < N; i++) docs.push({ _id: i, name: `n${i}`, pad: 'p'.repeat(300 + (i % 100)), tags: ['a', i % 7] })
    await client.db(DB).collection('orders').insertMany(docs)
  })

  afterAll(async () => {
    await client?.close()
  })

  it('-o /dev/full and > /dev/full: exit 1, ENOSPC, 0 documents', async () => {
    const a = await exp(['-o', '/dev/full'])
    expect(a.code).toBe(1)
    oneLine(a.stderr, /^bson2json export: cannot write \/dev\/full: no space left on device \(ENOSPC\) \(0 documents written, /)
    expect(a.stderr).toMatch(EXPORT_COUNTS)
    const b = await exp([], { stdoutFile: '/dev/full' })
    expect(b.code).toBe(1)
    oneLine(b.stderr, /^bson2json export: cannot write stdout \(\/dev\/full\): no space left on device \(ENOSPC\) \(0 documents written, /)
  })

  it.skipIf(!CAN_MOUNT)('a full disk (1 MiB tmpfs): exit 1, the file holds exactly the documents counted', async () => {
    for (const to of ['-o', '>']) {
      const f = join(tmpfs!, 'export.json')
      emptyTmpfs()
      const r = to === '-o' ? await exp(['-o', f]) : await exp([], { stdoutFile: f })
      expect(r.code).toBe(1)
      oneLine(r.stderr, /^bson2json export: cannot write (stdout \()?\S+export\.json\)?: no space left on device \(ENOSPC\) \(\d+ documents written, /)
      const n = written(r.stderr)
      expect(n).toBeGreaterThan(500)
      const docs = completePrefix(readFileSync(f, 'utf8'), n)
      expect(docs[n - 1]._id).toBe(n - 1)
    }
  })

  it('a file size limit (ulimit -f): exit 1, EFBIG, a complete prefix', async () => {
    for (const to of ['-o', '>']) {
      const f = join(dir, `export-efbig-${to === '-o' ? 'o' : 'redirect'}.json`)
      const r = to === '-o' ? await exp(['-o', f], { ulimitKiB: 100 }) : await exp([], { stdoutFile: f, ulimitKiB: 100 })
      expect(r.signal).toBeNull()
      expect(r.code).toBe(1)
      oneLine(r.stderr, /^bson2json export: cannot write (stdout \()?\S+export-efbig-\w+\.json\)?: file too large \(the file size limit, ulimit -f\) \(EFBIG\) \(\d+ documents written, /)
      const n = written(r.stderr)
      expect(n).toBeGreaterThan(100)
      completePrefix(readFileSync(f, 'utf8'), n)
    }
  })

  it('-o into a missing directory: exit 1, ENOENT; EACCES as nobody', async () => {
    const r = await exp(['-o', join(dir, 'nope/out.json')])
    expect(r.code).toBe(1)
    oneLine(r.stderr, /^bson2json export: cannot write \S+nope\/out\.json: no such file or directory \(ENOENT\) \(0 documents written\)\n$/)
    if (AS_NOBODY) {
      const locked = join(dir, 'locked-export')
      mkdirSync(locked, { mode: 0o755 })
      const a = await exp(['-o', join(locked, 'out.json')], { uid: 65534 })
      expect(a.code).toBe(1)
      oneLine(a.stderr, /^bson2json export: cannot write \S+locked-export\/out\.json: permission denied \(EACCES\) \(0 documents written\)\n$/)
    }
  })

  it('stdout closed by its reader: exit 0, nothing on stderr', async () => {
    const r = await exp([], { onSpawn: (c) => c.stdout!.once('data', () => c.stdout!.destroy()) })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
  })

  it("a getMore that fails (failCommand or the test server's fault): exit 1 naming the collection, the batches before it written", async () => {
    let admin: MongoClient | null = null
    if (URI) {
      admin = await MongoClient.connect(URI)
      await admin.db('admin').command({
        configureFailPoint: 'failCommand',
        mode: { skip: 2, times: 1 },
        data: { failCommands: ['getMore'], errorCode: 2, appName: 'bson2json export' },
      })
    } else {
      mongo.server!.injectFault({ command: 'getMore', kind: 'error', count: 1, skip: 2, ns: `${DB}.orders` })
    }
    try {
      const r = await exp([])
      expect(r.code).toBe(1)
      oneLine(r.stderr, new RegExp(`^bson2json export: the server rejected the export of ${DB}\\.orders: .*\\(300 documents written, `))
      const docs = completePrefix(r.stdout, 300)
      expect(docs[299]._id).toBe(299)
    } finally {
      if (admin !== null) {
        await admin.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' })
        await admin.close()
      }
    }
  })

  it.skipIf(!!URI)('the server dying mid-export (connections dropped on every getMore): exit 1, one line, a complete prefix', async () => {
    mongo.server!.injectFault({ command: 'getMore', kind: 'closeSocket', count: Infinity, skip: 3, ns: `${DB}.orders` })
    try {
      const r = await exp([])
      expect(r.code).toBe(1)
      oneLine(r.stderr, new RegExp(`^bson2json export: lost the connection to mongodb://127\\.0\\.0\\.1:\\d+/\\S* while reading ${DB}\\.orders: .*\\(400 documents written, `))
      completePrefix(r.stdout, 400)
    } finally {
      mongo.server!.clearFaults()
    }
  })

  it.skipIf(!!URI)('the server process killed mid-export (SIGKILL): exit 1, one line, a complete prefix', async () => {
    // A server of its own, in a child process, killed once the export has written something.
    const child = spawn(process.execPath, [resolve(__dirname, '../../tools/test-server/cli.js'), '--port', '0', '--direct', '--quiet'], { stdio: ['ignore', 'pipe', 'ignore'] })
    const own: string = await new Promise((ok) => child.stdout.once('data', (c) => ok(String(c).split('\n')[0])))
    const c2 = await MongoClient.connect(own)
    const docs = []
    for (let i = 0; i < 5000; i++) docs.push({ _id: i, pad: 'q'.repeat(200) })
    await c2.db(DB).collection('big').insertMany(docs)
    await c2.close()
    const r = await run(['export', '--uri', own, '--db', DB, '-c', 'big', '--batchSize', '50', '--timeout', '2'], {
      onSpawn: (c) => c.stdout!.once('data', () => child.kill('SIGKILL')),
    })
    expect(r.code).toBe(1)
    oneLine(r.stderr, /^bson2json export: lost the connection to mongodb:\/\/127\.0\.0\.1:\d+\/\S* while reading \S+\.big: .*\(\d+ documents written, /)
    const n = written(r.stderr)
    expect(n).toBeGreaterThan(0)
    expect(n).toBeLessThan(5000)
    completePrefix(r.stdout, n)
  })

  it('a collection that does not exist: exit 1, one line with the nearest name', async () => {
    const r = await exp(['-c', 'ordres'])
    expect(r.code).toBe(1)
    oneLine(r.stderr, /^bson2json export: collection 'ordres' does not exist in database '\S+' \(did you mean 'orders'\?\) \(0 documents written, /)
    const empty = await run(['export', '--uri', uri, '--db', `${DB}_none`, '-c', 'x'])
    expect(empty.code).toBe(1)
    oneLine(empty.stderr, /^bson2json export: database '\S+_none' has no collections on mongodb:\/\/\S+ \(no collection 'x'\) \(0 documents written, /)
  })

  it.skipIf(!!URI)('--parallel on a server slow to find an _id: one cursor, as without --parallel, and it says so', async () => {
    // both timed lookups (the smallest and the largest _id) slow: the server is
    mongo.server!.injectFault({ command: 'find', kind: 'delay', delayMs: 400, count: 2, ns: `${DB}.orders` })
    const t = Date.now()
    const r = await exp(['--parallel', '4'])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(
      /^bson2json export: --parallel 4: computing _id ranges…\nbson2json export: --parallel 4: reading with one cursor, as without --parallel: one _id lookup took 0\.\d\d s on this server: 4 ranges would take ~\d+\.\d s \([\d.]+ s\)\nbson2json export: exported 3000 documents \(/,
    )
    completePrefix(r.stdout, N)
    expect(Date.now() - t).toBeLessThan(15000)
  })

  it.skipIf(!!URI)('--parallel with one slow _id lookup (a moment of load, a new connection): still ranges', async () => {
    mongo.server!.injectFault({ command: 'find', kind: 'delay', delayMs: 400, count: 1, ns: `${DB}.orders` })
    const r = await exp(['--parallel', '4'])
    expect(r.code).toBe(0)
    expect(r.stderr).not.toContain('reading with one cursor')
    completePrefix(r.stdout, N)
  })

  it('the mongodb package: one line naming it and where it looked (exit 2); found from the current directory', async () => {
    // A copy of bson2json with no mongodb next to it, as a global install; run from a project.
    const global = join(dir, 'global', 'bson2json')
    const project = join(dir, 'project')
    mkdirSync(join(global, 'node_modules'), { recursive: true })
    mkdirSync(join(project, 'node_modules'), { recursive: true })
    const repo = resolve(__dirname, '../..')
    for (const f of ['bin', 'lib', 'package.json', 'index.js', 'binding.js']) cpSync(join(repo, f), join(global, f), { recursive: true })
    for (const f of readdirSync(repo)) if (f.endsWith('.node')) cpSync(join(repo, f), join(global, f))
    symlinkSync(realpathSync(join(repo, 'node_modules', 'bson')), join(global, 'node_modules', 'bson'))
    // The WASI build too (npm run test:wasi), with the runtime its loader requires.
    for (const f of readdirSync(repo)) if (f.endsWith('.wasm') || f === 'bson2json.wasi.cjs' || f === 'wasi-worker.mjs') cpSync(join(repo, f), join(global, f))
    for (const m of ['@napi-rs/wasm-runtime', '@emnapi', '@tybys', 'tslib']) {
      mkdirSync(dirname(join(global, 'node_modules', m)), { recursive: true })
      symlinkSync(realpathSync(join(repo, 'node_modules', m)), join(global, 'node_modules', m))
    }
    const bin = join(global, 'bin', 'bson2json.js')
    const args = [bin, 'export', '--uri', uri, '--db', DB, '-c', 'orders', '--limit', '2']
    // Asynchronously: the test server answers from this process.
    const exec = (): Promise<{ status: number | null; stdout: string; stderr: string }> =>
      new Promise((done) => {
        const c = spawn(process.execPath, args, { cwd: project })
        let stdout = ''
        let stderr = ''
        c.stdout.on('data', (d) => (stdout += d))
        c.stderr.on('data', (d) => (stderr += d))
        c.on('close', (status) => done({ status, stdout, stderr }))
      })
    const missing = await exec()
    expect(missing.status).toBe(2)
    expect(missing.stderr).toBe(
      `bson2json export: needs the package 'mongodb', not found next to bson2json (${global}) nor from the current directory (${project}): npm install mongodb\n`,
    )
    symlinkSync(realpathSync(join(resolve(__dirname, '../..'), 'node_modules', 'mongodb')), join(project, 'node_modules', 'mongodb'))
    const found = await exec()
    expect(found.status, found.stderr).toBe(0)
    completePrefix(found.stdout, 2)
  })

  it('a shell-syntax query gets the hint to quote keys (exit 2)', async () => {
    const r = await exp(['-q', '{status: "open"}'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^bson2json export: --query is not valid Extended JSON: .*quote every key and string with double quotes, e\.g\. '\{"status": "open"\}'\)\nTry 'bson2json export --help'\.\n$/)
  })

  it.skipIf(!!URI)('SIGINT mid-export: exit 130, the documents written so far complete and counted', async () => {
    mongo.server!.injectFault({ command: 'getMore', kind: 'delay', delayMs: 400, count: Infinity, ns: `${DB}.orders` })
    try {
      const r = await exp([], { onSpawn: (c) => c.stdout!.once('data', () => setTimeout(() => c.kill('SIGINT'), 100)) })
      expect(r.code).toBe(130)
      oneLine(r.stderr, /^bson2json export: interrupted by SIGINT \(\d+ documents written, /)
      const n = written(r.stderr)
      expect(n).toBeGreaterThan(0)
      expect(n).toBeLessThan(N)
      completePrefix(r.stdout, n)
    } finally {
      mongo.server!.clearFaults()
    }
  })
})
