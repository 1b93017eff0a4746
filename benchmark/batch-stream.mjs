#!/usr/bin/env node
// Batch, stream and CLI throughput, same process, methods interleaved per round:
//   per-document toJSON vs toJSONList vs toJSONArray vs toNDJSON vs createTranscodeStream vs
//   the baseline JSON.stringify(BSON.deserialize(doc)), on tiny {_id, a:'b'} and ~1 KB documents;
//   toJSONListAsync with threads 1 vs 2 on a ~16 MB batch; the CLI on the sample dump.
//
//   node benchmark/batch-stream.mjs [--rounds N] [--time MS] [--no-cli]
// MB/s are of BSON input. Prints a markdown table.

import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { availableParallelism } from 'node:os'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const b2j = require(root)

const args = process.argv.slice(2)
const argValue = (name, def) => {
  const i = args.indexOf(name)
  return i === -1 ? def : Number(args[i + 1])
}
const ROUNDS = argValue('--rounds', 5)
const TIME_MS = argValue('--time', 250)
const WITH_CLI = !args.includes('--no-cli')

function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const rnd = mulberry32(42)
const oid = () => new BSON.ObjectId(Buffer.from(Array.from({ length: 12 }, () => Math.floor(rnd() * 256))))
const word = () => Math.floor(rnd() * 1e9).toString(36)

function workload(name, count, make) {
  const docs = Array.from({ length: count }, make).map((d) => BSON.serialize(d))
  const concat = Buffer.concat(docs)
  return { name, docs, concat, bytes: concat.length }
}

const tiny = workload('tiny {_id, a:"b"}', 100_000, () => ({ _id: oid(), a: 'b' }))
const kb = workload('~1 KB docs', 4_000, () => ({
  _id: oid(),
  name: `${word()} ${word()} Müller`,
  email: `${word()}@example.com`,
  createdAt: new Date(1.7e12 + Math.floor(rnd() * 1e10)),
  active: rnd() < 0.5,
  score: rnd() * 100,
  count: Math.floor(rnd() * 1e6),
  tags: Array.from({ length: 8 }, word),
  address: { street: `${word()} street ${Math.floor(rnd() * 100)}`, city: word(), zip: word(), geo: [rnd() * 180, rnd() * 90] },
  items: Array.from({ length: 6 }, () => ({ sku: word(), qty: Math.floor(rnd() * 5), price: rnd() * 100, note: word() + word() })),
  bio: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. '.repeat(2),
}))

async function streamOnce(concat) {
  const CHUNK = 64 * 1024
  const chunks = []
  for (let i = 0; i < concat.length; i += CHUNK) chunks.push(concat.subarray(i, i + CHUNK))
  let n = 0
  await pipeline(
    Readable.from(chunks, { objectMode: false }),
    b2j.createTranscodeStream(),
    new Writable({
      write(c, _e, cb) {
        n += c.length
        cb()
      },
    }),
  )
  return n
}

const methods = {
  'JSON.stringify(BSON.deserialize()) per doc': (w) => {
    let n = 0
    for (const d of w.docs) n += JSON.stringify(BSON.deserialize(d)).length
    return n
  },
  'toJSON per doc': (w) => {
    let n = 0
    for (const d of w.docs) n += b2j.toJSON(d).length
    return n
  },
  'toJSONList(docs[])': (w) => b2j.toJSONList(w.docs).length,
  'toJSONArray(docs[])': (w) => b2j.toJSONArray(w.docs).length,
  'toNDJSON(concatenated)': (w) => b2j.toNDJSON(w.concat).length,
  'createTranscodeStream (64 KiB chunks)': (w) => streamOnce(w.concat),
}
const BASELINE = 'JSON.stringify(BSON.deserialize()) per doc'

function check(w) {
  const want = w.docs.map((d) => JSON.stringify(BSON.deserialize(d)))
  const list = b2j.toJSONList(w.docs)
  if (list.join('\n') !== want.join('\n')) throw new Error(`${w.name}: toJSONList differs from the baseline`)
  if (Buffer.from(b2j.toNDJSON(w.concat)).toString() !== want.join('\n') + '\n') throw new Error(`${w.name}: toNDJSON differs`)
}

