'use strict'

/**
 * The one Readable over a RawCursor (lib/mongo/raw-cursor.js), for `find()`/`aggregate()`'s byte
 * stream and `watch()`'s object stream.
 *
 * The Readable's own buffer is the read-ahead: unless the caller chose `prefetch`, the cursor
 * fetches a batch only when the Readable asks for data, and stops while the Readable is full
 * (`push` returned false, or its length reached `highWaterMark`: with `highWaterMark` 0, as
 * `pipe()` uses, one batch per `read()` call and none ahead). An error from the cursor destroys
 * the Readable with it; destroying the Readable closes the cursor (killCursors) before the
 * `close` event.
 */

const { Readable } = require('node:stream')

/**
 * @param {import('./raw-cursor').RawCursor} cursor
 * @param {{ objectMode?: boolean, highWaterMark?: number,
 *   next: () => Promise<any[] | null>, end?: () => any[] }} o
 *   `next`: the chunks of the next batch (or event), null at the end; `end`: the chunks pushed
 *   before the end of the stream
 * @returns {Readable}
 */
function cursorReadable(cursor, o) {
  let reading = false
  cursor._readableConsumer()
  return new Readable({
    objectMode: o.objectMode === true,
    highWaterMark: o.highWaterMark,
    read() {
      cursor._consumerFull(false)
      if (reading) return
      reading = true
      const step = () => {
        o.next().then(
          (chunks) => {
            if (chunks === null) {
              reading = false
              if (o.end !== undefined) for (const c of o.end()) this.push(c)
              this.push(null)
              return
            }
            let more = true
            for (const c of chunks) more = this.push(c)
            if (more && this.readableLength < this.readableHighWaterMark) step()
            else {
              reading = false
              cursor._consumerFull(true)
            }
          },
          (e) => {
            reading = false
            this.destroy(e)
          },
        )
      }
      step()
    },
    destroy(err, cb) {
      cursor.close().then(
        () => cb(err),
        () => cb(err),
      )
    },
  })
}

module.exports = { cursorReadable }
