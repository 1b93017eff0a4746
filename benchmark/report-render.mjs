// The generated parts of the documentation, rendered from benchmark/results/*.json alone: the
// README's speed table and chart, and docs/performance.md's tables. benchmark/report.mjs (`npm
// run bench:report`) runs the benchmarks, writes the JSON and splices these blocks in;
// __test__/generated-docs.spec.ts renders them again from the committed JSON and fails when a
// block differs (a hand edit, or results committed without regenerating). Pure: no timing here.
//
// A block in a Markdown file:
//   <!-- generated:NAME (npm run bench:report; do not edit) -->
//   ...
//   <!-- /generated:NAME -->
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The runtimes every headline table shows: the active LTS first, then the oldest supported. */
export const NODES = ['26', '20'];
export const SYNTHETIC = (major) => `benchmark/results/synthetic-node${major}.json`;
export const REALWORLD = (major) => `benchmark/results/realworld-node${major}.json`;
export const ROWS = (major) => `benchmark/results/rows-node${major}.json`;
export const CHART = 'benchmark/results/speed.svg';
/** Which blocks each file holds. */
export const TARGETS = {
  'README.md': ['readme-speed'],
  'docs/performance.md': ['perf-setup', 'perf-synthetic', 'perf-realworld'],
  'docs/rows.md': ['rows-speed'],
};

// The README's rows: realistic synthetic workloads, the hard cases, and every real-world set.
const README_SYNTHETIC = ['tiny', 'small250', 'doc1k', 'doc10k', 'doc100k', 'cs_insert_1k', 'cs_update_1k', 'cs_update_10k', 'stringy', 'numeric'];
const LABELS = {
  tiny: 'tiny `{_id, a:"b"}`',
  small250: '~270 B mixed',
  doc1k: '1 KB order documents',
  doc10k: '10 KB order documents',
  doc20k: '20 KB order documents',
  doc100k: '100 KB order documents',
  cs_insert_1k: '1 KB insert events',
  cs_insert_10k: '10 KB insert events',
  cs_update_1k: '1 KB update events',
  cs_update_10k: '10 KB update events',
  stringy: 'string-heavy',
  numeric: 'number-heavy',
  array9mb: 'one 9 MB array document',
  twitter: 'twitter.json statuses',
  canada: 'canada.json, one document',
  citm: 'citm_catalog.json, one document',
  'citm-events': 'citm_catalog.json events',
  'citm-performances': 'citm_catalog.json performances',
};
const REALWORLD_SETS = new Set(['twitter', 'canada', 'citm', 'citm-events', 'citm-performances']);
/** A workload's name for a table; the README's one table marks the real-world sets. */
const label = (name, mark = true) => `${mark && REALWORLD_SETS.has(name) ? 'real-world: ' : ''}${LABELS[name] ?? name}`;

export function loadResults(root) {
  const read = (rel) => {
    try {
      return JSON.parse(readFileSync(join(root, rel), 'utf8'));
    } catch (e) {
      throw new Error(`${rel}: ${e.code ?? e.message} (npm run bench:report writes it)`);
    }
  };
  const out = { synthetic: {}, realworld: {}, rows: {} };
  for (const n of NODES) {
    out.synthetic[n] = read(SYNTHETIC(n));
    out.realworld[n] = read(REALWORLD(n));
    out.rows[n] = read(ROWS(n));
  }
  return out;
}

