/**
 * `bson2json dump` of a mongodump --archive under abuse (issue 48): an archive cut at any block
 * boundary, one missing a collection's end marker and one whose CRC does not match exit 1 with
 * the count written (never 0 as if complete); 16 MiB documents stream with bounded memory and
 * linear time, plain and gzip; a gzip bomb streams at a steady rate and stops at SIGTERM.
 * The archives are built here with the layout of mongo-tools' common/archive (spec.md there);
 * __test__/support/fixtures/mongodump.archive, written by mongodump itself, checks the CRC.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { closeSync, openSync, readFileSync, rmSync, mkdtempSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { BSON } from 'bson'
import { run } from '../support/cli-run'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Crc64 } = require('../../lib/cli/archive')

const FIXTURE = resolve(__dirname, '../support/fixtures/mongodump.archive')

/** CRC-64-ECMA as Go's hash/crc64 computes it (reflected, inverted in and out), on BigInt: slow and plain. */
function crc64(parts: Uint8Array[]): bigint {
  const POLY = 0xc96c5795d7870f42n
  let crc = 0xffffffffffffffffn
  for (const p of parts) {
    for (const b of p) {
      crc ^= BigInt(b)
      for (let k = 0; k < 8; k++) crc = crc & 1n ? (crc >> 1n) ^ POLY : crc >> 1n
    }
  }
  return crc ^ 0xffffffffffffffffn
}

const TERM = Buffer.from([0xff, 0xff, 0xff, 0xff])
const MAGIC = Buffer.from([0x6d, 0xe2, 0x99, 0x81])

interface Part {
  /** what the bytes are (for messages) */
  what: string
  bytes: Buffer
  /** documents of the selected collections that end with this part */
  docs: number
}

/**
 * An archive as mongodump writes one: the prelude (header, one metadata document per collection,
 * terminator), then per collection a block of its documents and its end-of-collection block
 * (`EOF: true` with the CRC of its documents). Returned as parts, so a test can cut between any two.
 */
function archiveParts(colls: Record<string, Buffer[]>, o: { crc?: (ns: string, real: bigint) => bigint } = {}): Part[] {
  const parts: Part[] = [
    { what: 'magic', bytes: MAGIC, docs: 0 },
    { what: 'header', bytes: Buffer.from(BSON.serialize({ concurrent_collections: 1, version: '0.1', server_version: '8.0.0', tool_version: 'test' })), docs: 0 },
  ]
  for (const ns of Object.keys(colls)) {
    const [db, collection] = ns.split('.')
    parts.push({ what: `metadata ${ns}`, bytes: Buffer.from(BSON.serialize({ db, collection, metadata: '{"indexes":[],"type":"collection"}', size: 0 })), docs: 0 })
  }
  parts.push({ what: 'prelude terminator', bytes: TERM, docs: 0 })
  for (const [ns, docs] of Object.entries(colls)) {
    const [db, collection] = ns.split('.')
    parts.push({ what: `block header ${ns}`, bytes: Buffer.from(BSON.serialize({ db, collection, EOF: false, CRC: BSON.Long.fromNumber(0) })), docs: 0 })
    docs.forEach((d, i) => parts.push({ what: `${ns} document ${i}`, bytes: d, docs: 1 }))
    parts.push({ what: `block terminator ${ns}`, bytes: TERM, docs: 0 })
    const real = crc64(docs)
    const crc = o.crc ? o.crc(ns, real) : real
    parts.push({ what: `EOF ${ns}`, bytes: Buffer.from(BSON.serialize({ db, collection, EOF: true, CRC: BSON.Long.fromBigInt(BigInt.asIntN(64, crc)) })), docs: 0 })
    parts.push({ what: `EOF terminator ${ns}`, bytes: TERM, docs: 0 })
  }
  return parts
}

