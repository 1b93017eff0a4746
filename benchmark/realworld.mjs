// Public real-world data (twitter.json, canada.json, citm_catalog.json: the classic JSON parser
// benchmarks, fetched by scripts/realworld-data.sh) turned into BSON, side by side in one
// process: the baseline `JSON.stringify(BSON.deserialize(doc))` per document, `toJSON` per
// document, and `toNDJSON` per batch (one Buffer of concatenated documents, and an array of
// them), and the fastest published peer, bson-to-json 2.0.3 (a C++ addon, built by
// scripts/bson-to-json.sh; its documented API `new Transcoder().transcode(doc)` returns a Buffer:
// the string column adds `.toString()` to compare like with like, the Buffer column does not).
// Every method's output is first checked equal to the baseline's; then the methods run
// interleaved (the order rotates per round) and each cell is the median of the rounds, in MB of
// BSON per second of the process's CPU time. The last column counts the minor page faults per MB
// of BSON of `toJSON` and of the two `toNDJSON` calls (median of the rounds): their result
// Buffers come from `malloc`, and pages that glibc gave back to the kernel between collections
// are faulted in again (docs/performance.md, "Which call to use").
//
//   bash scripts/realworld-data.sh && node benchmark/realworld.mjs
//   BSON_TO_JSON_SRC=<bson-to-json git dir> bash scripts/bson-to-json.sh   # the peer columns
//   ROUNDS=21 ROUND_MS=200 DATASETS=twitter,citm-events node benchmark/realworld.mjs
//   METHODS=toJSON,ndjsonConcat,ndjsonArray node benchmark/realworld.mjs   # and the baseline
//   JSON_OUT=benchmark/results/realworld-node26.json node benchmark/realworld.mjs   # also as JSON
//     (what `npm run bench:report`, benchmark/report.mjs, runs and renders into the docs)
//   JSON_OUT=benchmark/results/realworld-bun.json bun benchmark/realworld.mjs   # the same on Bun
//
// Datasets: twitter (its 100 statuses, one document each), canada (the whole GeoJSON file as
// one document: number-heavy), citm (the whole catalog as one document), citm-events and
// citm-performances (the catalog's events and performances, one document each: small
// documents). DATASETS=tiny,small250 adds two small synthetic workloads (see below).
// Environment: BSON_TO_JSON_DIR (the peer's build directory; default
// tmp/peers/bson-to-json-2.0.3-node<major>, as scripts/bson-to-json.sh builds it; without it the
// peer columns read "-").
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { loadBsonToJson } from './peers.mjs';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const { toJSON, toNDJSON } = require('../index.js');
const { BSON } = require('bson');

const ROUNDS = Number(process.env.ROUNDS || 15);
const ROUND_MS = Number(process.env.ROUND_MS || 150);
const DIR = process.env.REALWORLD_DIR || new URL('../tmp/realworld/', import.meta.url).pathname;
const b2 = loadBsonToJson();
const peer = b2.ok ? b2 : null;
if (!peer) console.error(`${b2.reason}; the bson-to-json columns are skipped`);
const size = (b) => (b < 1024 ? `${b.toFixed(0)} B` : `${(b / 1024).toFixed(1)} KB`);
const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1];

const read = (f) => {
  try {
    return JSON.parse(readFileSync(join(DIR, f), 'utf8'));
  } catch (e) {
    console.error(`${join(DIR, f)}: ${e.code ?? e.message} (bash scripts/realworld-data.sh fetches the data)`);
    process.exit(1);
  }
};
const ser = (o) => Buffer.from(BSON.serialize(o));
const twitter = read('twitter.json');
const canada = read('canada.json');
const citm = read('citm_catalog.json');
const DATASETS = {
  twitter: () => twitter.statuses.map(ser),
  canada: () => [ser(canada)],
  citm: () => [ser(citm)],
  'citm-events': () => Object.values(citm.events).map(ser),
  'citm-performances': () => citm.performances.map(ser),
};
// Not real-world, and not run unless named in DATASETS: the first 1,000 documents of two small
// synthetic workloads of benchmark/run.mjs (views into one Buffer, as a driver's raw batch).
const synthetic = async (name) => (await import('./workloads.mjs')).loadWorkload(name, { quick: true }).docs.slice(0, 1000);
const SYNTHETIC = { tiny: () => synthetic('tiny'), small250: () => synthetic('small250') };

