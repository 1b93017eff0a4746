/**
 * The README's runnable examples: every fenced ```js block preceded by `<!-- runnable: NAME -->`,
 * run as written in a child process. Only the URI changes (`mongodb://127.0.0.1:27017` → the
 * test's); a server an example starts listens on a free port (fixtures/readme-preload.cjs), which
 * `port()` returns. `require('bson2json')` resolves to this checkout.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Collection, MongoClient } from 'mongodb'

const ROOT = path.join(__dirname, '..', '..')
export const README_URI = 'mongodb://127.0.0.1:27017'

/** NAME → the block's code, in README order. */
export function readmeExamples(file = 'README.md'): Map<string, string> {
  const text = readFileSync(path.join(ROOT, file), 'utf8')
  const out = new Map<string, string>()
  for (const m of text.matchAll(/^<!-- runnable: ([\w-]+) -->\n```js\n([\s\S]*?)^```$/gm)) out.set(m[1], m[2])
  return out
}

export interface RunningExample {
  proc: ChildProcess
  stdout: () => string
  /** stderr, less the one-time BSON2JSON_FALLBACK warning of a BSON2JSON_FORCE_FALLBACK=1 run. */
  stderr: () => string
  /** The port the example's server listens on (rejects if it exits first). */
  port: () => Promise<number>
  /** Exit code, once it exited. */
  exited: () => Promise<number | null>
  alive: () => boolean
  kill: () => Promise<void>
}

/** Runs example NAME of `page` (README.md, or a docs page with runnable examples). */
export function runExample(name: string, uri: string, page = 'README.md'): RunningExample {
  const code = readmeExamples(page).get(name)
  if (code === undefined) throw new Error(`README has no runnable example ${name}`)
  const uses = code.split(README_URI).length - 1
  if (uses !== 1) throw new Error(`README example ${name} must name ${README_URI} once (found ${uses})`)
  const dir = path.join(ROOT, 'tmp', 'readme-examples')
  mkdirSync(path.join(dir, 'node_modules'), { recursive: true })
  const link = path.join(dir, 'node_modules', 'bson2json')
  // A link left by another checkout (even a removed one) is replaced; two test files of one
  // run may make it at once.
  let target: string | null = null
  try {
    target = readlinkSync(link)
  } catch {}
  if (target !== ROOT) {
    rmSync(link, { force: true })
    try {
      symlinkSync(ROOT, link, 'dir')
    } catch (e: any) {
      if (e.code !== 'EEXIST' || readlinkSync(link) !== ROOT) throw e
    }
  }
  const file = path.join(dir, `${name}-${process.pid}.js`)
  writeFileSync(file, code.replace(README_URI, uri))
  const proc = spawn(process.execPath, ['-r', path.join(__dirname, 'fixtures', 'readme-preload.cjs'), file], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  let out = ''
  let err = ''
  proc.stdout!.on('data', (d) => (out += d))
  proc.stderr!.on('data', (d) => (err += d))
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)))
  let exitedFlag = false
  void exit.then(() => (exitedFlag = true))
  const port = new Promise<number>((resolve, reject) => {
    proc.on('message', (m: any) => {
      if (m && typeof m.listening === 'number') resolve(m.listening)
    })
    void exit.then((c) => reject(new Error(`example ${name} exited (${c}) before listening: ${err}`)))
  })
  port.catch(() => {})
  return {
    proc,
    stdout: () => out,
    // Without the one-time BSON2JSON_FALLBACK warning (BSON2JSON_FORCE_FALLBACK=1 runs)
    stderr: () => err.replace(/^\(node:\d+\) \[BSON2JSON_FALLBACK\] Warning: .*\n(\(Use `node --trace-warnings .*\n)?/m, ''),
    port: () => port,
    exited: () => exit,
    alive: () => !exitedFlag && proc.exitCode === null && proc.signalCode === null,
    kill: async () => {
      if (!exitedFlag) {
        proc.kill('SIGTERM')
        await exit
      }
    },
  }
}

/**
 * `shop.orders` as the examples expect it: N orders, two in three `open`, ~1 KB each. The same
 * documents every time, inserted unordered with duplicates ignored, so suites sharing a server
 * (MONGODB_URI) can seed it at once.
 */
export async function seedOrders(c: MongoClient, n = 3000): Promise<Collection> {
  const coll = c.db('shop').collection('orders')
  const pad = 'x'.repeat(800)
  const docs = Array.from({ length: n }, (_, i) => ({
    _id: i,
    status: i % 3 === 0 ? 'closed' : 'open',
    total: ((i * 37) % 1000) + i / 10000,
    customer: `c${i % 97}`,
    at: new Date(1_700_000_000_000 + i * 1000),
    pad,
  }))
  for (let i = 0; i < n; i += 1000) {
    await coll.insertMany(docs.slice(i, i + 1000) as any[], { ordered: false }).catch((e) => {
      const dups = ([] as any[]).concat(e.writeErrors ?? [])
      if (dups.length === 0 || !dups.every((w: any) => w.code === 11000)) throw e
    })
  }
  return coll
}
