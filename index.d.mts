// Types of the ESM entry (index.mjs): index.d.ts's declarations, and the default export
// (the CommonJS module object).
import bson2json from './index.js'

export * from './index.js'
export default bson2json
