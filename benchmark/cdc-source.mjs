// The source the Kafka benchmarks share: the in-repo test server in a child process (or
// MONGODB_URI), and N pre-written order inserts with integer _ids in `<db>.orders`, written after
// the returned operation time (so a change stream started at it sees exactly those N events).
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * @param {{ db: string, n: number }} o
 * @returns {Promise<{ uri: string, serverProc: import('node:child_process').ChildProcess | null, client: any, coll: any, startAt: any }>}
 */
export async function seedOrders({ db, n }) {
  const { MongoClient } = require('mongodb')
  let serverProc = null
  let uri = process.env.MONGODB_URI
  if (!uri) {
    serverProc = spawn(process.execPath, [path.join(ROOT, 'tools/test-server/cli.js'), '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] })
    uri = await new Promise((resolve) => serverProc.stdout.once('data', (d) => resolve(String(d).split('\n')[0].trim())))
  }
  const client = await MongoClient.connect(uri)
  const coll = client.db(db).collection('orders')
  const s = client.startSession()
  await coll.db.command({ ping: 1 }, { session: s })
  const startAt = s.operationTime
  await s.endSession()
  for (let i = 0; i < n; i += 1000) {
    const docs = []
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      docs.push({ _id: j, customer: `c${j % 977}`, total: j * 1.25, items: [{ sku: `s${j % 31}`, qty: (j % 5) + 1 }], status: 'open', at: new Date(1_700_000_000_000 + j) })
    }
    await coll.insertMany(docs)
  }
  return { uri, serverProc, client, coll, startAt }
}

/** Runs `fn` (async) and returns its wall time and this process's CPU time, in seconds. */
export function measure(fn) {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  return fn().then(() => {
    const wall = Number(process.hrtime.bigint() - t0) / 1e9
    const c = process.cpuUsage(c0)
    return { wall, cpu: (c.user + c.system) / 1e6 }
  })
}
