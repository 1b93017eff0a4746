/**
 * lib/kafka/stream-copy.js without a broker or a server: the pipelined loop against a fake
 * change stream and a fake transaction that records every Kafka write with its time. What it
 * must hold: one Kafka write at a time (the client runs an idempotent producer's requests one
 * after the other, and a transaction's sequence numbers assume it), the next batch's records
 * written while the previous batch's send or commit is in flight, the checkpoint in the same send
 * as the transaction's last batch, a failed write ending the run while the source is quiet, and
 * no write still running when the run returns (the cycle aborts the transaction next).
 */
import { describe, expect, it } from 'vitest'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { StreamCopy } = require('../../lib/kafka/stream-copy')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { SourceError } = require('../../lib/kafka/errors')

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Log = { at: number; what: string; n?: number }

/** A change stream whose batches come from `script` (an array of event counts, or 'hang'). */
function fakeStream(script: (number | 'hang' | 'fail')[], log: Log[], gapMS = 0) {
  let k = 0
  return {
    batches() {
      return {
        [Symbol.asyncIterator]() {
          return {
            async next() {
              if (gapMS > 0) await sleep(gapMS)
              if (k >= script.length) return { done: true }
              const s = script[k++]
              if (s === 'hang') return new Promise(() => {})
              if (s === 'fail') throw Object.assign(new Error('connection closed'), { name: 'MongoNetworkError' })
              const events = Array.from({ length: s }, (_, i) => ({ k, i, clusterTime: { t: 1, i: k } }))
              log.push({ at: performance.now(), what: 'batch', n: k })
              return { done: false, value: { events, resumeToken: { _data: `t${k}` } } }
            },
          }
        },
      }
    },
  }
}

/** A transaction whose sends and commits take `writeMS` each and may fail at write number `failAt`. */
function fakeTx(log: Log[], writeMS: number, failAt = -1) {
  let busy = 0
  let writes = 0
  const tx = {
    maxBusy: 0,
    commits: [] as { at: any; messages: any[] }[],
    sends: [] as any[][],
    async write(what: string, n: number) {
      writes++
      busy++
      tx.maxBusy = Math.max(tx.maxBusy, busy)
      log.push({ at: performance.now(), what: `${what} start`, n })
      await sleep(writeMS)
      busy--
      log.push({ at: performance.now(), what: `${what} end`, n })
      if (writes === failAt) throw Object.assign(new Error('broker gone'), { kafka: true })
    },
    async send(messages: any[]) {
      tx.sends.push(messages)
      await tx.write('send', messages[0]?.batch)
      return messages.length
    },
    async commit(at: any, messages: any[] = []) {
      tx.commits.push({ at, messages })
      await tx.write('commit', messages[0]?.batch)
    },
  }
  return tx
}

function fakeSink(log: Log[], o: Record<string, unknown> = {}) {
  return {
    o: { commitIntervalMS: 100, maxTransactionBytes: 8 << 20, idleCheckpointMS: 5000, topicOf: () => 't', ...o },
    stats: { batches: 0, events: 0, transactions: 0, resumeToken: null, clusterTime: null },
    mongo: { answered() {} },
    signal: new AbortController().signal,
    stopping: false,
    async ensureTopicsOf() {},
  }
}

/** StreamCopy with a format whose records log when they are written. */
function copyOf(sink: any, tx: any, stream: any, log: Log[]) {
  const copy = new StreamCopy(sink, tx, stream, 0)
  copy.format = {
    records(_o: any, ev: any, out: any[]) {
      if (ev.i === 0) log.push({ at: performance.now(), what: 'records', n: ev.k })
      out.push({ topic: 't', key: Buffer.from('k'), value: Buffer.alloc(100), batch: ev.k })
    },
  }
  return copy
}

describe('StreamCopy: pipelined Kafka writes', () => {
  it('one write at a time; batch k+1\'s records while batch k is sent; the checkpoint with the last batch; every batch committed once, in order', async () => {
    const log: Log[] = []
    // batches every 5 ms, each write 30 ms, a transaction closed after 40 ms
    const sink = fakeSink(log, { commitIntervalMS: 40 })
    const tx = fakeTx(log, 30)
    await copyOf(sink, tx, fakeStream([10, 10, 10, 10, 10, 10, 10, 10], log, 5), log).run()
    expect(tx.maxBusy).toBe(1)
    // some batch's records were written while an earlier batch's write was in flight
    let overlapped = 0
    for (const r of log.filter((x) => x.what === 'records')) {
      const started = log.filter((x) => x.what.endsWith('start') && x.at <= r.at).length
      const ended = log.filter((x) => x.what.endsWith('end') && x.at <= r.at).length
      if (started > ended) overlapped++
    }
    expect(overlapped).toBeGreaterThan(0)
    // the batches' records went out once each, in order, the last of each transaction with its checkpoint
    const sent = [...tx.sends, ...tx.commits.map((c) => c.messages)].flat().map((m) => m.batch)
    expect([...new Set(sent)].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(sent.length).toBe(80)
    expect(tx.commits.some((c) => c.messages.length > 0)).toBe(true)
    const tokens = tx.commits.map((c) => Number(c.at.resumeToken._data.slice(1)))
    expect(tokens).toEqual([...tokens].sort((a, b) => a - b))
    expect(tokens.at(-1)).toBe(8)
    expect(tx.commits.at(-1)!.at.events).toBe(80)
    expect(sink.stats.events).toBe(80)
  })

  it.each([
    ['a send, the transaction open', 10_000],
    ['a commit, no transaction open', 0],
  ])('a failed Kafka write (%s) ends the run at once while the source is quiet, with the Kafka error', async (_what, commitIntervalMS) => {
    const log: Log[] = []
    const sink = fakeSink(log, { commitIntervalMS })
    const tx = fakeTx(log, 20, 1)
    const t0 = performance.now()
    const err = await Promise.race([copyOf(sink, tx, fakeStream([5, 'hang'], log), log).run(), sleep(3000).then(() => new Error('still waiting on the source'))]).catch((e: any) => e)
    expect(err.message).toBe('broker gone')
    expect(err).not.toBeInstanceOf(SourceError)
    expect(performance.now() - t0).toBeLessThan(2000)
  })

  it('a source failure returns only after the write in flight is done (the cycle aborts the transaction next)', async () => {
    const log: Log[] = []
    const sink = fakeSink(log, { commitIntervalMS: 10_000 })
    const tx = fakeTx(log, 200)
    const err = await copyOf(sink, tx, fakeStream([5, 'fail'], log), log)
      .run()
      .catch((e: any) => e)
    log.push({ at: performance.now(), what: 'returned' })
    expect(err).toBeInstanceOf(SourceError)
    const end = log.find((x) => x.what === 'send end')!
    expect(end).toBeDefined()
    expect(log.findIndex((x) => x.what === 'returned')).toBeGreaterThan(log.indexOf(end))
  })
})