const ratio = (r) => (r === undefined || r === null || Number.isNaN(r) ? '–' : `${r.toFixed(2)}x`);
const mbps = (x) => (x === undefined || x === null ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const size = (b) => (b < 1024 ? `${b.toFixed(0)} B` : b < 1024 * 1024 ? `${(b / 1024).toFixed(1)} KB` : `${(b / 1048576).toFixed(1)} MB`);
const nodeOf = (r) => r.machine.node.replace(/^v/, '');
const synthRatio = (rep, w, id) => rep.workloads.find((x) => x.name === w)?.methods[id]?.ratio?.median;
const rwMethod = (rep, d, m) => rep.datasets.find((x) => x.name === d)?.methods[m];

/** One row per workload or data set: [label, toJSON per Node..., toNDJSON per Node...]. */
function speedRows(res) {
  const rows = [];
  const [a] = NODES;
  for (const w of README_SYNTHETIC) {
    if (!res.synthetic[a].workloads.some((x) => x.name === w)) continue;
    rows.push({ name: w, kind: 'synthetic', toJSON: NODES.map((n) => synthRatio(res.synthetic[n], w, 'b2j_toJSON')), toNDJSON: NODES.map((n) => synthRatio(res.synthetic[n], w, 'b2j_toNDJSON')) });
  }
  for (const d of res.realworld[a].datasets) {
    rows.push({
      name: d.name,
      kind: 'real-world',
      toJSON: NODES.map((n) => rwMethod(res.realworld[n], d.name, 'toJSON')?.vsBaseline),
      toNDJSON: NODES.map((n) => rwMethod(res.realworld[n], d.name, 'ndjsonConcat')?.vsBaseline),
    });
  }
  return rows;
}

function machineLine(rep) {
  const m = rep.machine;
  return `${m.cpu}, ${m.cores} cores, ${m.platform}`;
}

function readmeSpeed(res) {
  const L = [];
  const versions = NODES.map((n) => `Node ${nodeOf(res.synthetic[n])}`).join(' and ');
  const quick = NODES.some((n) => res.synthetic[n].config.mode === 'quick' || res.realworld[n].config.rounds < 15);
  L.push(`Speed-up over \`JSON.stringify(BSON.deserialize(buf))\` (js-bson ${res.synthetic[NODES[0]].machine.bson}) on ${versions}, ${machineLine(res.synthetic[NODES[0]])}${quick ? ' (a quick smoke run: too short to quote)' : ''}:`);
  L.push('');
  L.push(`| workload | ${NODES.map((n) => `\`toJSON\`, Node ${n}`).join(' | ')} | ${NODES.map((n) => `\`toNDJSON\`, Node ${n}`).join(' | ')} |`);
  L.push(`|---|${NODES.map(() => '---:').join('|')}|${NODES.map(() => '---:').join('|')}|`);
  for (const r of speedRows(res)) {
    L.push(`| ${label(r.name)} | ${r.toJSON.map(ratio).join(' | ')} | ${r.toNDJSON.map(ratio).join(' | ')} |`);
  }
  return L.join('\n');
}

function perfSetup(res) {
  const L = [];
  L.push('| benchmark | runtime | machine | js-bson | how |');
  L.push('|---|---|---|---|---|');
  for (const n of NODES) {
    const s = res.synthetic[n];
    const c = s.config;
    L.push(`| synthetic (\`benchmark/run.mjs\`) | Node ${nodeOf(s)} | ${machineLine(s)} | ${s.machine.bson} | ${c.mode} run, seed ${c.seed}: ${c.runs} interleaved runs of ${c.timeMs} ms per method, warm-up ${c.warmupMs} ms; ratio of the run's MB/s to its reference's in the same run, median over runs |`);
  }
  for (const n of NODES) {
    const r = res.realworld[n];
    const c = r.config;
    L.push(`| real-world (\`benchmark/realworld.mjs\`) | Node ${nodeOf(r)} | ${machineLine(r)} | ${r.machine.bson} | ${c.rounds} interleaved rounds of ${c.roundMs} ms per method, MB of BSON per second of the process's CPU time; ratio within each round, median over rounds |`);
  }
  return L.join('\n');
}

const SYNTH_COLUMNS = [
  ['b2j_toJSON', '`toJSON`'],
  ['b2j_toJSONBuffer', '`toJSONBuffer`'],
  ['b2j_toNDJSON', '`toNDJSON`'],
  ['b2j_toJSONList', '`toJSONList`'],
  ['b2j_toJSONArray', '`toJSONArray`'],
  ['b2j_relaxed', '`relaxed` vs `EJSON.stringify`'],
  ['b2j_canonical', '`canonical` vs `EJSON.stringify`'],
];

