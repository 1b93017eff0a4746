/**
 * ARCHITECTURE.md's "Map of the repository" is exact for the folders whose files readers look
 * for: every file under `crates/<crate>/{src,tests,examples,benches}`, `lib/`, `__test__/` and
 * `docs/` is named in the map, and every path the map gives a line of its own exists.
 *
 * The map is a code block of lines `NAME[, NAME…]   description`, the names in the first 32
 * columns, indented two spaces per folder level under the folder line (`name/`) they belong
 * to; a line blank in those columns continues the description above. A file is covered when
 *   - it has a line of its own (its full path, built from the folder lines above it), or
 *   - the line of its nearest folder names it in its description (`index.js`, or a test suite
 *     as `compat` for `compat.spec.ts`: the name without `.spec.ts`), or
 *   - that line names a subfolder it lies in (`fixtures/`): the folder is described as a whole.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.join(__dirname, '..', '..')
const NAME_COLUMNS = 32
const ROOTS = [/^crates\/[^/]+\/(src|tests|examples|benches)\//, /^lib\//, /^__test__\//, /^docs\//]

interface Entry {
  path: string
  folder: boolean
  text: string
}

/** The map's code block: the first ``` block after the "Map of the repository" heading. */
export function mapBlock(markdown: string): string {
  const at = markdown.indexOf('\n## Map of the repository')
  if (at < 0) throw new Error('ARCHITECTURE.md has no "## Map of the repository" section')
  const m = /\n```\n([\s\S]*?)\n```/.exec(markdown.slice(at))
  if (!m) throw new Error('the map section has no code block')
  return m[1]
}

/** Every line of the map as entries with full paths; a line's text includes its continuation. */
export function parseMap(block: string): Entry[] {
  const entries: Entry[] = []
  // the open folders: indentation → path
  const stack: { indent: number; path: string }[] = []
  let last: Entry[] = []
  let lastIndent = -1
  for (const line of block.split('\n')) {
    const head = line.slice(0, NAME_COLUMNS)
    if (head.trim() === '') {
      for (const e of last) e.text += ` ${line.trim()}`
      continue
    }
    const indent = line.length - line.trimStart().length
    // names end at the first run of two spaces (or the description column)
    const namesPart = line.trimStart().split(/ {2,}/)[0]
    const names = namesPart
      .split(/,\s*/)
      .map((s) => s.trim())
      .filter(Boolean)
    // a deeper line under a line that is not a folder continues that line's names
    const continues = indent > lastIndent && last.length > 0 && !last.some((e) => e.folder)
    if (!continues) {
      while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop()
    }
    const base = stack.length ? stack[stack.length - 1].path : ''
    const made = names.map((n) => ({ path: base + n, folder: n.endsWith('/'), text: line }))
    if (continues) {
      for (const e of last) e.text += ` ${line.trim()}`
      last = [...last, ...made]
    } else {
      last = made
      lastIndent = indent
    }
    entries.push(...made)
    const folder = made.find((e) => e.folder)
    if (folder && made.length === 1) stack.push({ indent, path: folder.path })
  }
  return entries
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const mentions = (text: string, word: string) => new RegExp(`(^|[^\\w.\\-/])${escapeRe(word)}($|[^\\w\\-/])`).test(text)

/** The files the map does not cover (see the rules at the top). */
export function uncovered(entries: Entry[], files: string[]): string[] {
  const byPath = new Map(entries.map((e) => [e.path, e]))
  const folders = entries.filter((e) => e.folder).sort((a, b) => b.path.length - a.path.length)
  return files.filter((f) => {
    if (byPath.has(f)) return false
    const folder = folders.find((d) => f.startsWith(d.path))
    if (!folder) return true
    const rest = f.slice(folder.path.length)
    const text = folder.text
    if (rest.includes('/')) return !mentions(text, `${rest.split('/')[0]}/`)
    // a test suite may go by its name alone (`compat` for compat.spec.ts); other files by their full name
    return !(mentions(text, rest) || (rest.endsWith('.spec.ts') && mentions(text, rest.slice(0, -'.spec.ts'.length))))
  })
}

function repositoryFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  return [...new Set(out.split('\0'))].filter((f) => f && ROOTS.some((r) => r.test(f)) && existsSync(path.join(ROOT, f)))
}

describe("ARCHITECTURE.md's map of the repository", () => {
  const entries = parseMap(mapBlock(readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8')))

  it('names every file under crates/*/src, lib/, __test__/ and docs/ (or describes its folder)', () => {
    expect(uncovered(entries, repositoryFiles())).toEqual([])
  })

  it('gives a line only to paths that exist', () => {
    const inRoots = entries.filter((e) => ROOTS.some((r) => r.test(e.path)) && !/[<*]/.test(e.path))
    const missing = inRoots.filter((e) => {
      const p = path.join(ROOT, e.path)
      return !existsSync(p) || statSync(p).isDirectory() !== e.folder
    })
    expect(missing.map((e) => e.path)).toEqual([])
  })

  it('the rules, on a small map: a line, a description, a described folder, and what they miss', () => {
    const map = [
      'lib/                            the layers:',
      '  a.js, b.js                    two files',
      '  native/                       index.js (the binding), load.js',
      '                                and wasi.js',
      '__test__/                       suites: api, compat; fixtures/ holds outputs',
    ].join('\n')
    const e = parseMap(map)
    expect(e.map((x) => x.path)).toEqual(['lib/', 'lib/a.js', 'lib/b.js', 'lib/native/', '__test__/'])
    const files = ['lib/a.js', 'lib/native/index.js', 'lib/native/wasi.js', '__test__/api.spec.ts', '__test__/fixtures/x.json']
    expect(uncovered(e, files)).toEqual([])
    expect(uncovered(e, ['lib/c.js', 'lib/native/protocol.js', '__test__/cli.spec.ts', '__test__/support/gen.ts', 'docs/x.md'])).toEqual([
      'lib/c.js',
      'lib/native/protocol.js',
      '__test__/cli.spec.ts',
      '__test__/support/gen.ts',
      'docs/x.md',
    ])
    // a name inside a longer word is not a mention
    expect(uncovered(e, ['__test__/compat-extra.spec.ts', '__test__/pi.spec.ts'])).toEqual(['__test__/compat-extra.spec.ts', '__test__/pi.spec.ts'])
    // only a test suite goes by its stem: `a` does not name lib/native/a.rs
    expect(uncovered(parseMap('lib/native/   a (the tail), b.rs'), ['lib/native/a.rs', 'lib/native/b.rs'])).toEqual(['lib/native/a.rs'])
  })
})
