// Side-by-side comparison of two builds of the Node addon in one process, as ARCHITECTURE.md's
// design decisions report them: both are loaded, each timing round alternates their order, and the median
// MB/s of each is printed with the ratio B/A.
//
//   cargo build --release -p bson2json-node --target-dir /tmp/nA && cp /tmp/nA/release/libbson2json_node.so /tmp/a.node
//   (same for the other build, to /tmp/b.node)
//   A=/tmp/a.node B=/tmp/b.node WL=doc1k,doc10k,numeric METHODS=doc,batch node benchmark/ab-node.mjs
//
// `doc` times one native call per document (what `toJSON` does), `batch` the NDJSON batch call
// on concatenated documents of up to 1,000 documents / 4 MiB, `list` the joined-texts layout that
// toJSONList uses. ROUNDS (default 9) timing rounds
// of 250 ms each; METRIC=cpu rates over the process's CPU time instead of wall time. Each line
// gives the ratio of the medians and the median of the rounds' ratios (`pairs`). Workloads
// come from benchmark/workloads.mjs (quick sizes, the benchmark seed).
import { createRequire } from 'node:module';
import { batchesOf, loadWorkload } from './workloads.mjs';

const require = createRequire(import.meta.url);
if (!process.env.A || !process.env.B) {
  console.error('usage: A=<a.node> B=<b.node> [WL=doc1k,...] [METHODS=doc,batch] [ROUNDS=9] node benchmark/ab-node.mjs');
  process.exit(2);
}
const mods = [['A', require(process.env.A)], ['B', require(process.env.B)]];
// The default options as a build's batch call takes them: the pair (packed, maxOutputBytes) of a
// build that exports FLAG_BITS, the three numbers (flags, maxDepth, maxOutputBytes) of one before.
const options = (m) => (typeof m.FLAG_BITS === 'number' ? [1000 * 2 ** m.FLAG_BITS, 2 ** 32 - 1] : [0, 1000, 2 ** 32 - 1]);
const ROUNDS = Number(process.env.ROUNDS || 9);
const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1];
// METRIC=cpu: MB per second of this process's CPU time (user + system) rather than of wall
// time, which on a machine shared with other work leaves out the time they took.
const CPU = process.env.METRIC === 'cpu';
const clock = () => {
  if (!CPU) return performance.now();
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

for (const wl of (process.env.WL || 'tiny,small250,doc1k').split(',')) {
  const w = loadWorkload(wl, { quick: true, seed: 20241122 });
  const batches = batchesOf(w.docs);
  for (const method of (process.env.METHODS || 'doc,batch').split(',')) {
    const res = { A: [], B: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, m] of r % 2 ? [...mods].reverse() : mods) {
        const once =
          method === 'doc'
            ? () => {
                let n = 0;
                for (const d of w.docs) n += m.transcode(d).length;
                return n;
              }
            : () => {
                // `batch`: the NDJSON Buffer layout (toNDJSON); `list`: the joined-texts layout
                // (toJSONList before its JS `slice`s).
                const layout = method === 'list' ? 4 : 1;
                let n = 0;
                for (const b of batches) n += m.transcodeBatch(b, layout, ...options(m), 1).length;
                return n;
              };
        once();
        const t0 = performance.now();
        const c0 = clock();
        let k = 0;
        while (performance.now() - t0 < 250) {
          once();
          k++;
        }
        res[name].push((w.bytes * k) / ((clock() - c0) / 1000) / 1e6);
      }
    }
    const [a, b] = [median(res.A), median(res.B)];
    // and the median of each round's B/A (the two measured back to back)
    const pairs = median(res.A.map((x, i) => res.B[i] / x));
    console.log(`${wl.padEnd(14)} ${method.padEnd(5)} A ${a.toFixed(0)} MB/s  B ${b.toFixed(0)} MB/s  B/A ${(b / a).toFixed(3)}  pairs ${pairs.toFixed(3)}`);
  }
}
