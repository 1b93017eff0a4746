/**
 * The one MongoDB server fixture of the suites: the server MONGODB_URI names (SecantusDB in
 * .ci/run, mongod in the workflow), or else the in-repo test server (tools/test-server), one per
 * test file or describe block. A suite that needs the test server with other options (small
 * cursor ids, no sessions, a second shard) starts that one itself.
 *
 *   const mongo = useMongo()               // beforeAll starts it, afterAll stops it
 *   const db = mongo.dbName('cs')          // unique per process; dropped at the end on MONGODB_URI
 *   new MongoClient(mongo.uri)             // after beforeAll
 *   mongo.server?.injectFault(...)         // the test server's faults (undefined on MONGODB_URI)
 *
 * Register `useMongo()` before the suite's own hooks: vitest runs "after" hooks in reverse order
 * (`sequence.hooks: 'stack'`), so the suite closes its clients before the server stops.
 */
import { afterAll, beforeAll } from 'vitest'
import { MongoClient } from 'mongodb'
import type { Db, Timestamp } from 'mongodb'
import { startTestServer } from '../../tools/test-server'
import type { TestServer } from '../../tools/test-server'

/** The external server, when one is named: the suites then skip what only the test server can do. */
export const MONGODB_URI: string | undefined = process.env.MONGODB_URI || undefined

export interface MongoOptions {
  /** The test server's `directConnection=true` URI instead of its replica-set one (the CLI's form). */
  direct?: boolean
}

export interface Mongo {
  /** The URI clients connect to: MONGODB_URI, or the test server's. */
  readonly uri: string
  /** The in-repo test server; undefined when MONGODB_URI is set. */
  readonly server: TestServer | undefined
  /**
   * A database name for this suite: `b2j_<tag>_<pid>_<time>_<n>` (unique, so suites running at once on
   * one external server do not meet), dropped by close() on MONGODB_URI.
   */
  dbName(tag: string): string
  /** Drops this suite's databases on MONGODB_URI; stops the test server. */
  close(): Promise<void>
}

let made = 0

class Fixture implements Mongo {
  private readonly names: string[] = []
  private running: { uri: string; server: TestServer | undefined } | undefined

  constructor(private readonly options: MongoOptions) {}

  async start(): Promise<void> {
    const server = MONGODB_URI ? undefined : await startTestServer({ port: 0 })
    this.running = { uri: MONGODB_URI ?? (this.options.direct ? server!.directUri : server!.uri), server }
  }

  private need() {
    if (!this.running) throw new Error('the MongoDB fixture is not running: read uri/server inside a hook or a test')
    return this.running
  }

  get uri(): string {
    return this.need().uri
  }

  get server(): TestServer | undefined {
    return this.need().server
  }

  dbName(tag: string): string {
    const name = `b2j_${tag}_${process.pid}_${Date.now() % 100000}_${made++}`
    this.names.push(name)
    return name
  }

  async close(): Promise<void> {
    const running = this.running
    this.running = undefined
    if (!running) return
    if (MONGODB_URI && this.names.length > 0) {
      const admin = new MongoClient(MONGODB_URI)
      try {
        // this suite's own data: a failed drop leaves a database behind on a test peer, nothing else
        for (const name of this.names) await admin.db(name).dropDatabase().catch(() => {})
      } finally {
        await admin.close()
      }
    }
    await running.server?.close()
  }
}

/** Starts the fixture now (outside a suite's hooks; `useMongo` is the usual way). */
export async function startMongo(options: MongoOptions = {}): Promise<Mongo> {
  const fixture = new Fixture(options)
  await fixture.start()
  return fixture
}

/**
 * The fixture as `beforeAll`/`afterAll` hooks of the enclosing file or describe block: `uri` and
 * `server` are there once beforeAll ran; `dbName` works at any time (at module level too).
 */
export function useMongo(options: MongoOptions = {}): Mongo {
  const fixture = new Fixture(options)
  beforeAll(() => fixture.start())
  afterAll(() => fixture.close())
  return fixture
}

/** The cluster's current time: every event written after this has a `clusterTime` at least it. */
export async function clusterTimeNow(client: MongoClient, db: Db): Promise<Timestamp> {
  const session = client.startSession()
  try {
    await db.command({ ping: 1 }, { session })
    return session.operationTime as Timestamp
  } finally {
    await session.endSession()
  }
}

/** The next `n` values of a cursor or change stream (fewer if it ends first). */
export async function take(stream: { next(): Promise<{ done?: boolean; value?: any }> }, n: number): Promise<any[]> {
  const out: any[] = []
  while (out.length < n) {
    const r = await stream.next()
    if (r.done) break
    out.push(r.value)
  }
  return out
}