const written = (stderr: string) => Number((/\((\d+) documents? written/.exec(stderr) ?? [])[1])

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bson2json-archive-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const small = {
  'shop.orders': Array.from({ length: 3 }, (_, i) => Buffer.from(BSON.serialize({ _id: i, total: i * 1.5 }))),
  'shop.users': Array.from({ length: 2 }, (_, i) => Buffer.from(BSON.serialize({ _id: `u${i}`, email: `${i}@x` }))),
}

// The peak RSS bound of one 16 MiB document in flight. The WASI build (`npm run test:wasi`)
// copies each document into the module's linear memory and its JSON out of it, and that memory
// grows to its high-water mark and never shrinks: its bound is higher, and still far below
// what a document count could add (the bomb below unpacks to 11 GB).
const RSS_BOUND_MB = process.env.NAPI_RS_FORCE_WASI === '1' ? 600 : 400

describe('nothing lost: a damaged archive is exit 1 with the count written', () => {
  it('the CRC of mongodump\'s own archive is the one this file computes (the test\'s writer is right)', () => {
    const buf = readFileSync(FIXTURE)
    // shop.users' EOF block carries the CRC of its two documents (see the fixture's layout)
    let p = 4
    const next = () => {
      const n = buf.readInt32LE(p)
      if (n === -1) {
        p += 4
        return null
      }
      const d = buf.subarray(p, p + n)
      p += n
      return d
    }
    next()
    while (next() !== null);
    const crcs = new Map<string, bigint>()
    const seen = new Map<string, Buffer[]>()
    while (p < buf.length) {
      const h = BSON.deserialize(next()!, { useBigInt64: true })
      const ns = `${h.db}.${h.collection}`
      if (h.EOF) {
        crcs.set(ns, BigInt.asUintN(64, h.CRC))
        next()
      } else {
        let d
        while ((d = next()) !== null) (seen.get(ns) ?? seen.set(ns, []).get(ns)!).push(d)
      }
    }
    expect(crcs.size).toBe(3)
    for (const [ns, crc] of crcs) expect(crc64(seen.get(ns)!), ns).toBe(crc)
  })

  it('cut at every block boundary: exit 1 with the documents before the cut written, never exit 0', async () => {
    const parts = archiveParts(small)
    const whole = Buffer.concat(parts.map((p) => p.bytes))
    const ok = await run(['--nsInclude', '*', '-'], { stdin: whole })
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout.trimEnd().split('\n')).toHaveLength(5)
    let at = 0
    let docs = 0
    const failures: string[] = []
    for (const p of parts.slice(0, -1)) {
      at += p.bytes.length
      docs += p.docs
      const r = await run(['--nsInclude', '*', '-'], { stdin: whole.subarray(0, at) })
      const lines = r.stdout === '' ? 0 : r.stdout.trimEnd().split('\n').length
      if (r.code !== 1 || written(r.stderr) !== docs || lines !== docs) failures.push(`cut after ${p.what} (byte ${at}): exit ${r.code}, ${lines} lines: ${r.stderr.trim()}`)
    }
    expect(failures).toEqual([])
  }, 120_000)

  it('an archive without one collection\'s end marker: exit 1 naming the collection', async () => {
    const parts = archiveParts(small).filter((p) => !p.what.endsWith('shop.orders') || !p.what.startsWith('EOF'))
    const r = await run(['--nsInclude', '*', '-'], { stdin: Buffer.concat(parts.map((p) => p.bytes)) })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/shop\.orders/)
    expect(written(r.stderr)).toBe(5)
  })

  it('a CRC that does not match: exit 1 naming the collection; --nsInclude of another collection is not affected', async () => {
    const bad = Buffer.concat(archiveParts(small, { crc: (ns, real) => (ns === 'shop.users' ? real ^ 1n : real) }).map((p) => p.bytes))
    const r = await run(['--nsInclude', '*', '-'], { stdin: bad })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/CRC .*shop\.users|shop\.users.*CRC/)
    const other = await run(['--nsInclude', 'shop.orders', '-'], { stdin: bad })
    expect(other.code, other.stderr).toBe(0)
  })

  it('a document changed in place (still valid BSON) is caught by the CRC, plain and gzip', async () => {
    const buf = Buffer.from(readFileSync(FIXTURE))
    const at = buf.indexOf('hello')
    buf[at] = 'j'.charCodeAt(0)
    for (const input of [buf, gzipSync(buf)]) {
      const r = await run(['--nsInclude', 'crm.notes', '-'], { stdin: input })
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/crm\.notes/)
      expect(r.stderr).toMatch(/CRC/)
    }
  })
})

/** lib/cli/archive.js's CRC (table-driven, on 32-bit halves) against the plain BigInt one above. */
function fastCrc(parts: Uint8Array[]): bigint {
  const c = new Crc64()
  for (const p of parts) c.update(p)
  return c.value()
}

/**
 * Writes an archive of `count` documents of `size` bytes (one collection, `big.docs`) to `file`,
 * one document in memory at a time; with `gzip`, as one gzip member per part (a valid multi-member
 * gzip, as `cat a.gz b.gz` makes), each document compressed once and its member repeated.
 * `withCrc` false: the end block's CRC is left 0 (for an archive no test reads to its end).
 */
function writeBigArchive(file: string, count: number, size: number, gzip: boolean, withCrc = true) {
  const doc = (i: number) => {
    const d = Buffer.from(BSON.serialize({ _id: 0, s: 'x'.repeat(size - 22) }))
    d.writeInt32LE(i, 9) // _id: i, the same length
    return d
  }
  expect(doc(0).length).toBe(size)
  const crc = new Crc64()
  const fd = openSync(file, 'w')
  const put = (b: Uint8Array) => writeSync(fd, gzip ? gzipSync(b) : b)
  const parts = archiveParts({ 'big.docs': [] })
  const header = parts.findIndex((p) => p.what === 'block terminator big.docs')
  for (const p of parts.slice(0, header)) put(p.bytes)
  // every document's bytes differ only in _id: compress the first once when gzip and all are equal
  const first = doc(0)
  const member = gzip ? gzipSync(first, { level: 9 }) : first
  for (let i = 0; i < count; i++) {
    if (withCrc) crc.update(first)
    writeSync(fd, member)
  }
  put(TERM)
  put(Buffer.from(BSON.serialize({ db: 'big', collection: 'docs', EOF: true, CRC: BSON.Long.fromBigInt(BigInt.asIntN(64, crc.value())) })))
  put(TERM)
  closeSync(fd)
}

