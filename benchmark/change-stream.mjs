#!/usr/bin/env node
// Change-stream throughput: bson2json watch() vs the driver's coll.watch() + JSON.stringify.
//
//   node benchmark/change-stream.mjs [--events N] [--quick]
//   node benchmark/change-stream.mjs --per-event [--quick] [--rounds N] [--size 1|10] [--ways a,b]   (client CPU per event,
//     and the floor; --size: only the ~1 KB or ~10 KB events; --ways: only these readers, in this order; also each
//     reader's CPU by thread and V8's garbage collections)
//   node benchmark/change-stream.mjs --per-event --instructions [--events N] [--rounds P] [--warmup W] [--warmup-batch B]
//     [--runs R] [--ways a,b]   (the same four ways in instructions per event under valgrind's callgrind: independent of
//     the machine's load; each way in R child processes, W warm-up passes of B-event replies, P measured passes, the
//     median run; each count split into V8's GC, V8's compilers and the rest. CALLGRIND_DIR=DIR keeps each run's
//     profile there for callgrind_annotate; CS_NODE_FLAGS='--flag ...' passes V8 flags to the children;
//     CS_MIX=driver,floor: these readers run too in each child, uninstrumented, before each pass of the counted one
//     (the heap a process shared by several readers has, as in the CPU-time run);
//     --prefetch N: watch()'s prefetch for the bson2json readers, in --per-event)
//   MONGODB_URI=mongodb://... node benchmark/change-stream.mjs     (a real replica set)
//   CS_B=DIR node benchmark/change-stream.mjs --per-event --ways perEvent,perEventB,batches,batchesB
//     (another checkout's build, DIR, as the readers perEventB and batchesB beside this one's, in the same
//     process and rounds; the table ends with this build's CPU per event over DIR's, the median of the
//     rounds' ratios)
//
// The test server runs in a CHILD process (tools/test-server/cli.js) so process.cpuUsage() measures
// the client only. Each case pre-writes N events, then drains them from the start
// (startAtOperationTime) with each reader, in alternating order, best of 3.
// The prefetch section uses an in-process test server with a 20 ms delay injected on every
// change-stream getMore and a consumer doing ~15 ms of (async) I/O per batch.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'

import { splitProfile } from './callgrind-split.mjs'

const require = createRequire(import.meta.url)
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const { MongoClient } = require('mongodb')
const b2j = require(root)
// CS_B=DIR: another checkout's bson2json (built), read beside this one's
const b2jB = process.env.CS_B ? require(path.resolve(process.env.CS_B)) : null
const { startTestServer } = require(path.join(root, 'tools/test-server'))

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const argN = args.includes('--events') ? Number(args[args.indexOf('--events') + 1]) : 0
const BATCH = 1000
// `--size 1` or `--size 10`: only the ~1 KB or the ~10 KB events (the --per-event tables)
const SIZES = [['~1 KB', 1024, 10000], ['~10 KB', 10240, 2000]].filter(([, bytes]) => !args.includes('--size') || bytes === 1024 * Number(args[args.indexOf('--size') + 1]))
// `--ways perEvent,batches`: only these readers under --instructions (the others print as NaN)
const WAYS = args.includes('--ways') ? args[args.indexOf('--ways') + 1].split(',') : ['perEvent', 'batches', 'driver', 'floor']
// `--prefetch N`: watch()'s prefetch for the bson2json readers of --per-event (else its default)
const PREFETCH = args.includes('--prefetch') ? { prefetch: Number(args[args.indexOf('--prefetch') + 1]) } : {}
const ROUNDS = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : quick ? 1 : 3

