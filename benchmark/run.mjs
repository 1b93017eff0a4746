#!/usr/bin/env node
// bson2json benchmark runner. See benchmark/README.md.
//
//   node benchmark/run.mjs [--quick] [--workloads a,b] [--methods m1,m2] [--runs N] [--time ms]
//                          [--warmup ms] [--seed N] [--rss] [--build-peers] [--no-write]
//
// Honesty rules implemented here:
//  * Before any timing, every compared method's output is checked against its baseline for
//    EVERY document of the workload; a method that differs is excluded and reported loudly.
//  * All methods of a workload are measured in one process, interleaved: each run visits
//    every method once (for --time ms), in an order rotated by one per run, so machine noise
//    hits all methods alike; ratios are computed per run against the baseline of that run.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { BSON, EJSON } from 'bson';
import { loadBson2json, loadBsonExt, loadBsonToJson, loadPowerSync } from './peers.mjs';
import { DEFAULT_SEED, WORKLOAD_NAMES, WORKLOADS, loadWorkload } from './workloads.mjs';
import { renderChart } from './chart.mjs';

// A collectable heap between samples: garbage left by one method must not be collected
// during the next method's sample (young generation before each sample, full between workloads).
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const HERE = dirname(fileURLToPath(import.meta.url));
const RESULTS = join(HERE, 'results');

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    workloads: { type: 'string' },
    methods: { type: 'string' },
    runs: { type: 'string' },
    time: { type: 'string' },
    warmup: { type: 'string' },
    seed: { type: 'string', default: String(DEFAULT_SEED) },
    rss: { type: 'boolean', default: false },
    'rss-child': { type: 'boolean', default: false },
    'build-peers': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (args.help) {
  console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 6).join('\n'));
  process.exit(0);
}

const QUICK = args.quick;
const CONFIG = {
  mode: QUICK ? 'quick' : 'full',
  seed: Number(args.seed),
  runs: Number(args.runs ?? (QUICK ? 3 : 8)),
  timeMs: Number(args.time ?? (QUICK ? 60 : 200)),
  warmupMs: Number(args.warmup ?? (QUICK ? 60 : 400)),
};
const OUT = args.out ?? (QUICK ? 'quick' : 'latest');

// ---------------------------------------------------------------------------------------
// Methods

const DESER_EJSON = { promoteValues: false, bsonRegExp: true };

/**
 * kind: 'doc' -> fn(buf) per document; 'batch' -> fn(batch) per batch of documents.
 * ref: which reference output it must equal and which method its ratio is computed against.
 * compare: 'exact' (byte-identical text) or 'powersync' (documented normalisation).
 */
