'use strict'

/**
 * MongoDB wire-protocol framing: splitting a TCP byte stream into messages,
 * decoding OP_MSG / OP_QUERY / OP_COMPRESSED requests and encoding OP_MSG /
 * OP_REPLY responses.
 *
 * Spec: https://github.com/mongodb/specifications/blob/master/source/message/OP_MSG.md
 */

const zlib = require('node:zlib')
const { BSON } = require('bson')

const OP_REPLY = 1
const OP_QUERY = 2004
const OP_COMPRESSED = 2012
const OP_MSG = 2013

const FLAG_CHECKSUM_PRESENT = 1 << 0
const FLAG_MORE_TO_COME = 1 << 1
const FLAG_EXHAUST_ALLOWED = 1 << 16

const HEADER_SIZE = 16

/** Compressor ids as used by OP_COMPRESSED. */
const COMPRESSOR_IDS = Object.freeze({ noop: 0, snappy: 1, zlib: 2, zstd: 3 })
/** Compressors this server can actually decode and encode. */
const SUPPORTED_COMPRESSORS = Object.freeze(['zlib', 'noop'])

/**
 * BSON options used to decode every incoming document: keep Int32 / Double /
 * Long wrappers so that documents round-trip with their exact BSON types.
 */
const DECODE_OPTIONS = Object.freeze({ promoteValues: false, promoteLongs: false, promoteBuffers: false })

let nextRequestId = 1

/** @returns {number} a fresh requestID for an outgoing message */
function newRequestId() {
  nextRequestId = (nextRequestId + 1) & 0x7fffffff
  return nextRequestId
}

/**
 * Incrementally split a byte stream into whole wire messages.
 */
class MessageSplitter {
  constructor() {
    /** @type {Buffer[]} */
    this.chunks = []
    this.buffered = 0
  }

  /**
   * Feed bytes; returns every complete message now available.
   * @param {Buffer} chunk
   * @param {number} maxMessageSize reject frames larger than this
   * @returns {Buffer[]}
   */
  push(chunk, maxMessageSize) {
    this.chunks.push(chunk)
    this.buffered += chunk.length
    const out = []
    for (;;) {
      if (this.buffered < 4) break
      // Peek at the length without concatenating (large messages arrive in many chunks).
      const head = this.chunks[0].length >= 4 ? this.chunks[0] : this.flatten()
      const length = head.readInt32LE(0)
      if (length < HEADER_SIZE || length > maxMessageSize) {
        throw new Error(`invalid message length ${length}`)
      }
      if (this.buffered < length) break
      const all = this.flatten()
      out.push(all.subarray(0, length))
      const rest = all.subarray(length)
      this.chunks = rest.length ? [rest] : []
      this.buffered = rest.length
    }
    return out
  }

  /** @returns {Buffer} all buffered bytes as one buffer */
  flatten() {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks)]
    return this.chunks[0]
  }
}

/**
 * @typedef {object} DecodedRequest
 * @property {number} requestId
 * @property {number} opCode the original opcode (OP_MSG or OP_QUERY), even when compressed
 * @property {string|null} compressor compressor name if the request came in OP_COMPRESSED
 * @property {number} flags OP_MSG flagBits (0 for OP_QUERY)
 * @property {boolean} moreToCome client does not expect a reply
 * @property {boolean} exhaustAllowed client accepts an exhaust (streamed) reply
 * @property {Record<string, any>} command the command document (kind-1 sequences merged in)
 * @property {string} db target database ($db or the OP_QUERY collection prefix)
 */

/**
 * Decode a complete wire message into a command request.
 * @param {Buffer} message a whole frame including the 16-byte header
 * @returns {DecodedRequest}
 */