async function startChild() {
  const child = spawn(process.execPath, [path.join(root, 'tools/test-server/cli.js'), '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const rl = readline.createInterface({ input: child.stdout })
  const uri = await new Promise((resolve, reject) => {
    rl.once('line', resolve)
    child.once('exit', (c) => reject(new Error(`test server exited ${c}`)))
  })
  return { uri, stop: () => child.kill('SIGINT') }
}

async function opTime(client, db) {
  const s = client.startSession()
  await db.command({ ping: 1 }, { session: s })
  const t = s.operationTime
  await s.endSession()
  return t
}

function payload(bytes, seed) {
  // a mix of types: strings, numbers, nested docs, arrays, dates
  const doc = { seed, at: new Date(1_700_000_000_000 + seed), n: seed * 1.5, tags: ['a', 'b', 'c'], nested: { k: seed, flag: true } }
  const fields = Math.max(1, Math.floor(bytes / 100))
  for (let f = 0; f < fields; f++) doc[`f${f}`] = f % 3 === 0 ? 'x'.repeat(80) : f % 3 === 1 ? { v: f, w: 'y'.repeat(60) } : [f, f + 1, 'z'.repeat(60)]
  return doc
}

async function prepare(db, client, name, kind, bytes, n) {
  const coll = db.collection(name)
  await coll.drop().catch(() => {})
  if (kind === 'update') {
    for (let k = 0; k < n; k += 1000) await coll.insertMany(Array.from({ length: Math.min(1000, n - k) }, (_, j) => ({ _id: k + j })))
  }
  const T0 = await opTime(client, db)
  if (kind === 'insert') {
    for (let k = 0; k < n; k += 500) await coll.insertMany(Array.from({ length: Math.min(500, n - k) }, (_, j) => ({ _id: k + j, ...payload(bytes, k + j) })))
  } else {
    for (let k = 0; k < n; k++) await coll.updateOne({ _id: k }, { $set: payload(bytes, k) })
  }
  return { coll, T0 }
}

async function drainOurs(coll, T0, n) {
  const cs = b2j.watch(coll, [], { whole: true, startAtOperationTime: T0, batchSize: BATCH, maxAwaitTimeMS: 200 })
  let bytes = 0
  let seen = 0
  for await (const b of cs.batches()) {
    for (const ev of b.events) bytes += ev.json.length
    seen += b.events.length
    if (seen >= n) break
  }
  return bytes
}

async function drainDriver(coll, T0, n, batch = BATCH) {
  const ds = coll.watch([], { startAtOperationTime: T0, batchSize: batch, maxAwaitTimeMS: 200 })
  let bytes = 0
  let seen = 0
  for await (const ev of ds) {
    bytes += JSON.stringify(ev).length
    if (++seen >= n) break
  }
  await ds.close()
  return bytes
}

async function measure(fn) {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  const bytes = await fn()
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  const cpu = process.cpuUsage(c0)
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, bytes }
}

async function throughput() {
  let stop = () => {}
  let uri = process.env.MONGODB_URI
  if (!uri) ({ uri, stop } = await startChild())
  const client = await MongoClient.connect(uri)
  const db = client.db('b2j_bench_cs')
  const rows = []
  try {
    for (const [label, bytes, n0] of [['~1 KB', 1024, 10000], ['~10 KB', 10240, 2000]]) {
      for (const kind of ['insert', 'update']) {
        const n = argN || (quick ? n0 / 4 : n0)
        const { coll, T0 } = await prepare(db, client, `c_${kind}_${bytes}`, kind, bytes, n)
        const best = { ours: null, driver: null }
        for (let r = 0; r < ROUNDS; r++) {
          for (const who of r % 2 ? ['driver', 'ours'] : ['ours', 'driver']) {
            const m = await measure(() => (who === 'ours' ? drainOurs(coll, T0, n) : drainDriver(coll, T0, n)))
            if (!best[who] || m.ms < best[who].ms) best[who] = m
          }
        }
        if (best.ours.bytes !== best.driver.bytes) console.error(`note: output sizes differ (${best.ours.bytes} vs ${best.driver.bytes})`)
        const mb = best.ours.bytes / 1e6
        const row = { label, kind, n, mb }
        for (const who of ['ours', 'driver']) {
          row[who] = { evs: n / (best[who].ms / 1000), cpuPerMB: best[who].cpuMs / mb, ms: best[who].ms }
        }
        rows.push(row)
        console.error(`${label} ${kind}: done`)
      }
    }
  } finally {
    await db.dropDatabase().catch(() => {})
    await client.close()
    stop()
  }
  return rows
}

async function prefetchGain() {
  const server = await startTestServer({ port: 0 })
  const client = await MongoClient.connect(server.uri)
  const db = client.db('b2j_bench_pf')
  const coll = db.collection('pf')
  const n = quick ? 2000 : 5000
  const T0 = await opTime(client, db)
  for (let k = 0; k < n; k += 500) await coll.insertMany(Array.from({ length: 500 }, (_, j) => ({ _id: k + j, ...payload(512, k + j) })))
  server.injectFault({ command: 'getMore', kind: 'delay', delayMs: 20, count: Infinity, changeStreamOnly: true })
  const rows = []
  for (const prefetch of [0, 1, 4]) {
    const t0 = Date.now()
    const cs = b2j.watch(coll, [], { startAtOperationTime: T0, batchSize: 100, maxAwaitTimeMS: 200, prefetch })
    let seen = 0
    for await (const b of cs.batches()) {
      await new Promise((r) => setTimeout(r, 15)) // consumer I/O per batch (e.g. a write to a sink)
      seen += b.events.length
      if (seen >= n) break
    }
    const ms = Date.now() - t0
    rows.push({ prefetch, ms, evs: n / (ms / 1000) })
  }
  server.clearFaults()
  await client.close()
  await server.close()
  return { n, rows }
}

/**
 * The four readers of the per-event comparison, over one database handle, `size.batch` events a
 * reply (the same functions for any size, so that what V8 learnt in a warm-up holds).
 */
function makeWays(db, size = { batch: BATCH }) {
  const { Long } = require('bson')
  const opts = (T0) => ({ startAtOperationTime: T0, batchSize: size.batch, maxAwaitTimeMS: 200, ...PREFETCH })
  const perEvent = (m) => async (coll, T0, n) => {
    let seen = 0
    let bytes = 0
    for await (const ev of m.watch(coll, [], { ...opts(T0), whole: true })) {
      bytes += ev.json.length
      if (++seen >= n) break
    }
    return bytes
  }
  const batches = (m) => async (coll, T0, n) => {
    let seen = 0
    let bytes = 0
    for await (const b of m.watch(coll, [], { ...opts(T0), whole: true }).batches()) {
      for (const ev of b.events) bytes += ev.json.length
      seen += b.events.length
      if (seen >= n) break
    }
    return bytes
  }
  return {
    perEvent: perEvent(b2j),
    batches: batches(b2j),
    ...(b2jB === null ? {} : { perEventB: perEvent(b2jB), batchesB: batches(b2jB) }),
    driver: (coll, T0, n) => drainDriver(coll, T0, n, size.batch),
    async floor(coll, T0, n) {
      let r = await db.command({ aggregate: coll.collectionName, pipeline: [{ $changeStream: { startAtOperationTime: T0 } }], cursor: { batchSize: size.batch } }, { raw: true })
      let seen = 0
      let bytes = 0
      for (;;) {
        const b = b2j.cursorBatch(r)
        for (const j of b.docs) bytes += j.length
        seen += b.count
        if (seen >= n) break
        r = await db.command({ getMore: Long.fromBigInt(b.id), collection: coll.collectionName, batchSize: size.batch, maxTimeMS: 200 }, { raw: true })
      }
      return bytes
    },
  }
}

/**
 * `--instructions`: each way drains the same pre-written events in a child Node process under
 * callgrind: WARMUP passes (connecting, loading, compiling), a full garbage collection, then ROUNDS
 * measured passes between two fsync(2) marks, where callgrind cuts its counts
 * (`--dump-before=fsync`). Every thread of the client is counted (GC helpers and V8's concurrent
 * compilers included), none of the server's. RUNS children per way, the median of each figure.
 * Each count is split into V8's garbage collection, V8's compilers and the rest ("code": the
 * readers' JavaScript, the driver, the addon, Node's I/O) by the inclusive cost of their entry
 * points on the main thread and the other threads' totals (see `splitProfile`), so a collection
 * or a tier-up landing in one run shows as such. Unlike CPU time this does not move with the
 * machine's load.
 */
async function perEventInstructions(uri, db, client, stop) {
  const os = await import('node:os')
  const passes = Math.max(1, args.includes('--rounds') ? ROUNDS : 4)
  // V8 still compiles the readers' hot functions during the first passes (TurboFan shows in a
  // second pass's profile): the measured passes come after WARMUP.
  const WARMUP = args.includes('--warmup') ? Number(args[args.indexOf('--warmup') + 1]) : 3
  // The per-batch code (each reader's batch handling, the driver's command path) runs once per
  // reply: the warm-up's replies are smaller (WARM_BATCH events), so that it runs ten times as
  // often there and V8 has optimized it before the measured passes.
  const WARM_BATCH = args.includes('--warmup-batch') ? Number(args[args.indexOf('--warmup-batch') + 1]) : BATCH / 10
  const RUNS = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 3
  // extra Node options for the children (e.g. `--max-semi-space-size=16`)
  const nodeFlags = (process.env.CS_NODE_FLAGS ?? '').split(' ').filter(Boolean)
  const dir = process.env.CALLGRIND_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'cs-callgrind-'))
  const REP_OFF = ['glibc.cpu.x86_rep_movsb_threshold=2147483647', 'glibc.cpu.x86_rep_stosb_threshold=2147483647', process.env.GLIBC_TUNABLES].filter(Boolean).join(':')
  const count = async (name, t0, n, way, run) => {
    const out = path.join(dir, `${way}-${n}-${run}.out`)
    // Start-up and warm-up run uninstrumented (`--instr-atstart=no`, several times faster);
    // when the child says it is warm, callgrind_control turns instrumentation on and the child
    // goes on to the marks.
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        '--instr-atstart=no',
        '--separate-threads=no',
        '--dump-instr=no',
        '--dump-before=fsync',
        `--callgrind-out-file=${out}`,
        process.execPath,
        '--expose-gc',
        ...nodeFlags,
        fileURLToPath(import.meta.url),
        '--cs-child',
        uri,
        name,
        String(t0.t),
        String(t0.i),
        String(n),
        way,
        String(WARMUP),
        String(WARM_BATCH),
        String(passes),
        `${out}.mark`,
        ...(PREFETCH.prefetch === undefined ? [] : ['--prefetch', String(PREFETCH.prefetch)]),
      ],
      // glibc's memcpy / memset without `rep movsb` / `rep stosb`, which callgrind counts as one
      // instruction a byte moved (the setting benchmark/callgrind-env.sh exports)
      { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, GLIBC_TUNABLES: REP_OFF } },
    )
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr = (stderr + d).slice(-4000)))
    const lines = readline.createInterface({ input: child.stdout })
    lines.on('line', (line) => {
      // `warm`: instrumentation on for good; `on` / `off` (CS_MIX): around each measured pass
      if (line !== 'warm' && line !== 'on' && line !== 'off') return
      const c = spawnSync('callgrind_control', ['-i', line === 'off' ? 'off' : 'on', String(child.pid)], { encoding: 'utf8' })
      if (c.status !== 0) console.error(`callgrind_control: ${c.stdout}${c.stderr}`)
      if (line === 'warm') child.stdin.end('go\n')
      else child.stdin.write('go\n')
    })
    const status = await new Promise((resolve) => child.once('exit', resolve))
    if (status !== 0) throw new Error(`${way} under callgrind: exit ${status}, ${stderr.slice(-500)}`)
    // part 2: between the two marks
    let s
    if (process.env.CS_MIX) {
      // instrumented only during the measured passes: every part of the profile, summed
      const parts = readdirSync(dir).filter((f) => f === path.basename(out) || (f.startsWith(`${path.basename(out)}.`) && /\.\d+$/.test(f)))
      s = { total: 0, gc: 0, jit: 0, code: 0 }
      for (const f of parts) {
        const p = splitProfile(readFileSync(path.join(dir, f), 'utf8'))
        for (const k of Object.keys(s)) s[k] += p[k]
      }
    } else {
      if (!existsSync(`${out}.2`)) throw new Error(`${way} under callgrind: no profile between the marks in ${dir}`)
      s = splitProfile(readFileSync(`${out}.2`, 'utf8'))
    }
    if (!process.env.CALLGRIND_DIR) for (const f of readdirSync(dir).filter((f) => f.startsWith(path.basename(out)))) rmSync(path.join(dir, f))
    const k = passes * n
    return { total: s.total / k, gc: s.gc / k, jit: s.jit / k, code: s.code / k }
  }
  const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const rows = []
  try {
    for (const [label, bytes, n0] of SIZES) {
      const n = argN || (quick ? n0 / 4 : n0)
      const { coll, T0 } = await prepare(db, client, `cpu_${bytes}`, 'insert', bytes, n)
      const per = {}
      for (const way of new Set(['perEvent', 'batches', 'driver', 'floor', ...WAYS])) per[way] = { total: NaN, gc: NaN, jit: NaN, code: NaN, runs: [] }
      // the ways alternate within each run, so that a drift of the server's state spreads over all
      for (let run = 0; run < RUNS; run++) {
        for (const way of run % 2 ? WAYS.slice().reverse() : WAYS) {
          const c = await count(coll.collectionName, T0, n, way, run)
          per[way].runs.push(c)
          console.error(`${label} ${way} run ${run + 1}: ${Math.round(c.total)} instructions an event (code ${Math.round(c.code)}, GC ${Math.round(c.gc)}, compilers ${Math.round(c.jit)})`)
        }
      }
      for (const way of WAYS) for (const f of ['total', 'gc', 'jit', 'code']) per[way][f] = med(per[way].runs.map((c) => c[f]))
      rows.push({ label, n, per })
    }
  } finally {
    if (!process.env.CALLGRIND_DIR) rmSync(dir, { recursive: true, force: true })
    await db.dropDatabase().catch(() => {})
    await client.close()
    stop()
  }
  const flags = nodeFlags.length ? `, node ${nodeFlags.join(' ')}` : ''
  console.log(`\n### client instructions per change event (insert events, ${process.env.MONGODB_URI ? 'MONGODB_URI' : 'test server in a child process'}, batchSize ${BATCH}, callgrind, ${passes} measured passes after ${WARMUP} of warm-up in ${WARM_BATCH}-event replies, a full GC and one more pass, median of ${RUNS} child runs, Node ${process.version}${flags})\n`)
  console.log('| events | N | bson2json per event | bson2json batches() | driver watch() + stringify | floor: raw getMores + cursorBatch | driver / per event | per event / floor | batches() / floor |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  const k = (x) => (Number.isFinite(x) ? fmt(Math.round(x)) : '-')
  for (const { label, n, per: p } of rows) {
    const r = (f) => `| ${label}: ${f} | ${n} | ${k(p.perEvent[f])} | ${k(p.batches[f])} | ${k(p.driver[f])} | ${k(p.floor[f])} | ${ratio(p.driver[f], p.perEvent[f])} | ${ratio(p.perEvent[f], p.floor[f])} | ${ratio(p.batches[f], p.floor[f])} |`
    console.log(r('total'))
    console.log(r('code'))
    console.log(`| ${label}: GC + compilers | ${n} | ${k(p.perEvent.gc + p.perEvent.jit)} | ${k(p.batches.gc + p.batches.jit)} | ${k(p.driver.gc + p.driver.jit)} | ${k(p.floor.gc + p.floor.jit)} | | | |`)
  }
  if (b2jB !== null) {
    console.log(`\n### this build / CS_B (${process.env.CS_B}): instructions per event, medians\n`)
    console.log('| events | | per event: this / B | batches(): this / B |')
    console.log('| --- | --- | ---: | ---: |')
    for (const { label, per: p } of rows) {
      for (const f of ['total', 'code']) console.log(`| ${label} | ${f} | ${ratio(p.perEvent[f], p.perEventB?.[f])} | ${ratio(p.batches[f], p.batchesB?.[f])} |`)
    }
  }
  console.log('\nEach run (total / code per event):\n')
  for (const { label, per: p } of rows) {
    for (const way of WAYS) console.log(`- ${label} ${way}: ${p[way].runs.map((c) => `${k(c.total)} / ${k(c.code)}`).join(', ')}`)
  }
}

