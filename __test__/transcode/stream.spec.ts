import { describe, it, expect } from 'vitest'
import { createRequire } from 'node:module'
import { Readable, Writable, getDefaultHighWaterMark } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip, createGunzip } from 'node:zlib'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const b2j = require('../../index.js')
const { createTranscodeStream, toNDJSON, toJSONArray } = b2j

const { serialize, ObjectId, Decimal128, Long, Binary } = BSON

function sampleDocs(n: number): Uint8Array[] {
  const out: Uint8Array[] = []
  for (let i = 0; i < n; i++) {
    out.push(
      serialize({
        _id: new ObjectId(Buffer.alloc(12, i)),
        i,
        s: 'héllo wörld ✓ 東京'.slice(0, i % 15),
        nested: { a: [1, 2, { b: i }], d: new Date(1700000000000 + i) },
        l: Long.fromNumber(i * 1e10),
        p: Decimal128.fromString(`${i}.99`),
        bin: i % 3 === 0 ? new Binary(Buffer.alloc(16, i), 4) : null,
        ok: i % 2 === 0,
      }),
    )
  }
  return out
}

/** Runs chunks through a transcode stream; resolves with the output, or rejects with the output so far. */
async function run(chunks: Uint8Array[], options?: object) {
  const s = createTranscodeStream(options)
  const parts: Buffer[] = []
  const skips: any[] = []
  s.on('skip', (x: any) => skips.push(x))
  let error: any = null
  try {
    await pipeline(
      Readable.from(chunks, { objectMode: false }),
      s,
      new Writable({
        write(c, _e, cb) {
          parts.push(c)
          cb()
        },
      }),
    )
  } catch (e) {
    error = e
  }
  return { out: Buffer.concat(parts).toString('utf8'), error, skips, parts }
}

const docs = sampleDocs(12)
const dump = Buffer.concat(docs)
const expected = Buffer.from(toNDJSON(dump)).toString('utf8')

describe('createTranscodeStream: output forms', () => {
  it('NDJSON by default, identical to toNDJSON of the whole dump', async () => {
    const r = await run([dump])
    expect(r.error).toBeNull()
    expect(r.out).toBe(expected)
    expect(r.out.split('\n').length).toBe(docs.length + 1)
  })

  it('format array parses with JSON.parse and equals toJSONArray', async () => {
    const r = await run([dump], { format: 'array' })
    expect(r.out).toBe(toJSONArray(dump))
    expect(JSON.parse(r.out)).toHaveLength(docs.length)
  })

  it('array format over many small batches and an empty stream', async () => {
    const r = await run(docs, { format: 'array', batchBytes: 1 })
    expect(r.out).toBe(toJSONArray(dump))
    expect((await run([], { format: 'array' })).out).toBe('[]')
    expect((await run([])).out).toBe('')
  })

  it('dialects pass through', async () => {
    for (const dialect of ['compat', 'relaxed', 'canonical']) {
      const r = await run([dump], { dialect })
      expect(r.out).toBe(Buffer.from(toNDJSON(dump, { dialect })).toString())
    }
  })

  it('chunkSize bounds each output chunk', async () => {
    const big = Buffer.concat(sampleDocs(2000))
    const r = await run([big], { chunkSize: 4096 })
    expect(r.out).toBe(Buffer.from(toNDJSON(big)).toString())
    expect(Math.max(...r.parts.map((p) => p.length))).toBeLessThanOrEqual(4096)
    expect(r.parts.length).toBeGreaterThan(10)
  })

  it('accepts plain Uint8Array chunks and counts documents / bytes', async () => {
    const u = new Uint8Array(dump)
    const r = await run([u.subarray(0, 50), u.subarray(50)])
    expect(r.out).toBe(expected)
    const s2 = createTranscodeStream()
    s2.resume()
    s2.end(dump)
    await new Promise((r2) => s2.on('end', r2))
    expect(s2.documents).toBe(docs.length)
    expect(s2.bytesIn).toBe(dump.length)
  })

  it('validates options', () => {
    expect(() => createTranscodeStream({ format: 'csv' })).toThrow(TypeError)
    expect(() => createTranscodeStream({ dialect: 'nope' })).toThrow(TypeError)
    expect(() => createTranscodeStream({ chunkSize: 0 })).toThrow(RangeError)
  })
})

