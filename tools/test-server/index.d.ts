/**
 * MongoDB wire-protocol TEST FIXTURE (not a database). See README.md.
 */

import type { Timestamp } from 'bson'

export interface TestServerOptions {
  /** TCP port; 0 (default) picks a free port. */
  port?: number
  /** Bind address (default '127.0.0.1'). */
  host?: string
  /** Replica set name (default 'rs0'). */
  replicaSet?: string
  /** Make `server.uri` the `directConnection=true` form instead of `replicaSet=`. */
  directConnection?: boolean
  /** Compressors offered in hello (default ['zlib']; 'noop' also understood). */
  compressors?: string[]
  /** Change event size limit; larger events are split or fail with 10334 (default 16 MiB). */
  splitThresholdBytes?: number
  /** Probability 0..1 that an eligible command gets a random fault (default 0). */
  faultRate?: number
  /** Seed of the random-fault PRNG (default 1). */
  seed?: number
  /** Commands eligible for random faults (default ['getMore']). */
  randomFaultCommands?: string[]
  /** Kinds picked by random faults (default closeSocket, resumableError, cursorNotFound, emptyBatch, delay). */
  randomFaultKinds?: FaultKind[]
  /** Random faults only hit change-stream commands (default true). */
  randomFaultChangeStreamOnly?: boolean
  /** Keep at most this many oplog entries (default unlimited). */
  maxOplogEvents?: number
  /**
   * Cursor ids are random positive int64s below 2^cursorIdBits, 8..63 (default 63, like a real server).
   * Small values make ids that fit in a JS number, to test that clients keep them int64 on the wire.
   */
  cursorIdBits?: number
  /** buildInfo version (default '8.0.0'). */
  version?: string
  /** hello maxWireVersion (default 21). */
  maxWireVersion?: number
  /** Advertise sessions (`logicalSessionTimeoutMinutes` in hello; default true). */
  sessions?: boolean
  /** Command log entries kept (default 10000). */
  maxCommandLog?: number
  /** Diagnostic logger (default: silent). */
  log?: (line: string) => void
  /** Also log every command (except hello) to `log`. */
  logCommands?: boolean
}

export type FaultKind =
  | 'error'
  | 'resumableError'
  | 'nonResumableError'
  | 'cursorNotFound'
  | 'closeSocket'
  | 'delay'
  | 'emptyBatch'
  | 'silence'
  | 'drip'
  | 'lengthLie'
  | 'reply'

export interface FaultSpec {
  /** Command name(s) to match, or '*' (never matches hello). Default 'getMore'. */
  command?: string | string[]
  /** Default 'error'. */
  kind?: FaultKind
  code?: number
  codeName?: string
  errmsg?: string
  errorLabels?: string[]
  /** How many matching commands to fault (default 1; Infinity = until cleared). */
  count?: number
  /** Let this many matching commands through first (default 0). */
  skip?: number
  /** Wait this long before applying the fault ('delay': then run normally). */
  delayMs?: number
  /** Only match commands that open or continue a change stream. */
  changeStreamOnly?: boolean
  /** Only match this namespace ('db.coll'). */
  ns?: string
  /** 'drip': milliseconds between two bytes of the reply (default 50). */
  dripMs?: number
  /** 'lengthLie': the messageLength written in the reply's header (default 0). */
  length?: number
  /** 'reply': the document sent instead of the command's reply. */
  reply?: Record<string, unknown>
}

export interface QueuedFault extends FaultSpec {
  id: number
  kind: FaultKind
  /** Times this fault was applied. */
  hits: number
  remaining: number
}

export interface CursorInfo {
  /** Cursor id as a decimal string. */
  id: string
  ns: string
  type: 'find' | 'aggregate' | 'changeStream' | 'listCollections' | 'listIndexes'
  connectionId: number
  createdAt: Date
  lastUsedAt: Date
  getMores: number
}

export interface CommandLogEntry {
  name: string
  db: string
  connectionId: number
  requestId: number
  at: Date
  fault?: FaultKind
  ok?: number
  code?: number
  command: Record<string, any>
}

export interface ConnectionInfo {
  id: number
  remoteAddress: string | undefined
  remotePort: number | undefined
  openedAt: Date
  closedAt: Date | null
  /** Client metadata from the handshake. */
  client: Record<string, any> | undefined
  /** Negotiated compressor, or null. */
  compressor: string | null
  commandCount: number
  /** The connection carries awaitable (streaming) hello for the driver's monitor. */
  isMonitor: boolean
}

export interface DecodedResumeToken {
  clusterTime: Timestamp
  version: number
  type: 'highWaterMark' | 'event' | 'invalidate'
  /** Oplog sequence number of the event (0 = before the first event). */
  seq: number
  /** Split-event fragment number, 0 when not a fragment. */
  fragment: number
  /** Hex id of the server instance's oplog. */
  uuid: string
}

export interface FaultInjector {
  inject(spec: FaultSpec): QueuedFault
  /** Queue several faults; returns the queue length. */
  push(...specs: FaultSpec[]): number
  clear(): void
  setFaultRate(rate: number, seed?: number): void
  readonly queue: QueuedFault[]
  readonly history: Array<{ command: string; kind: FaultKind; code?: number; random: boolean; at: Date }>
  faultRate: number
}

export declare class TestServer {
  /** `server.replicaSetUri`, or `server.directUri` when `directConnection: true`. */
  readonly uri: string
  /** `mongodb://127.0.0.1:PORT/?replicaSet=rs0` */
  readonly replicaSetUri: string
  /** `mongodb://127.0.0.1:PORT/?directConnection=true` */
  readonly directUri: string
  readonly host: string
  readonly port: number
  /** Change event size limit in bytes; settable at run time. */
  splitThresholdBytes: number
  readonly faults: FaultInjector
  /** Underlying in-memory state, for white-box tests (see store.js, oplog.js, cursors.js). */
  readonly store: any
  readonly oplog: any
  readonly cursors: any
  /** Every command received (bounded by maxCommandLog). */
  readonly commandLog: CommandLogEntry[]
  injectFault(spec: FaultSpec): QueuedFault
  clearFaults(): void
  setFaultRate(rate: number, seed?: number): void
  openCursors(): CursorInfo[]
  killCursorsStats(): { commands: number; killed: string[]; notFound: string[] }
  commandNames(options?: { includeHello?: boolean }): string[]
  clearCommandLog(): void
  connections(options?: { includeClosed?: boolean }): ConnectionInfo[]
  /** Destroy all client sockets (simulated network blip). */
  dropConnections(): void
  /** Forget the oldest `count` oplog entries (default: all). */
  truncateOplog(count?: number): void
  decodeResumeToken(token: { _data: string }): DecodedResumeToken | null
  close(): Promise<void>
}

export declare function startTestServer(options?: TestServerOptions): Promise<TestServer>
export declare function decodeResumeToken(token: { _data: string }): DecodedResumeToken | null
export declare function encodeResumeToken(parts: { clusterTime: Timestamp; type: DecodedResumeToken['type']; seq: number; fragment?: number; uuid: Uint8Array }): { _data: string }
export declare const FAULT_KINDS: readonly FaultKind[]
export declare const DEFAULT_SPLIT_THRESHOLD_BYTES: number