const MiB = 1 << 20
/** Peak RSS in MB of a run under /usr/bin/time (its line is taken off stderr). */
async function measured(args: string[]) {
  const r = await run(args, { prefix: ['/usr/bin/time', '-f', 'maxrss=%M', process.execPath], killAfter: 300_000 })
  const m = /maxrss=(\d+)\n?$/.exec(r.stderr)
  expect(m, r.stderr).not.toBeNull()
  return { ...r, stderr: r.stderr.slice(0, m!.index), rssMB: Number(m![1]) / 1024 }
}

describe('bounded memory and time: large documents stream', () => {
  it("the reader's CRC is the plain one on random bytes in random pieces", () => {
    let seed = 7
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32
    for (let k = 0; k < 20; k++) {
      const parts = Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => Buffer.from(Array.from({ length: Math.floor(rnd() * 300) }, () => Math.floor(rnd() * 256))))
      expect(fastCrc(parts)).toBe(crc64(parts))
    }
  })

  it(`12 documents of 16 MiB, plain and gzip: peak RSS below ${RSS_BOUND_MB} MB, every document written`, async () => {
    for (const gzip of [false, true]) {
      const f = join(dir, `big-${gzip}.archive`)
      writeBigArchive(f, 12, 16 * MiB, gzip)
      const r = await measured(['--nsInclude', 'big.docs', f, '-o', '/dev/null'])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(/^bson2json: 12 documents, /)
      expect(r.rssMB, `gzip ${gzip}: peak RSS ${r.rssMB.toFixed(0)} MB`).toBeLessThan(RSS_BOUND_MB)
    }
  }, 300_000)

  it('gzip is linear: 2 documents of 16 MiB take about the time of 32 of 1 MiB (the same bytes)', async () => {
    const one = join(dir, 'small.archive.gz')
    const two = join(dir, 'large.archive.gz')
    writeBigArchive(one, 32, MiB, true)
    writeBigArchive(two, 2, 16 * MiB, true)
    const time = async (f: string) => {
      const t = Date.now()
      const r = await run(['-q', '--nsInclude', '*', f, '-o', '/dev/null'], { killAfter: 120_000 })
      expect(r.code, r.stderr).toBe(0)
      return Date.now() - t
    }
    // side by side, twice, the best of each: a ratio, not a figure
    const small = Math.min(await time(one), await time(one))
    const large = Math.min(await time(two), await time(two))
    expect(large / small, `${large} ms vs ${small} ms`).toBeLessThan(3)
  }, 300_000)
})

describe('a gzip bomb: 11 MB that unpack to 11 GB of 16 MiB documents', () => {
  it('streams at a steady rate with bounded memory, and SIGTERM ends it within a second with the count', async () => {
    const f = join(dir, 'bomb.archive.gz')
    writeBigArchive(f, 680, 16 * MiB, true, false)
    const gzBytes = readFileSync(f).length
    expect(gzBytes).toBeGreaterThan(10e6)
    expect(gzBytes).toBeLessThan(12e6)
    let signalled = 0
    let hwmMB = 0
    let cpuS = 0
    const r = await run(['--nsInclude', '*', f, '-o', '/dev/null'], {
      killAfter: 60_000,
      onSpawn: (c) =>
        setTimeout(() => {
          const status = readFileSync(`/proc/${c.pid}/status`, 'utf8')
          hwmMB = Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024
          // utime + stime (fields 14 and 15, clock ticks of 1/100 s): the rate is per second of
          // the command's own CPU, so a loaded machine does not make a linear reader look stuck
          const stat = readFileSync(`/proc/${c.pid}/stat`, 'utf8')
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
          cpuS = (Number(fields[11]) + Number(fields[12])) / 100
          signalled = Date.now()
          c.kill('SIGTERM')
        }, 6000),
    })
    const answered = Date.now() - signalled
    expect(r.code, r.stderr).toBe(143)
    expect(answered, 'the signal answered').toBeLessThan(1000)
    expect(r.stderr).toMatch(/^bson2json: \S+bomb\.archive\.gz: interrupted by SIGTERM \((\d+) documents written, /)
    const n = Number(/\((\d+) documents written/.exec(r.stderr)![1])
    // Quadratic gzip (the bug) unpacked 16 MiB documents at about 3.5 MB/s: one document in
    // 6 s. Linear, each takes a fraction of a CPU second, natively and on the WASI build.
    expect(n, `documents written in 6 s (${cpuS} s of CPU)`).toBeGreaterThanOrEqual(3)
    expect(n / cpuS, `documents written per CPU second (${n} in ${cpuS} s)`).toBeGreaterThan(1)
    expect(hwmMB, 'peak RSS (MB) after 6 s').toBeLessThan(RSS_BOUND_MB)
  }, 120_000)
})
