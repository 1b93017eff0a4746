/**
 * The figures of the documentation are generated: `npm run bench:report` (benchmark/report.mjs)
 * writes benchmark/results/*.json and renders the README's speed table and chart and
 * docs/performance.md's tables from them (benchmark/report-render.mjs). This renders them again
 * from the committed JSON, without running a benchmark, and fails when a block was edited by
 * hand, lost a marker, or does not match the results; and when README.md or docs/performance.md
 * carry a figure (a ratio, a speed, a percentage) outside a generated block, or when the results
 * are not full runs on the Nodes the tables name.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.join(__dirname, '..', '..')
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8')

describe('generated documentation', async () => {
  const r = await import(path.join(ROOT, 'benchmark', 'report-render.mjs'))
  const blocks: Record<string, string> = r.renderBlocks(r.loadResults(ROOT))

  for (const [file, names] of Object.entries(r.TARGETS as Record<string, string[]>)) {
    it(`${file}: every generated block is what the committed results render`, () => {
      const found: Map<string, string> = r.blocksOf(read(file))
      expect([...found.keys()].sort()).toEqual([...names].sort())
      for (const name of names) expect(found.get(name), `${file}, block ${name}: run npm run bench:report -- --render`).toBe(blocks[name])
    })

    it(`${file}: no hand-written figure outside the generated blocks`, () => {
      const lines = r.outsideBlocks(read(file)).split('\n')
      const bad = lines.filter((l: string) => r.FIGURE.test(l))
      expect(bad, 'figures belong in benchmark/results/*.json and the generated blocks').toEqual([])
    })
  }

  it('the committed results are full runs on the Nodes the tables name', () => {
    const res = r.loadResults(ROOT)
    for (const n of r.NODES as string[]) {
      for (const kind of ['synthetic', 'realworld']) expect(res[kind][n].machine.node, `${kind} results for Node ${n}`).toMatch(new RegExp(`^v${n}\\.`))
      expect(res.synthetic[n].config.mode, `Node ${n}: a quick run is a smoke test, not the figures to commit`).toBe('full')
      expect(res.realworld[n].config.rounds).toBeGreaterThanOrEqual(15)
      expect(res.rows[n].node, `rows results for Node ${n}`).toMatch(new RegExp(`^v${n}\\.`))
      expect(res.rows[n].rounds).toBeGreaterThanOrEqual(15)
    }
  })

  it('the README chart is what the committed results render', () => {
    expect(read(r.CHART)).toBe(r.renderChart(r.loadResults(ROOT)))
  })

  it('the block parser sees a hand edit, a lost marker and a duplicated block', () => {
    const body = 'a\nb'
    const text = `x\n<!-- generated:t (do not edit) -->\n${body}\n<!-- /generated:t -->\ny\n`
    expect(r.blocksOf(text).get('t')).toBe(body)
    expect(r.blocksOf(r.splice(text, 't', 'c'))).toEqual(new Map([['t', 'c']]))
    expect(() => r.blocksOf(text.replace('<!-- /generated:t -->', ''))).toThrow(/no closing marker/)
    expect(() => r.blocksOf(text + text)).toThrow(/twice/)
    expect(r.FIGURE.test('runs 12.5x faster')).toBe(true)
    expect(r.FIGURE.test('at 800 MB/s')).toBe(true)
    expect(r.FIGURE.test('a 256 MiB limit, Node 20.19, 1,000 levels')).toBe(false)
  })
})