function decodeMessage(message) {
  const requestId = message.readInt32LE(4)
  let opCode = message.readInt32LE(12)
  let body = message.subarray(HEADER_SIZE)
  let compressor = null
  if (opCode === OP_COMPRESSED) {
    opCode = body.readInt32LE(0)
    const uncompressedSize = body.readInt32LE(4)
    const compressorId = body.readUInt8(8)
    body = decompress(compressorId, body.subarray(9))
    if (body.length !== uncompressedSize) {
      throw new Error(`OP_COMPRESSED size mismatch: ${body.length} != ${uncompressedSize}`)
    }
    compressor = compressorId === COMPRESSOR_IDS.zlib ? 'zlib' : 'noop'
  }
  if (opCode === OP_MSG) return { requestId, compressor, ...decodeOpMsgBody(body) }
  if (opCode === OP_QUERY) return { requestId, compressor, ...decodeOpQueryBody(body) }
  throw new Error(`unsupported opCode ${opCode}`)
}

/**
 * @param {number} compressorId
 * @param {Buffer} payload
 * @returns {Buffer}
 */
function decompress(compressorId, payload) {
  if (compressorId === COMPRESSOR_IDS.noop) return payload
  if (compressorId === COMPRESSOR_IDS.zlib) return zlib.inflateSync(payload)
  throw new Error(`unsupported compressor id ${compressorId}`)
}

/**
 * @param {Buffer} body OP_MSG body after the header
 */
function decodeOpMsgBody(body) {
  const flags = body.readUInt32LE(0)
  const end = flags & FLAG_CHECKSUM_PRESENT ? body.length - 4 : body.length
  let offset = 4
  let command = null
  /** @type {Record<string, any[]>} */
  const sequences = {}
  while (offset < end) {
    const kind = body[offset++]
    if (kind === 0) {
      const size = body.readInt32LE(offset)
      command = BSON.deserialize(body.subarray(offset, offset + size), DECODE_OPTIONS)
      offset += size
    } else if (kind === 1) {
      const size = body.readInt32LE(offset)
      const sectionEnd = offset + size
      let cursor = offset + 4
      const nul = body.indexOf(0, cursor)
      const identifier = body.toString('utf8', cursor, nul)
      cursor = nul + 1
      const docs = sequences[identifier] ?? (sequences[identifier] = [])
      while (cursor < sectionEnd) {
        const docSize = body.readInt32LE(cursor)
        docs.push(BSON.deserialize(body.subarray(cursor, cursor + docSize), DECODE_OPTIONS))
        cursor += docSize
      }
      offset = sectionEnd
    } else {
      throw new Error(`unknown OP_MSG section kind ${kind}`)
    }
  }
  if (!command) throw new Error('OP_MSG without a kind 0 section')
  for (const [identifier, docs] of Object.entries(sequences)) {
    command[identifier] = [...(command[identifier] ?? []), ...docs]
  }
  return {
    opCode: OP_MSG,
    flags,
    moreToCome: (flags & FLAG_MORE_TO_COME) !== 0,
    exhaustAllowed: (flags & FLAG_EXHAUST_ALLOWED) !== 0,
    command,
    db: typeof command.$db === 'string' ? command.$db : 'admin',
  }
}

/**
 * @param {Buffer} body OP_QUERY body after the header
 */
function decodeOpQueryBody(body) {
  const nul = body.indexOf(0, 4)
  const fullCollectionName = body.toString('utf8', 4, nul)
  const offset = nul + 1 + 8 // numberToSkip, numberToReturn
  const size = body.readInt32LE(offset)
  let command = BSON.deserialize(body.subarray(offset, offset + size), DECODE_OPTIONS)
  // Legacy wrapping: {$query: {...}, $readPreference: ...}
  if (command.$query && typeof command.$query === 'object') command = command.$query
  return {
    opCode: OP_QUERY,
    flags: 0,
    moreToCome: false,
    exhaustAllowed: false,
    command,
    db: fullCollectionName.split('.')[0],
  }
}