/**
 * `--cs-child URI COLL T I N WAY WARMUP PASSES MARK`: one way, WARMUP times, then a full garbage
 * collection (with `--expose-gc`), then PASSES times between two fsync(2) of MARK, where
 * callgrind cuts its counts; for perEventInstructions.
 */
async function csChild() {
  const at = args.indexOf('--cs-child')
  const [uri, name, t, i, n, way, warm, warmBatch, passes, mark] = args.slice(at + 1, at + 11)
  const { Timestamp } = require('bson')
  const { openSync, fsyncSync, closeSync } = await import('node:fs')
  const client = await MongoClient.connect(uri)
  const db = client.db('b2j_bench_cs_cpu')
  const size = { batch: Number(warmBatch) }
  const ways = makeWays(db, size)
  const T0 = new Timestamp({ t: Number(t), i: Number(i) })
  // CS_MIX=driver,floor: these ways run too, uninstrumented, in the warm-up and before each
  // measured pass (the heap and the compiled code a process shared by several readers has)
  const mix = (process.env.CS_MIX ?? '').split(',').filter(Boolean)
  const pass = async (measured = false) => {
    for (const other of mix) await ways[other](db.collection(name), T0, Number(n))
    if (measured) await said('on')
    await ways[way](db.collection(name), T0, Number(n))
    if (measured) await said('off')
  }
  const lines = process.stdin.isTTY ? null : readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]()
  // under perEventInstructions: says `word` and waits for the parent's `go` (after it turned
  // instrumentation on or off)
  const said = async (word) => {
    if (lines === null) return
    console.log(word)
    await lines.next()
  }
  for (let p = 0; p < Number(warm); p++) await pass()
  // A full collection, so that each run's measured passes start from the same heap. It also
  // drops optimized code that held objects now dead (V8's "weak objects" deoptimization): two
  // more passes in small replies, and one in the measured size, before the marks.
  globalThis.gc?.()
  await pass()
  await pass()
  size.batch = BATCH
  await pass()
  // under perEventInstructions: instrumentation is turned on between `warm` and `go` (with
  // CS_MIX: on and off around each measured pass)
  if (mix.length === 0) await said('warm')
  // the marks (without CS_MIX; with it, instrumentation is off but in the measured passes)
  const fd = openSync(mark, 'w')
  if (mix.length === 0) fsyncSync(fd)
  for (let p = 0; p < Number(passes); p++) {
    if (process.env.CS_PASS_MARKS) console.error(`-- measured pass ${p + 1}`)
    await pass(mix.length > 0)
  }
  if (mix.length === 0) fsyncSync(fd)
  closeSync(fd)
  await client.close()
}

