// Rows (`toRow`, `toRows`, `toRowsAsync`) against PowerSync's own converter, `bufferToSqlite`
// (@powersync/service-module-mongodb 0.21.1, fetched by scripts/powersync-oracle.mjs), side by
// side in one process:
//
// 1. documents per second of `toRow(doc, { rowFormat: 'powersync' })` and of
//    `bufferToSqlite(doc, 0)`, one call per document, on the public real-world data
//    (scripts/realworld-data.sh: twitter's statuses, canada, citm_catalog, its events and
//    performances) and on the full documents of PowerSync's own benchmark
//    (scripts/benchmark-change-document-json.mts in that package: 1 KB, 10 KB and 100 KB
//    inserts and updates); and the general format (`toRow(doc)`) beside them;
// 2. `toRows` (one call per dataset, concatenated documents) against `toRow` per document;
// 3. what a 16 MiB batch costs the event loop with `toRowsAsync` against `toRows`: the main
//    thread's busy time over the call (event-loop utilization) and its longest stretch without
//    a turn of the loop.
//
// Every row is first checked equal to bufferToSqlite's (values, types, key order). Then the
// methods run interleaved (the order rotates per round) for ROUND_MS each, and each cell is the
// median over ROUNDS rounds of the documents per second of process CPU time; a ratio is the
// median of the per-round ratios.
//
//   bash scripts/realworld-data.sh && node benchmark/rows.mjs
//   ROUNDS=15 ROUND_MS=200 DATASETS=twitter,insert-1k node benchmark/rows.mjs
//   node benchmark/rows.mjs --json benchmark/results/rows-node26.json   # also write the figures
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { loadavg } from 'node:os';
import { powersyncOracle } from '../scripts/powersync-oracle.mjs';

const require = createRequire(import.meta.url);
const { toRow, toRows, toRowsAsync } = require('../index.js');
const { BSON } = require('bson');

const ROUNDS = Number(process.env.ROUNDS || 9);
const ROUND_MS = Number(process.env.ROUND_MS || 150);
const DIR = process.env.REALWORLD_DIR || new URL('../tmp/realworld/', import.meta.url).pathname;
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : undefined;
const { bufferToSqlite } = await import(pathToFileURL(powersyncOracle()).href);
const PS = { rowFormat: 'powersync' };
const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1];
const ser = (o) => Buffer.from(BSON.serialize(o));

const read = (f) => {
  try {
    return JSON.parse(readFileSync(join(DIR, f), 'utf8'));
  } catch (e) {
    console.error(`${join(DIR, f)}: ${e.code ?? e.message} (bash scripts/realworld-data.sh fetches the data)`);
    process.exit(1);
  }
};

/**
 * The full document of PowerSync's benchmark for an insert or an update of about `target` bytes
 * (its fields as that script builds them: ids, counters, dates, flags, tags, a nested owner,
 * and a `payload` of 'x' that brings the document to the target size).
 */
function powersyncDocument(op, target) {
  const seed = target + (op === 'insert' ? 11 : 29);
  const base = {
    _id: new BSON.ObjectId('6a0000000000000000000001'),
    checksum: seed,
    operationType: op,
    tenantId: 'tenant-benchmark',
    version: op === 'insert' ? 1 : 2,
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
    updatedAt: new Date('2026-01-02T03:04:05.000Z'),
    flags: { active: true, archived: false, source: 'benchmark' },
    metrics: { itemCount: seed, ratio: Number((target / 1024).toFixed(3)) },
    tags: ['alpha', 'beta', 'gamma', op],
    nested: {
      owner: { id: `owner-${seed}`, region: 'af-south-1' },
      counters: [1, 2, 3, 5, 8, 13],
      changedFields: op === 'update' ? ['payload', 'metrics.itemCount', 'updatedAt'] : [],
    },
    payload: '',
  };
  const pad = Math.max(0, target - BSON.calculateObjectSize(base));
  return ser({ ...base, payload: 'x'.repeat(pad) });
}