function defineMethods(peers) {
  const b2j = peers.bson2json;
  const m = [];
  const add = (def) => m.push(def);
  add({ id: 'baseline', label: 'JSON.stringify(BSON.deserialize)', group: 'reference', kind: 'doc', ref: null, fn: (b) => JSON.stringify(BSON.deserialize(b)) });
  add({
    id: 'ejson_relaxed',
    label: 'EJSON.stringify relaxed',
    group: 'reference',
    kind: 'doc',
    ref: 'baseline',
    reference: 'relaxed',
    noCheck: 'is the reference for dialect "relaxed" (its ratio is vs baseline, for context)',
    fn: (b) => EJSON.stringify(BSON.deserialize(b, DESER_EJSON), { relaxed: true }),
  });
  add({
    id: 'ejson_canonical',
    label: 'EJSON.stringify canonical',
    group: 'reference',
    kind: 'doc',
    ref: 'baseline',
    reference: 'canonical',
    noCheck: 'is the reference for dialect "canonical" (its ratio is vs baseline, for context)',
    fn: (b) => EJSON.stringify(BSON.deserialize(b, DESER_EJSON), { relaxed: false }),
  });

  const need = (fname, def) => {
    if (!b2j.ok) return add({ ...def, skip: `bson2json not loadable: ${b2j.reason}` });
    if (typeof b2j.mod[fname] !== 'function') return add({ ...def, skip: `bson2json does not export ${fname}() yet` });
    return add(def);
  };
  const mod = b2j.ok ? b2j.mod : {};
  need('toJSON', { id: 'b2j_toJSON', label: 'bson2json toJSON (compat)', group: 'bson2json', kind: 'doc', ref: 'baseline', fn: (b) => mod.toJSON(b) });
  need('toJSONBuffer', { id: 'b2j_toJSONBuffer', label: 'bson2json toJSONBuffer', group: 'bson2json', kind: 'doc', ref: 'baseline', fn: (b) => mod.toJSONBuffer(b) });
  need('toJSONList', { id: 'b2j_toJSONList', label: 'bson2json toJSONList (batch)', group: 'bson2json', kind: 'batch', ref: 'baseline', batchOut: 'list', fn: (bt) => mod.toJSONList(bt.docs) });
  need('toJSONArray', { id: 'b2j_toJSONArray', label: 'bson2json toJSONArray (batch)', group: 'bson2json', kind: 'batch', ref: 'baseline', batchOut: 'array', fn: (bt) => mod.toJSONArray(bt.docs) });
  need('toNDJSON', { id: 'b2j_toNDJSON', label: 'bson2json toNDJSON (concatenated)', group: 'bson2json', kind: 'batch', ref: 'baseline', batchOut: 'ndjson', fn: (bt) => mod.toNDJSON(bt.concat) });
  const relaxedOpts = { dialect: 'relaxed' };
  const canonicalOpts = { dialect: 'canonical' };
  need('toJSON', { id: 'b2j_relaxed', label: 'bson2json toJSON relaxed', group: 'bson2json', kind: 'doc', ref: 'ejson_relaxed', compare: 'ejson', relaxed: true, fn: (b) => mod.toJSON(b, relaxedOpts) });
  need('toJSON', { id: 'b2j_canonical', label: 'bson2json toJSON canonical', group: 'bson2json', kind: 'doc', ref: 'ejson_canonical', compare: 'ejson', relaxed: false, fn: (b) => mod.toJSON(b, canonicalOpts) });

  const ext = peers.bsonExt;
  add({
    id: 'bson_ext',
    label: `bson-ext ${ext.version ?? ''} deserialize + JSON.stringify`,
    group: 'peer',
    kind: 'doc',
    ref: 'baseline',
    ...(ext.ok ? { fn: (b) => JSON.stringify(ext.ext.deserialize(b)) } : { skip: ext.reason }),
  });
  const ps = peers.powersync;
  add({
    id: 'powersync',
    label: `PowerSync converter ${ps.version ?? ''}`,
    group: 'peer',
    kind: 'doc',
    ref: 'baseline',
    compare: 'powersync',
    ...(ps.ok ? { fn: ps.toJSON } : { skip: ps.reason }),
  });
  const b2 = peers.bsonToJson;
  add({
    id: 'bson_to_json',
    label: `bson-to-json ${b2.version ?? ''}${b2.isa ? ` (${b2.isa})` : ''}`,
    group: 'peer',
    kind: 'doc',
    ref: 'baseline',
    unsupported: ['cs_insert_1k', 'cs_insert_10k', 'cs_update_1k', 'cs_update_10k'],
    ...(b2.ok ? { fn: (b) => b2.transcode(b).toString() } : { skip: b2.reason }),
  });
  return m;
}

// ---------------------------------------------------------------------------------------
// Identity checks

const outText = (o) => (typeof o === 'string' ? o : Buffer.isBuffer(o) ? o.toString('utf8') : Buffer.from(o).toString('utf8'));

function firstDiff(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  const ctx = (s) => JSON.stringify(s.slice(Math.max(0, i - 30), i + 50));
  return { offset: i, got: ctx(a), want: ctx(b) };
}

/**
 * PowerSync normalisation: parse both texts and compare structurally (same key order) with
 * two documented equivalences: booleans are written as 1/0, and a BSON Timestamp is written
 * as its 64-bit integer value instead of {"$timestamp": "<u64>"}.
 */
