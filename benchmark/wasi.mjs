// The WASI build against the native addon and the baseline JSON.stringify(BSON.deserialize(buf)),
// side by side in one process (and against lib/fallback.js, the JavaScript port of the core, in a
// checkout that still has it).
//
//   npm run build && npm run build:wasi && node benchmark/wasi.mjs [--ms 400] [--raw]
//
// Every backend is called at the binding level with default options, as index.js calls it
// (toJSON -> transcode(bson), toJSONBuffer -> transcodeBuffer(bson), toNDJSON ->
// transcodeBatch(docs, NdjsonBuffer, ...)). `wasi` is the WASI binding through lib/native/wasi.js
// (staged regions); `--raw` adds `wasi-raw`, the same binding called directly through emnapi.
// Each cell is the throughput as a ratio to the baseline (higher is faster), from the best of
// three timed rounds of at least --ms milliseconds each; MB/s is of BSON input.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { BSON } from 'bson';
import { loadWorkload } from './workloads.mjs';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const MS = Number(args[args.indexOf('--ms') + 1]) || (args.includes('--ms') ? 400 : 400);
const RAW = args.includes('--raw');

const native = require('../binding.js');
if (native.__napiBindingTarget !== 'native') throw new Error('the native addon did not load (npm run build)');
const wasiRaw = require('../bson2json.wasi.cjs');
const wasi = require('../lib/native/wasi.js').wrapWasi(wasiRaw);
let fallback;
try {
  fallback = require('../lib/fallback.js');
} catch {
  fallback = undefined;
}
const { resolveOptions } = require('../lib/options.js');
const o = resolveOptions({});

const baseline = {
  transcode: (b) => JSON.stringify(BSON.deserialize(b)),
  transcodeBuffer: (b) => Buffer.from(JSON.stringify(BSON.deserialize(b))),
  transcodeBatch: (docs) => {
    let s = '';
    for (const d of docs) s += JSON.stringify(BSON.deserialize(d)) + '\n';
    return Buffer.from(s);
  },
};

const backends = [['baseline', baseline], ['native', native], ['wasi', wasi]];
if (RAW) backends.push(['wasi-raw', wasiRaw]);
if (fallback) backends.push(['fallback', fallback]);

const small = loadWorkload('small250', { quick: true }).docs.slice(0, 2000);
const d10k = loadWorkload('doc10k', { quick: true }).docs.slice(0, 200);
// One ~3.5 MB document: an array of ~10 KB order documents.
const items = [];
let size = 0;
const pool10k = loadWorkload('doc10k', { quick: true }).docs;
for (let i = 0; size < 3.5e6; i++) {
  const d = pool10k[i % pool10k.length];
  items.push(BSON.deserialize(d));
  size += d.length;
}
const big = Buffer.from(BSON.serialize({ items }));
const batches = [];
for (let i = 0; i + 1000 <= small.length; i += 1000) batches.push(small.slice(i, i + 1000));

const sum = (docs) => docs.reduce((n, d) => n + d.length, 0);
const NDJSON = native.BatchLayout.NdjsonBuffer;

const workloads = [
  { name: 'toJSON ~270 B docs', docs: small, run: (b, d) => b.transcode(d) },
  { name: 'toJSON ~10 KB docs', docs: d10k, run: (b, d) => b.transcode(d) },
  { name: 'toJSONBuffer ~270 B docs', docs: small, run: (b, d) => b.transcodeBuffer(d) },
  { name: 'toJSONBuffer ~10 KB docs', docs: d10k, run: (b, d) => b.transcodeBuffer(d) },
  {
    name: 'toNDJSON 1000 x ~270 B',
    docs: batches,
    bytes: sum(batches[0]),
    run: (b, batch) => b.transcodeBatch(batch, NDJSON, o.packed, o.maxOutputBytes, 1),
  },
  { name: `toJSON one ${(big.length / 1e6).toFixed(1)} MB doc (string)`, docs: [big], run: (b, d) => b.transcode(d) },
  { name: `toJSONBuffer one ${(big.length / 1e6).toFixed(1)} MB doc`, docs: [big], run: (b, d) => b.transcodeBuffer(d) },
];

function measure(w, b) {
  let best = 0;
  for (let round = 0; round < 3; round++) {
    let calls = 0;
    let bytes = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < MS) {
      for (const d of w.docs) {
        w.run(b, d);
        calls++;
        bytes += w.bytes ?? d.length;
      }
      t = performance.now();
    }
    best = Math.max(best, bytes / ((t - t0) / 1000));
  }
  return best;
}

// Same output everywhere (checked once per workload, on its first input).
for (const w of workloads) {
  const want = String(w.run(native, w.docs[0]));
  for (const [name, b] of backends) {
    if (name === 'baseline') continue;
    if (String(w.run(b, w.docs[0])) !== want) throw new Error(`${name} differs from native on ${w.name}`);
  }
}

const header = ['workload', ...backends.map(([n]) => n), 'wasi MB/s', 'native MB/s'];
console.log(`| ${header.join(' | ')} |`);
console.log(`| ${header.map(() => '---').join(' | ')} |`);
for (const w of workloads) {
  const rate = {};
  for (const [name, b] of backends) rate[name] = measure(w, b);
  const cells = backends.map(([n]) => `${(rate[n] / rate.baseline).toFixed(2)}x`);
  console.log(`| ${w.name} | ${cells.join(' | ')} | ${(rate.wasi / 1e6).toFixed(0)} | ${(rate.native / 1e6).toFixed(0)} |`);
}
console.log(`\nnode ${process.version}; ratios are throughput / baseline (JSON.stringify(BSON.deserialize(buf))); ${MS} ms x 3 rounds per cell`);