const bsonVersion = JSON.parse(readFileSync(new URL('../node_modules/bson/package.json', import.meta.url), 'utf8')).version;
// The runtime that runs this script: Bun and Deno report a Node version of their own compatibility
// layer in process.version, so their own name and version are what the header and the JSON say.
const runtime = process.versions.bun ? `bun ${process.versions.bun}` : process.versions.deno ? `deno ${process.versions.deno}` : `node ${process.version}`;
// The machine's load average (1, 5, 15 minutes) when the run starts and ends: the rates are per
// CPU second, but a loaded machine still slows them (caches, frequency, other processes' GC).
const load = () => os.loadavg().map((l) => Number(l.toFixed(2)));
const loadStart = load();
console.log(
  `${runtime}, load average ${loadStart.join(' ')}, bson ${bsonVersion}${peer ? `, bson-to-json ${peer.version} (${peer.isa})` : ''}; MB/s of BSON per CPU second; ratios to the baseline in the same run; ${ROUNDS} rounds of ${ROUND_MS} ms`,
);
console.log(
  '| dataset | documents | mean size | baseline MB/s | toJSON | toNDJSON (concatenated) | toNDJSON (array) | toNDJSON / toJSON (concatenated, array) | bson-to-json (string) | bson-to-json (Buffer) | toJSON / bson-to-json (string) | minor page faults per MB (toJSON, concatenated, array) |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
const report = {
  machine: { cpu: os.cpus()[0]?.model ?? '?', cores: os.cpus().length, runtime, node: process.version, loadAverage: { start: loadStart }, platform: `${process.platform}-${process.arch}`, bson: bsonVersion },
  config: { rounds: ROUNDS, roundMs: ROUND_MS, peer: peer ? `${peer.version} (${peer.isa})` : null },
  datasets: [],
};
for (const name of (process.env.DATASETS || Object.keys(DATASETS).join(',')).split(',')) {
  const docs = await (DATASETS[name] ?? SYNTHETIC[name])();
  const concat = Buffer.concat(docs);
  const bytes = concat.length;
  const expected = docs.map((d) => JSON.stringify(BSON.deserialize(d)));
  for (let i = 0; i < docs.length; i++) if (toJSON(docs[i]) !== expected[i]) throw new Error(`${name}: toJSON differs from the baseline at document ${i}`);
  const nd = expected.join('\n') + '\n';
  if (toNDJSON(concat).toString() !== nd || toNDJSON(docs).toString() !== nd) throw new Error(`${name}: toNDJSON differs from the baseline`);
  if (peer) {
    for (let i = 0; i < docs.length; i++) {
      if (peer.transcode(docs[i]).toString() !== expected[i]) throw new Error(`${name}: bson-to-json differs from the baseline at document ${i}`);
    }
  }
  const methods = {
    baseline: () => {
      let n = 0;
      for (const d of docs) n += JSON.stringify(BSON.deserialize(d)).length;
      return n;
    },
    toJSON: () => {
      let n = 0;
      for (const d of docs) n += toJSON(d).length;
      return n;
    },
    ndjsonConcat: () => toNDJSON(concat).length,
    ndjsonArray: () => toNDJSON(docs).length,
  };
  if (peer) {
    methods.peerString = () => {
      let n = 0;
      for (const d of docs) n += peer.transcode(d).toString().length;
      return n;
    };
    methods.peerBuffer = () => {
      let n = 0;
      for (const d of docs) n += peer.transcode(d).length;
      return n;
    };
  }
  // METHODS=toJSON,ndjsonConcat,... runs only those (the baseline always runs: the ratios' base)
  const only = process.env.METHODS ? new Set(['baseline', ...process.env.METHODS.split(',')]) : null;
  const names = Object.keys(methods).filter((m) => only === null || only.has(m));
  const rates = Object.fromEntries(names.map((n) => [n, []]));
  const faults = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const m = names[(k + r) % names.length];
      const f = methods[m];
      let passes = 0;
      let sink = 0;
      const t0 = process.hrtime.bigint();
      const c0 = process.cpuUsage();
      const f0 = process.resourceUsage().minorPageFault;
      do {
        sink += f();
        passes++;
      } while (Number(process.hrtime.bigint() - t0) < ROUND_MS * 1e6);
      const cpu = process.cpuUsage(c0);
      // the kernel's share: a result Buffer on pages the allocator gave back and takes again
      faults[m].push((process.resourceUsage().minorPageFault - f0) / ((bytes * passes) / 1e6));
      if (sink === 0) throw new Error('no output');
      // per second of the process's CPU time (its GC threads included): on a shared machine
      // the wall clock also counts the time the process waited for a core
      rates[m].push((bytes * passes) / ((cpu.user + cpu.system) / 1e6) / 1e6);
    }
  }
  const med = Object.fromEntries(names.map((n) => [n, median(rates[n])]));
  const x = (m) => (m in med ? `${(med[m] / med.baseline).toFixed(2)}x (${med[m].toFixed(0)})` : '-');
  const pf = ['toJSON', 'ndjsonConcat', 'ndjsonArray'].map((m) => (m in med ? median(faults[m]).toFixed(0) : '-')).join(', ');
  const vsToJSON = (m) => (m in med && 'toJSON' in med ? `${(med[m] / med.toJSON).toFixed(2)}x` : '-');
  const vsPeer = 'peerString' in med && 'toJSON' in med ? `${(med.toJSON / med.peerString).toFixed(2)}x` : '-';
  // the ratio of each round (both rates measured in that round), median over the rounds
  const ratios = (m, base) => median(rates[m].map((v, r) => v / rates[base][r]));
  report.datasets.push({
    name,
    documents: docs.length,
    bytes,
    methods: Object.fromEntries(
      names.map((m) => [m, { mbps: med[m], vsBaseline: ratios(m, 'baseline'), vsToJSON: 'toJSON' in med ? ratios(m, 'toJSON') : null, faultsPerMB: median(faults[m]) }]),
    ),
  });
  console.log(
    `| ${name} | ${docs.length} | ${size(bytes / docs.length)} | ${med.baseline.toFixed(0)} | ${x('toJSON')} | ${x('ndjsonConcat')} | ${x('ndjsonArray')} | ${vsToJSON('ndjsonConcat')}, ${vsToJSON('ndjsonArray')} | ${x('peerString')} | ${x('peerBuffer')} | ${vsPeer} | ${pf} |`,
  );
}
report.machine.loadAverage.end = load();
if (process.env.JSON_OUT) writeFileSync(process.env.JSON_OUT, `${JSON.stringify(report, null, 1)}\n`);
