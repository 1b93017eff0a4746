'use strict'

/**
 * bson2json: raw BSON bytes to JSON text in one native pass.
 *
 * The public entry point. Each product lives in its folder under lib/ (ARCHITECTURE.md has the
 * map): transcoding calls and streams in lib/transcode, MongoDB cursors and change streams in
 * lib/mongo; the native addon or its WASI build is reached only through lib/native.
 */

const api = require('./lib/transcode/api')
const rows = require('./lib/transcode/rows')
const { isTranscodeError } = require('./lib/errors')
const native = require('./lib/native')
const { createTranscodeStream } = require('./lib/transcode/stream')
const { find, aggregate } = require('./lib/mongo/cursor')
const { watch, ChangeStreamInvalidatedError } = require('./lib/mongo/change-stream')

module.exports.toJSON = api.toJSON
module.exports.toJSONBuffer = api.toJSONBuffer
module.exports.toJSONList = api.toJSONList
module.exports.toJSONArray = api.toJSONArray
module.exports.toNDJSON = api.toNDJSON
module.exports.cursorBatch = api.cursorBatch
module.exports.toJSONAsync = api.toJSONAsync
module.exports.toJSONListAsync = api.toJSONListAsync
module.exports.toJSONArrayAsync = api.toJSONArrayAsync
module.exports.toNDJSONAsync = api.toNDJSONAsync
module.exports.toRow = rows.toRow
module.exports.toRows = rows.toRows
module.exports.toRowsAsync = rows.toRowsAsync
module.exports.isTranscodeError = isTranscodeError
module.exports.DEFAULT_MAX_DEPTH = native.DEFAULT_MAX_DEPTH
module.exports.DEFAULT_MAX_OUTPUT_BYTES = native.DEFAULT_MAX_OUTPUT_BYTES
module.exports.backend = native.name
module.exports.createTranscodeStream = createTranscodeStream
module.exports.watch = watch
module.exports.ChangeStreamInvalidatedError = ChangeStreamInvalidatedError
module.exports.find = find
module.exports.aggregate = aggregate
