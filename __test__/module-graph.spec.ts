/**
 * The JavaScript modules (index.js, lib/**) form no require cycle: each module depends on what it
 * needs, never back on the entry point.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = resolve(__dirname, '..')

function jsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? jsFiles(p) : n.endsWith('.js') ? [p] : []
  })
}

function resolveLocal(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec)
  for (const p of [base, `${base}.js`, join(base, 'index.js')]) {
    try {
      if (statSync(p).isFile()) return p
    } catch {
      // next candidate
    }
  }
  return null
}

describe('module graph', () => {
  it('index.js and lib/ have no require cycle', () => {
    const files = [join(root, 'index.js'), ...jsFiles(join(root, 'lib'))]
    const edges = new Map<string, string[]>()
    for (const f of files) {
      const deps: string[] = []
      for (const m of readFileSync(f, 'utf8').matchAll(/require\(\s*['"](\.{1,2}\/[^'"]*)['"]\s*\)/g)) {
        const to = resolveLocal(f, m[1])
        if (to && files.includes(to)) deps.push(to)
      }
      edges.set(f, deps)
    }
    const cycles: string[] = []
    const state = new Map<string, 1 | 2>()
    const stack: string[] = []
    const visit = (f: string) => {
      state.set(f, 1)
      stack.push(f)
      for (const d of edges.get(f) ?? []) {
        if (state.get(d) === 1) cycles.push([...stack.slice(stack.indexOf(d)), d].map((p) => relative(root, p)).join(' -> '))
        else if (!state.has(d)) visit(d)
      }
      stack.pop()
      state.set(f, 2)
    }
    for (const f of files) if (!state.has(f)) visit(f)
    expect(cycles).toEqual([])
    expect(edges.size).toBeGreaterThan(5)
  })
})
