// Soak test: millions of documents (mixed sizes, 1% malformed) through toJSON, the batch API
// and the stream; every malformed document must be reported, none lost, and RSS and heap must
// stay flat after warm-up. Prints the memory curve as a markdown table.
//
//   node --expose-gc benchmark/soak.mjs [--docs 10000000] [--paths tojson,batch,stream]
import { createRequire } from 'node:module'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

const require = createRequire(import.meta.url)
const { BSON } = require('bson')
const { toJSON, toNDJSON, createTranscodeStream, isTranscodeError } = require('..')

const args = process.argv.slice(2)
const arg = (name, def) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : def
}
const TOTAL = Number(arg('docs', '10000000'))
const PATHS = arg('paths', 'tojson,batch,stream').split(',')
const POOL = 10_000

// A seeded pool of documents: sizes from ~30 B to ~20 KB, every 100th one corrupted.
let seed = 20261122
const rand = () => {
  seed = (seed * 1103515245 + 12345) >>> 0
  return seed / 2 ** 32
}
const pool = []
const malformed = []
for (let i = 0; i < POOL; i++) {
  const words = Math.floor(rand() ** 3 * 2000)
  const doc = {
    _id: new BSON.ObjectId(),
    i,
    name: `item ${i} ${'é'.repeat(i % 3)}`,
    price: Math.round(rand() * 100000) / 100,
    tags: Array.from({ length: i % 5 }, (_, k) => `t${k}`),
    text: Array.from({ length: words }, () => 'lorem').join(' '),
    at: new Date(1_700_000_000_000 + i * 1000),
  }
  let b = Buffer.from(BSON.serialize(doc))
  const bad = i % 100 === 37
  if (bad) {
    b = Buffer.from(b)
    b[b.length - 1] = 0x01 // terminator is not NUL: BSON_BAD_TERMINATOR
  }
  pool.push(b)
  malformed.push(bad)
}
const expectedBad = (n) => {
  let c = 0
  for (let k = 0; k < n; k++) if (malformed[k % POOL]) c++
  return c
}

const mb = (x) => (x / 1048576).toFixed(1)
function sample(rows, path, done) {
  globalThis.gc?.()
  const m = process.memoryUsage()
  rows.push(`| ${path} | ${done.toLocaleString('en-US')} | ${mb(m.rss)} | ${mb(m.heapUsed)} | ${mb(m.external)} |`)
}

async function run(path, rows) {
  let errors = 0
  let outBytes = 0
  let delivered = 0
  const step = TOTAL / 10
  const t0 = process.hrtime.bigint()
  if (path === 'tojson') {
    for (let n = 0; n < TOTAL; n++) {
      try {
        outBytes += toJSON(pool[n % POOL]).length
        delivered++
      } catch (e) {
        if (!isTranscodeError(e)) throw e
        errors++
      }
      if ((n + 1) % step === 0) sample(rows, path, n + 1)
    }
  } else if (path === 'batch') {
    // 1000 documents per call; a bad document stops its batch, which resumes after it.
    for (let n = 0; n < TOTAL; n += 1000) {
      const docs = []
      for (let k = n; k < n + 1000 && k < TOTAL; k++) docs.push(pool[k % POOL])
      // The batch is all-or-nothing: on an error at `index`, the documents before it go again
      // as their own batch and the rest resumes after the bad one.
      let from = 0
      while (from < docs.length) {
        const rest = from === 0 ? docs : docs.slice(from)
        try {
          outBytes += toNDJSON(rest).length
          delivered += rest.length
          break
        } catch (e) {
          if (!isTranscodeError(e)) throw e
          errors++
          if (e.index > 0) {
            outBytes += toNDJSON(rest.slice(0, e.index)).length
            delivered += e.index
          }
          from += e.index + 1
        }
      }
      if ((n + 1000) % step === 0) sample(rows, path, n + 1000)
    }
  } else if (path === 'stream') {
    let n = 0
    const source = Readable.from(
      (function* () {
        while (n < TOTAL) {
          const chunk = []
          for (let k = 0; k < 2000 && n < TOTAL; k++, n++) chunk.push(pool[n % POOL])
          if (n % step === 0) sample(rows, path, n)
          yield Buffer.concat(chunk)
        }
      })(),
    )
    const t = createTranscodeStream({ skipInvalid: true })
    t.on('skip', () => errors++)
    await pipeline(
      source,
      t,
      new Writable({
        write(c, _e, cb) {
          outBytes += c.length
          for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) delivered++
          cb()
        },
      }),
    )
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  return { errors, outBytes, s, delivered }
}

const want = expectedBad(TOTAL)
const rows = ['| path | documents | RSS MB | heap MB | external MB |', '|---|---:|---:|---:|---:|']
let ok = true
const summary = []
for (const path of PATHS) {
  const r = await run(path, rows)
  const pass = r.errors === want && r.delivered + r.errors === TOTAL
  ok &&= pass
  summary.push(
    `${path}: ${TOTAL.toLocaleString('en-US')} documents in ${r.s.toFixed(1)} s: ${r.delivered.toLocaleString('en-US')} delivered + ${r.errors} malformed reported (expected ${want}) ${pass ? 'OK' : 'MISMATCH'}, ${mb(r.outBytes)} MB of JSON`,
  )
}
console.log(rows.join('\n'))
console.log()
console.log(summary.join('\n'))
console.log(`peak RSS ${mb(process.resourceUsage().maxRSS * 1024)} MB`)
process.exit(ok ? 0 : 1)