/**
 * Client CPU per event, four ways on the same pre-written events, alternating, median of ROUNDS:
 * bson2json per event (`for await (const ev of watch(...))`), bson2json per batch (`batches()`),
 * the driver's `watch()` + `JSON.stringify(ev)`, and the floor: the same aggregate/getMores sent
 * through the driver's raw command path (`db.command(..., { raw: true })`) with one `cursorBatch`
 * per reply (each event's JSON, nothing else).
 */
async function perEvent() {
  let stop = () => {}
  let uri = process.env.MONGODB_URI
  if (!uri) ({ uri, stop } = await startChild())
  const client = await MongoClient.connect(uri)
  const db = client.db('b2j_bench_cs_cpu')
  const rows = []
  const ways = makeWays(db)
  if (args.includes('--instructions')) return perEventInstructions(uri, db, client, stop)
  const gc = gcCounter()

  try {
    for (const [label, bytes, n0] of SIZES) {
      const n = argN || (quick ? n0 / 4 : n0)
      const { coll, T0 } = await prepare(db, client, `cpu_${bytes}`, 'insert', bytes, n)
      const cpu = Object.fromEntries(Object.keys(ways).map((k) => [k, []]))
      const gcs = Object.fromEntries(Object.keys(ways).map((k) => [k, []]))
      const threads = Object.fromEntries(Object.keys(ways).map((k) => [k, []]))
      for (let r = 0; r < ROUNDS + 1; r++) {
        const order = r % 2 ? WAYS.slice().reverse() : WAYS
        for (const who of order) {
          gc.reset()
          const th0 = threadCpu()
          const m = await measure(() => ways[who](coll, T0, n))
          const th1 = threadCpu()
          const g = await gc.take()
          if (r > 0) {
            // round 0 warms up
            cpu[who].push((m.cpuMs * 1000) / n)
            gcs[who].push(g)
            threads[who].push({ main: (th1.main - th0.main) / 1000 / n, other: (th1.other - th0.other) / 1000 / n })
          }
        }
      }
      const med = (xs) => (xs.length ? xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN)
      // the same round's batches() over floor: the machine's drift cancels out within a round
      const perRound = cpu.floor.length ? med(cpu.batches.map((x, i) => x / cpu.floor[i])) : NaN
      // garbage collections per 1,000 events: the mean over the rounds (counts are small)
      const gcPer1k = Object.fromEntries(
        Object.entries(gcs).filter(([, xs]) => xs.length).map(([k, xs]) => [k, Object.fromEntries(['minor', 'major', 'minorMs', 'majorMs'].map((f) => [f, (xs.reduce((a, g) => a + g[f], 0) / xs.length / n) * 1000]))]),
      )
      const mean = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length
      const byThread = Object.fromEntries(Object.entries(threads).filter(([, xs]) => xs.length).map(([k, xs]) => [k, { main: mean(xs.map((t) => t.main)), other: mean(xs.map((t) => t.other)) }]))
      // this build over CS_B's, each round's ratio (the two ran in the same round)
      const overB = (k) => (cpu[k].length && cpu[`${k}B`] && cpu[`${k}B`].length ? med(cpu[k].map((x, i) => x / cpu[`${k}B`][i])) : NaN)
      rows.push({ label, n, us: Object.fromEntries(Object.entries(cpu).map(([k, xs]) => [k, med(xs)])), perRound, gcPer1k, byThread, overB: { perEvent: overB('perEvent'), batches: overB('batches') } })
      console.error(`${label}: done`)
    }
  } finally {
    await db.dropDatabase().catch(() => {})
    await client.close()
    stop()
  }
  console.log(`\n### client CPU µs per change event (insert events, ${process.env.MONGODB_URI ? 'MONGODB_URI' : 'test server in a child process'}, batchSize ${BATCH}, median of ${ROUNDS})\n`)
  console.log('| events | N | bson2json per event | bson2json batches() | driver watch() + stringify | floor: raw getMores + cursorBatch | driver / per event | driver / batches() | per event / floor | batches() / floor | same round: batches() / floor |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const r of rows) {
    const u = r.us
    console.log(
      `| ${r.label} | ${r.n} | ${cell(u.perEvent)} | ${cell(u.batches)} | ${cell(u.driver)} | ${cell(u.floor)} | ${ratio(u.driver, u.perEvent)} | ${ratio(u.driver, u.batches)} | ${ratio(u.perEvent, u.floor)} | ${ratio(u.batches, u.floor)} | ${times(r.perRound)} |`,
    )
  }
  if (b2jB !== null) {
    console.log(`\n### this build / CS_B (${process.env.CS_B}): client CPU per event, the median of each round's ratio\n`)
    console.log('| events | per event: this / B | batches(): this / B | B per event µs | B batches() µs |')
    console.log('| --- | ---: | ---: | ---: | ---: |')
    for (const r of rows) console.log(`| ${r.label} | ${times(r.overB.perEvent)} | ${times(r.overB.batches)} | ${cell(r.us.perEventB)} | ${cell(r.us.batchesB)} |`)
  }
  console.log(`\n### the same rounds by thread and V8's garbage collections (means)\n`)
  console.log('CPU µs per event on the main thread + on the other threads (V8\'s concurrent marking, parallel scavenges and compilers); scavenges and mark-compacts per 1,000 events, count / ms of pauses\n')
  console.log('| events | | bson2json per event | bson2json batches() | driver watch() + stringify | floor |')
  console.log('| --- | --- | ---: | ---: | ---: | ---: |')
  for (const r of rows) {
    const t = (x) => (x === undefined ? '' : `${x.main.toFixed(2)} + ${x.other.toFixed(2)}`)
    const c = (g) => (g === undefined ? '' : `${g.minor.toFixed(2)} / ${g.minorMs.toFixed(2)} ms; ${g.major.toFixed(2)} / ${g.majorMs.toFixed(2)} ms`)
    console.log(`| ${r.label} | CPU by thread | ${t(r.byThread.perEvent)} | ${t(r.byThread.batches)} | ${t(r.byThread.driver)} | ${t(r.byThread.floor)} |`)
    console.log(`| ${r.label} | scavenges; mark-compacts | ${c(r.gcPer1k.perEvent)} | ${c(r.gcPer1k.batches)} | ${c(r.gcPer1k.driver)} | ${c(r.gcPer1k.floor)} |`)
  }
}

