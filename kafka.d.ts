/** `require('bson2json/kafka')`: a MongoDB change stream into Kafka, exactly once (docs/kafka.md). */

import type { AbortSignalLike, Projection, RedactOptions } from './index'

export interface KafkaRunStats {
  /** events committed by this run */
  events: number
  /** server batches committed (one Kafka transaction each) */
  batches: number
  transactions: number
  /** restarts from the last checkpoint after Kafka errors */
  restarts: number
  /** resume token of the last committed checkpoint */
  resumeToken: unknown
  /** cluster time of the last committed event */
  clusterTime: { t: number; i: number } | null
  /** where the current cycle started: the stored checkpoint, resumeAfter, startAtOperationTime, or now */
  startedFrom: 'checkpoint' | 'snapshot' | 'resumeAfter' | 'startAtOperationTime' | 'now' | null
  /** while or after a snapshot ran in this process: why, the records copied (all runs), whether it finished */
  snapshot: { reason: 'initial' | 'override' | 'history-lost'; records: number; done: boolean; /** the `_id` ranges copied at once */ ranges: number; /** why fewer than `snapshotParallel` (few documents, `_id`s of different kinds, a slow server) */ rangesNote?: string } | null
  /** with `overrideCheckpoint`: the checkpoint this run started over instead of resuming from */
  overridden?: { resumeToken: unknown; clusterTime: { t: number; i: number } | null }
  /** the cause of the last Kafka failure, one line */
  lastError?: string
  /** during an outage: milliseconds left before the run gives up (KafkaUnavailableError) */
  giveUpInMS?: number
  /** transient MongoDB failures retried (a snapshot range's cursor reopened, or the cycle restarted) */
  mongoRetries: number
  /** the cause of the last retried MongoDB failure, one line */
  lastMongoError?: string
  /** during a MongoDB outage: milliseconds left before the run gives up (rejects with the driver's error) */
  mongoGiveUpInMS?: number
}

export interface ChangeStreamToKafkaOptions {
  /** the driver's Collection, Db or MongoClient */
  source: unknown
  /** stages after $changeStream */
  pipeline?: object[]
  /** bootstrap brokers, "HOST:PORT" */
  brokers: string[] | string
  /** events topic (with `topicPrefix`: the topic of what neither names; optional then) */
  topic?: string
  /** a topic per collection: `${topicPrefix}.${db}.${coll}` (docs/kafka.md "Databases and deployments") */
  topicPrefix?: string
  /** namespaces ("db.coll" or "db") into topics of their own */
  topics?: Record<string, string>
  /** capture only these namespaces ("db", "db.coll", `*` for any characters): a `$match` after `$changeStream` */
  include?: string[]
  /** leave these namespaces out (same patterns) */
  exclude?: string[]
  /** compacted checkpoint topic, keyed by `id` */
  checkpointTopic: string
  /** stream id: one running process per id (transactional.id `bson2json-cdc.<id>`) */
  id: string
  dialect?: 'compat' | 'relaxed' | 'canonical'
  /**
   * the records' format (docs/kafka.md "Record formats"): `bson2json` (default: the event in
   * `dialect`, its documentKey as the key, headers), `mongo-kafka` (the MongoDB Kafka source
   * connector's records with its defaults), `debezium` (Debezium's MongoDB envelope, JSON
   * without schemas, a tombstone after each delete). The last two exclude `dialect` and
   * `value: 'fullDocument'`.
   */
  format?: 'bson2json' | 'mongo-kafka' | 'debezium'
  /** message value: the whole event (default) or its fullDocument (deletes: no value) */
  value?: 'event' | 'fullDocument'
  fullDocument?: 'default' | 'updateLookup' | 'whenAvailable' | 'required'
  fullDocumentBeforeChange?: 'off' | 'whenAvailable' | 'required'
  showExpandedEvents?: boolean
  /** first start only (no checkpoint yet, or `overrideCheckpoint`); default: now */
  startAtOperationTime?: unknown
  /** first start only (no checkpoint yet, or `overrideCheckpoint`): after this resume token; exclusive with startAtOperationTime */
  resumeAfter?: object
  /**
   * Start from `resumeAfter`, `startAtOperationTime` or now even though a checkpoint exists (after
   * ChangeStreamHistoryLostError, or to skip ahead: the events in between are not delivered).
   * Once: the checkpoints written record the override, and a restart with the same one resumes
   * from the checkpoint.
   */
  overrideCheckpoint?: boolean
  /**
   * First start (or with `overrideCheckpoint`): copy the collection (`source` a Collection) into
   * `topic` first, as `operationType: 'snapshot'` records, then stream from the position taken
   * before the copy. Excludes `resumeAfter` and `startAtOperationTime`.
   */
  snapshot?: boolean
  /** documents per snapshot batch (default 1000); with one range, one batch per transaction */
  snapshotBatchSize?: number
  /**
   * `_id` ranges copied at once, one cursor each (default 1, at most 64): each
   * transaction holds the batches the ranges have ready, with one checkpoint of every range's
   * progress, so a restart resumes each range where it stopped
   */
  snapshotParallel?: number
  /** lost history: reject with ChangeStreamHistoryLostError (`'fail'`, default) or copy the collection again */
  onHistoryLost?: 'fail' | 'snapshot'
  batchSize?: number
  maxAwaitTimeMS?: number
  prefetch?: number
  splitLargeEvents?: boolean
  /**
   * A MongoDB projection applied to every event before it reaches Kafka: fullDocument,
   * fullDocumentBeforeChange, documentKey (its `_id` is kept), updatedFields, removedFields.
   */
  projection?: Projection
  /** Values masked in every event part (an updated field holding a redacted path included). */
  redact?: RedactOptions
  /** create missing topics (default true) */
  createTopics?: boolean
  /** partitions of a newly created events topic (default 1) */
  partitions?: number
  /**
   * while nothing captured arrives, checkpoint the server's position at most this often (default
   * 5000; `cdc --heartbeat-interval`): a quiet collection keeps a resume point inside the oplog window
   */
  idleCheckpointMS?: number
  /** with each of those checkpoints, a heartbeat record into this topic, as `format`'s connector writes them */
  heartbeatTopic?: string
  /** commit the open transaction (whole server batches and one checkpoint) once it is this old (default 100; 0: every batch) */
  commitIntervalMS?: number
  /** commit the open transaction once its records reach this many bytes (default 8 MiB) */
  maxTransactionBytes?: number
  /** bytes per produce request inside a transaction (default 512 KiB) */
  maxRequestBytes?: number
  /** first back-off after a Kafka error (default 500, doubling up to 10 s) */
  retryDelayMS?: number
  /** reject with KafkaUnavailableError when Kafka cannot be reached at start within this (default 10000) */
  connectTimeoutMS?: number
  /** once running, reject with KafkaUnavailableError when Kafka stays unreachable this long (default 120000) */
  retryTimeoutMS?: number
  /**
   * transient MongoDB errors (a closed connection, `CursorNotFound`, a resumable error) are
   * retried from the last committed checkpoint, with a back-off of 100 ms doubling to 5 s, until
   * MongoDB has not answered for this long (default 120000); then the run rejects with the
   * driver's error, its `retriedMS` set
   */
  mongoRetryTimeoutMS?: number
  /**
   * the longest wait for a reply of MongoDB (each command of the change stream and the snapshot,
   * the snapshot's start): past it the command is cancelled, its connection closed, and it is
   * retried as a closed connection is (default 60000). A server or network that stops answering
   * without closing the connection is not waited on for ever. Must be above `maxAwaitTimeMS`.
   */
  timeoutMS?: number
  /**
   * extra @platformatic/kafka client options, e.g. `tls: { ca, cert, key }` (Node's tls.connect
   * options) and `sasl: { mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username, password }`
   */
  kafka?: Record<string, unknown>
  onProgress?: (stats: KafkaRunStats, batch: { events: unknown[]; resumeToken: unknown }) => void
  onRestart?: (error: Error, stats: KafkaRunStats) => void
  /** a transient MongoDB error about to be retried; `what` is reopened ('the change stream', 'the snapshot', 'snapshot range 2 of 4') */
  onMongoRetry?: (error: Error, stats: KafkaRunStats, what: string) => void
  /** An AbortSignal (typed structurally: this file needs no DOM or Node types). */
  signal?: AbortSignalLike
}

