// The ESM entry, `import { toJSON } from 'bson2json'`: index.js's exports under their names.
// Node's loader guesses a CommonJS module's export names, and so does Deno's inside node_modules,
// but not for a package linked from elsewhere (a local build: `npm install /path/to/clone`), so
// they are written out here (one module instance: this file re-exports the CommonJS one).
// __test__/repo/esm-entry.spec.ts holds this list equal to index.js's.
import { createRequire } from 'node:module'

// require(), not import: every runtime loads index.js as CommonJS then (Deno takes a .js file
// outside node_modules for an ES module).
const bson2json = createRequire(import.meta.url)('./index.js')

export const {
  toJSON,
  toJSONBuffer,
  toJSONList,
  toJSONArray,
  toNDJSON,
  cursorBatch,
  toJSONAsync,
  toJSONListAsync,
  toJSONArrayAsync,
  toNDJSONAsync,
  toRow,
  toRows,
  toRowsAsync,
  isTranscodeError,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_OUTPUT_BYTES,
  backend,
  createTranscodeStream,
  watch,
  ChangeStreamInvalidatedError,
  find,
  aggregate,
} = bson2json

export default bson2json