async function timeIt(fn, w) {
  const t0 = performance.now()
  let iters = 0
  let t = 0
  do {
    await fn(w)
    iters++
    t = performance.now() - t0
  } while (t < TIME_MS)
  return (w.bytes * iters) / 1e6 / (t / 1000)
}

async function measure(w) {
  check(w)
  const best = {}
  for (const m of Object.keys(methods)) {
    await timeIt(methods[m], w) // warm-up
    best[m] = []
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const m of Object.keys(methods)) best[m].push(await timeIt(methods[m], w))
  }
  const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)]
  return Object.fromEntries(Object.entries(best).map(([m, v]) => [m, median(v)]))
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1))

console.log(`# bson2json batch / stream benchmark\n`)
console.log(`node ${process.version}, ${availableParallelism()} CPUs, backend ${b2j.backend}; median of ${ROUNDS} interleaved rounds x ${TIME_MS} ms; MB/s of BSON input\n`)
for (const w of [tiny, kb]) {
  const res = await measure(w)
  console.log(`## ${w.name}: ${w.docs.length} docs, ${(w.bytes / 1e6).toFixed(1)} MB\n`)
  console.log('| method | MB/s | vs baseline | vs toJSON per doc |')
  console.log('|---|---:|---:|---:|')
  for (const [m, v] of Object.entries(res)) {
    console.log(`| ${m} | ${fmt(v)} | ${(v / res[BASELINE]).toFixed(1)}x | ${(v / res['toJSON per doc']).toFixed(2)}x |`)
  }
  console.log('')
}

// Multi-core: toJSONListAsync threads 1 vs 2 on a ~16 MB batch of ~1 KB documents.
{
  const reps = Math.ceil((16 * 1024 * 1024) / kb.bytes)
  const big = Buffer.concat(Array.from({ length: reps }, () => kb.concat))
  const res = { 1: [], 2: [] }
  for (let r = 0; r < ROUNDS + 1; r++) {
    for (const threads of [1, 2]) {
      const t0 = performance.now()
      await b2j.toJSONListAsync(big, { threads })
      if (r > 0) res[threads].push(big.length / 1e6 / ((performance.now() - t0) / 1000))
    }
  }
  const med = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)]
  const t1 = med(res[1])
  const t2 = med(res[2])
  console.log(`## toJSONListAsync, ${(big.length / 1e6).toFixed(1)} MB concatenated ~1 KB docs\n`)
  console.log('| threads | MB/s | speed-up |')
  console.log('|---:|---:|---:|')
  console.log(`| 1 | ${fmt(t1)} | 1.00x |`)
  console.log(`| 2 | ${fmt(t2)} | ${(t2 / t1).toFixed(2)}x |`)
  console.log('')
}

// The CLI on the sample dump (generated with scripts/sample-dump.mjs if missing).
if (WITH_CLI) {
  let sample = resolve(root, 'tmp/sample.bson')
  if (!existsSync(sample)) {
    sample = resolve(root, 'tmp/bench-sample.bson')
    if (!existsSync(sample)) {
      spawnSync(process.execPath, [resolve(root, 'scripts/sample-dump.mjs'), '--docs', '100000', '--out', sample], { stdio: 'inherit' })
    }
  }
  const rows = []
  for (const extra of [[], ['--threads', '2']]) {
    let best = null
    for (let r = 0; r < 3; r++) {
      const p = spawnSync(process.execPath, [resolve(root, 'bin/bson2json.js'), sample, '-o', '/dev/null', '--stats', ...extra], {
        encoding: 'utf8',
      })
      const m = /(\d+) documents.*?([\d.]+) MB BSON in.*?([\d.]+) s, ([\d.]+) MB\/s/.exec(p.stderr)
      if (p.status !== 0 || !m) throw new Error(`CLI failed: ${p.stderr}`)
      if (best === null || Number(m[4]) > Number(best[4])) best = m
    }
    rows.push(`| bson2json ${['sample.bson', ...extra].join(' ')} | ${best[1]} | ${best[2]} | ${best[3]} | ${best[4]} |`)
  }
  console.log(`## CLI (best of 3, output to /dev/null)\n`)
  console.log('| command | documents | MB BSON | seconds | MB/s |')
  console.log('|---|---:|---:|---:|---:|')
  for (const r of rows) console.log(r)
  console.log('')
}
