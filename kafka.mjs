// The ESM entry of `bson2json/kafka`: kafka.js's exports under their names (see index.mjs).
// __test__/repo/esm-entry.spec.ts holds this list equal to kafka.js's.
import { createRequire } from 'node:module'

// require(), not import: every runtime loads kafka.js as CommonJS then (see index.mjs).
const kafka = createRequire(import.meta.url)('./kafka.js')

export const {
  changeStreamToKafka,
  readCheckpoint,
  readCommitted,
  transactionalIdOf,
  KafkaFencedError,
  KafkaUnavailableError,
  ChangeStreamHistoryLostError,
  kafkaCause,
  tokenClusterTime,
} = kafka

export default kafka