describe('createTranscodeStream: chunk boundaries', () => {
  it('two chunks split at every byte give identical output', async () => {
    for (let i = 0; i <= dump.length; i++) {
      const r = await run([dump.subarray(0, i), dump.subarray(i)])
      if (r.out !== expected || r.error) throw new Error(`split at ${i}: ${r.error}`)
    }
  })

  it('three chunks at many positions, and array format split at every byte', async () => {
    const arr = toJSONArray(dump)
    for (let i = 0; i <= dump.length; i += 7) {
      const j = Math.min(dump.length, i + 1 + (i % 131))
      const r = await run([dump.subarray(0, i), dump.subarray(i, j), dump.subarray(j)])
      expect(r.out).toBe(expected)
      const a = await run([dump.subarray(0, i), dump.subarray(i)], { format: 'array' })
      expect(a.out).toBe(arr)
    }
  })

  it('1-byte chunks give identical output', async () => {
    const ones: Uint8Array[] = []
    for (let i = 0; i < dump.length; i++) ones.push(dump.subarray(i, i + 1))
    expect((await run(ones)).out).toBe(expected)
  })
})

describe('createTranscodeStream: gzip', () => {
  it('round trip through zlib', async () => {
    const parts: Buffer[] = []
    const src = Readable.from([dump.subarray(0, 100), dump.subarray(100)], { objectMode: false })
    await pipeline(
      src,
      createGzip(),
      createGunzip(),
      createTranscodeStream(),
      new Writable({
        write(c, _e, cb) {
          parts.push(c)
          cb()
        },
      }),
    )
    expect(Buffer.concat(parts).toString()).toBe(expected)
  })
})

describe('createTranscodeStream: errors', () => {
  const starts: number[] = []
  let off = 0
  for (const d of docs) {
    starts.push(off)
    off += d.length
  }
  const corrupt = (k: number) => {
    const bad = Buffer.from(dump)
    bad[starts[k] + docs[k].length - 1] = 7 // bad terminator
    return bad
  }
  const lines = expected.split('\n')

  it('a corrupt document mid-stream: global index and offset, earlier documents written', async () => {
    for (const split of [1, starts[5] + 3, starts[7] + 2, dump.length - 1]) {
      const bad = corrupt(7)
      const r = await run([bad.subarray(0, split), bad.subarray(split)])
      expect(r.error?.name).toBe('TranscodeError')
      expect(r.error.code).toBe('BSON_BAD_TERMINATOR')
      expect(r.error.index).toBe(7)
      expect(r.error.offset).toBe(starts[7] + docs[7].length - 1)
      expect(r.error.message).toContain('document 7')
      expect(b2j.isTranscodeError(r.error)).toBe(true)
      expect(r.out).toBe(lines.slice(0, 7).join('\n') + '\n')
    }
  })

  it('1-byte chunks: same error, same prefix', async () => {
    const bad = corrupt(3)
    const ones: Uint8Array[] = []
    for (let i = 0; i < bad.length; i++) ones.push(bad.subarray(i, i + 1))
    const r = await run(ones)
    expect(r.error.index).toBe(3)
    expect(r.error.offset).toBe(starts[3] + docs[3].length - 1)
    expect(r.out).toBe(lines.slice(0, 3).join('\n') + '\n')
  })

  it('a trailing partial document is BSON_TRUNCATED', async () => {
    for (const cut of [1, 3, 4, 10]) {
      const r = await run([dump.subarray(0, starts[11] + cut)])
      expect(r.error.code).toBe('BSON_TRUNCATED')
      expect(r.error.index).toBe(11)
      expect(r.error.offset).toBe(starts[11])
      expect(r.out).toBe(lines.slice(0, 11).join('\n') + '\n')
    }
  })

  it('an insane length prefix stops the stream; with skipInvalid the stream resyncs at the next document', async () => {
    const bad = Buffer.from(dump)
    bad.writeInt32LE(2, starts[4])
    const stopped = await run([bad])
    expect(stopped.error.code).toBe('BSON_BAD_LENGTH')
    expect(stopped.error.index).toBe(4)
    expect(stopped.error.offset).toBe(starts[4])
    expect(stopped.out).toBe(lines.slice(0, 4).join('\n') + '\n')
    const keep = lines.slice(0, docs.length).filter((_, k) => k !== 4)
    for (const len of [2, 7, 0x7fffffff, -1]) {
      bad.writeInt32LE(len, starts[4])
      for (const chunks of [[bad], [...bad].map((x) => Buffer.from([x])), [bad.subarray(0, starts[4] + 6), bad.subarray(starts[4] + 6)]]) {
        const r = await run(chunks, { skipInvalid: true })
        expect(r.error, `length ${len}`).toBeNull()
        expect(r.skips.map((s) => [s.index, s.offset, s.bytesSkipped, s.error.code])).toEqual([[4, starts[4], docs[4].length, len === 7 ? 'BSON_BAD_TERMINATOR' : 'BSON_BAD_LENGTH']])
        expect(r.out).toBe(keep.join('\n') + '\n')
      }
    }
    bad.writeInt32LE(0x7fffffff, starts[4])
    const r2 = await run([bad.subarray(0, starts[4] + 2), bad.subarray(starts[4] + 2)])
    expect(r2.error.code).toBe('BSON_BAD_LENGTH')
    expect(r2.error.index).toBe(4)
  })

  it('skipInvalid: skip events with global index/offset, the rest is written', async () => {
    const bad = corrupt(2)
    bad[starts[9] + docs[9].length - 1] = 9
    for (const chunks of [[bad], [bad.subarray(0, starts[9] + 5), bad.subarray(starts[9] + 5)], [...bad].map((x) => Buffer.from([x]))]) {
      for (const format of ['ndjson', 'array']) {
        const r = await run(chunks, { skipInvalid: true, format })
        expect(r.error).toBeNull()
        expect(r.skips.map((s) => s.index)).toEqual([2, 9])
        expect(r.skips.map((s) => s.offset)).toEqual([starts[2] + docs[2].length - 1, starts[9] + docs[9].length - 1])
        expect(r.skips[0].error.code).toBe('BSON_BAD_TERMINATOR')
        const keep = lines.slice(0, 12).filter((_, k) => k !== 2 && k !== 9)
        if (format === 'ndjson') expect(r.out).toBe(keep.join('\n') + '\n')
        else expect(r.out).toBe(`[${keep.join(',')}]`)
      }
    }
  })
})