function psEquivalent(ps, base) {
  if (base === true || base === false) return ps === (base ? 1 : 0);
  if (base && typeof base === 'object' && !Array.isArray(base)) {
    const keys = Object.keys(base);
    if (keys.length === 1 && keys[0] === '$timestamp' && typeof ps === 'number') return ps === Number(BigInt(base.$timestamp));
    if (!ps || typeof ps !== 'object' || Array.isArray(ps)) return false;
    const pk = Object.keys(ps);
    if (pk.length !== keys.length) return false;
    for (let i = 0; i < keys.length; i++) {
      if (pk[i] !== keys[i] || !psEquivalent(ps[keys[i]], base[keys[i]])) return false;
    }
    return true;
  }
  if (Array.isArray(base)) {
    if (!Array.isArray(ps) || ps.length !== base.length) return false;
    for (let i = 0; i < base.length; i++) if (!psEquivalent(ps[i], base[i])) return false;
    return true;
  }
  return Object.is(ps, base) || ps === base;
}

/**
 * EJSON normalisation. bson2json's relaxed / canonical dialects follow the Extended JSON v2
 * spec and the BSON corpus, js-bson's EJSON.stringify differs in number spelling (relaxed
 * 1.0 vs 1, canonical "1.0E+300" vs "1e+300", ...). Where the text is not byte-identical,
 * both texts are parsed with EJSON.parse (same mode) and re-serialised canonically by js-bson;
 * equal results mean the same values and BSON types (relaxed: the types relaxed mode keeps).
 */
function ejsonEquivalent(got, want, relaxed) {
  const norm = (t) => EJSON.stringify(EJSON.parse(t, { relaxed }), { relaxed: false });
  return norm(got) === norm(want);
}

function checkMethod(method, w, expected, batches) {
  const want = expected[method.ref];
  let mismatches = 0;
  let first = null;
  const units = method.kind === 'doc' || method.batchOut === 'list' ? w.docs.length : batches.length;
  let note = 'byte-identical';
  let normalised = 0;
  let firstNormalised = null;
  const fail = (i, got, exp) => {
    mismatches++;
    if (!first) {
      let semantic = false;
      try {
        semantic = JSON.stringify(JSON.parse(got)) === JSON.stringify(JSON.parse(exp));
      } catch {
        // invalid JSON
      }
      first = { doc: i, ...firstDiff(got, exp), semanticallyEqual: semantic };
    }
  };
  try {
    if (method.kind === 'doc') {
      for (let i = 0; i < w.docs.length; i++) {
        const got = outText(method.fn(w.docs[i]));
        if (got === want[i]) continue;
        if (method.compare === 'powersync' && psEquivalent(JSON.parse(got), JSON.parse(want[i]))) normalised++;
        else if (method.compare === 'ejson' && ejsonEquivalent(got, want[i], method.relaxed)) {
          normalised++;
          if (!firstNormalised) firstNormalised = { doc: i, ...firstDiff(got, want[i]) };
        } else fail(i, got, want[i]);
      }
      if (method.compare === 'powersync' && normalised) note = 'normalised: booleans 1/0, Timestamp as u64';
      if (method.compare === 'ejson' && normalised) {
        note = `${normalised} of ${w.docs.length} docs differ in text but are EJSON-equivalent; first at doc ${firstNormalised.doc} char ${firstNormalised.offset}: got ${firstNormalised.got} want ${firstNormalised.want}`;
      }
    } else {
      let base = 0;
      for (const bt of batches) {
        const exp = want.slice(base, base + bt.count);
        const out = method.fn(bt);
        if (method.batchOut === 'list') {
          if (!Array.isArray(out) || out.length !== exp.length) fail(base, `list of length ${out && out.length}`, `list of length ${exp.length}`);
          else for (let k = 0; k < exp.length; k++) if (outText(out[k]) !== exp[k]) fail(base + k, outText(out[k]), exp[k]);
        } else if (method.batchOut === 'array') {
          const e = `[${exp.join(',')}]`;
          const got = outText(out);
          if (got !== e) fail(base, got, e);
        } else {
          const e = `${exp.join('\n')}\n`;
          const got = outText(out);
          if (got !== e) {
            if (got === exp.join('\n')) note = 'byte-identical (no trailing newline)';
            else fail(base, got, e);
          }
        }
        base += bt.count;
      }
    }
  } catch (e) {
    return { ok: false, status: 'error', reason: `threw: ${String(e && e.message ? e.message : e).split('\n')[0]}` };
  }
  if (mismatches) {
    return {
      ok: false,
      status: 'MISMATCH',
      reason: `${mismatches} of ${units} ${method.kind === 'doc' || method.batchOut === 'list' ? 'documents' : 'batches'} differ from ${method.ref}; first at doc ${first.doc} char ${first.offset}: got ${first.got} want ${first.want}${first.semanticallyEqual ? ' (JSON.parse-equal)' : ''}`,
    };
  }
  return { ok: true, status: normalised ? 'equivalent' : 'identical', note };
}

