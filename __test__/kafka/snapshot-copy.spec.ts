/**
 * lib/kafka/snapshot-copy.js `take()` without a server or a broker: the rounds of a snapshot over
 * fake range readers, in the Debezium format, whose last snapshot record Debezium 3.0.8 marks
 * `"snapshot":"last"` (and no other: checked against the real connector by
 * `FORMAT_SNAPSHOT=1 bash benchmark/kafka-connectors.sh formats`). A range holds its latest batch
 * back until its next result says whether more follows; a range whose last batch is there waits
 * while another range's next result is unknown, so the mark is never missed nor put on a record
 * that is not the last.
 */
import { describe, expect, it } from 'vitest'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { SnapshotCopy } = require('../../lib/kafka/snapshot-copy')

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { PLAIN } = require('../../lib/kafka/records-plain')

const O = { id: 's', topicPrefix: 'p', topicOf: (ns: any) => `p.${ns.db}.${ns.coll}`, maxTransactionBytes: 8 << 20 }

/** A snapshot document as the native pass gives it in the Debezium format (key and value bytes, by its twin), or as an event object. */
const ev = (id: number, coll = 'c') => {
  const e: any = {
    documentKey: `{"_id": {"$numberInt": "${id}"}}`,
    fullDocument: `{"_id": {"$numberInt": "${id}"}, "a": "x"}`,
    ns: { db: 'd', coll },
  }
  const out: any[] = []
  PLAIN.debezium.snapshot(O, e, 'initial', out, { at: { t: 1700000000, i: 7 }, last: false })
  return { ...e, key: out[0].key, value: out[0].value }
}
const batch = (ids: number[], coll = 'c') => ({ v: { done: false, value: { events: ids.map((id) => ev(id, coll)), after: ids.at(-1) } } })
const DONE = { v: { done: true } }

/** A range reader whose results the test sets (`settled`); `pull()` asks for the next one. */
function reader(i: number) {
  const r: any = {
    i,
    settled: null,
    held: null,
    deferred: false,
    next: new Promise(() => {}),
    pull() {
      r.settled = null
    },
    reopen() {
      r.settled = null
    },
  }
  return r
}

function copyOf(format = 'debezium') {
  const sink = {
    o: { ...O, format },
    mongo: { failed: () => 100, answered() {} },
  }
  const copy = new SnapshotCopy(sink, null, { reason: 'initial', ranges: [], records: 0, fresh: true }, null)
  copy.at = { t: 1700000000, i: 7 }
  return copy
}

/** The round's records as [_id, snapshot mark]. */
const marks = (took: any) =>
  took.messages.map((m: any) => {
    const v = JSON.parse(m.value.toString())
    return [JSON.parse(v.after)._id, v.source.snapshot]
  })

describe('SnapshotCopy: Debezium\'s last snapshot record', () => {
  it('one range: each batch waits for the next result; the batch before the end carries "last" on its last record; source.ts_ms and ord are the position\'s', () => {
    const copy = copyOf()
    const a = reader(0)
    a.settled = batch([1, 2])
    let took = copy.take([a], 0)
    expect(marks(took)).toEqual([])
    expect(a.held.events.length).toBe(2)
    a.settled = batch([3])
    took = copy.take([a], 1)
    expect(marks(took)).toEqual([
      [1, 'true'],
      [2, 'true'],
    ])
    a.settled = DONE
    took = copy.take([a], 2)
    expect(marks(took)).toEqual([[3, 'last']])
    expect(took.ended).toEqual([a])
    const v = JSON.parse(took.messages[0].value.toString())
    expect([v.op, v.source.ts_ms, v.source.ord]).toEqual(['r', 1700000000000, 7])
  })

  it('two ranges: a range whose last batch is there waits while the other\'s next result is unknown; the other ending empty makes it the last', () => {
    const copy = copyOf()
    const a = reader(0)
    const b = reader(1)
    a.settled = batch([1])
    b.settled = batch([100], 'e')
    copy.take([a, b], 0)
    b.settled = DONE
    let took = copy.take([a, b], 1)
    // b's last batch is written (a still has a batch held back), not marked; b ends
    expect(marks(took)).toEqual([[100, 'true']])
    expect(took.ended).toEqual([b])
    // a: its end is there, but a third range's next result is not
    const c = reader(2)
    a.settled = DONE
    took = copy.take([a, c], 2)
    expect(marks(took)).toEqual([])
    expect(a.deferred).toBe(true)
    expect(took.ended).toEqual([])
    c.settled = DONE
    took = copy.take([a, c], 3)
    expect(marks(took)).toEqual([[1, 'last']])
    expect(took.ended.map((r: any) => r.i).sort()).toEqual([0, 2])
  })

  it('a failed range drops the batch it held: its new cursor reads it again', () => {
    const copy = copyOf()
    const b = reader(1)
    b.settled = batch([100], 'e')
    copy.take([b], 0)
    b.settled = { e: Object.assign(new Error('closed'), { name: 'MongoNetworkError' }) }
    const took = copy.take([b], 1)
    expect(b.held).toBeNull()
    expect(marks(took)).toEqual([])
    expect(took.ended).toEqual([])
  })

  it('a failed range with nothing held is unknown too: the other range\'s last batch waits', () => {
    const copy = copyOf()
    const a = reader(0)
    const b = reader(1)
    a.settled = batch([1])
    copy.take([a, b], 0)
    a.settled = DONE
    b.settled = { e: Object.assign(new Error('closed'), { name: 'MongoNetworkError' }) }
    // round 2: a is looked at first, while b's failure is not handled yet
    const took = copy.take([a, b], 2)
    expect(a.deferred).toBe(true)
    expect(marks(took)).toEqual([])
  })

  it('formats without a last mark write each batch at once', () => {
    const copy = copyOf('mongo-kafka')
    const a = reader(0)
    a.settled = batch([1, 2])
    const took = copy.take([a], 0)
    expect(took.messages.length).toBe(2)
    expect(a.held).toBeNull()
  })
})
