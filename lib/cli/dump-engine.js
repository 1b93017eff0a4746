'use strict'

// Which engine runs a `dump`: the native pipeline (lib/native `dumpFile`: read, gunzip, transcode
// on N threads and write off the JS thread) or the transcode stream (lib/cli/dump-stream.js:
// everything else). The one place the choice is made; dump.js runs what it says.

const fs = require('fs')
const { isArchive } = require('./archive')

/** The first bytes of a regular file (up to 4), or null when it cannot be read. */
function fileHead(file) {
  const head = Buffer.alloc(4)
  try {
    const fd = fs.openSync(file, 'r')
    try {
      return head.subarray(0, fs.readSync(fd, head, 0, 4, 0))
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return null // the engine that runs reports the error
  }
}

const isGzip = (head) => head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b

/** Whether the first bytes of a file look like plain BSON: neither gzip's nor an archive's magic number. */
function isPlainBson(head) {
  return head !== null && head.length === 4 && !isGzip(head) && !isArchive(head)
}

/** Whether the first bytes of a file are plain BSON's or gzip's (an archive's go to the stream). */
function isBsonOrGzip(head) {
  return head !== null && head.length === 4 && !isArchive(head)
}

/** Whether the native pipeline can read descriptor `fd` (stdin): a file, a pipe or a socket. */
function nativeReadable(fd) {
  try {
    const st = fs.fstatSync(fd)
    return st.isFile() || st.isFIFO() || st.isSocket()
  } catch {
    return false
  }
}

/**
 * The engine of this dump: `'native'` for a regular file of plain or gzip BSON, or stdin from a
 * file, a pipe or a socket (a mongodump --archive found there is handed back to the stream), NDJSON
 * or one array, no --pretty, --skip-invalid, --nsInclude or projection, to an output the pipeline
 * can write itself (a file, a device, stdout to a pipe or a socket; a terminal stays on
 * process.stdout), in a build that has it; `'stream'` for everything else.
 * `BSON2JSON_DUMP=stream` forces the stream (the tests compare the two); `BSON2JSON_DUMP=native`
 * fails a dump that would take the stream for another reason than an archive (exit 2).
 * @param {any} opts the parsed flags
 * @param {{ file: string | null, head: Buffer | null, regular: boolean }} input
 * @param {import('./output').Output} output
 * @returns {{ engine: 'native' | 'stream', stdin: boolean }}
 */
function chooseEngine(opts, input, output) {
  const native = require('../native')
  const stdin = input.file === null && nativeReadable(0)
  const applies =
    native.DUMP_PIPELINE &&
    process.env.BSON2JSON_DUMP !== 'stream' &&
    opts.nsInclude.length === 0 &&
    !opts.pretty &&
    !opts.skipInvalid &&
    opts.projection === undefined &&
    opts.redact === undefined &&
    output.nativeWritable &&
    (stdin || (input.regular && isBsonOrGzip(input.head)))
  return { engine: applies ? 'native' : 'stream', stdin }
}

module.exports = { chooseEngine, fileHead, isPlainBson, isGzip }