// ---------------------------------------------------------------------------------------
// Timing

/** Make batches of documents (<= 1000 docs and <= 4 MiB each, at least one doc). */
function makeBatches(w) {
  const out = [];
  let start = 0;
  while (start < w.docs.length) {
    let end = start;
    let bytes = 0;
    while (end < w.docs.length && end - start < 1000 && (end === start || bytes + w.docs[end].length <= 4 << 20)) {
      bytes += w.docs[end].length;
      end++;
    }
    const docs = w.docs.slice(start, end);
    const concat = w.concat.subarray(w.docs[start].byteOffset - w.concat.byteOffset, w.docs[end - 1].byteOffset - w.concat.byteOffset + w.docs[end - 1].length);
    out.push({ docs, concat, count: end - start, bytes });
    start = end;
  }
  return out;
}

// A separately compiled loop per method keeps each call site monomorphic.
const LOOP_SRC = `
  const n = units.length;
  let cur = st.cursor, sink = 0, bytes = 0, docs = 0, blocks = 0;
  const t0 = hr();
  let now = t0;
  do {
    for (let k = 0; k < block; k++) {
      const u = units[cur];
      let o = fn(u.arg);
      sink = (sink + o.length) | 0;
      // Drop the result now: this loop runs few iterations per sample and stays in V8's
      // interpreter, whose register would otherwise keep the previous result alive during the
      // next call. For a batch returning ~9 MB of strings that doubled what each scavenge had
      // to copy and promote, and halved the measured speed of the string-returning batch calls.
      o = undefined;
      bytes += u.bytes;
      docs += u.docs;
      if (++cur === n) cur = 0;
    }
    blocks++;
    now = hr();
  } while (now < deadline);
  st.cursor = cur;
  st.sink = (st.sink + sink) | 0;
  return { ns: Number(now - t0), bytes, docs, blocks };
`;

function makeRunner() {
  // eslint-disable-next-line no-new-func
  return new Function('fn', 'units', 'st', 'block', 'deadline', 'hr', LOOP_SRC);
}

const hr = process.hrtime.bigint;

function sample(m, ms, block) {
  gc({ type: 'minor' });
  const deadline = hr() + BigInt(Math.round(ms * 1e6));
  return m.loop(m.fn, m.units, m.state, block, deadline, hr);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};

