/**
 * Public API surface: option validation, input types and views, toJSONBuffer, isTranscodeError, error shape,
 * and the native panic hook.
 */
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const api = require('../../index.js')
const { toJSON, toJSONBuffer, isTranscodeError } = api

const GOOD = Buffer.from('0c0000001061000100000000', 'hex') // {a: 1}
const DIALECTS = ['compat', 'relaxed', 'canonical'] as const

function thrown(f: () => unknown): any {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error('expected a throw')
}

describe('options validation', () => {
  it('accepts undefined, null, {} and every valid option', () => {
    expect(toJSON(GOOD)).toBe('{"a":1}')
    expect(toJSON(GOOD, undefined)).toBe('{"a":1}')
    expect(toJSON(GOOD, null)).toBe('{"a":1}')
    expect(toJSON(GOOD, {})).toBe('{"a":1}')
    expect(toJSON(GOOD, { dialect: 'relaxed' })).toBe('{"a":1}')
    expect(toJSON(GOOD, { dialect: 'canonical' })).toBe('{"a":{"$numberInt":"1"}}')
    expect(toJSON(GOOD, { utf8: 'strict', maxDepth: 1, maxOutputBytes: 2 ** 32 - 1 })).toBe('{"a":1}')
    expect(toJSON(GOOD, { utf8: 'replace', maxDepth: 2 ** 32 - 1 })).toBe('{"a":1}')
  })
  // MISMATCH (found by this suite): lib/options.js caches the last resolved options by object identity, so a
  // mutated options object is not re-read (and not re-validated).
  it('the same options object reused with different contents is re-read (no stale cache)', () => {
    const o: any = { dialect: 'canonical' }
    expect(toJSON(GOOD, o)).toBe('{"a":{"$numberInt":"1"}}')
    o.dialect = 'compat'
    expect(toJSON(GOOD, o)).toBe('{"a":1}')
  })
  it('a mutated options object is re-validated', () => {
    const o: any = { maxDepth: 5 }
    expect(toJSON(GOOD, o)).toBe('{"a":1}')
    o.maxDepth = -1
    expect(() => toJSON(GOOD, o)).toThrow(RangeError)
  })
  const bad: [string, unknown, any][] = [
    ['dialect unknown string', { dialect: 'ejson' }, TypeError],
    ['dialect number', { dialect: 1 }, TypeError],
    ['dialect null', { dialect: null }, TypeError],
    ['dialect wrong case', { dialect: 'Compat' }, TypeError],
    ['dialect inherited name', { dialect: 'toString' }, TypeError],
    ['utf8 unknown', { utf8: 'lossy' }, TypeError],
    ['utf8 boolean', { utf8: true }, TypeError],
    ['maxDepth string', { maxDepth: '5' }, RangeError],
    ['maxDepth 0', { maxDepth: 0 }, RangeError],
    ['maxDepth -1', { maxDepth: -1 }, RangeError],
    ['maxDepth 1.5', { maxDepth: 1.5 }, RangeError],
    ['maxDepth NaN', { maxDepth: NaN }, RangeError],
    ['maxDepth Infinity', { maxDepth: Infinity }, RangeError],
    ['maxDepth 2^32', { maxDepth: 2 ** 32 }, RangeError],
    ['maxDepth bigint', { maxDepth: 5n }, RangeError],
    ['maxOutputBytes 0', { maxOutputBytes: 0 }, RangeError],
    ['maxOutputBytes 2^32', { maxOutputBytes: 2 ** 32 }, RangeError],
    ['maxOutputBytes string', { maxOutputBytes: '10' }, RangeError],
    ['options string', 'compat', TypeError],
    ['options number', 1, TypeError],
  ]
  for (const [name, opts, cls] of bad) {
    it(`rejects ${name} with ${cls.name}`, () => {
      for (const fn of [toJSON, toJSONBuffer]) {
        const e = thrown(() => fn(GOOD, opts))
        expect(e).toBeInstanceOf(cls)
        expect(isTranscodeError(e)).toBe(false)
      }
    })
  }
})

