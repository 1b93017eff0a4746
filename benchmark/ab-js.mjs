// Side-by-side comparison of two checkouts of the JavaScript layer in one process: the public API
// of each (its index.js, with whatever addon that checkout loads) is timed in alternating order
// per round, and the median MB/s of each is printed with the ratio B/A. For a change to lib/ or
// index.js, give both checkouts the same addon build so only the JavaScript differs:
//
//   git worktree add /tmp/jsA <before> && cp bson2json.*.node /tmp/jsA/ && ln -s "$PWD/node_modules" /tmp/jsA/
//   A=/tmp/jsA B=. WL=tiny,small250,doc1k node benchmark/ab-js.mjs
//
// Methods (METHODS, default all): `doc` toJSON(d), `docopt` toJSON(d, { dialect: 'relaxed' }),
// `buffer` toJSONBuffer(d), `list` toJSONList(batch), `ndjson` toNDJSON(batch), `stream` the
// batches through createTranscodeStream. ROUNDS (default 9) rounds of 250 ms each; workloads from
// benchmark/workloads.mjs (quick sizes, the benchmark seed).
import { createRequire } from 'node:module';
import path from 'node:path';
import { batchesOf, loadWorkload } from './workloads.mjs';

const require = createRequire(import.meta.url);
if (!process.env.A || !process.env.B) {
  console.error('usage: A=<checkout> B=<checkout> [WL=tiny,...] [METHODS=doc,...] [ROUNDS=9] node benchmark/ab-js.mjs');
  process.exit(2);
}
const mods = [
  ['A', require(path.resolve(process.env.A, 'index.js'))],
  ['B', require(path.resolve(process.env.B, 'index.js'))],
];
const ROUNDS = Number(process.env.ROUNDS || 9);
const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1];
const RELAXED = { dialect: 'relaxed' };

async function streamAll(m, batches) {
  const s = m.createTranscodeStream();
  let n = 0;
  s.on('data', (c) => (n += c.length));
  const done = new Promise((resolve, reject) => {
    s.on('end', resolve);
    s.on('error', reject);
  });
  for (const b of batches) s.write(b);
  s.end();
  await done;
  return n;
}

const METHODS = {
  doc: (m, w) => {
    let n = 0;
    for (const d of w.docs) n += m.toJSON(d).length;
    return n;
  },
  docopt: (m, w) => {
    let n = 0;
    for (const d of w.docs) n += m.toJSON(d, RELAXED).length;
    return n;
  },
  buffer: (m, w) => {
    let n = 0;
    for (const d of w.docs) n += m.toJSONBuffer(d).length;
    return n;
  },
  list: (m, w, batches) => {
    let n = 0;
    for (const b of batches) n += m.toJSONList(b).length;
    return n;
  },
  ndjson: (m, w, batches) => {
    let n = 0;
    for (const b of batches) n += m.toNDJSON(b).length;
    return n;
  },
  stream: (m, w, batches) => streamAll(m, batches),
};

for (const wl of (process.env.WL || 'tiny,small250,doc1k').split(',')) {
  const w = loadWorkload(wl, { quick: true, seed: 20241122 });
  const batches = batchesOf(w.docs);
  for (const method of (process.env.METHODS || Object.keys(METHODS).join(',')).split(',')) {
    const run = METHODS[method];
    const res = { A: [], B: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, m] of r % 2 ? [...mods].reverse() : mods) {
        await run(m, w, batches);
        const t0 = performance.now();
        let k = 0;
        while (performance.now() - t0 < 250) {
          await run(m, w, batches);
          k++;
        }
        res[name].push((w.bytes * k) / ((performance.now() - t0) / 1000) / 1e6);
      }
    }
    const [a, b] = [median(res.A), median(res.B)];
    console.log(`${wl.padEnd(14)} ${method.padEnd(6)} A ${a.toFixed(0)} MB/s  B ${b.toFixed(0)} MB/s  B/A ${(b / a).toFixed(3)}`);
  }
}