const DATASETS = {
  twitter: () => read('twitter.json').statuses.map(ser),
  canada: () => [ser(read('canada.json'))],
  citm: () => [ser(read('citm_catalog.json'))],
  'citm-events': () => Object.values(read('citm_catalog.json').events).map(ser),
  'citm-performances': () => read('citm_catalog.json').performances.map(ser),
  // 64 of each, so that toRows has a batch
  'insert-1k': () => Array(64).fill(powersyncDocument('insert', 1024)),
  'insert-10k': () => Array(64).fill(powersyncDocument('insert', 10240)),
  'insert-100k': () => Array(64).fill(powersyncDocument('insert', 102400)),
  'update-1k': () => Array(64).fill(powersyncDocument('update', 1024)),
  'update-10k': () => Array(64).fill(powersyncDocument('update', 10240)),
  'update-100k': () => Array(64).fill(powersyncDocument('update', 102400)),
};

/** The process's CPU time in ms. */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Documents per CPU second of `f` over `docs`, for about ROUND_MS of wall time. */
function rate(f, docs) {
  let n = 0;
  const w0 = performance.now();
  const c0 = cpu();
  do {
    f(docs);
    n += docs.length;
  } while (performance.now() - w0 < ROUND_MS);
  return (n / (cpu() - c0)) * 1000;
}

const perDoc = (g) => (docs) => {
  for (let i = 0; i < docs.length; i++) g(docs[i]);
};
const METHODS = {
  bufferToSqlite: perDoc((d) => bufferToSqlite(d, 0)),
  toRow: perDoc((d) => toRow(d, PS)),
  toRows: (docs) => toRows(docs.concatenated, PS),
  'toRow (general)': perDoc((d) => toRow(d)),
};

const results = { node: process.version, rounds: ROUNDS, roundMs: ROUND_MS, datasets: {} };
const fmt = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : x >= 1e3 ? `${(x / 1e3).toFixed(1)}k` : x.toFixed(0));
console.log(`node ${process.version}; documents per CPU second; ratios are medians of per-round ratios; ${ROUNDS} rounds of ${ROUND_MS} ms per method`);
console.log('| dataset | documents | mean size | bufferToSqlite docs/s | toRow docs/s | toRow / bufferToSqlite | toRows / toRow | toRow (general) docs/s |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const name of (process.env.DATASETS || Object.keys(DATASETS).join(',')).split(',')) {
  const docs = DATASETS[name]();
  docs.concatenated = Buffer.concat(docs);
  // identity first: every row as PowerSync's, in each date mode
  for (const mode of [0, 1, 2]) {
    for (const d of docs) {
      const want = bufferToSqlite(d, mode);
      const got = toRow(d, { rowFormat: 'powersync', dateRenderMode: mode });
      if (!isDeepStrictEqual(got, want) || Object.keys(got).join() !== Object.keys(want).join()) {
        console.error(`${name}: toRow differs from bufferToSqlite (mode ${mode})`);
        process.exit(1);
      }
    }
  }
  if (!isDeepStrictEqual(toRows(docs.concatenated, PS), docs.map((d) => toRow(d, PS)))) {
    console.error(`${name}: toRows differs from toRow`);
    process.exit(1);
  }
  const names = Object.keys(METHODS);
  const rates = Object.fromEntries(names.map((m) => [m, []]));
  for (let r = 0; r < ROUNDS + 1; r++) {
    for (let i = 0; i < names.length; i++) {
      const m = names[(i + r) % names.length];
      const x = rate(METHODS[m], docs);
      if (r > 0) rates[m].push(x); // round 0 warms up
    }
  }
  const ratio = (a, b) => median(rates[a].map((x, i) => x / rates[b][i]));
  const row = {
    documents: docs.length,
    meanBytes: docs.concatenated.length / docs.length,
    docsPerSec: Object.fromEntries(names.map((m) => [m, median(rates[m])])),
    toRowVsBufferToSqlite: ratio('toRow', 'bufferToSqlite'),
    toRowsVsToRow: ratio('toRows', 'toRow'),
  };
  results.datasets[name] = row;
  const size = row.meanBytes < 1024 ? `${row.meanBytes.toFixed(0)} B` : `${(row.meanBytes / 1024).toFixed(1)} KB`;
  console.log(
    `| ${name} | ${docs.length} | ${size} | ${fmt(row.docsPerSec.bufferToSqlite)} | ${fmt(row.docsPerSec.toRow)} | ${row.toRowVsBufferToSqlite.toFixed(2)}x | ${row.toRowsVsToRow.toFixed(2)}x | ${fmt(row.docsPerSec['toRow (general)'])} |`,
  );
}

