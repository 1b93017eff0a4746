/**
 * bson2json: raw BSON bytes to JSON text in one native pass.
 *
 * - `compat` (default): byte-identical to `JSON.stringify(BSON.deserialize(bson))` with js-bson 7.
 * - `relaxed` / `canonical`: MongoDB Extended JSON v2, as specified.
 */

/** The JSON dialect to produce. */
export type Dialect = 'compat' | 'relaxed' | 'canonical'

/** Options accepted by every transcoding function. */
export interface TranscodeOptions {
  /** The JSON dialect. Default `'compat'`. */
  dialect?: Dialect
  /**
   * Invalid UTF-8 in string values: `'strict'` (default) throws `BSON_INVALID_UTF8`;
   * `'replace'` writes U+FFFD for each maximal invalid subpart, as `TextDecoder` does.
   */
  utf8?: 'strict' | 'replace'
  /**
   * Maximum nesting depth (the top-level document is depth 1). Deeper input throws
   * `BSON_TOO_DEEP`. Default 1000; MongoDB itself stores at most 100 levels.
   */
  maxDepth?: number
  /**
   * Maximum size of the JSON output in bytes; larger output throws `BSON_OUTPUT_TOO_LARGE`
   * instead of exhausting memory. Default 256 MiB.
   */
  maxOutputBytes?: number
}

/** The stable codes of {@link TranscodeError}. */
export type TranscodeErrorCode =
  | 'BSON_TRUNCATED'
  | 'BSON_BAD_LENGTH'
  | 'BSON_BAD_TERMINATOR'
  | 'BSON_INVALID_UTF8'
  | 'BSON_UNKNOWN_TYPE'
  | 'BSON_BAD_BOOLEAN'
  | 'BSON_BAD_BINARY'
  | 'BSON_BAD_CODE_W_SCOPE'
  | 'BSON_TOO_DEEP'
  | 'BSON_OUTPUT_TOO_LARGE'
  | 'BSON_INVALID_REGEX'

/** The error thrown for malformed or over-limit input. `name` is `'TranscodeError'`. */
export interface TranscodeError extends Error {
  /** Machine-readable reason; stable across releases. */
  code: TranscodeErrorCode
  /** Byte offset in the offending document where decoding failed. */
  offset: number
  /** For batch functions: the index of the offending document. */
  index?: number
}

/**
 * Transcodes one BSON document to a JSON string.
 * @param bson one whole BSON document: a `Buffer` or any `Uint8Array` view
 * @throws {TranscodeError} for malformed input or exceeded limits
 * @example
 * ```js
 * const { toJSON } = require('bson2json')
 * toJSON(BSON.serialize({ a: 1 })) // '{"a":1}'
 * ```
 */
export declare function toJSON(bson: Uint8Array, options?: TranscodeOptions): string

/**
 * Transcodes one BSON document to its UTF-8 JSON bytes.
 * For small documents {@link toJSON} is faster: creating a Buffer costs more than a string.
 * @throws {TranscodeError}
 */
export declare function toJSONBuffer(bson: Uint8Array, options?: TranscodeOptions): Uint8Array

/** True if `e` is an error bson2json threw for bad input (works across realms). */
export declare function isTranscodeError(e: unknown): e is TranscodeError

/** Default of {@link TranscodeOptions.maxDepth}. */
export declare const DEFAULT_MAX_DEPTH: number
/** Default of {@link TranscodeOptions.maxOutputBytes}. */
export declare const DEFAULT_MAX_OUTPUT_BYTES: number
/** Which implementation is in use: the native addon, or the JavaScript fallback. */
export declare const backend: 'native' | 'fallback'
