// Hand-written SVG bar chart of ratio-to-reference per workload per method (no dependencies).

const COLORS = {
  b2j_toJSON: '#1f77b4',
  b2j_toJSONBuffer: '#4a9ad4',
  b2j_toJSONList: '#17becf',
  b2j_toJSONArray: '#2ca02c',
  b2j_toNDJSON: '#98df8a',
  b2j_relaxed: '#9467bd',
  b2j_canonical: '#c5b0d5',
  bson_ext: '#ff7f0e',
  powersync: '#d62728',
  bson_to_json: '#8c564b',
  ejson_relaxed: '#7f7f7f',
  ejson_canonical: '#bcbd22',
};
const FALLBACK = ['#e377c2', '#aec7e8', '#ffbb78', '#c49c94'];

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function renderChart(report) {
  const ids = [];
  for (const w of report.workloads) {
    for (const [id, m] of Object.entries(w.methods)) if (m.ratio && !ids.includes(id)) ids.push(id);
  }
  const rows = report.workloads.filter((w) => ids.some((id) => w.methods[id]?.ratio));
  const barH = 9;
  const gap = 10;
  const left = 120;
  const plotW = 560;
  const right = 250;
  const top = 76;
  const groupH = Math.max(1, ids.length) * barH + gap;
  const height = top + Math.max(1, rows.length) * groupH + 40;
  const width = left + plotW + right;

  let maxR = 20;
  let minR = 0.1;
  for (const w of rows) {
    for (const id of ids) {
      const r = w.methods[id]?.ratio;
      if (r) {
        // axis from the medians (whiskers of outlier runs are clipped at the edges)
        maxR = Math.max(maxR, r.median * 1.5);
        minR = Math.min(minR, r.median / 1.5);
      }
    }
  }
  const lo = Math.log10(minR);
  const hi = Math.log10(maxR) + 0.05;
  const x = (v) => left + ((Math.log10(Math.min(Math.max(v, minR), 10 ** hi)) - lo) / (hi - lo)) * plotW;
  const color = (id, i) => COLORS[id] ?? FALLBACK[i % FALLBACK.length];

  const o = [];
  o.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  o.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  const mc = report.machine;
  o.push(`<text x="${left}" y="18" font-size="14" font-weight="bold">Speed-up vs reference (log scale, median of ${report.config.runs} interleaved runs; whiskers = min–max)</text>`);
  o.push(`<text x="${left}" y="34" fill="#555">${esc(`${mc.cpu}, ${mc.cores} cores, Node ${mc.node}, js-bson ${mc.bson}, ${report.config.mode} run`)}</text>`);
  o.push(`<text x="${left}" y="48" fill="#555">reference: JSON.stringify(BSON.deserialize(buf)) for compat methods and peers; EJSON.stringify for the relaxed / canonical dialects</text>`);

  // grid lines
  const ticks = [];
  for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) for (const m of [1, 2, 5]) ticks.push(m * 10 ** e);
  const plotBottom = top + rows.length * groupH;
  for (const t of ticks) {
    if (Math.log10(t) < lo - 1e-9 || Math.log10(t) > hi) continue;
    const xx = x(t).toFixed(1);
    const strong = t === 1 || t === 10;
    o.push(`<line x1="${xx}" y1="${top - 4}" x2="${xx}" y2="${plotBottom}" stroke="${t === 10 ? '#d62728' : strong ? '#333' : '#ddd'}" stroke-width="${strong ? 1.2 : 0.6}"${t === 10 ? ' stroke-dasharray="4,3"' : ''}/>`);
    o.push(`<text x="${xx}" y="${plotBottom + 14}" text-anchor="middle" fill="#333">${t < 1 ? t : `${t}`}x</text>`);
  }
  o.push(`<text x="${x(10) + 4}" y="${top - 6}" fill="#d62728">10x target</text>`);

  rows.forEach((w, gi) => {
    const y0 = top + gi * groupH;
    if (gi % 2 === 1) o.push(`<rect x="0" y="${y0 - gap / 2}" width="${left + plotW}" height="${groupH}" fill="#f6f6f6" opacity="0.6"/>`);
    o.push(`<text x="${left - 8}" y="${y0 + (ids.length * barH) / 2 + 4}" text-anchor="end" font-weight="bold">${esc(w.name)}</text>`);
    ids.forEach((id, i) => {
      const m = w.methods[id];
      const y = y0 + i * barH;
      if (!m?.ratio) return;
      const x0 = x(minR);
      const x1 = x(m.ratio.median);
      o.push(`<rect x="${x0.toFixed(1)}" y="${y}" width="${Math.max(1, x1 - x0).toFixed(1)}" height="${barH - 2}" fill="${color(id, i)}"><title>${esc(`${w.name} / ${id}: ${m.ratio.median.toFixed(2)}x (${m.ratio.min.toFixed(2)}–${m.ratio.max.toFixed(2)}) vs ${m.ref}`)}</title></rect>`);
      o.push(`<line x1="${x(m.ratio.min).toFixed(1)}" y1="${y + (barH - 2) / 2}" x2="${x(m.ratio.max).toFixed(1)}" y2="${y + (barH - 2) / 2}" stroke="#000" stroke-width="0.8"/>`);
      o.push(`<text x="${(Math.max(x1, x(m.ratio.max)) + 3).toFixed(1)}" y="${y + barH - 2}" font-size="8" fill="#333">${m.ratio.median.toFixed(2)}</text>`);
    });
  });

  // legend
  const lx = left + plotW + 30;
  ids.forEach((id, i) => {
    const ly = top + i * 16;
    const ref = report.methods[id]?.ref;
    o.push(`<rect x="${lx}" y="${ly}" width="12" height="10" fill="${color(id, i)}"/>`);
    o.push(`<text x="${lx + 16}" y="${ly + 9}">${esc(id)}${ref && ref !== 'baseline' ? ` (vs ${esc(ref)})` : ''}</text>`);
  });
  if (!rows.length) o.push(`<text x="${left}" y="${top + 20}">no comparable results</text>`);
  o.push('</svg>');
  return `${o.join('\n')}\n`;
}
