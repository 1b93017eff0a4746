/**
 * The JavaScript modules form a stack, as the Rust core's do (crates/bson2json-core/tests/layers.rs):
 * each module of lib/ requires only modules of its own layer or below, only lib/native reaches the
 * binding, and no require cycle exists. ARCHITECTURE.md's map of lib/ is this table.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = resolve(__dirname, '../..')

/** Bottom first: a module may require modules of its layer or of a layer listed before it. */
const LAYERS: [string, string[]][] = [
  // what every layer may use: the error module, loading optional peer packages, the options table (data)
  ['base', ['lib/errors.js', 'lib/peer.js', 'lib/option-table.js']],
  // the binding: the only way into the native addon or its WASI build
  ['native', ['lib/native/']],
  // options, projection and redaction resolved into what the binding takes
  ['options', ['lib/options.js', 'lib/shape.js']],
  // the transcoding API and the transcode stream
  ['transcode', ['lib/transcode/']],
  // MongoDB: raw cursors, find/aggregate, change streams
  ['mongo', ['lib/mongo/']],
  // the Kafka sink
  ['kafka', ['lib/kafka/']],
  // the command line
  ['cli', ['lib/cli/']],
  // the public entry points
  ['entry', ['index.js', 'kafka.js', 'bin/']],
]

/** The files that may require the generated loader, the WASI loader or native/load.js. */
const BINDING_OWNERS = ['lib/native/']

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

const rel = (p: string) => relative(root, p).split(sep).join('/')

function layerOf(file: string): number {
  const r = rel(file)
  return LAYERS.findIndex(([, prefixes]) => prefixes.some((p) => (p.endsWith('/') ? r.startsWith(p) : r === p)))
}

/** Each file's local requires (lazy ones inside functions too), as repo-relative paths. */
function graph(sources: Map<string, string>): Map<string, string[]> {
  const edges = new Map<string, string[]>()
  for (const [f, src] of sources) {
    const deps: string[] = []
    for (const m of src.matchAll(/require\(\s*['"](\.{1,2}\/[^'"]*)['"]\s*\)/g)) {
      const to = resolveLocal(join(root, f), m[1])
      deps.push(to === null ? m[1] : rel(to))
    }
    edges.set(f, deps)
  }
  return edges
}

/** Every rule the graph breaks, one line each. */
function violations(sources: Map<string, string>): string[] {
  const edges = graph(sources)
  const out: string[] = []
  for (const [f, deps] of edges) {
    const from = layerOf(join(root, f))
    if (from < 0) out.push(`${f} is in no layer (add it to LAYERS)`)
    for (const d of deps) {
      const isBinding = /(^|\/)binding\.js$|\.wasi\.cjs$|^lib\/native\/(load|wasi)\.js$/.test(d)
      if (isBinding && !BINDING_OWNERS.some((p) => f.startsWith(p))) out.push(`${f} -> ${d}: only lib/native reaches the binding`)
      if (!edges.has(d)) continue
      const to = layerOf(join(root, d))
      if (to > from) out.push(`${f} (${LAYERS[from][0]}) -> ${d} (${LAYERS[to][0]}): a layer may not require one above it`)
    }
  }
  const state = new Map<string, 1 | 2>()
  const stack: string[] = []
  const visit = (f: string) => {
    state.set(f, 1)
    stack.push(f)
    for (const d of edges.get(f) ?? []) {
      if (!edges.has(d)) continue
      if (state.get(d) === 1) out.push(`cycle: ${[...stack.slice(stack.indexOf(d)), d].join(' -> ')}`)
      else if (!state.has(d)) visit(d)
    }
    stack.pop()
    state.set(f, 2)
  }
  for (const f of edges.keys()) if (!state.has(f)) visit(f)
  return out
}

function sources(): Map<string, string> {
  const files = [join(root, 'index.js'), join(root, 'kafka.js'), ...jsFiles(join(root, 'lib')), ...jsFiles(join(root, 'bin'))]
  return new Map(files.map((f) => [rel(f), readFileSync(f, 'utf8')]))
}

describe('module graph', () => {
  it('lib/ is a stack: no upward require, only lib/native reaches the binding, no cycle', () => {
    const s = sources()
    expect(s.size).toBeGreaterThan(20)
    expect(violations(s)).toEqual([])
  })

  it('catches each kind of fault seeded into the real sources', () => {
    const seed = (file: string, line: string) => {
      const s = sources()
      s.set(file, `${line}\n${s.get(file)}`)
      return violations(s)
    }
    // an upward require: the options layer reaching into mongo
    expect(seed('lib/options.js', "require('./mongo/cursor')")).toEqual([
      'lib/options.js (options) -> lib/mongo/cursor.js (mongo): a layer may not require one above it',
      expect.stringMatching(/^cycle: /),
    ])
    // the binding reached around lib/native
    expect(seed('lib/mongo/cursor.js', "require('../native/load')")).toEqual(['lib/mongo/cursor.js -> lib/native/load.js: only lib/native reaches the binding'])
    expect(seed('lib/transcode/stream.js', "require('../../binding.js')")).toEqual(['lib/transcode/stream.js -> binding.js: only lib/native reaches the binding'])
    // a cycle inside one layer
    expect(seed('lib/mongo/raw-cursor.js', "require('./cursor')")).toEqual([expect.stringMatching(/^cycle: .*lib\/mongo\/raw-cursor\.js/)])
    // a file no layer declares
    const s = sources()
    s.set('lib/stray.js', '')
    expect(violations(s)).toEqual(['lib/stray.js is in no layer (add it to LAYERS)'])
  })
})
