// Projection and redaction (issue 32) side by side with a whole transcode, in one process: each
// timing round runs every variant in turn (the order rotates per round), and the median of the
// rounds is reported with its ratio to the whole transcode. Throughput is per CPU second of this
// process (process.cpuUsage), so load from other processes on a shared machine does not skew it.
//
//   node benchmark/projection.mjs            # doc10k (order documents of ~10 KB), compat
//   WL=doc10k,doc1k DIALECT=relaxed ROUNDS=15 node benchmark/projection.mjs
//
// Variants (on the order documents of benchmark/workloads.mjs):
//   whole     no options beyond the dialect
//   project3  { orderNo: 1, status: 1, total: 1 } (an inclusion of 3 fields; `_id` kept)
//   exclude2  { 'customer.email': 0, paid: 0 } (two small fields, so the output is nearly whole)
//   redact5   HMAC-SHA256 of 5 fields: orderNo, customer.{name,email}, customer.address.{street,zip}
// Methods: `doc` is one toJSON call per document (options object reused: compiled once), `batch`
// one toNDJSON call per batch of up to 1,000 documents / 4 MiB.
import { createRequire } from 'node:module';
import { batchesOf, loadWorkload } from './workloads.mjs';

const require = createRequire(import.meta.url);
const { toJSON, toNDJSON } = require('../index.js');

const ROUNDS = Number(process.env.ROUNDS || 21);
const ROUND_MS = Number(process.env.ROUND_MS || 150);
const dialect = process.env.DIALECT || 'compat';
const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1];

const VARIANTS = {
  whole: { dialect },
  project3: { dialect, projection: { orderNo: 1, status: 1, total: 1 } },
  exclude2: { dialect, projection: { 'customer.email': 0, paid: 0 } },
  redact5: {
    dialect,
    redact: { paths: ['orderNo', 'customer.name', 'customer.email', 'customer.address.street', 'customer.address.zip'], with: 'hmac-sha256', key: Buffer.from('benchmark key') },
  },
};
const TARGETS = { project3: 'at least 3x faster', exclude2: 'within 10 %', redact5: 'within 20 %' };

for (const wl of (process.env.WL || 'doc10k').split(',')) {
  const w = loadWorkload(wl, { quick: true, seed: 20241122 });
  const bytes = w.docs.reduce((n, d) => n + d.length, 0);
  const batches = batchesOf(w.docs);
  // The variants really differ (and are checked once, outside the timing).
  const sample = Object.fromEntries(Object.entries(VARIANTS).map(([k, o]) => [k, toJSON(w.docs[0], o).length]));
  console.log(`${wl}: ${w.docs.length} documents, ${(bytes / 1e6).toFixed(1)} MB, dialect ${dialect}; first document's JSON bytes: ${JSON.stringify(sample)}`);
  for (const method of (process.env.METHODS || 'doc,batch').split(',')) {
    const names = Object.keys(VARIANTS);
    const res = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < ROUNDS; r++) {
      const order = names.map((_, i) => names[(i + r) % names.length]);
      for (const name of order) {
        const o = VARIANTS[name];
        let sink = 0;
        let passes = 0;
        // CPU time of this process (user + system), not wall time: the machine is shared, and
        // another process's load would otherwise land on whichever variant it overlaps.
        const t0 = process.hrtime.bigint();
        const c0 = process.cpuUsage();
        do {
          if (method === 'doc') for (const d of w.docs) sink += toJSON(d, o).length;
          else for (const b of batches) sink += toNDJSON(b, o).length;
          passes++;
        } while (Number(process.hrtime.bigint() - t0) / 1e6 < ROUND_MS);
        const c = process.cpuUsage(c0);
        if (sink === 0) throw new Error('no output');
        res[name].push((bytes * passes) / (c.user + c.system)); // MB/s of BSON in, per CPU second
      }
    }
    const base = median(res.whole);
    for (const name of names) {
      const m = median(res[name]);
      const ratio = m / base;
      const note = name === 'whole' ? '' : `  speed ${ratio.toFixed(2)}x of whole (time ${(1 / ratio).toFixed(2)}x; target ${TARGETS[name]})`;
      console.log(`  ${method.padEnd(5)} ${name.padEnd(8)} ${m.toFixed(0).padStart(6)} MB/s${note}`);
    }
  }
}