/**
 * CPU nanoseconds this process's threads have run (Linux: /proc/self/task/<tid>/schedstat):
 * the main thread's and the others' (V8's helpers, libuv's pool); zeros elsewhere.
 */
function threadCpu() {
  const t = { main: 0, other: 0 }
  let tids
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return t
  }
  for (const tid of tids) {
    try {
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      if (tid === String(process.pid)) t.main += ns
      else t.other += ns
    } catch {
      // the thread ended
    }
  }
  return t
}

/**
 * V8's garbage collections in this process (`perf_hooks` 'gc' entries): `reset()` before a
 * measured pass, `take()` after it gives the scavenges (minor) and mark-compacts (major), their
 * number and pause milliseconds. Entries arrive asynchronously: `take()` waits a tick for the
 * pass's last ones.
 */
function gcCounter() {
  const zero = () => ({ minor: 0, major: 0, minorMs: 0, majorMs: 0 })
  let g = zero()
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = e.detail ? e.detail.kind : e.kind
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) {
        g.minor++
        g.minorMs += e.duration
      } else if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) {
        g.major++
        g.majorMs += e.duration
      }
    }
  })
  obs.observe({ entryTypes: ['gc'] })
  return {
    reset() {
      g = zero()
    },
    async take() {
      await new Promise((resolve) => setImmediate(resolve))
      const r = g
      g = zero()
      return r
    },
  }
}