function benchWorkload(w, methods) {
  const batches = makeBatches(w);
  const docUnits = w.docs.map((d) => ({ arg: d, bytes: d.length, docs: 1 }));
  const batchUnits = batches.map((b) => ({ arg: b, bytes: b.bytes, docs: b.count }));
  for (const m of methods) {
    m.units = m.kind === 'doc' ? docUnits : batchUnits;
    m.loop = makeRunner();
    m.state = { cursor: 0, sink: 0 };
    // warm-up with 1-unit blocks, then size blocks to ~1 ms so clock reads are negligible
    const s = sample(m, CONFIG.warmupMs, 1);
    const unitsPerMs = s.blocks / (s.ns / 1e6);
    m.block = Math.max(1, Math.floor(unitsPerMs));
    m.samples = [];
  }
  for (let r = 0; r < CONFIG.runs; r++) {
    for (let k = 0; k < methods.length; k++) {
      const m = methods[(k + r) % methods.length];
      const s = sample(m, CONFIG.timeMs, m.block);
      m.samples.push({ mbps: s.bytes / 1048576 / (s.ns / 1e9), docsps: s.docs / (s.ns / 1e9) });
    }
  }
  const byId = Object.fromEntries(methods.map((m) => [m.id, m]));
  const res = {};
  for (const m of methods) {
    const r = {
      mbps: median(m.samples.map((s) => s.mbps)),
      docsps: median(m.samples.map((s) => s.docsps)),
      mbpsMin: Math.min(...m.samples.map((s) => s.mbps)),
      mbpsMax: Math.max(...m.samples.map((s) => s.mbps)),
      samples: m.samples,
    };
    const ref = m.ref && byId[m.ref];
    if (ref) {
      const ratios = m.samples.map((s, i) => s.mbps / ref.samples[i].mbps);
      r.ratio = { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
    }
    res[m.id] = r;
  }
  return res;
}

// ---------------------------------------------------------------------------------------
// Peak RSS, one child process per (workload, method)

/**
 * Peak RSS of this process. On Linux VmHWM of /proc/self/status: getrusage's ru_maxrss (what
 * process.resourceUsage().maxRSS reports) carries the parent's high-water mark across
 * fork + exec, so a child spawned by a big parent would report the parent's peak.
 */
function peakRssKiB() {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    // not linux
  }
  return process.resourceUsage().maxRSS;
}

function rssChild(w, method) {
  const batches = makeBatches(w);
  const units = method.kind === 'doc' ? w.docs : batches;
  let sink = 0;
  const t0 = performance.now();
  let passes = 0;
  do {
    for (const u of units) sink = (sink + method.fn(u).length) | 0;
    passes++;
  } while (performance.now() - t0 < 150 && passes < 50);
  return { maxRSSKiB: peakRssKiB(), passes, sink };
}

function measureRss(workloadName, methodId) {
  const childArgs = [fileURLToPath(import.meta.url), '--rss-child', '--workloads', workloadName, '--methods', methodId, '--seed', String(CONFIG.seed)];
  if (QUICK) childArgs.push('--quick');
  const r = spawnSync(process.execPath, childArgs, { encoding: 'utf8' });
  const line = (r.stdout || '').trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    return { error: (r.stderr || r.stdout || '').trim().split('\n').slice(-1)[0] || `exit ${r.status}` };
  }
}

// ---------------------------------------------------------------------------------------
// Reporting

function machineInfo() {
  let cpu = os.cpus()[0]?.model ?? '?';
  try {
    const m = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m);
    if (m) cpu = m[1].trim();
  } catch {
    // not linux
  }
  let bsonVersion = '?';
  try {
    bsonVersion = JSON.parse(readFileSync(join(HERE, '..', 'node_modules', 'bson', 'package.json'), 'utf8')).version;
  } catch {
    // ignore
  }
  return { cpu, cores: os.cpus().length, node: process.version, platform: `${process.platform}-${process.arch}`, bson: bsonVersion, date: new Date().toISOString() };
}

const f = (x, d = 1) => (x === undefined || x === null || Number.isNaN(x) ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(d));
const fRatio = (r) => (r ? `${r.median.toFixed(2)}x` : '–');
const fSpread = (r) => (r ? `${r.min.toFixed(2)}–${r.max.toFixed(2)}` : '–');
const fDocs = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : x >= 1e3 ? `${(x / 1e3).toFixed(1)}k` : x.toFixed(0));