/** The main thread's CPU time in ms (Node 23.9+), NaN where Node cannot tell it apart. */
const threadCpu = () => {
  if (typeof process.threadCpuUsage !== 'function') return NaN;
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};

// 3. a 16 MiB batch: the event loop's cost
async function loopCost(label, docs, run) {
  // first without a timer: the loop's busy time (event-loop utilization) and the main
  // thread's CPU time over the call, promise and all
  await new Promise((r) => setTimeout(r, 20));
  const elu0 = performance.eventLoopUtilization();
  const t0 = threadCpu();
  const w0 = performance.now();
  const rows = await run(docs);
  const wall = performance.now() - w0;
  const mainCpu = threadCpu() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  if (rows.length !== docs.count) throw new Error(`${label}: ${rows.length} rows for ${docs.count} documents`);
  // then again with a 1 ms timer: a stretch without a turn of the loop shows as a gap between
  // its ticks (a stretch also grows when another process takes the CPU)
  // (Node 23.9+: with the main thread's CPU time in each stretch, which tells the call's own
  // work from time the thread waited for a core)
  let last = performance.now();
  let lastCpu = threadCpu();
  let longest = 0;
  let mostCpu = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    const c = threadCpu();
    longest = Math.max(longest, now - last);
    mostCpu = Math.max(mostCpu, c - lastCpu);
    last = now;
    lastCpu = c;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  longest = 0;
  mostCpu = 0;
  last = performance.now();
  lastCpu = threadCpu();
  await run(docs);
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(tick);
  return { label, wallMs: wall, busyMs: elu.active, mainCpuMs: mainCpu, longestMs: longest, longestCpuMs: mostCpu };
}
const tw = DATASETS.twitter();
const batch = [];
let bytes = 0;
for (let i = 0; bytes < 16 * 1024 * 1024; i++) {
  batch.push(tw[i % tw.length]);
  bytes += tw[i % tw.length].length;
}
const big = Buffer.concat(batch);
big.count = batch.length;
const costs = [];
for (let r = 0; r < 5; r++) {
  costs.push(await loopCost('toRows', big, async (d) => toRows(d, PS)));
  costs.push(await loopCost('toRowsAsync', big, (d) => toRowsAsync(d, PS)));
}
const costOf = (l) => {
  const c = costs.filter((x) => x.label === l);
  return {
    wallMs: median(c.map((x) => x.wallMs)),
    busyMs: median(c.map((x) => x.busyMs)),
    mainCpuMs: median(c.map((x) => x.mainCpuMs)),
    longestMs: median(c.map((x) => x.longestMs)),
    longestCpuMs: median(c.map((x) => x.longestCpuMs)),
  };
};
results.batch16MiB = { documents: batch.length, bytes: big.length, loadAverage: loadavg()[0], toRows: costOf('toRows'), toRowsAsync: costOf('toRowsAsync') };
console.log(`\n16 MiB batch (${batch.length} twitter statuses, rowFormat 'powersync'), median of 5:`);
console.log('| call | wall ms | event loop busy ms | main thread CPU ms | longest stretch without a turn, ms | most main-thread CPU in one stretch, ms |');
console.log('|---|---:|---:|---:|---:|---:|');
const msOrDash = (x) => (Number.isNaN(x) ? '-' : x.toFixed(1));
for (const l of ['toRows', 'toRowsAsync']) {
  const c = results.batch16MiB[l];
  console.log(`| ${l} | ${c.wallMs.toFixed(1)} | ${c.busyMs.toFixed(1)} | ${msOrDash(c.mainCpuMs)} | ${c.longestMs.toFixed(1)} | ${msOrDash(c.longestCpuMs)} |`);
}
if (jsonOut) {
  mkdirSync(dirname(jsonOut), { recursive: true });
  writeFileSync(jsonOut, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nwrote ${jsonOut}`);
}
