#!/usr/bin/env node
// Generate (and cache in benchmark/data/) the benchmark workloads.
//
//   node benchmark/generate.mjs [--quick] [--seed N] [--workloads a,b] [--force]

import { parseArgs } from 'node:util';
import { BSON } from 'bson';
import { DEFAULT_SEED, WORKLOAD_NAMES, WORKLOADS, loadWorkload } from './workloads.mjs';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seed: { type: 'string', default: String(DEFAULT_SEED) },
    workloads: { type: 'string' },
    force: { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
  },
});

const names = values.workloads ? values.workloads.split(',').map((s) => s.trim()) : WORKLOAD_NAMES;
const seed = Number(values.seed);
const rows = [];
for (const name of names) {
  if (!WORKLOADS[name]) throw new Error(`unknown workload ${name} (known: ${WORKLOAD_NAMES.join(', ')})`);
  const t0 = performance.now();
  const w = loadWorkload(name, { quick: values.quick, seed, force: values.force });
  const ms = performance.now() - t0;
  const sizes = w.docs.map((d) => d.length).sort((a, b) => a - b);
  if (values.check) {
    // every document must survive the baseline round trip with finite numbers only
    for (const d of w.docs) JSON.parse(JSON.stringify(BSON.deserialize(d)));
  }
  rows.push({
    workload: name,
    docs: w.docs.length,
    MB: (w.bytes / 1048576).toFixed(2),
    'min B': sizes[0],
    'median B': sizes[sizes.length >> 1],
    'max B': sizes[sizes.length - 1],
    source: w.generated ? `generated ${ms.toFixed(0)} ms` : 'cache',
  });
}
console.table(rows);
