'use strict'

/**
 * The TCP server: accepts connections, frames messages, runs commands,
 * applies injected faults, streams exhaust `hello` replies to the driver's
 * monitor, and exposes introspection for tests.
 */

const net = require('node:net')
const { ObjectId } = require('bson')
const wire = require('./wire')
const { Oplog, decodeResumeToken } = require('./oplog')
const { Store } = require('./store')
const { CursorRegistry } = require('./cursors')
const { FaultInjector } = require('./faults')
const { runCommand, helloReply, isChangeStreamCommand, clusterTimeFields, MAX_MESSAGE_SIZE_BYTES } = require('./commands')
const { DEFAULT_SPLIT_THRESHOLD_BYTES } = require('./change-streams')
const { toNumber } = require('./documents')

const HELLO_COMMANDS = new Set(['hello', 'isMaster', 'ismaster'])

/**
 * @typedef {object} TestServerOptions
 * @property {number} [port] TCP port (default 0 = any free port)
 * @property {string} [host] bind address (default '127.0.0.1')
 * @property {string} [replicaSet] replica set name (default 'rs0')
 * @property {boolean} [directConnection] make `server.uri` use `directConnection=true` instead of `replicaSet=`
 * @property {string[]} [compressors] compressors offered in hello (default ['zlib'])
 * @property {number} [splitThresholdBytes] change event size limit (default 16 MiB)
 * @property {number} [faultRate] random fault probability 0..1 (default 0)
 * @property {number} [seed] PRNG seed for random faults (default 1)
 * @property {string[]} [randomFaultCommands] commands eligible for random faults (default ['getMore'])
 * @property {string[]} [randomFaultKinds] kinds chosen by random faults
 * @property {boolean} [randomFaultChangeStreamOnly] random faults only hit change streams (default true)
 * @property {number} [maxOplogEvents] keep at most this many oplog entries (default unlimited)
 * @property {number} [cursorIdBits] cursor ids are random below 2^cursorIdBits, 8..63 (default 63, as a real server)
 * @property {string} [version] buildInfo version (default '8.0.0')
 * @property {number} [maxWireVersion] (default 21)
 * @property {number} [maxCommandLog] command log entries kept (default 10000)
 * @property {(line: string) => void} [log] diagnostic logger (default: silent)
 * @property {boolean} [logCommands] also log every command (except hello) to `log`
 */

/**
 * @typedef {object} CommandLogEntry
 * @property {string} name
 * @property {string} db
 * @property {number} connectionId
 * @property {number} requestId
 * @property {Date} at
 * @property {string} [fault] fault kind applied
 * @property {number} [ok] reply ok value (absent if no reply was sent)
 * @property {number} [code] error code, when ok is 0
 * @property {Record<string, any>} command the decoded command document
 */

class TestServer {
  /** @param {TestServerOptions} [options] */
  constructor(options = {}) {
    this.options = options
    this.host = options.host ?? '127.0.0.1'
    this.oplog = new Oplog({ maxEvents: options.maxOplogEvents ?? Infinity })
    this.store = new Store(this.oplog)
    this.cursors = new CursorRegistry({ cursorIdBits: options.cursorIdBits })
    this.faults = new FaultInjector({
      faultRate: options.faultRate ?? 0,
      seed: options.seed ?? 1,
      randomFaultCommands: options.randomFaultCommands,
      randomFaultKinds: options.randomFaultKinds,
      randomFaultChangeStreamOnly: options.randomFaultChangeStreamOnly,
    })
    /** @type {CommandLogEntry[]} */
    this.commandLog = []
    this.maxCommandLog = options.maxCommandLog ?? 10000
    /** @type {Map<number, any>} */
    this.connectionsById = new Map()
    this.nextConnectionId = 1
    this.log = options.log ?? (() => {})
    this.config = {
      setName: options.replicaSet ?? 'rs0',
      host: '',
      processId: new ObjectId(),
      compressors: options.compressors ?? ['zlib'],
      splitThresholdBytes: options.splitThresholdBytes ?? DEFAULT_SPLIT_THRESHOLD_BYTES,
      version: options.version ?? '8.0.0',
      maxWireVersion: options.maxWireVersion ?? 21,
      sessions: options.sessions ?? true,
    }
    this.state = { store: this.store, oplog: this.oplog, cursors: this.cursors, config: this.config }
    this.closing = false
    this.netServer = net.createServer((socket) => this.onConnection(socket))
  }

