'use strict'

/**
 * The numbers both sides of the binding agree on and that are not in its exported enums: the
 * defaults the addon applies when an argument is left out, and how `packed` carries the flags
 * and `maxDepth` in one double for the per-document calls.
 */

/** Default maximum nesting depth (docs/api.md, Options). */
const DEFAULT_MAX_DEPTH = 1000
/** Default maximum output size in bytes: 256 MiB. */
const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024
/** Bits of `packed` below `maxDepth` (`packed = flags + maxDepth * 2 ** FLAG_BITS`). */
const FLAG_BITS = 8

module.exports = { DEFAULT_MAX_DEPTH, DEFAULT_MAX_OUTPUT_BYTES, FLAG_BITS }