describe('createTranscodeStream: backpressure and memory', () => {
  it('a slow writable with a small highWaterMark gets everything; buffers stay bounded', async () => {
    const many = Buffer.concat(sampleDocs(3000))
    const want = Buffer.from(toNDJSON(many)).toString()
    const s = createTranscodeStream({ chunkSize: 16 * 1024 })
    const parts: Buffer[] = []
    let maxBuffered = 0
    let writes = 0
    const slow = new Writable({
      highWaterMark: 1024,
      write(c, _e, cb) {
        parts.push(c)
        maxBuffered = Math.max(maxBuffered, s.readableLength + s.writableLength)
        if (++writes % 8 === 0) setTimeout(cb, 1)
        else setImmediate(cb)
      },
    })
    const chunks: Buffer[] = []
    for (let i = 0; i < many.length; i += 8192) chunks.push(many.subarray(i, i + 8192))
    await pipeline(Readable.from(chunks, { objectMode: false, highWaterMark: 1 }), s, slow)
    expect(Buffer.concat(parts).toString()).toBe(want)
    // One input chunk (8 KiB) of output, plus Node's default high-water marks of the two sides
    // (16 KiB each on Node 20, 64 KiB from Node 22): far below the total.
    expect(maxBuffered).toBeLessThan(2 * getDefaultHighWaterMark(false) + 96 * 1024)
    expect(want.length).toBeGreaterThan(512 * 1024)
  })

  it('streams a generated ~200 MB dump with bounded RSS', async () => {
    const unit = Buffer.concat(sampleDocs(400)) // reused bytes: generation costs no memory
    const target = 200 * 1024 * 1024
    const reps = Math.ceil(target / unit.length)
    let sent = 0
    let count = 0
    const source = new Readable({
      read() {
        if (count >= reps) return void this.push(null)
        count++
        // Odd-sized pieces so that documents straddle chunk boundaries.
        const cut = 1 + ((count * 7919) % (unit.length - 1))
        sent += unit.length
        this.push(Buffer.from(unit.subarray(0, cut)))
        this.push(Buffer.from(unit.subarray(cut)))
      },
    })
    global.gc?.()
    const base = process.memoryUsage().rss
    let peak = base
    let outBytes = 0
    let lines = 0
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5)
    const t0 = performance.now()
    await pipeline(
      source,
      createTranscodeStream(),
      new Writable({
        write(c: Buffer, _e, cb) {
          outBytes += c.length
          for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++
          cb()
        },
      }),
    )
    clearInterval(timer)
    peak = Math.max(peak, process.memoryUsage().rss)
    const secs = (performance.now() - t0) / 1000
    const growth = (peak - base) / 1024 / 1024
    console.log(
      `stream ${(sent / 1e6).toFixed(0)} MB BSON -> ${(outBytes / 1e6).toFixed(0)} MB NDJSON in ${secs.toFixed(2)} s ` +
        `(${(sent / 1e6 / secs).toFixed(0)} MB/s); RSS base ${(base / 1048576).toFixed(0)} MiB, peak ` +
        `${(peak / 1048576).toFixed(0)} MiB, growth ${growth.toFixed(1)} MiB`,
    )
    expect(sent).toBeGreaterThanOrEqual(target)
    expect(lines).toBe(reps * 400)
    expect(growth).toBeLessThan(150)
  })
})

