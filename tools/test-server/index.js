'use strict'

/**
 * MongoDB wire-protocol test server (a test fixture, not a database).
 * @module test-server
 */

const { TestServer, startTestServer } = require('./server')
const { FAULT_KINDS } = require('./faults')
const { decodeResumeToken, encodeResumeToken } = require('./oplog')
const { DEFAULT_SPLIT_THRESHOLD_BYTES } = require('./change-streams')

module.exports = { startTestServer, TestServer, FAULT_KINDS, decodeResumeToken, encodeResumeToken, DEFAULT_SPLIT_THRESHOLD_BYTES }
