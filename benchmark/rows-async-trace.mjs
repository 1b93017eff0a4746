// What `toRowsAsync` does in its longest stretches without a turn of the event loop, on the
// 16 MiB batch of benchmark/rows.mjs (docs/rows.md, "What bounds it"): a 1 ms interval records
// each stretch with the main thread's CPU time in it (Node 23.9+), and the binding's calls
// (`prepareRows`: the input's copy; `runRows`; `PendingRows.take`: a task's strings) are
// wrapped to log when they ran. A stretch whose wall time is far above its CPU time is the
// thread waiting for a core; add --trace-gc to see the scavenges in the others.
//
//   bash scripts/realworld-data.sh && node benchmark/rows-async-trace.mjs
//   BY=cpu RUNS=5 node --trace-gc benchmark/rows-async-trace.mjs   # the stretches with most CPU
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const { toRowsAsync } = require('../index.js');
const { loadBackend } = require('../lib/native/load');
const { BSON } = require('bson');

const b = loadBackend().binding;
const PS = { rowFormat: 'powersync' };
const DIR = process.env.REALWORLD_DIR || new URL('../tmp/realworld/', import.meta.url).pathname;
const statuses = JSON.parse(readFileSync(`${DIR}/twitter.json`, 'utf8')).statuses.map((o) => Buffer.from(BSON.serialize(o)));
const batch = [];
for (let i = 0, bytes = 0; bytes < 16 * 1024 * 1024; i++) {
  batch.push(statuses[i % statuses.length]);
  bytes += statuses[i % statuses.length].length;
}
const big = Buffer.concat(batch);
const threadCpu = () => {
  if (typeof process.threadCpuUsage !== 'function') return NaN;
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};

const events = [];
const wrap = (name, what, after = (r) => r) => {
  const f = b[name];
  if (typeof f !== 'function') return;
  b[name] = function (...args) {
    const t0 = performance.now();
    const r = f.apply(this, args);
    events.push({ what, t0, t1: performance.now() });
    return after(r);
  };
};
let takeWrapped = false;
const wrapTake = (pending) => {
  if (takeWrapped) return pending;
  const proto = Object.getPrototypeOf(pending);
  const take = proto.take;
  proto.take = function () {
    const t0 = performance.now();
    const r = take.call(this);
    events.push({ what: "a task's strings (take)", t0, t1: performance.now() });
    return r;
  };
  takeWrapped = true;
  return pending;
};
wrap('prepareRows', "a task's input copied (prepareRows)");
wrap('runRows', 'a task started (runRows)', (p) => p.then(wrapTake));

async function run() {
  const stretches = [];
  let last = performance.now();
  let lastCpu = threadCpu();
  const tick = setInterval(() => {
    const now = performance.now();
    const c = threadCpu();
    stretches.push({ t0: last, t1: now, cpu: c - lastCpu });
    last = now;
    lastCpu = c;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  events.length = 0;
  const t0 = performance.now();
  const c0 = threadCpu();
  const rows = await toRowsAsync(big, PS);
  const t1 = performance.now();
  const cpu = threadCpu() - c0;
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(tick);
  const key = process.env.BY === 'cpu' ? (s) => s.cpu : (s) => s.t1 - s.t0;
  const mine = stretches.filter((s) => s.t1 >= t0 && s.t0 <= t1 + 1).sort((x, y) => key(y) - key(x));
  console.log(`${rows.length} rows: wall ${(t1 - t0).toFixed(1)} ms, main-thread CPU ${cpu.toFixed(1)} ms`);
  for (const s of mine.slice(0, 3)) {
    console.log(`  stretch of ${(s.t1 - s.t0).toFixed(1)} ms at +${(s.t0 - t0).toFixed(1)} ms, main-thread CPU in it ${s.cpu.toFixed(1)} ms`);
    const inside = events.filter((e) => e.t1 >= s.t0 && e.t0 <= s.t1);
    const sums = new Map();
    for (const e of inside) sums.set(e.what, (sums.get(e.what) ?? 0) + (e.t1 - e.t0));
    for (const [what, ms] of sums) console.log(`    ${what}: ${ms.toFixed(1)} ms`);
  }
}
for (let r = 0; r < Number(process.env.RUNS || 3); r++) await run();
