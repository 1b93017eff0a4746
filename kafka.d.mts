// Types of the ESM entry of `bson2json/kafka` (kafka.mjs): kafka.d.ts's declarations, and the
// default export (the CommonJS module object).
import kafka from './kafka.js'

export * from './kafka.js'
export default kafka
