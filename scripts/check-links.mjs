#!/usr/bin/env node
// Checks the relative links of the repository's Markdown files: every link, image and
// reference definition that is not a URL must name a file or directory inside the repository,
// and a `#fragment` must name a heading of the Markdown file it points to (GitHub's heading
// ids). Code spans that name an absolute or `../` path outside the repository are reported too,
// since a reader of the repository cannot follow them.
//
//   node scripts/check-links.mjs            # every tracked *.md (spec/ is vendored, skipped)
//   node scripts/check-links.mjs a.md b.md  # only these files
//
// Exit code 0 when nothing dangles, 1 otherwise (one line per problem: file:line: message).
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const SKIP = [/^spec\//, /(^|\/)node_modules\//]
// System paths that documentation may name in code spans on purpose.
const SYSTEM = /^\/(dev|proc|sys|usr|etc|tmp|bin|opt|var)(\/|$)/

function trackedMarkdown() {
  const out = execFileSync('git', ['ls-files', '-z', '--', '*.md'], { cwd: root, encoding: 'utf8' })
  return out.split('\0').filter((f) => f && !SKIP.some((re) => re.test(f)))
}

// GitHub's heading ids: lower case, punctuation removed (letters, digits, `-`, `_` and spaces
// kept), spaces to `-`; repeats get `-1`, `-2`, ...
function slug(text) {
  const plain = text
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
  return plain.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-')
}

const anchorCache = new Map()
function anchorsOf(file) {
  if (anchorCache.has(file)) return anchorCache.get(file)
  const ids = new Set()
  const seen = new Map()
  for (const { text } of lines(readFileSync(file, 'utf8'))) {
    const m = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text)
    if (!m) continue
    const base = slug(m[2])
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    ids.add(n === 0 ? base : `${base}-${n}`)
  }
  for (const m of readFileSync(file, 'utf8').matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) ids.add(m[1])
  anchorCache.set(file, ids)
  return ids
}

// The file's lines outside fenced code blocks, with their numbers.
function lines(source) {
  const result = []
  let fence = null
  source.split('\n').forEach((text, i) => {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(text)
    if (f) {
      if (fence === null) fence = f[1][0]
      else if (f[1][0] === fence) fence = null
      return
    }
    if (fence === null) result.push({ text, line: i + 1 })
  })
  return result
}

function targetsOf(text) {
  const targets = []
  const noCode = text.replace(/`[^`]*`/g, (s) => ' '.repeat(s.length))
  // Inline links and images: [text](target "title"), the target possibly in <...>.
  for (const m of noCode.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) {
    targets.push(m[1].replace(/^<|>$/g, ''))
  }
  // Reference definitions: [label]: target
  const def = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(noCode)
  if (def) targets.push(def[1].replace(/^<|>$/g, ''))
  // HTML src/href attributes.
  for (const m of noCode.matchAll(/\b(?:src|href)="([^"]+)"/g)) targets.push(m[1])
  return targets
}

function check(file) {
  const problems = []
  const abs = path.join(root, file)
  for (const { text, line } of lines(readFileSync(abs, 'utf8'))) {
    for (const target of targetsOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:, ...
      const [rawPath, fragment] = target.split('#', 2)
      const decoded = decodeURIComponent(rawPath)
      const resolved =
        decoded === '' ? abs : decoded.startsWith('/') ? path.join(root, decoded) : path.resolve(path.dirname(abs), decoded)
      const rel = path.relative(root, resolved)
      if (rel.startsWith('..') || path.isAbsolute(rel)) {
        problems.push(`${file}:${line}: link outside the repository: ${target}`)
        continue
      }
      if (!existsSync(resolved)) {
        problems.push(`${file}:${line}: dangling link: ${target}`)
        continue
      }
      if (fragment !== undefined && fragment !== '' && resolved.endsWith('.md') && statSync(resolved).isFile()) {
        if (!anchorsOf(resolved).has(decodeURIComponent(fragment).toLowerCase())) {
          problems.push(`${file}:${line}: no heading #${fragment} in ${rel}`)
        }
      }
    }
    for (const m of text.matchAll(/`([^`\s]+)`/g)) {
      const p = m[1]
      const outside = (p.startsWith('/') && !SYSTEM.test(p) && p.length > 1 && p.includes('/', 1)) || p.startsWith('../')
      if (outside && /\.[a-z0-9]{1,5}$/i.test(p)) {
        const resolved = p.startsWith('/') ? p : path.resolve(path.dirname(abs), p)
        const rel = path.relative(root, resolved)
        if (rel.startsWith('..') || path.isAbsolute(rel)) {
          problems.push(`${file}:${line}: path outside the repository: ${p}`)
          continue
        }
      }
      // A Markdown file named in a code span is a reference a reader will look for: it must
      // exist next to this file or at that path from the repository root.
      if (/\.md$/i.test(p) && !existsSync(path.resolve(path.dirname(abs), p)) && !existsSync(path.join(root, p))) {
        problems.push(`${file}:${line}: names a Markdown file that does not exist: ${p}`)
      }
    }
  }
  return problems
}

const files = process.argv.length > 2 ? process.argv.slice(2).map((f) => path.relative(root, path.resolve(f))) : trackedMarkdown()
const problems = files.flatMap(check)
for (const p of problems) console.error(p)
if (problems.length > 0) {
  console.error(`check-links: ${problems.length} problem(s) in ${files.length} Markdown files`)
  process.exit(1)
}
console.log(`check-links: ${files.length} Markdown files, no dangling relative links`)