describe('createTranscodeStream: concurrency (batches on the thread pool)', () => {
  // A seeded generator: the same cases every run.
  let seed = 0x2545f491
  const rnd = (n: number) => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) % n
  }
  const many = sampleDocs(60)
  const offsets: number[] = []
  let at = 0
  for (const d of many) {
    offsets.push(at)
    at += d.length
  }
  const whole = Buffer.concat(many)
  const brief = (r: Awaited<ReturnType<typeof run>>) => ({
    out: r.out,
    error: r.error === null ? null : { name: r.error.name, code: r.error.code, index: r.error.index, offset: r.error.offset, message: r.error.message },
    skips: r.skips.map((s) => [s.index, s.offset, s.error.code, s.error.message]),
  })

  it('output, errors and skip events equal the synchronous stream (400 random cases)', async () => {
    for (let c = 0; c < 400; c++) {
      const input = Buffer.from(whole.subarray(0, offsets[1 + rnd(59)]))
      const faults = rnd(4)
      for (let f = 0; f < faults; f++) {
        const k = rnd(offsets.filter((o) => o < input.length).length)
        const kind = rnd(3)
        if (kind === 0) input[offsets[k] + many[k].length - 1] = 7 // bad terminator
        else if (kind === 1) input[offsets[k] + 4] = 0x7f // unknown element type
        else input.writeInt32LE(rnd(2) === 0 ? 3 : 0x7ffffff0, offsets[k]) // impossible length
      }
      const end = rnd(5) === 0 ? input.length - 1 - rnd(20) : input.length // sometimes truncated
      const chunks: Uint8Array[] = []
      for (let p = 0; p < end; ) {
        const n = Math.min(end - p, 1 + rnd(rnd(2) === 0 ? 40 : 3000))
        chunks.push(input.subarray(p, p + n))
        p += n
      }
      const options = { skipInvalid: rnd(2) === 0, format: rnd(2) === 0 ? 'ndjson' : 'array', batchBytes: 1 + rnd(2000) }
      const sync = brief(await run(chunks, options))
      const pooled = brief(await run(chunks, { ...options, concurrency: 2 + rnd(4) }))
      expect(pooled, `case ${c}`).toEqual(sync)
    }
  })

  it('many small batches in flight come out in input order', async () => {
    const r = await run([whole], { concurrency: 8, batchBytes: 1 })
    expect(r.error).toBeNull()
    expect(r.out).toBe(Buffer.from(toNDJSON(whole)).toString('utf8'))
  })

  it('validates concurrency', () => {
    for (const bad of [0, -1, 1.5, 257, '2']) {
      expect(() => createTranscodeStream({ concurrency: bad as any })).toThrow(/concurrency/)
    }
  })
})
