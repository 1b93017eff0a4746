#!/usr/bin/env node
// The one benchmark command behind every figure in the documentation (`npm run bench:report`):
// runs the headline benchmarks on Node 26 (the active LTS) and Node 20 (the oldest supported),
// writes benchmark/results/{synthetic,realworld,rows}-node{26,20}.json (+ the synthetic runs' full
// tables, synthetic-node*.md), and regenerates from them the README's speed table and chart,
// docs/performance.md's tables and docs/rows.md's (benchmark/report-render.mjs). Figures are never edited by hand:
// __test__/generated-docs.spec.ts fails when a generated block differs from what the committed
// JSON renders.
//
//   npm run bench:report                      # measure on both Nodes, then regenerate
//   npm run bench:report -- --render          # regenerate from the committed JSON only
//   npm run bench:report -- --quick           # a short smoke run (marked "quick" in the tables)
//   NODE26=/path/to/node NODE20=/path/to/node npm run bench:report
//
// Each Node: `benchmark/run.mjs` (the synthetic workloads, every bson2json method against its
// reference, interleaved in one process) and `benchmark/realworld.mjs` (the public real-world
// data sets, fetched by scripts/realworld-data.sh). A Node binary comes from NODE<major>, else
// the running node when its major matches, else `bash scripts/node-versions.sh <major>` (which
// installs a pinned build and prints its bin directory).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CHART, NODES, REALWORLD, ROWS, SYNTHETIC, TARGETS, loadResults, renderBlocks, renderChart, splice } from './report-render.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({ options: { render: { type: 'boolean', default: false }, quick: { type: 'boolean', default: false } } });

// The methods of the synthetic run (their references are added by run.mjs). Peers are left out:
// `npm run bench` compares them.
const METHODS = 'b2j_toJSON,b2j_toJSONBuffer,b2j_toJSONList,b2j_toJSONArray,b2j_toNDJSON,b2j_relaxed,b2j_canonical';

function nodeFor(major) {
  let bin = process.env[`NODE${major}`];
  if (!bin && process.versions.node.split('.')[0] === major) bin = process.execPath;
  if (!bin) {
    const r = spawnSync('bash', [join(ROOT, 'scripts/node-versions.sh'), major], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status === 0 && r.stdout.trim()) bin = join(r.stdout.trim().split('\n').pop(), 'node');
  }
  if (!bin) throw new Error(`no Node ${major}: set NODE${major}=/path/to/node`);
  const v = spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  if (v.status !== 0 || v.stdout.split('.')[0] !== major) throw new Error(`NODE${major}=${bin} is not Node ${major} (${v.stdout.trim() || v.stderr.trim()})`);
  return bin;
}

function run(cmd, argv, env = {}) {
  console.log(`\n$ ${Object.entries(env).map(([k, v]) => `${k}=${v} `).join('')}${cmd} ${argv.join(' ')}`);
  const r = spawnSync(cmd, argv, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed (${r.status ?? r.signal})`);
}

function measure() {
  const nodes = Object.fromEntries(NODES.map((n) => [n, nodeFor(n)]));
  run('bash', ['scripts/realworld-data.sh']);
  for (const n of NODES) {
    const out = SYNTHETIC(n).replace(/^benchmark\/results\//, '').replace(/\.json$/, '');
    run(nodes[n], ['benchmark/run.mjs', '--methods', METHODS, '--out', out, ...(args.quick ? ['--quick'] : [])]);
    // run.mjs also draws its own chart of the run; the README's chart is drawn below
    rmSync(join(ROOT, 'benchmark/results', `chart-${out}.svg`), { force: true });
    run(nodes[n], ['benchmark/realworld.mjs'], { JSON_OUT: REALWORLD(n), ...(args.quick ? { ROUNDS: '3', ROUND_MS: '60' } : {}) });
    run(nodes[n], ['benchmark/rows.mjs', '--json', ROWS(n)], args.quick ? { ROUNDS: '3', ROUND_MS: '60' } : { ROUNDS: '15' });
  }
}

function regenerate() {
  const res = loadResults(ROOT);
  const blocks = renderBlocks(res);
  for (const [file, names] of Object.entries(TARGETS)) {
    const path = join(ROOT, file);
    let text = readFileSync(path, 'utf8');
    for (const name of names) text = splice(text, name, blocks[name]);
    writeFileSync(path, text);
    console.log(`regenerated ${names.join(', ')} in ${file}`);
  }
  writeFileSync(join(ROOT, CHART), renderChart(res));
  console.log(`regenerated ${CHART}`);
}

if (!args.render) measure();
else if (!NODES.every((n) => [SYNTHETIC(n), REALWORLD(n), ROWS(n)].every((f) => existsSync(join(ROOT, f))))) {
  throw new Error('no results to render: run npm run bench:report first');
}
regenerate();