describe('inputs', () => {
  it('Buffer, Uint8Array, subarray views and SharedArrayBuffer views read only the view', () => {
    const padded = Buffer.concat([Buffer.from('ffff0c', 'hex'), GOOD, Buffer.from('ffffff', 'hex')])
    const views: Uint8Array[] = [
      GOOD,
      new Uint8Array(GOOD),
      padded.subarray(3, 3 + GOOD.length),
      new Uint8Array(padded.buffer, padded.byteOffset + 3, GOOD.length),
      Uint8Array.from(padded).subarray(3, 3 + GOOD.length),
    ]
    const sab = new SharedArrayBuffer(GOOD.length + 8)
    new Uint8Array(sab).set(GOOD, 4)
    views.push(new Uint8Array(sab, 4, GOOD.length))
    for (const v of views) {
      expect(toJSON(v)).toBe('{"a":1}')
      expect(toJSONBuffer(v).toString()).toBe('{"a":1}')
    }
  })
  it('a view one byte short / one byte long is rejected like js-bson (does not read outside the view)', () => {
    const padded = Buffer.concat([GOOD, Buffer.from('00', 'hex')])
    const short = padded.subarray(0, GOOD.length - 1)
    const long = padded.subarray(0, GOOD.length + 1)
    for (const b of [short, long]) {
      expect(() => BSON.deserialize(b)).toThrow()
      const e = thrown(() => toJSON(b))
      expect(isTranscodeError(e)).toBe(true)
    }
  })
  it('an empty view and a detached buffer throw coded errors', () => {
    expect(isTranscodeError(thrown(() => toJSON(new Uint8Array(0))))).toBe(true)
    expect(isTranscodeError(thrown(() => toJSON(GOOD.subarray(5, 5))))).toBe(true)
    const ab = new ArrayBuffer(12)
    const u = new Uint8Array(ab)
    u.set(GOOD)
    structuredClone(ab, { transfer: [ab] })
    expect(isTranscodeError(thrown(() => toJSON(u)))).toBe(true)
  })
  const nonU8: [string, unknown][] = [
    ['string', '{"a":1}'],
    ['hex string', '0c0000001061000100000000'],
    ['number', 12],
    ['undefined', undefined],
    ['null', null],
    ['plain array', [...GOOD]],
    ['object', { length: 12 }],
    ['Uint16Array', new Uint16Array(6)],
    ['Int8Array', new Int8Array(GOOD)],
    ['Uint8ClampedArray', new Uint8ClampedArray(GOOD)],
    ['Float64Array', new Float64Array(2)],
    ['ArrayBuffer', GOOD.buffer.slice(GOOD.byteOffset, GOOD.byteOffset + GOOD.length)],
    ['DataView', new DataView(new ArrayBuffer(12))],
  ]
  for (const [name, v] of nonU8) {
    it(`${name} input throws an Error (not a crash, not a TranscodeError)`, () => {
      for (const fn of [toJSON, toJSONBuffer]) {
        const e = thrown(() => fn(v))
        expect(e).toBeInstanceOf(Error)
        expect(isTranscodeError(e)).toBe(false)
        expect(String(e.message)).toMatch(/Uint8Array|Buffer/)
      }
    })
  }
})

describe('toJSONBuffer', () => {
  it('equals Buffer.from(toJSON(...)) in every dialect, including non-ASCII output', () => {
    const docs = [
      GOOD,
      Buffer.from(BSON.serialize({ s: '\u00e9\u2606\ud83d\ude00\u2028"\\\u0001', n: 1.5, d: new Date(0), a: [1, 'x', null] })),
      Buffer.from('0500000000', 'hex'),
    ]
    for (const d of docs)
      for (const dialect of DIALECTS) {
        const b = toJSONBuffer(d, { dialect })
        expect(Buffer.isBuffer(b)).toBe(true)
        expect(b.equals(Buffer.from(toJSON(d, { dialect }), 'utf8'))).toBe(true)
      }
  })
  it('throws the same coded errors as toJSON', () => {
    for (const h of ['', '0500', '0600000000', '0c0000001061000100000001', '0d000000086100020000000000']) {
      const b = Buffer.from(h, 'hex')
      const a = thrown(() => toJSON(b))
      const c = thrown(() => toJSONBuffer(b))
      expect(isTranscodeError(c)).toBe(true)
      expect(c.code).toBe(a.code)
      expect(c.offset).toBe(a.offset)
    }
  })
})