const fmt = (x, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
/** A table cell: `x` with `d` decimals, `-` for a reader left out (`--ways`). */
const cell = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-')
/** A ratio cell: `x` with two decimals and `x`, `-` when a reader was left out. */
const times = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : '-')
/** The ratio cell of `a / b`. */
const ratio = (a, b) => times(a / b)

if (args.includes('--cs-child')) {
  await csChild()
  process.exit(0)
}
if (args.includes('--per-event')) {
  await perEvent()
  process.exit(0)
}

const rows = await throughput()
console.log(`\n### watch() vs driver watch() + JSON.stringify (${process.env.MONGODB_URI ? 'MONGODB_URI' : 'test server in a child process'}, batchSize ${BATCH}, best of ${ROUNDS})\n`)
console.log('| events | type | N | JSON MB | bson2json events/s | driver events/s | speed-up | bson2json CPU ms/MB | driver CPU ms/MB | CPU ratio |')
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const r of rows) {
  console.log(
    `| ${r.label} | ${r.kind} | ${r.n} | ${fmt(r.mb, 1)} | ${fmt(r.ours.evs)} | ${fmt(r.driver.evs)} | ${fmt(r.ours.evs / r.driver.evs, 2)}x | ${fmt(r.ours.cpuPerMB, 1)} | ${fmt(r.driver.cpuPerMB, 1)} | ${fmt(r.driver.cpuPerMB / r.ours.cpuPerMB, 2)}x |`,
  )
}
const pf = await prefetchGain()
console.log(`\n### prefetch with a slow server (20 ms per getMore) and a consumer doing 15 ms of I/O per batch, ${pf.n} events, batchSize 100\n`)
console.log('| prefetch | time ms | events/s |')
console.log('| ---: | ---: | ---: |')
for (const r of pf.rows) console.log(`| ${r.prefetch} | ${r.ms} | ${fmt(r.evs)} |`)
