/**
 * The MongoDB source the stream suites share: the server fixture (./mongo.ts) with one way to
 * inject faults on either server: the in-repo test server's own faults, or the `failCommand` fail
 * point on the server MONGODB_URI names (SecantusDB and mongod with test commands have it; matched
 * by the client's appName).
 */
import { MongoClient } from 'mongodb'
import type { TestServer } from '../../tools/test-server'
import { startMongo } from './mongo'

export interface Source {
  uri: string
  /** The in-repo test server, when MONGODB_URI is not set. */
  server: TestServer | undefined
  /** The appName the fail points match: put it in the URI of the client under test. */
  appName: string
  /** The URI of the client under test (with appName). */
  clientUri: string
  /** Fails the next `times` getMores of the client under test (`closeConnection`: the server cuts the connection). */
  failGetMore(o: { code?: number; closeConnection?: boolean; times?: number; ns?: string }): Promise<void>
  /** Fails every getMore of the client under test until `off()`. */
  failGetMoreAlways(o: { code?: number; closeConnection?: boolean }): Promise<void>
  off(): Promise<void>
  /** Open server cursors on `ns` (test server: its registry; MONGODB_URI: serverStatus, all namespaces). */
  openCursors(ns: string): Promise<number>
  close(): Promise<void>
}

export async function startSource(tag: string): Promise<Source> {
  const mongo = await startMongo()
  const URI = mongo.uri
  const appName = `b2j-${tag}-${process.pid}`
  const clientUri = `${URI}${URI.includes('?') ? '&' : '?'}appName=${appName}`
  const server = mongo.server
  if (server) {
    return {
      uri: URI,
      server,
      appName,
      clientUri,
      async failGetMore({ code = 96, closeConnection = false, times = 1, ns }) {
        server.injectFault(closeConnection ? { command: 'getMore', kind: 'closeSocket', count: times, ns } : { command: 'getMore', kind: 'error', code, count: times, ns })
      },
      async failGetMoreAlways({ code = 96, closeConnection = false }) {
        server.injectFault(closeConnection ? { command: 'getMore', kind: 'closeSocket', count: Infinity } : { command: 'getMore', kind: 'error', code, count: Infinity })
      },
      async off() {
        server.clearFaults()
      },
      async openCursors(ns: string) {
        return server.openCursors().filter((c) => c.ns === ns).length
      },
      close: () => mongo.close(),
    }
  }
  const admin = new MongoClient(URI)
  await admin.connect()
  const fp = (mode: unknown, data: Record<string, unknown> = {}) =>
    admin.db('admin').command({ configureFailPoint: 'failCommand', mode, data: { failCommands: ['getMore'], appName, ...data } })
  const data = (code: number, closeConnection: boolean) => (closeConnection ? { closeConnection: true } : { errorCode: code })
  return {
    uri: URI,
    server: undefined,
    appName,
    clientUri,
    async failGetMore({ code = 96, closeConnection = false, times = 1 }) {
      await fp({ times }, data(code, closeConnection))
    },
    async failGetMoreAlways({ code = 96, closeConnection = false }) {
      await fp('alwaysOn', data(code, closeConnection))
    },
    async off() {
      await admin.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' })
    },
    async openCursors() {
      const s = await admin.db('admin').command({ serverStatus: 1 })
      const open = s.metrics?.cursor?.open?.total
      return typeof open === 'number' ? open : Number(open ?? 0)
    },
    async close() {
      await admin.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' }).catch(() => {})
      await admin.close()
      await mongo.close()
    },
  }
}
