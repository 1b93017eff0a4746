// What bounds `toRows` ÷ `toRow` on PowerSync's 100 KB shapes (docs/rows.md, "What bounds it"):
// benchmark/rows.mjs calls `toRow` on one 100 KB document 64 times (its bytes stay in the
// cache), while `toRows` reads 64 documents back to back (6.4 MB, from memory). Here `toRow` on
// that document repeated, `toRow` on 64 distinct copies of it, and `toRows` on those copies
// concatenated run interleaved; each is the median of documents per ms of process CPU time, a
// ratio the median of the per-round ratios.
//
//   node benchmark/rows-cold-input.mjs          # OP=update for the update shape
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { toRow, toRows } = require('../index.js');
const { BSON } = require('bson');

const PS = { rowFormat: 'powersync' };
const op = process.env.OP || 'insert';
const ROUNDS = Number(process.env.ROUNDS || 15);
const base = {
  _id: new BSON.ObjectId('6a0000000000000000000001'),
  checksum: 1,
  operationType: op,
  tenantId: 'tenant-benchmark',
  version: 1,
  createdAt: new Date(0),
  updatedAt: new Date(1),
  flags: { active: true },
  tags: ['alpha', 'beta', op],
  nested: { owner: { id: 'owner' } },
};
const doc = Buffer.from(BSON.serialize({ ...base, payload: 'x'.repeat(101000) }));
const same = Array(64).fill(doc);
const distinct = same.map((d) => Buffer.from(d));
const concatenated = Buffer.concat(distinct);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const METHODS = {
  'toRow, one document': () => {
    for (const d of same) toRow(d, PS);
  },
  'toRow, distinct copies': () => {
    for (const d of distinct) toRow(d, PS);
  },
  toRows: () => toRows(concatenated, PS),
};
const names = Object.keys(METHODS);
const rates = Object.fromEntries(names.map((k) => [k, []]));
for (let r = 0; r <= ROUNDS; r++) {
  for (let i = 0; i < names.length; i++) {
    const k = names[(i + r) % names.length];
    const c0 = cpu();
    const w0 = performance.now();
    let n = 0;
    do {
      METHODS[k]();
      n += 64;
    } while (performance.now() - w0 < 150);
    if (r > 0) rates[k].push(n / (cpu() - c0)); // round 0 warms up
  }
}
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const ratio = (a, b) => median(rates[a].map((x, i) => x / rates[b][i])).toFixed(2);
console.log(`node ${process.version}, ${op}, documents per ms of CPU: ${names.map((k) => `${k} ${median(rates[k]).toFixed(1)}`).join(', ')}`);
console.log(`toRows ÷ toRow (one document) ${ratio('toRows', 'toRow, one document')}x; toRows ÷ toRow (distinct copies) ${ratio('toRows', 'toRow, distinct copies')}x`);