export interface KafkaRun {
  /** resolves when stopped; rejects with the fatal error */
  done: Promise<void>
  /** finishes the open transaction, closes the change stream; resolves when done */
  stop(): Promise<void>
  stats: KafkaRunStats
}

export function changeStreamToKafka(options: ChangeStreamToKafkaOptions): KafkaRun
export function readCheckpoint(options: {
  brokers: string[] | string
  checkpointTopic: string
  id: string
  kafka?: Record<string, unknown>
}): Promise<null | { resumeToken: unknown; clusterTime?: { t: number; i: number }; events: number }>
export function transactionalIdOf(id: string): string
/**
 * Reads every partition of `topic` from `from` (default: the log start) up to its last stable
 * offset as it is when the read starts, with read_committed isolation: records of aborted
 * transactions and control records are left out, each transaction decided by its own COMMIT or
 * ABORT marker (not `@platformatic/kafka`'s read_committed filter, which can drop committed records:
 * docs/kafka.md "Consumers"). Calls `onRecord` for each committed record, in offset order;
 * returns the offset reached per partition (pass it as `from` to read on from there).
 * @param consumer a `@platformatic/kafka` Consumer
 */
export function readCommitted(
  consumer: unknown,
  topic: string,
  onRecord: (partition: number, offset: bigint, record: { key: Uint8Array | null; value: Uint8Array | null; headers: [Uint8Array, Uint8Array][] }) => void,
  from?: bigint[],
): Promise<bigint[]>
export class KafkaFencedError extends Error {
  code: 'ERR_BSON2JSON_KAFKA_FENCED'
}
/** The server no longer has the history at the checkpoint (MongoDB error 286); not retried. */
export class ChangeStreamHistoryLostError extends Error {
  code: 'ERR_BSON2JSON_HISTORY_LOST'
  /** the stream id */
  id: string
  /** cluster time of the checkpoint the run could not resume from */
  checkpointClusterTime: { t: number; i: number } | null
  /** the oldest entry of `local.oplog.rs`, or null where it cannot be read */
  oldestClusterTime: { t: number; i: number } | null
  cause: unknown
}
/** Kafka unreachable: at start within `connectTimeoutMS`, or for `retryTimeoutMS` once running. */
export class KafkaUnavailableError extends Error {
  code: 'ERR_BSON2JSON_KAFKA_UNAVAILABLE'
  /** authentication failed or the broker's certificate is not trusted: ended at once, not retried */
  refused: boolean
  /** the bootstrap brokers */
  brokers: string[]
  phase: 'start' | 'running'
  /** the most specific cause: `connect ECONNREFUSED 127.0.0.1:9092`, a Kafka error name, `no answer within N s` */
  reason: string
}