/**
 * Encode a reply to a request, using OP_MSG or OP_REPLY to match the request
 * and OP_COMPRESSED when the request was compressed.
 * @param {object} options
 * @param {number} options.responseTo requestID being answered
 * @param {number} options.opCode the request's (uncompressed) opcode
 * @param {Record<string, any>} options.document reply body
 * @param {string|null} [options.compressor] compress with this compressor
 * @param {boolean} [options.moreToCome] set the OP_MSG moreToCome flag (exhaust)
 * @param {number} [options.requestId] requestID to use (default: a fresh one)
 * @returns {Buffer}
 */
function encodeReply({ responseTo, opCode, document, compressor = null, moreToCome = false, requestId = newRequestId() }) {
  const doc = BSON.serialize(document, { ignoreUndefined: true })
  let body
  if (opCode === OP_QUERY) {
    body = Buffer.alloc(20)
    body.writeInt32LE(8, 0) // responseFlags: AwaitCapable
    // cursorId 0 (8 bytes), startingFrom 0
    body.writeInt32LE(1, 16) // numberReturned
    body = Buffer.concat([body, doc])
  } else {
    const prefix = Buffer.alloc(5)
    prefix.writeUInt32LE(moreToCome ? FLAG_MORE_TO_COME : 0, 0)
    prefix[4] = 0 // section kind 0
    body = Buffer.concat([prefix, doc])
  }
  const replyOpCode = opCode === OP_QUERY ? OP_REPLY : OP_MSG
  if (compressor && compressor !== 'none') {
    const compressed = compressor === 'zlib' ? zlib.deflateSync(body) : body
    const details = Buffer.alloc(9)
    details.writeInt32LE(replyOpCode, 0)
    details.writeInt32LE(body.length, 4)
    details.writeUInt8(COMPRESSOR_IDS[compressor] ?? 0, 8)
    return frame(requestId, responseTo, OP_COMPRESSED, Buffer.concat([details, compressed]))
  }
  return frame(requestId, responseTo, replyOpCode, body)
}

/**
 * @param {number} requestId
 * @param {number} responseTo
 * @param {number} opCode
 * @param {Buffer} body
 * @returns {Buffer}
 */
function frame(requestId, responseTo, opCode, body) {
  const header = Buffer.alloc(HEADER_SIZE)
  header.writeInt32LE(HEADER_SIZE + body.length, 0)
  header.writeInt32LE(requestId, 4)
  header.writeInt32LE(responseTo, 8)
  header.writeInt32LE(opCode, 12)
  return Buffer.concat([header, body])
}

/**
 * Encode an OP_MSG *request* (used by tests and tooling that talk to the server
 * without the driver).
 * @param {Record<string, any>} command must include `$db`
 * @param {{requestId?: number, flags?: number, sequences?: Record<string, any[]>}} [options]
 * @returns {Buffer}
 */
function encodeOpMsgRequest(command, { requestId = newRequestId(), flags = 0, sequences = {} } = {}) {
  const parts = [Buffer.alloc(4), Buffer.from([0]), BSON.serialize(command)]
  parts[0].writeUInt32LE(flags, 0)
  for (const [identifier, docs] of Object.entries(sequences)) {
    const payload = Buffer.concat([Buffer.from(identifier + '\0', 'utf8'), ...docs.map((d) => BSON.serialize(d))])
    const size = Buffer.alloc(4)
    size.writeInt32LE(payload.length + 4, 0)
    parts.push(Buffer.from([1]), size, payload)
  }
  return frame(requestId, 0, OP_MSG, Buffer.concat(parts))
}

module.exports = {
  OP_REPLY,
  OP_QUERY,
  OP_COMPRESSED,
  OP_MSG,
  FLAG_MORE_TO_COME,
  FLAG_EXHAUST_ALLOWED,
  COMPRESSOR_IDS,
  SUPPORTED_COMPRESSORS,
  DECODE_OPTIONS,
  MessageSplitter,
  decodeMessage,
  encodeReply,
  encodeOpMsgRequest,
  newRequestId,
}
