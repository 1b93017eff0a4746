'use strict'

// `require('bson2json/kafka')`: change streams into Kafka, exactly once (lib/kafka/sink.js, docs/kafka.md).
// Needs the optional peer dependency `@platformatic/kafka`.
module.exports = require('./lib/kafka/sink')
