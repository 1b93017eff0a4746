'use strict'
// Test tooling only: `NODE_OPTIONS="--require ./scripts/kafka-client-override.cjs"` with
// B2J_KAFKA_CLIENT_DIR=DIR makes every require('@platformatic/kafka') of this process and its
// children load DIR/node_modules/@platformatic/kafka instead of the checkout's copy, so the
// Kafka suite runs against another major of the client (.ci/run: 2.x on Node 24) without
// touching package-lock.json or node_modules.
const Module = require('module')
const path = require('path')
const dir = process.env.B2J_KAFKA_CLIENT_DIR
if (dir) {
  const target = require.resolve('@platformatic/kafka', { paths: [path.resolve(dir)] })
  const resolve = Module._resolveFilename
  Module._resolveFilename = function (request, ...rest) {
    if (request === '@platformatic/kafka') return target
    return resolve.call(this, request, ...rest)
  }
}
