// Multi-core batches: one ~16 MB batch of 10 KB order documents through toNDJSONAsync with
// 1 and 2 threads, alternating, in one process. Needs the benchmark data:
// `npm run bench:gen` (full data) first.
//
//   node benchmark/threads.mjs [--rounds 3] [--threads 1,2]
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'

const require = createRequire(import.meta.url)
const { toNDJSONAsync } = require('..')
const args = process.argv.slice(2)
const arg = (n, d) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1] : d)
const rounds = Number(arg('rounds', '3'))
const counts = arg('threads', '1,2').split(',').map(Number)

const dir = path.join(path.dirname(new URL(import.meta.url).pathname), 'data')
const file = fs.readdirSync(dir).find((n) => n.startsWith('doc10k-') && n.includes('32MB'))
if (!file) {
  console.error('no doc10k data: run `npm run bench:gen` first')
  process.exit(2)
}
const all = fs.readFileSync(path.join(dir, file))
let end = 0
while (end < all.length && end < 16 * 1024 * 1024) {
  const len = all.readInt32LE(end)
  if (end + len > 16 * 1024 * 1024) break
  end += len
}
const batch = all.subarray(0, end)
const results = new Map(counts.map((c) => [c, []]))
for (let r = 0; r < rounds; r++) {
  for (const threads of counts) {
    const t = process.hrtime.bigint()
    for (let i = 0; i < 5; i++) await toNDJSONAsync(batch, { threads })
    const s = Number(process.hrtime.bigint() - t) / 1e9
    results.get(threads).push((5 * batch.length) / 1e6 / s)
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const base = median(results.get(counts[0]))
console.log(`batch: ${(batch.length / 1e6).toFixed(1)} MB of 10 KB documents, toNDJSONAsync, ${rounds} rounds`)
console.log('| threads | MB/s (median) | speed-up |\n|---:|---:|---:|')
for (const c of counts) {
  const m = median(results.get(c))
  console.log(`| ${c} | ${m.toFixed(0)} | ${(m / base).toFixed(2)}x |`)
}