describe('errors', () => {
  it('TranscodeError shape: Error, name, code, offset, message', () => {
    const e = thrown(() => toJSON(Buffer.from('0d000000086100020000000000', 'hex')))
    expect(e).toBeInstanceOf(Error)
    expect(e.name).toBe('TranscodeError')
    expect(e.code).toBe('BSON_BAD_BOOLEAN')
    expect(typeof e.offset).toBe('number')
    expect(typeof e.message).toBe('string')
    expect(String(e.stack)).toContain('TranscodeError')
    expect(isTranscodeError(e)).toBe(true)
  })
  it('isTranscodeError negatives', () => {
    for (const v of [
      null,
      undefined,
      0,
      'BSON_TRUNCATED',
      new Error('x'),
      new TypeError('x'),
      { code: 'BSON_X' },
      { code: 'BSON_X', offset: 1 },
      { code: 'EOTHER', offset: 1, message: 'm' },
      { code: 1, offset: 1, message: 'm' },
      Object.assign(new Error('m'), { code: 'BSON_X', offset: '1' }),
    ])
      expect(isTranscodeError(v)).toBe(false)
    // positive: any realm-free shape with a BSON_ code, numeric offset and message
    expect(isTranscodeError(Object.assign(new Error('m'), { code: 'BSON_X', offset: 0 }))).toBe(true)
  })
  it('every documented code can be produced', () => {
    const cases: [string, string, object?][] = [
      ['BSON_TRUNCATED', '0500'],
      ['BSON_BAD_LENGTH', '050000000000'], // trailing byte after the document
      ['BSON_BAD_TERMINATOR', '0500000001'],
      ['BSON_INVALID_UTF8', '0f00000002730003000000c3280000'],
      ['BSON_UNKNOWN_TYPE', '0800000014610000'],
      ['BSON_BAD_BOOLEAN', '0d000000086100020000000000'],
      ['BSON_INVALID_REGEX', '0f0000000b7200283f692961000000'], // /(?i)a/ rejected by V8 (compat)
      ['BSON_BAD_BINARY', '0d000000056200ffffffff0000'],
      ['BSON_BAD_CODE_W_SCOPE', '170000000f630005000000020000007800050000000000'],
      ['BSON_TOO_DEEP', '150000000361000d00000003610005000000000000', { maxDepth: 1 }],
      ['BSON_OUTPUT_TOO_LARGE', '0c0000001061000100000000', { maxOutputBytes: 3 }],
    ]
    for (const [code, h, o] of cases) {
      const e = thrown(() => toJSON(Buffer.from(h, 'hex'), o))
      expect(e.code, `hex ${h}`).toBe(code)
      expect(isTranscodeError(e)).toBe(true)
      expect(e.name).toBe('TranscodeError')
    }
  })
})

describe('native panic hook', () => {
  it('__panicForTests throws an Error and the process survives', () => {
    const binding = require('../../binding.js')
    const e = thrown(() => binding.__panicForTests())
    expect(e).toBeInstanceOf(Error)
    expect(toJSON(GOOD)).toBe('{"a":1}')
    // twice: the addon stays usable after repeated panics
    expect(() => binding.__panicForTests()).toThrow()
    expect(toJSON(GOOD)).toBe('{"a":1}')
  })
})

describe('worker threads', () => {
  it('the addon loads and works in several worker threads at once (context-aware), panics stay contained', async () => {
    const { Worker } = await import('node:worker_threads')
    const entry = require.resolve('../../index.js')
    const bindingPath = require.resolve('../../binding.js')
    const code = `const { parentPort } = require('worker_threads')
      const { toJSON } = require(${JSON.stringify(entry)})
      let s = ''
      for (let i = 0; i < 1000; i++) s = toJSON(Buffer.from('0c0000001061000100000000', 'hex'))
      let e = ''
      try { require(${JSON.stringify(bindingPath)}).__panicForTests() } catch (x) { e = x instanceof Error ? 'Error' : 'other' }
      parentPort.postMessage(s + '|' + e)`
    const results = await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise<string>((resolve, reject) => {
            const w = new Worker(code, { eval: true })
            w.on('message', (m) => {
              resolve(m)
              w.terminate()
            })
            w.on('error', reject)
          }),
      ),
    )
    expect(results).toEqual(Array(4).fill('{"a":1}|Error'))
    expect(toJSON(GOOD)).toBe('{"a":1}')
  })
})