  /** Start listening. @returns {Promise<this>} */
  async listen() {
    await new Promise((resolve, reject) => {
      this.netServer.once('error', reject)
      this.netServer.listen(this.options.port ?? 0, this.host, () => {
        this.netServer.off('error', reject)
        resolve()
      })
    })
    this.port = this.netServer.address().port
    this.config.host = `${this.host}:${this.port}`
    this.log(`listening on ${this.config.host} (replica set ${this.config.setName})`)
    return this
  }

  /** @returns {string} connection string: replicaSet form, or directConnection if the option was set */
  get uri() {
    return this.options.directConnection ? this.directUri : this.replicaSetUri
  }

  /** @returns {string} `mongodb://host:port/?replicaSet=<name>` */
  get replicaSetUri() {
    return `mongodb://${this.config.host}/?replicaSet=${encodeURIComponent(this.config.setName)}`
  }

  /** @returns {string} `mongodb://host:port/?directConnection=true` */
  get directUri() {
    return `mongodb://${this.config.host}/?directConnection=true`
  }

  /** @returns {number} current change-event size limit in bytes */
  get splitThresholdBytes() {
    return this.config.splitThresholdBytes
  }

  set splitThresholdBytes(value) {
    this.config.splitThresholdBytes = value
  }

  /**
   * Queue a fault (see README for kinds).
   * @param {import('./faults').FaultSpec} spec
   */
  injectFault(spec) {
    return this.faults.inject(spec)
  }

  /** Remove queued faults and disable random faults. */
  clearFaults() {
    this.faults.clear()
  }

  /**
   * Enable seeded random faults.
   * @param {number} rate 0..1
   * @param {number} [seed]
   */
  setFaultRate(rate, seed) {
    this.faults.setFaultRate(rate, seed)
  }

  /** @returns {ReturnType<CursorRegistry['list']>} open server-side cursors */
  openCursors() {
    return this.cursors.list()
  }

  /** @returns {{commands: number, killed: string[], notFound: string[]}} killCursors statistics */
  killCursorsStats() {
    return { commands: this.cursors.killCursorsCommands, killed: [...this.cursors.killedCursorIds], notFound: [...this.cursors.notFoundCursorIds] }
  }

  /**
   * Names of the commands received, in order.
   * @param {{includeHello?: boolean}} [options] include hello/isMaster (default false)
   * @returns {string[]}
   */
  commandNames({ includeHello = false } = {}) {
    return this.commandLog.filter((e) => includeHello || !HELLO_COMMANDS.has(e.name)).map((e) => e.name)
  }

  /** Forget the command log. */
  clearCommandLog() {
    this.commandLog = []
  }

  /**
   * Information about client connections.
   * @param {{includeClosed?: boolean}} [options]
   */
  connections({ includeClosed = false } = {}) {
    return [...this.connectionsById.values()]
      .filter((c) => includeClosed || !c.closedAt)
      .map(({ id, remoteAddress, remotePort, openedAt, closedAt, client, compressor, commandCount, isMonitor }) => ({ id, remoteAddress, remotePort, openedAt, closedAt, client, compressor, commandCount, isMonitor }))
  }

  /** Destroy every client connection (simulates a network blip). */
  dropConnections() {
    for (const conn of this.connectionsById.values()) if (!conn.closedAt) conn.socket.destroy()
  }

  /**
   * Forget the oldest oplog entries so resuming from them fails with
   * ChangeStreamHistoryLost (286).
   * @param {number} [count] default: all
   */
  truncateOplog(count) {
    this.oplog.truncate(count)
  }

  /**
   * Decode a resume token issued by this server.
   * @param {{_data: string}} token
   */
  decodeResumeToken(token) {
    return decodeResumeToken(token)
  }