function renderMarkdown(report) {
  const L = [];
  const { machine: mc, config: c } = report;
  L.push(`# bson2json benchmark (${c.mode})`, '');
  L.push(`- Machine: ${mc.cpu}, ${mc.cores} cores, ${mc.platform}; Node ${mc.node}; js-bson ${mc.bson}`);
  L.push(`- Date: ${mc.date}; seed ${c.seed}; ${c.runs} interleaved runs x ${c.timeMs} ms per method (warm-up ${c.warmupMs} ms)`);
  L.push('- Throughput is MB/s of BSON input (MiB, 2^20 bytes). Ratio = method MB/s / reference MB/s measured in the same run; median over runs, min–max spread.');
  L.push('- Every timed method first produced output identical to its reference for every document of the workload (see "identity").', '');

  const methodIds = [];
  for (const w of report.workloads) for (const id of Object.keys(w.methods)) if (!methodIds.includes(id)) methodIds.push(id);
  const summaryIds = methodIds.filter((id) => id !== 'baseline' && report.workloads.some((w) => w.methods[id]?.ratio));
  if (summaryIds.length) {
    L.push('## Ratio to reference (median, higher is faster)', '');
    L.push(`| workload | baseline MB/s | ${summaryIds.map((id) => `${id} (vs ${report.methods[id].ref})`).join(' | ')} |`);
    L.push(`|---|---:|${summaryIds.map(() => '---:').join('|')}|`);
    for (const w of report.workloads) {
      const cells = summaryIds.map((id) => {
        const m = w.methods[id];
        if (!m) return '–';
        if (m.ratio) return fRatio(m.ratio);
        return m.status === 'skipped' ? 'skip' : m.status;
      });
      L.push(`| ${w.name} | ${f(w.methods.baseline?.mbps)} | ${cells.join(' | ')} |`);
    }
    L.push('');
  }

  L.push('## Details', '');
  const rssCol = report.workloads.some((w) => Object.values(w.methods).some((m) => m.rss));
  L.push(`| workload | method | vs | identity | MB/s | MB/s min–max | docs/s | ratio | ratio min–max${rssCol ? ' | peak RSS MB' : ''} |`);
  L.push(`|---|---|---|---|---:|---:|---:|---:|---:${rssCol ? '|---:' : ''}|`);
  for (const w of report.workloads) {
    for (const [id, m] of Object.entries(w.methods)) {
      if (m.status === 'skipped' || m.status === 'n/a') continue;
      const rss = rssCol ? ` | ${m.rss?.maxRSSKiB ? (m.rss.maxRSSKiB / 1024).toFixed(0) : (m.rss?.error ?? '–')}` : '';
      L.push(
        `| ${w.name} | ${id} | ${m.ref ?? '–'} | ${m.status}${m.note && m.note !== 'byte-identical' ? ` (${m.note})` : ''} | ${f(m.mbps)} | ${m.mbps ? `${f(m.mbpsMin)}–${f(m.mbpsMax)}` : '–'} | ${m.docsps ? fDocs(m.docsps) : '–'} | ${fRatio(m.ratio)} | ${fSpread(m.ratio)}${rss} |`,
      );
    }
    if (rssCol && w.rssNone?.maxRSSKiB) {
      L.push(`| ${w.name} | (data loaded, no conversion) | – | – | – | – | – | – | – | ${(w.rssNone.maxRSSKiB / 1024).toFixed(0)} |`);
    }
  }
  L.push('');

  L.push('## Workloads', '');
  L.push('| workload | docs | MB | avg doc B | shape |', '|---|---:|---:|---:|---|');
  for (const w of report.workloads) L.push(`| ${w.name} | ${w.docs} | ${(w.bytes / 1048576).toFixed(1)} | ${Math.round(w.bytes / w.docs)} | ${WORKLOADS[w.name].description} |`);
  L.push('');

  const problems = [];
  for (const w of report.workloads) {
    for (const [id, m] of Object.entries(w.methods)) {
      if (m.status === 'MISMATCH' || m.status === 'error') problems.push(`- **${m.status}** ${w.name} / ${id}: ${m.reason}`);
    }
  }
  if (problems.length) L.push('## Identity failures (excluded from timing)', '', ...problems, '');

  const notes = [];
  const byReason = new Map();
  for (const [id, reason] of Object.entries(report.skipped)) byReason.set(reason, [...(byReason.get(reason) ?? []), id]);
  for (const [reason, ids] of byReason) notes.push(`- ${ids.join(', ')}: skipped — ${reason}`);
  for (const w of report.workloads) {
    for (const [id, m] of Object.entries(w.methods)) if (m.status === 'n/a') notes.push(`- ${w.name} / ${id}: not compared — ${m.reason}`);
  }
  for (const [id, m] of Object.entries(report.methods)) if (m.noCheck) notes.push(`- ${id}: identity not checked — ${m.noCheck}`);
  if (notes.length) L.push('## Skipped / not compared', '', ...notes, '');
  return L.join('\n');
}