function perfSynthetic(res) {
  const L = [];
  for (const n of NODES) {
    const rep = res.synthetic[n];
    const cols = SYNTH_COLUMNS.filter(([id]) => rep.workloads.some((w) => w.methods[id]?.ratio));
    if (L.length) L.push('');
    const md = SYNTHETIC(n).replace(/^benchmark\//, '../benchmark/').replace(/\.json$/, '.md');
    L.push(`**Node ${nodeOf(rep)}** (each cell's min–max over the runs, MB/s and docs/s: [${md.split('/').pop()}](${md}))`);
    L.push('');
    L.push(`| workload | baseline MB/s | ${cols.map(([, h]) => h).join(' | ')} | \`toJSON\` MB/s |`);
    L.push(`|---|---:|${cols.map(() => '---:').join('|')}|---:|`);
    for (const w of rep.workloads) {
      L.push(`| ${label(w.name)} | ${mbps(w.methods.baseline?.mbps)} | ${cols.map(([id]) => ratio(w.methods[id]?.ratio?.median)).join(' | ')} | ${mbps(w.methods.b2j_toJSON?.mbps)} |`);
    }
    const skipped = Object.entries(rep.skipped ?? {}).filter(([id]) => SYNTH_COLUMNS.some(([c]) => c === id));
    if (skipped.length) L.push('', ...skipped.map(([id, why]) => `- ${id}: skipped, ${why}`));
  }
  return L.join('\n');
}

function perfRealworld(res) {
  const L = [];
  for (const n of NODES) {
    const rep = res.realworld[n];
    const peer = Boolean(rep.config.peer);
    if (L.length) L.push('');
    L.push(`**Node ${nodeOf(rep)}**${peer ? ` (bson-to-json ${rep.config.peer})` : ''}`);
    L.push('');
    L.push(
      `| data set | documents | mean size | baseline MB/s | \`toJSON\` | \`toNDJSON\` (one Buffer) | \`toNDJSON\` (array) | \`toNDJSON\` ÷ \`toJSON\` (one Buffer) | \`toNDJSON\` ÷ \`toJSON\` (array) | page faults per MB (\`toJSON\`, one Buffer, array)${peer ? ' | bson-to-json (string) | `toJSON` ÷ bson-to-json' : ''} |`,
    );
    L.push(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|${peer ? '---:|---:|' : ''}`);
    for (const d of rep.datasets) {
      const m = (id) => d.methods[id];
      const faults = ['toJSON', 'ndjsonConcat', 'ndjsonArray'].map((id) => (m(id) ? m(id).faultsPerMB.toFixed(0) : '–')).join(', ');
      const peerCells = peer ? ` | ${ratio(m('peerString')?.vsBaseline)} | ${m('peerString') && m('toJSON') ? ratio(m('toJSON').mbps / m('peerString').mbps) : '–'}` : '';
      L.push(
        `| ${label(d.name, false)} | ${d.documents} | ${size(d.bytes / d.documents)} | ${mbps(m('baseline')?.mbps)} | ${ratio(m('toJSON')?.vsBaseline)} | ${ratio(m('ndjsonConcat')?.vsBaseline)} | ${ratio(m('ndjsonArray')?.vsBaseline)} | ${ratio(m('ndjsonConcat')?.vsToJSON)} | ${ratio(m('ndjsonArray')?.vsToJSON)} | ${faults}${peerCells} |`,
      );
    }
  }
  return L.join('\n');
}

/** docs/rows.md: toRow against PowerSync's bufferToSqlite, toRows, a 16 MiB batch (benchmark/rows.mjs). */
function rowsSpeed(res) {
  const L = [];
  const rate = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : x >= 1e3 ? `${(x / 1e3).toFixed(1)}k` : x.toFixed(0));
  const PS_SHAPES = { 'insert-1k': "PowerSync's 1 KB insert", 'insert-10k': "PowerSync's 10 KB insert", 'insert-100k': "PowerSync's 100 KB insert", 'update-1k': "PowerSync's 1 KB update", 'update-10k': "PowerSync's 10 KB update", 'update-100k': "PowerSync's 100 KB update" };
  for (const n of NODES) {
    const r = res.rows[n];
    if (L.length) L.push('');
    L.push(`**Node ${r.node.replace(/^v/, '')}** (${r.rounds} interleaved rounds of ${r.roundMs} ms per method; documents per second of process CPU time; \`rowFormat: 'powersync'\`)`);
    L.push('');
    L.push("| data set | documents | mean size | `bufferToSqlite` docs/s | `toRow` docs/s | `toRow` ÷ `bufferToSqlite` | `toRows` ÷ `toRow` | `toRow` (general format) docs/s |");
    L.push('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const [name, d] of Object.entries(r.datasets)) {
      L.push(`| ${PS_SHAPES[name] ?? label(name, false)} | ${d.documents} | ${size(d.meanBytes)} | ${rate(d.docsPerSec.bufferToSqlite)} | ${rate(d.docsPerSec.toRow)} | ${ratio(d.toRowVsBufferToSqlite)} | ${ratio(d.toRowsVsToRow)} | ${rate(d.docsPerSec['toRow (general)'])} |`);
    }
    const b = r.batch16MiB;
    const ms = (x) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(1));
    L.push('');
    const load = typeof b.loadAverage === 'number' ? ` (load average ${b.loadAverage.toFixed(1)})` : '';
    L.push(`A 16 MiB batch (${b.documents} twitter statuses), median of 5${load}: main thread CPU ms and the most of it spent in one stretch without a turn of the event loop (Node 23.9+ can tell), wall ms, longest stretch without a turn of the event loop, ms (wall: it also counts time the thread waited for a core).`);
    L.push('');
    L.push('| call | main thread CPU | most CPU in one stretch | wall | longest stretch |');
    L.push('|---|---:|---:|---:|---:|');
    for (const k of ['toRows', 'toRowsAsync']) L.push(`| \`${k}\` | ${ms(b[k].mainCpuMs)} | ${ms(b[k].longestCpuMs)} | ${ms(b[k].wallMs)} | ${ms(b[k].longestMs)} |`);
  }
  return L.join('\n');
}

const RENDER = { 'readme-speed': readmeSpeed, 'perf-setup': perfSetup, 'perf-synthetic': perfSynthetic, 'perf-realworld': perfRealworld, 'rows-speed': rowsSpeed };

/** NAME → the block's Markdown, from the results. */
export function renderBlocks(res) {
  return Object.fromEntries(Object.entries(RENDER).map(([k, fn]) => [k, fn(res)]));
}

const BLOCK = /<!-- generated:([\w-]+)[^>]*-->\n([\s\S]*?)<!-- \/generated:\1 -->/g;
const open = (name) => `<!-- generated:${name} (npm run bench:report; do not edit) -->`;

/** NAME → the current body of each generated block of a file's text (without its markers). */
export function blocksOf(text) {
  const out = new Map();
  for (const m of text.matchAll(BLOCK)) {
    if (out.has(m[1])) throw new Error(`generated block ${m[1]} appears twice`);
    out.set(m[1], m[2].replace(/\n$/, ''));
  }
  // an opening marker whose closing one was lost
  for (const m of text.matchAll(/<!-- generated:([\w-]+)/g)) if (!out.has(m[1])) throw new Error(`generated block ${m[1]} has no closing marker`);
  return out;
}

/** The text with block NAME's body replaced (the markers must be there already). */
export function splice(text, name, body) {
  let found = false;
  const next = text.replace(BLOCK, (all, n) => {
    if (n !== name) return all;
    found = true;
    return `${open(name)}\n${body}\n<!-- /generated:${name} -->`;
  });
  if (!found) throw new Error(`no generated block ${name}: add <!-- generated:${name} --> and <!-- /generated:${name} --> lines`);
  return next;
}

/** Text outside the generated blocks (what the no-hand-written-figures check reads). */
export function outsideBlocks(text) {
  return text.replace(BLOCK, '');
}

/**
 * A measured figure written by hand: a number with a speed unit or a ratio suffix. Sizes
 * (`256 MiB`), counts and versions are not figures.
 */
export const FIGURE = /\b\d[\d,.]*\s?(?:x\b|×|MB\/s|GB\/s|MiB\/s|GiB\/s|µs\b|ns\b|ms\/MB|%)/;

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The README's chart: `toJSON` and `toNDJSON` per workload, each on every Node, log scale. */
export function renderChart(res) {
  const rows = speedRows(res);
  const series = [];
  const colors = { toJSON: ['#1f77b4', '#9ecae1'], toNDJSON: ['#2ca02c', '#a1d99b'] };
  for (const m of ['toJSON', 'toNDJSON']) NODES.forEach((n, i) => series.push({ m, i, n, color: colors[m][i] ?? '#999' }));
  const barH = 7;
  const gap = 9;
  const left = 230;
  const plotW = 460;
  const right = 190;
  const top = 62;
  const groupH = series.length * barH + gap;
  const height = top + rows.length * groupH + 34;
  const width = left + plotW + right;
  let maxR = 20;
  for (const r of rows) for (const s of series) maxR = Math.max(maxR, (r[s.m][s.i] ?? 0) * 1.3);
  const lo = 0; // 1x
  const hi = Math.log10(maxR);
  const x = (v) => left + ((Math.log10(Math.max(v, 1)) - lo) / (hi - lo)) * plotW;
  const o = [];
  o.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  o.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  o.push(`<text x="10" y="18" font-size="14" font-weight="bold">Speed-up over JSON.stringify(BSON.deserialize(buf)), same process, log scale</text>`);
  o.push(`<text x="10" y="34" fill="#555">${esc(NODES.map((n) => `Node ${nodeOf(res.synthetic[n])}`).join(', '))}; ${esc(machineLine(res.synthetic[NODES[0]]))}; generated by npm run bench:report</text>`);
  const plotBottom = top + rows.length * groupH;
  for (const t of [1, 2, 5, 10, 20, 50, 100]) {
    if (Math.log10(t) > hi) continue;
    const xx = x(t).toFixed(1);
    o.push(`<line x1="${xx}" y1="${top - 4}" x2="${xx}" y2="${plotBottom}" stroke="${t === 1 || t === 10 ? '#333' : '#ddd'}" stroke-width="${t === 1 || t === 10 ? 1 : 0.6}"/>`);
    o.push(`<text x="${xx}" y="${plotBottom + 14}" text-anchor="middle" fill="#333">${t}x</text>`);
  }
  rows.forEach((r, gi) => {
    const y0 = top + gi * groupH;
    if (gi % 2 === 1) o.push(`<rect x="0" y="${y0 - gap / 2}" width="${left + plotW}" height="${groupH}" fill="#f4f4f4"/>`);
    o.push(`<text x="${left - 8}" y="${y0 + (series.length * barH) / 2 + 4}" text-anchor="end">${esc(label(r.name)).replace(/`/g, '')}</text>`);
    series.forEach((s, k) => {
      const v = r[s.m][s.i];
      if (v === undefined || v === null) return;
      const y = y0 + k * barH;
      o.push(`<rect x="${left}" y="${y}" width="${Math.max(1, x(v) - left).toFixed(1)}" height="${barH - 1}" fill="${s.color}"><title>${esc(`${r.name}, ${s.m}, Node ${s.n}: ${v.toFixed(2)}x`)}</title></rect>`);
      o.push(`<text x="${(x(v) + 3).toFixed(1)}" y="${y + barH - 1}" font-size="7" fill="#333">${v.toFixed(1)}</text>`);
    });
  });
  series.forEach((s, k) => {
    const ly = top + k * 16;
    const lx = left + plotW + 30;
    o.push(`<rect x="${lx}" y="${ly}" width="12" height="10" fill="${s.color}"/>`);
    o.push(`<text x="${lx + 16}" y="${ly + 9}">${s.m}, Node ${esc(nodeOf(res.synthetic[s.n]))}</text>`);
  });
  o.push('</svg>');
  return `${o.join('\n')}\n`;
}
