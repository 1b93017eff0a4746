// Public real-world data (twitter.json, canada.json, citm_catalog.json: the classic JSON parser
// benchmarks, fetched by scripts/realworld-data.sh) turned into BSON, side by side in one
// process: the baseline `JSON.stringify(BSON.deserialize(doc))` per document, `toJSON` per
// document, and `toNDJSON` per batch (one Buffer of concatenated documents, and an array of
// them). Every method's output is first checked equal to the baseline's; then the methods run
// interleaved (the order rotates per round) and each cell is the median of the rounds.
//
//   bash scripts/realworld-data.sh && node benchmark/realworld.mjs
//   ROUNDS=21 ROUND_MS=200 DATASETS=twitter,citm-events node benchmark/realworld.mjs
//
// Datasets: twitter (its 100 statuses, one document each), canada (the whole GeoJSON file as
// one document: number-heavy), citm (the whole catalog as one document), citm-events and
// citm-performances (the catalog's events and performances, one document each: small
// documents).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const { toJSON, toNDJSON } = require('../index.js');
const { BSON } = require('bson');

const ROUNDS = Number(process.env.ROUNDS || 15);
const ROUND_MS = Number(process.env.ROUND_MS || 150);
const DIR = process.env.REALWORLD_DIR || new URL('../tmp/realworld/', import.meta.url).pathname;
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

const bsonVersion = JSON.parse(readFileSync(new URL('../node_modules/bson/package.json', import.meta.url), 'utf8')).version;
console.log(`node ${process.version}, bson ${bsonVersion}; MB/s of BSON; ratios to the baseline in the same run; ${ROUNDS} rounds of ${ROUND_MS} ms`);
console.log('| dataset | documents | mean size | baseline MB/s | toJSON | toNDJSON (concatenated) | toNDJSON (array) | toNDJSON / toJSON |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const name of (process.env.DATASETS || Object.keys(DATASETS).join(',')).split(',')) {
  const docs = DATASETS[name]();
  const concat = Buffer.concat(docs);
  const bytes = concat.length;
  const expected = docs.map((d) => JSON.stringify(BSON.deserialize(d)));
  for (let i = 0; i < docs.length; i++) if (toJSON(docs[i]) !== expected[i]) throw new Error(`${name}: toJSON differs from the baseline at document ${i}`);
  const nd = expected.join('\n') + '\n';
  if (toNDJSON(concat).toString() !== nd || toNDJSON(docs).toString() !== nd) throw new Error(`${name}: toNDJSON differs from the baseline`);
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
  const names = Object.keys(methods);
  const rates = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const m = names[(k + r) % names.length];
      const f = methods[m];
      let passes = 0;
      let sink = 0;
      const t0 = process.hrtime.bigint();
      let ns;
      do {
        sink += f();
        passes++;
        ns = Number(process.hrtime.bigint() - t0);
      } while (ns < ROUND_MS * 1e6);
      if (sink === 0) throw new Error('no output');
      rates[m].push((bytes * passes) / (ns / 1e9) / 1e6);
    }
  }
  const med = Object.fromEntries(names.map((n) => [n, median(rates[n])]));
  const x = (m) => `${(med[m] / med.baseline).toFixed(2)}x`;
  console.log(
    `| ${name} | ${docs.length} | ${(bytes / docs.length / 1024).toFixed(1)} KB | ${med.baseline.toFixed(0)} | ${x('toJSON')} (${med.toJSON.toFixed(0)}) | ${x('ndjsonConcat')} (${med.ndjsonConcat.toFixed(0)}) | ${x('ndjsonArray')} (${med.ndjsonArray.toFixed(0)}) | ${(med.ndjsonConcat / med.toJSON).toFixed(2)}x |`,
  );
}