// ---------------------------------------------------------------------------------------
// Main

async function loadPeers() {
  return {
    bson2json: loadBson2json(),
    bsonExt: loadBsonExt({ build: args['build-peers'] }),
    powersync: await loadPowerSync(),
    bsonToJson: loadBsonToJson(),
  };
}

function selectMethods(all) {
  if (!args.methods) return all;
  const want = args.methods.split(',').map((s) => s.trim());
  for (const id of want) if (!all.some((m) => m.id === id)) throw new Error(`unknown method ${id} (known: ${all.map((m) => m.id).join(', ')})`);
  // references needed by the selected methods are always included
  const ids = new Set(want);
  let grew = true;
  while (grew) {
    grew = false;
    for (const m of all) {
      if (ids.has(m.id) && m.ref && !ids.has(m.ref)) {
        ids.add(m.ref);
        grew = true;
      }
    }
  }
  return all.filter((m) => ids.has(m.id));
}

async function main() {
  const workloadNames = args.workloads ? args.workloads.split(',').map((s) => s.trim()) : WORKLOAD_NAMES;
  for (const n of workloadNames) if (!WORKLOADS[n]) throw new Error(`unknown workload ${n} (known: ${WORKLOAD_NAMES.join(', ')})`);
  const peers = await loadPeers();
  const methods = args['rss-child'] && args.methods === 'none' ? [] : selectMethods(defineMethods(peers));

  if (args['rss-child']) {
    const w = loadWorkload(workloadNames[0], { quick: QUICK, seed: CONFIG.seed });
    const id = args.methods;
    const m = id === 'none' ? { kind: 'doc', fn: (b) => b } : methods.find((x) => x.id === id);
    console.log(JSON.stringify(rssChild(w, m)));
    return;
  }

  const machine = machineInfo();
  console.log(`# bson2json benchmark (${CONFIG.mode}): ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, js-bson ${machine.bson}`);
  console.log(`# runs=${CONFIG.runs} time=${CONFIG.timeMs}ms warmup=${CONFIG.warmupMs}ms seed=${CONFIG.seed}`);
  const skipped = {};
  for (const m of methods) if (m.skip) skipped[m.id] = m.skip;
  const byReason = new Map();
  for (const [id, reason] of Object.entries(skipped)) byReason.set(reason, [...(byReason.get(reason) ?? []), id]);
  for (const [reason, ids] of byReason) console.log(`  skip ${ids.join(', ')}: ${reason}`);
  if (peers.bson2json.ok && peers.bson2json.missing.length) console.log(`  bson2json missing exports: ${peers.bson2json.missing.join(', ')}`);

  const report = {
    machine,
    config: { ...CONFIG, workloads: workloadNames },
    peers: {
      bson2json: peers.bson2json.ok ? { version: peers.bson2json.version, present: peers.bson2json.present } : { error: peers.bson2json.reason },
      'bson-ext': peers.bsonExt.ok ? { version: peers.bsonExt.version } : { error: peers.bsonExt.reason },
      '@powersync/service-module-mongodb': peers.powersync.ok ? { version: peers.powersync.version } : { error: peers.powersync.reason },
      'bson-to-json': peers.bsonToJson.ok ? { version: peers.bsonToJson.version } : { error: peers.bsonToJson.reason },
    },
    methods: Object.fromEntries(methods.map((m) => [m.id, { label: m.label, group: m.group, kind: m.kind, ref: m.ref, noCheck: m.noCheck }])),
    skipped,
    workloads: [],
  };
  const tStart = performance.now();

  for (const name of workloadNames) {
    const tw = performance.now();
    const w = loadWorkload(name, { quick: QUICK, seed: CONFIG.seed });
    const genMs = performance.now() - tw;
    const batches = makeBatches(w);
    const entry = { name, docs: w.docs.length, bytes: w.bytes, methods: {} };
    console.log(`\n## ${name}: ${w.docs.length} docs, ${(w.bytes / 1048576).toFixed(2)} MB${w.generated ? ` (generated in ${genMs.toFixed(0)} ms)` : ''}`);

    // reference outputs
    const active = methods.filter((m) => !m.skip);
    const expected = {};
    const refIds = new Set(['baseline', ...active.filter((m) => m.ref).map((m) => m.ref)]);
    for (const id of refIds) {
      const ref = methods.find((m) => m.id === id);
      expected[id] = w.docs.map((d) => ref.fn(d));
    }
    // baseline JSON must be valid JSON (no NaN / huge ints / undefined surprises)
    for (const s of expected.baseline) JSON.parse(s);

    const timed = [];
    for (const m of methods) {
      if (m.skip) {
        entry.methods[m.id] = { status: 'skipped', reason: m.skip, ref: m.ref };
        continue;
      }
      if (m.unsupported?.includes(name)) {
        entry.methods[m.id] = { status: 'n/a', reason: 'workload uses BSON types this implementation does not support', ref: m.ref };
        continue;
      }
      if (!m.ref || m.noCheck) {
        entry.methods[m.id] = { status: m.ref ? 'reference' : 'baseline', ref: m.ref };
        timed.push(m);
        continue;
      }
      const c = checkMethod(m, w, expected, batches);
      entry.methods[m.id] = { status: c.status, note: c.note, reason: c.reason, ref: m.ref };
      if (c.ok) timed.push(m);
      else console.log(`  !!! ${c.status}: ${m.id} excluded on ${name}: ${c.reason}`);
    }
    for (const k of Object.keys(expected)) delete expected[k];
    gc();
    const res = benchWorkload(w, timed);
    for (const m of timed) Object.assign(entry.methods[m.id], res[m.id]);

    if (args.rss) {
      entry.rssNone = measureRss(name, 'none');
      for (const m of timed) entry.methods[m.id].rss = measureRss(name, m.id);
    }
    for (const m of timed) {
      const r = entry.methods[m.id];
      const rss = r.rss?.maxRSSKiB ? `  rss ${(r.rss.maxRSSKiB / 1024).toFixed(0)} MB` : '';
      console.log(
        `  ${m.id.padEnd(17)} ${f(r.mbps).padStart(7)} MB/s  ${fDocs(r.docsps).padStart(7)} docs/s  ${r.ratio ? `${fRatio(r.ratio).padStart(7)} vs ${m.ref} (${fSpread(r.ratio)})` : ''}${rss}`,
      );
    }
    const mu = process.memoryUsage();
    entry.memory = { rssMB: mu.rss / 1048576, heapUsedMB: mu.heapUsed / 1048576, externalMB: mu.external / 1048576, peakRssMB: peakRssKiB() / 1024 };
    console.log(`  (runner memory: rss ${f(entry.memory.rssMB)} MB, heap ${f(entry.memory.heapUsedMB)} MB, external ${f(entry.memory.externalMB)} MB, peak ${f(entry.memory.peakRssMB)} MB)`);
    report.workloads.push(entry);
    gc();
  }
  report.totalSeconds = (performance.now() - tStart) / 1000;
  report.maxRSSKiB = peakRssKiB();

  const md = renderMarkdown(report);
  console.log(`\n${md}`);
  console.log(`total ${report.totalSeconds.toFixed(1)} s, process peak RSS ${(report.maxRSSKiB / 1024).toFixed(0)} MB`);
  if (!args['no-write']) {
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(join(RESULTS, `${OUT}.md`), `${md}\n`);
    writeFileSync(join(RESULTS, `${OUT}.json`), `${JSON.stringify(report, null, 1)}\n`);
    const chartName = OUT === 'latest' ? 'chart.svg' : `chart-${OUT}.svg`;
    writeFileSync(join(RESULTS, chartName), renderChart(report));
    console.log(`wrote benchmark/results/${OUT}.md, ${OUT}.json, ${chartName}`);
  }
}

await main();