  /** Stop listening, drop connections and cursors. @returns {Promise<void>} */
  async close() {
    if (this.closing) return
    this.closing = true
    const closed = new Promise((resolve) => this.netServer.close(() => resolve()))
    this.dropConnections()
    this.cursors.closeAll()
    await closed
    this.log('closed')
  }

  /** @param {net.Socket} socket */
  onConnection(socket) {
    if (this.closing) {
      socket.destroy()
      return
    }
    socket.setNoDelay(true)
    const abort = new AbortController()
    const conn = {
      id: this.nextConnectionId++,
      socket,
      remoteAddress: socket.remoteAddress,
      remotePort: socket.remotePort,
      openedAt: new Date(),
      closedAt: null,
      client: undefined,
      compressor: null,
      commandCount: 0,
      isMonitor: false,
      abort,
      signal: abort.signal,
      queue: Promise.resolve(),
      timers: new Set(),
    }
    this.connectionsById.set(conn.id, conn)
    this.log(`connection ${conn.id} opened from ${conn.remoteAddress}:${conn.remotePort}`)
    const splitter = new wire.MessageSplitter()
    socket.on('data', (chunk) => {
      let messages
      try {
        messages = splitter.push(chunk, MAX_MESSAGE_SIZE_BYTES)
      } catch (error) {
        this.log(`connection ${conn.id}: ${error.message}; closing`)
        socket.destroy()
        return
      }
      for (const message of messages) {
        conn.queue = conn.queue
          .then(() => this.onMessage(conn, message))
          .catch((error) => {
            this.log(`connection ${conn.id}: ${error && error.stack}; closing`)
            socket.destroy()
          })
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      conn.closedAt = new Date()
      if (!this.closing) this.log(`connection ${conn.id} closed`)
      abort.abort()
      for (const timer of conn.timers) clearTimeout(timer)
      conn.timers.clear()
    })
  }

  /**
   * @param {any} conn
   * @param {Buffer} message
   */
  async onMessage(conn, message) {
    if (conn.closedAt) return
    let request
    try {
      request = wire.decodeMessage(message)
    } catch (error) {
      this.log(`connection ${conn.id}: undecodable message (${error.message}); closing`)
      conn.socket.destroy()
      return
    }
    const { command } = request
    const name = Object.keys(command)[0] ?? ''
    conn.commandCount++
    const entry = { name, db: request.db, connectionId: conn.id, requestId: request.requestId, at: new Date(), command }
    this.commandLog.push(entry)
    if (this.commandLog.length > this.maxCommandLog) this.commandLog.splice(0, this.commandLog.length - this.maxCommandLog)

    if (HELLO_COMMANDS.has(name)) return this.onHello(conn, request, entry)
    if (this.options.logCommands) this.log(`connection ${conn.id}: ${name} on ${request.db}`)

    const db = request.db
    const ns = typeof command[name] === 'string' ? `${db}.${command[name]}` : typeof command.collection === 'string' ? `${db}.${command.collection}` : `${db}.$cmd`
    const fault = this.faults.take({ command: name, isChangeStream: isChangeStreamCommand(this.state, name, command), ns })
    if (fault) {
      entry.fault = fault.kind
      this.log(`connection ${conn.id}: injecting ${fault.kind} into ${name}`)
      if (fault.delayMs) await this.sleep(conn, fault.delayMs)
      if (fault.kind === 'closeSocket') {
        conn.socket.destroy()
        return
      }
      if (fault.kind === 'silence') return // the connection stays open; nothing is ever sent
      if (fault.kind === 'reply') {
        this.send(conn, request, { ...fault.reply })
        return
      }
    }
    // Run without blocking the connection queue on long change-stream waits is unnecessary:
    // drivers never pipeline commands on one connection.
    const reply = await runCommand(command, { state: this.state, conn, db, name, fault })
    entry.ok = reply.ok
    if (reply.ok === 0) entry.code = reply.code
    if (request.moreToCome) return
    if (fault && (fault.kind === 'drip' || fault.kind === 'lengthLie')) {
      const buffer = wire.encodeReply({ responseTo: request.requestId, opCode: request.opCode, document: reply, compressor: request.compressor })
      if (fault.kind === 'lengthLie') {
        buffer.writeInt32LE(fault.length ?? 0, 0)
        this.write(conn, buffer)
      } else this.drip(conn, buffer, fault.dripMs ?? 50)
      return
    }
    this.send(conn, request, reply)
  }

  /**
   * Writes `buffer` one byte every `ms` milliseconds (a server that drip-feeds its reply), until
   * the connection closes.
   * @param {any} conn
   * @param {Buffer} buffer
   * @param {number} ms
   */
  drip(conn, buffer, ms) {
    let at = 0
    const next = () => {
      if (conn.closedAt || this.closing || at >= buffer.length) return
      this.write(conn, buffer.subarray(at, at + 1))
      at++
      this.later(conn, ms, next)
    }
    next()
  }

  /**
   * Calls `f` in `ms` milliseconds, unless the connection closes first (its timers are cleared).
   * @param {any} conn
   * @param {number} ms
   * @param {() => void} f
   */
  later(conn, ms, f) {
    const timer = setTimeout(() => {
      conn.timers.delete(timer)
      f()
    }, ms)
    conn.timers.add(timer)
  }

  /**
   * hello / isMaster, including the awaitable (streaming) form used by the
   * driver's monitor: wait maxAwaitTimeMS, then reply; with exhaustAllowed keep
   * sending a reply every maxAwaitTimeMS with moreToCome set.
   * @param {any} conn
   * @param {wire.DecodedRequest} request
   * @param {CommandLogEntry} entry
   */
  async onHello(conn, request, entry) {
    const { command } = request
    if (Array.isArray(command.compression) && conn.compressor === null && !command.topologyVersion) {
      const offered = command.compression.filter((c) => this.config.compressors.includes(c) && wire.SUPPORTED_COMPRESSORS.includes(c))
      conn.compressor = offered[0] ?? null
    }
    if (command.client) conn.client = command.client
    const build = () => ({ ...helloReply(this.state, command, conn), ok: 1, ...clusterTimeFields(this.state) })
    entry.ok = 1
    const awaitable = command.topologyVersion != null && command.maxAwaitTimeMS != null
    if (!awaitable) {
      this.send(conn, request, build())
      return
    }
    conn.isMonitor = true
    const interval = Math.max(0, toNumber(command.maxAwaitTimeMS))
    await this.sleep(conn, interval)
    if (!request.exhaustAllowed) {
      this.send(conn, request, build())
      return
    }
    // Exhaust: each reply answers the previous reply's requestId.
    let responseTo = request.requestId
    const stream = () => {
      if (conn.closedAt || this.closing) return
      const requestId = wire.newRequestId()
      this.write(conn, wire.encodeReply({ responseTo, opCode: request.opCode, document: build(), compressor: request.compressor, moreToCome: true, requestId }))
      responseTo = requestId
      this.later(conn, interval, stream)
    }
    stream()
  }

  /**
   * Sleep, but wake early if the connection closes.
   * @param {any} conn
   * @param {number} ms
   */
  sleep(conn, ms) {
    return new Promise((resolve) => {
      if (conn.closedAt) return resolve()
      const done = () => {
        clearTimeout(timer)
        conn.timers.delete(timer)
        conn.signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      conn.timers.add(timer)
      conn.signal.addEventListener('abort', done)
    })
  }

  /**
   * @param {any} conn
   * @param {wire.DecodedRequest} request
   * @param {Record<string, any>} document
   */
  send(conn, request, document) {
    this.write(conn, wire.encodeReply({ responseTo: request.requestId, opCode: request.opCode, document, compressor: request.compressor }))
  }

  /** @param {any} conn @param {Buffer} buffer */
  write(conn, buffer) {
    if (!conn.closedAt && !conn.socket.destroyed) conn.socket.write(buffer)
  }
}

/**
 * Start a test server.
 * @param {TestServerOptions} [options]
 * @returns {Promise<TestServer>} a listening server; call `close()` when done
 */
async function startTestServer(options = {}) {
  return new TestServer(options).listen()
}

module.exports = { TestServer, startTestServer }
