/**
 * The JavaScript fallback (lib/fallback.js) tested directly, whichever backend index.js uses.
 *
 * - compat is byte-identical to JSON.stringify(BSON.deserialize(buf)) on generated documents;
 * - relaxed / canonical equal the BSON corpus's Extended JSON (see docs/fallback.md for the
 *   exceptions, none at the time of writing);
 * - where the native addon loads, every function's result (or error code, offset and index) is
 *   compared with it on generated, mutated and corpus documents;
 * - batch / cursor / change-batch shapes, limits, errors, the one-time warning.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BSON } from 'bson'
import { Gen, mulberry32, mutate } from './gen'

const require = createRequire(import.meta.url)
const fb = require('../lib/fallback.js')
let native: any = null
try {
  native = require('../binding.js')
} catch {
  native = null
}
const itNative = native ? it : it.skip
// Both backends' single-document calls take (bson, packed, maxOutputBytes), where
// packed = flags + maxDepth * 2 ** FLAG_BITS.
function nativeTranscode(buf: Uint8Array, flags: number, maxDepth: number, maxOut: number): string {
  return native.transcode(buf, flags + maxDepth * 256, maxOut)
}
function fbTranscode(buf: any, flags: number, maxDepth: number, maxOut: number): string {
  return fb.transcode(buf, flags + maxDepth * 256, maxOut)
}

const DIR = path.join(__dirname, '..', 'spec', 'bson-corpus', 'tests')
const FLAGS = [0, 1, 2, 4, 5, 6]
const BIG = 2 ** 32 - 1

function outcome(f: () => unknown): string {
  try {
    const r = f()
    if (typeof r === 'string') return r
    if (Buffer.isBuffer(r)) return `BUF ${r.toString('utf8')}`
    return JSON.stringify(r, (_k, v) =>
      typeof v === 'bigint' ? `${v}n` : v && v.type === 'Buffer' ? `BUF ${Buffer.from(v.data).toString('hex')}` : v,
    )
  } catch (e: any) {
    return `THROW ${e.name} ${e.code} ${e.offset} ${e.index}`
  }
}

function normJSON(text: string): string {
  const out: string[] = []
  const re = /\s+|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}[\]:,]/y
  let i = 0
  while (i < text.length) {
    re.lastIndex = i
    const m = re.exec(text)
    if (!m) throw new Error(`normJSON: bad token at ${i}`)
    i = re.lastIndex
    if (/^\s/.test(m[0])) continue
    out.push(m[0][0] === '"' ? JSON.stringify(JSON.parse(m[0])) : m[0])
  }
  return out.join('')
}

function corpus(): { file: string; c: any }[] {
  const all: { file: string; c: any }[] = []
  for (const file of readdirSync(DIR)) {
    const j = JSON.parse(readFileSync(path.join(DIR, file), 'utf8'))
    for (const c of j.valid || []) all.push({ file, c })
  }
  return all
}

function docs(seed: number, n: number, mutateEvery = 0): Uint8Array[] {
  const g = new Gen(seed, { badStringRate: 0.02 })
  const r = mulberry32(seed + 1)
  const out: Uint8Array[] = []
  for (let i = 0; i < n; i++) {
    const d = g.root()
    out.push(mutateEvery && i % mutateEvery === 0 ? mutate(r, d) : d)
  }
  return out
}

describe('compat is js-bson itself', () => {
  it('byte-identical to JSON.stringify(BSON.deserialize) on 600 generated documents (throw parity)', () => {
    let ok = 0
    for (const d of docs(11, 600)) {
      let want: string
      try {
        want = JSON.stringify(BSON.deserialize(d))
      } catch {
        want = 'THROW'
      }
      let got: string
      try {
        got = fbTranscode(d, 0, 1000, BIG)
      } catch (e: any) {
        expect(e.name).toBe('TranscodeError')
        expect(typeof e.code).toBe('string')
        expect(typeof e.offset).toBe('number')
        got = 'THROW'
      }
      expect(got).toBe(want)
      if (got !== 'THROW') ok++
    }
    expect(ok).toBeGreaterThan(400)
  })

  it("utf8 'replace' is js-bson with validation: { utf8: false }", () => {
    for (const d of docs(12, 300)) {
      let want: string
      try {
        want = JSON.stringify(BSON.deserialize(d, { validation: { utf8: false } }))
      } catch {
        want = 'THROW'
      }
      const got = outcome(() => fbTranscode(d, 4, 1000, BIG))
      expect(got.startsWith('THROW') ? 'THROW' : got).toBe(want)
    }
  })

  it('an invalid regex is BSON_INVALID_REGEX at the pattern offset', () => {
    const buf = BSON.serialize({ a: 1, r: new BSON.BSONRegExp('(', 'i') })
    const e = thrown(() => fbTranscode(buf, 0, 1000, BIG))
    expect(e.code).toBe('BSON_INVALID_REGEX')
    expect(e.offset).toBe(buf.indexOf(Buffer.from('(\0')))
    // Extended JSON does not compile regexes.
    expect(fbTranscode(buf, 2, 1000, BIG)).toBe(
      '{"a":{"$numberInt":"1"},"r":{"$regularExpression":{"pattern":"(","options":"i"}}}',
    )
  })
})

describe('Extended JSON against the BSON corpus', () => {
  it('canonical equals canonical_extjson and relaxed equals relaxed_extjson on every valid case', () => {
    const mismatches: string[] = []
    let n = 0
    for (const { file, c } of corpus()) {
      const buf = Buffer.from(c.canonical_bson, 'hex')
      const canon = fbTranscode(buf, 2, 1000, BIG)
      expect(() => JSON.parse(canon)).not.toThrow()
      if (normJSON(canon) !== normJSON(c.canonical_extjson)) mismatches.push(`${file}: ${c.description} (canonical)`)
      if (c.relaxed_extjson) {
        const rel = fbTranscode(buf, 1, 1000, BIG)
        if (normJSON(rel) !== normJSON(c.relaxed_extjson)) mismatches.push(`${file}: ${c.description} (relaxed)`)
      }
      n++
    }
    expect(n).toBeGreaterThan(300)
    // docs/fallback.md: no known exceptions.
    expect(mismatches).toEqual([])
  })

  it('Extended JSON doubles: 1.0, -0.0, 1E+100, 1.2345678921232E+18, 1E-7', () => {
    const f = fb._internal.ejsonDouble
    expect([1, -1, 0, -0, 1e100, 1.2345678921232e18, 1e-7, 0.1, 1.5e-7, 123456789012345.6, 1e15, 1e16]).toEqual(
      [1, -1, 0, -0, 1e100, 1.2345678921232e18, 1e-7, 0.1, 1.5e-7, 123456789012345.6, 1e15, 1e16],
    )
    expect([1, -1, 0, -0, 1e100, 1.2345678921232e18, 1e-7, 0.1, 1e16].map(f)).toEqual([
      '1.0',
      '-1.0',
      '0.0',
      '-0.0',
      '1E+100',
      '1.2345678921232E+18',
      '1E-7',
      '0.1',
      '1E+16',
    ])
  })
})

describe('the fallback against the native addon', () => {
  itNative('transcode: identical output or identical error (code, offset) on corpus cases', () => {
    const bad: string[] = []
    for (const file of readdirSync(DIR)) {
      const j = JSON.parse(readFileSync(path.join(DIR, file), 'utf8'))
      const hexes = [
        ...(j.valid || []).map((c: any) => c.canonical_bson),
        ...(j.valid || []).filter((c: any) => c.degenerate_bson).map((c: any) => c.degenerate_bson),
        ...(j.decodeErrors || []).map((c: any) => c.bson),
      ]
      for (const h of hexes) {
        const buf = Buffer.from(h, 'hex')
        for (const flags of FLAGS) {
          const a = outcome(() => nativeTranscode(buf, flags, 1000, BIG))
          const b = outcome(() => fbTranscode(buf, flags, 1000, BIG))
          if (a !== b) bad.push(`${file} ${h} flags=${flags}\n N: ${a}\n F: ${b}`)
        }
      }
    }
    expect(bad).toEqual([])
  })

  itNative('transcode: identical on generated and mutated documents, with depth and output limits', () => {
    const bad: string[] = []
    let n = 0
    for (const d of docs(21, 1500, 3)) {
      for (const flags of FLAGS) {
        for (const [md, mo] of [
          [1000, BIG],
          [3, BIG],
          [1000, 80],
        ]) {
          const a = outcome(() => nativeTranscode(d, flags, md, mo))
          const b = outcome(() => fbTranscode(d, flags, md, mo))
          n++
          if (a !== b) bad.push(`${Buffer.from(d).toString('hex')} flags=${flags} depth=${md} out=${mo}\n N: ${a}\n F: ${b}`)
        }
      }
    }
    // docs/fallback.md: compat's BSON_OUTPUT_TOO_LARGE offset is approximate.
    const real = bad.filter((s) => !/THROW TranscodeError BSON_OUTPUT_TOO_LARGE/.test(s))
    expect(real.slice(0, 5)).toEqual([])
    expect(n).toBe(1500 * 18)
  })

  itNative('batches: same layouts, same errors (index, offset from the start of concatenated input)', () => {
    const sets = [docs(31, 40), docs(32, 40, 5), docs(33, 5, 2), []]
    for (const set of sets) {
      const concat = Buffer.concat(set)
      for (const layout of [0, 1, 2, 3]) {
        for (const flags of [0, 1, 2]) {
          for (const mo of [BIG, 500]) {
            expect(outcome(() => fb.transcodeBatch(set, layout, flags, 1000, mo, 1))).toBe(
              outcome(() => native.transcodeBatch(set, layout, flags, 1000, mo, 1)),
            )
            expect(outcome(() => fb.transcodeBatch(concat, layout, flags, 1000, mo, 1))).toBe(
              outcome(() => native.transcodeBatch(concat, layout, flags, 1000, mo, 1)),
            )
          }
        }
      }
    }
    // Framing errors of concatenated input.
    const good = Buffer.from(BSON.serialize({ a: 1 }))
    for (const tail of [Buffer.from([1, 2]), Buffer.from([3, 0, 0, 0]), Buffer.from([40, 0, 0, 0, 1])]) {
      const input = Buffer.concat([good, tail])
      expect(outcome(() => fb.transcodeBatch(input, 2, 0, 1000, BIG, 1))).toBe(
        outcome(() => native.transcodeBatch(input, 2, 0, 1000, BIG, 1)),
      )
    }
  })

  itNative('transcodeBatchAsync resolves / rejects like the native one', async () => {
    const set = docs(41, 20, 4)
    for (const layout of [0, 1, 2, 3]) {
      const settle = (f: () => Promise<unknown>) =>
        new Promise((r) => r(f())).then(
          (v) => outcome(() => v),
          (e) => outcome(() => {
            throw e
          }),
        )
      expect(await settle(() => fb.transcodeBatchAsync(set, layout, 1, 1000, BIG, 1, false))).toBe(
        await settle(() => native.transcodeBatchAsync(set, layout, 1, 1000, BIG, 1, false)),
      )
      const concat = Buffer.concat(set)
      expect(await settle(() => fb.transcodeBatchAsync(concat, layout, 0, 1000, BIG, 1, false))).toBe(
        await settle(() => native.transcodeBatchAsync(concat, layout, 0, 1000, BIG, 1, false)),
      )
    }
  })

  itNative('transcodeCursor and transcodeChangeBatch return the native shapes', () => {
    const oid = new BSON.ObjectId('65a1b2c3d4e5f60718293a4b')
    const reply = BSON.serialize({
      id: BSON.Long.fromString('1234567890123'),
      ns: 'db.coll',
      firstBatch: [{ _id: oid, x: 1.5 }, { _id: 2, s: 'é', n: BSON.Long.fromString('9223372036854775807') }],
      postBatchResumeToken: { _data: '8265A1' },
    })
    for (const layout of [0, 1, 2, 3]) {
      for (const flags of [0, 1, 2]) {
        expect(outcome(() => fb.transcodeCursor(reply, layout, flags, 1000, BIG))).toBe(
          outcome(() => native.transcodeCursor(reply, layout, flags, 1000, BIG)),
        )
      }
    }
    const r = fb.transcodeCursor(reply, 2, 0, 1000, BIG)
    expect(r.id).toBe(1234567890123n)
    expect(Buffer.isBuffer(r.postBatchResumeToken)).toBe(true)
    const events = [
      {
        _id: { _data: '826500' },
        operationType: 'update',
        clusterTime: new BSON.Timestamp({ t: 1700000000, i: 7 }),
        wallTime: new Date(1700000000123),
        ns: { db: 'db', coll: 'c' },
        documentKey: { _id: oid },
        updateDescription: { updatedFields: { a: new BSON.Int32(2) }, removedFields: [] },
        fullDocument: { _id: oid, a: new BSON.Double(2), big: BSON.Long.fromString('-9223372036854775808') },
      },
      { _id: { a: 1, b: 'x' }, operationType: 'insert', fullDocument: null, splitEvent: { fragment: 1, of: 2 } },
    ]
    const changes = BSON.serialize({ id: 0, ns: 'db.c', nextBatch: events, postBatchResumeToken: { x: 1 } })
    for (const whole of [false, true]) {
      for (const flags of [0, 1, 2]) {
        expect(outcome(() => fb.transcodeChangeBatch(changes, whole, flags, 1000, BIG))).toBe(
          outcome(() => native.transcodeChangeBatch(changes, whole, flags, 1000, BIG)),
        )
      }
    }
    // Broken replies: same errors.
    for (let cut = 0; cut < changes.length; cut += 7) {
      const b = Buffer.from(changes)
      b[cut] ^= 0x5a
      for (const whole of [false, true]) {
        expect(outcome(() => fb.transcodeChangeBatch(b, whole, 0, 1000, BIG))).toBe(
          outcome(() => native.transcodeChangeBatch(b, whole, 0, 1000, BIG)),
        )
        expect(outcome(() => fb.transcodeCursor(b, 2, 1, 1000, BIG))).toBe(
          outcome(() => native.transcodeCursor(b, 2, 1, 1000, BIG)),
        )
      }
    }
  })
})

function thrown(f: () => unknown): any {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error('did not throw')
}

describe('limits and errors', () => {
  const nested = (depth: number) => {
    let v: any = { leaf: 1 }
    for (let i = 1; i < depth; i++) v = { a: v }
    return Buffer.from(BSON.serialize(v))
  }

  it('maxDepth: BSON_TOO_DEEP in every dialect, at the offending nested document', () => {
    const buf = nested(10)
    for (const flags of [0, 1, 2]) {
      expect(() => fbTranscode(buf, flags, 10, BIG)).not.toThrow()
      const e = thrown(() => fbTranscode(buf, flags, 9, BIG))
      expect(e.name).toBe('TranscodeError')
      expect(e.code).toBe('BSON_TOO_DEEP')
      expect(e.offset).toBe(63) // the 10th-level document: 7 bytes per level
    }
  })

  it('very deep input is BSON_TOO_DEEP, not a stack overflow', () => {
    const depth = 20000
    const parts: number[] = []
    // Built by hand: js-bson cannot serialize this deep.
    const build = (d: number): Buffer => {
      let inner = Buffer.from([5, 0, 0, 0, 0])
      for (let i = 0; i < d; i++) {
        const len = 4 + 3 + inner.length + 1
        const b = Buffer.alloc(len)
        b.writeInt32LE(len, 0)
        b[4] = 3
        b[5] = 0x61
        b[6] = 0
        inner.copy(b, 7)
        b[len - 1] = 0
        inner = b
      }
      return inner
    }
    void parts
    const buf = build(depth)
    for (const flags of [0, 1, 2]) expect(thrown(() => fbTranscode(buf, flags, 1000, BIG)).code).toBe('BSON_TOO_DEEP')
  })

  it('maxOutputBytes: BSON_OUTPUT_TOO_LARGE, and batches share the cap', () => {
    const buf = Buffer.from(BSON.serialize({ s: 'x'.repeat(100) }))
    for (const flags of [0, 1, 2]) {
      expect(thrown(() => fbTranscode(buf, flags, 1000, 50)).code).toBe('BSON_OUTPUT_TOO_LARGE')
      expect(() => fbTranscode(buf, flags, 1000, 200)).not.toThrow()
      const e = thrown(() => fb.transcodeBatch([buf, buf, buf], 2, flags, 1000, 250, 1))
      expect(e.code).toBe('BSON_OUTPUT_TOO_LARGE')
      expect(e.index).toBe(2)
    }
  })

  it('errors carry name, code, offset and (batches) index', () => {
    const good = Buffer.from(BSON.serialize({ a: true }))
    const bad = Buffer.from(good)
    bad[good.length - 2] = 7 // boolean byte
    for (const flags of [0, 1, 2]) {
      const e = thrown(() => fbTranscode(bad, flags, 1000, BIG))
      expect(e).toBeInstanceOf(Error)
      expect(e.name).toBe('TranscodeError')
      expect(e.code).toBe('BSON_BAD_BOOLEAN')
      expect(e.offset).toBe(good.length - 2)
      expect(e.index).toBeUndefined()
      const b = thrown(() => fb.transcodeBatch(Buffer.concat([good, bad]), 2, flags, 1000, BIG, 1))
      expect([b.code, b.index, b.offset]).toEqual(['BSON_BAD_BOOLEAN', 1, 2 * good.length - 2])
      const l = thrown(() => fb.transcodeBatch([good, bad], 2, flags, 1000, BIG, 1))
      expect([l.code, l.index, l.offset]).toEqual(['BSON_BAD_BOOLEAN', 1, good.length - 2])
    }
    expect(() => fbTranscode('nope', 0, 1000, BIG)).toThrow(/Uint8Array/)
    expect(() => fb.__panicForTests()).toThrow(Error)
    // The packed single-document form and the one-argument form.
    expect(fb.transcode(good, 2 + 1000 * 256, BIG)).toBe('{"a":true}')
    expect(fb.transcode(good)).toBe('{"a":true}')
    expect(thrown(() => fb.transcode(nested(3), 1 + 2 * 256)).code).toBe('BSON_TOO_DEEP')
  })

  it('every error code the fallback can raise is reachable', () => {
    const seen = new Set<string>()
    for (const d of docs(51, 800, 1)) {
      for (const flags of [0, 1]) {
        try {
          fbTranscode(d, flags, 4, 300)
        } catch (e: any) {
          seen.add(e.code)
        }
      }
    }
    for (const c of ['BSON_TRUNCATED', 'BSON_BAD_LENGTH', 'BSON_BAD_TERMINATOR', 'BSON_UNKNOWN_TYPE', 'BSON_TOO_DEEP', 'BSON_OUTPUT_TOO_LARGE']) {
      expect(seen).toContain(c)
    }
  })
})

describe('backend selection', () => {
  it('BSON2JSON_FORCE_FALLBACK=1 selects the fallback and warns exactly once', () => {
    const script = `
      let warnings = 0
      process.on('warning', (w) => { if (w.code === 'BSON2JSON_FALLBACK') warnings++ })
      const a = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))})
      require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'backend.js'))}).loadBackend()
      require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'change-stream.js'))})
      setImmediate(() => console.log(JSON.stringify({ backend: a.backend, warnings, json: a.toJSON(Buffer.from([5,0,0,0,0])) })))
    `
    const out = execFileSync(process.execPath, ['-e', script], {
      env: { ...process.env, BSON2JSON_FORCE_FALLBACK: '1' },
      encoding: 'utf8',
    })
    expect(JSON.parse(out)).toEqual({ backend: 'fallback', warnings: 1, json: '{}' })
  })
})

describe('the BSON2JSON_FALLBACK warning says what the loader looked for and what to do', () => {
  const { currentPlatform } = require('../lib/backend.js')
  const platform: string = currentPlatform()
  const root = path.join(__dirname, '..')
  const rootPkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  const packageName = `bson2json-${platform}`
  const file = `bson2json.${platform}.node`

  /** A copy of the package's JavaScript in a temporary directory, set up as one situation. */
  function situation(o: {
    checkout?: boolean
    optional?: boolean
    targets?: string[]
    localNode?: string
    platformPackageNode?: string
  }): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'bson2json-loader-'))
    for (const f of ['index.js', 'binding.js', 'lib']) cpSync(path.join(root, f), path.join(dir, f), { recursive: true })
    const pkg = { ...rootPkg, napi: { ...rootPkg.napi } }
    if (o.targets) pkg.napi.targets = o.targets
    if (o.optional) pkg.optionalDependencies = { [packageName]: pkg.version }
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg))
    mkdirSync(path.join(dir, 'node_modules'))
    symlinkSync(path.join(root, 'node_modules', 'bson'), path.join(dir, 'node_modules', 'bson'))
    if (o.checkout) {
      writeFileSync(path.join(dir, 'Cargo.toml'), '[workspace]\n')
      mkdirSync(path.join(dir, 'crates'))
    }
    if (o.localNode !== undefined) writeFileSync(path.join(dir, file), o.localNode)
    if (o.platformPackageNode !== undefined) {
      const p = path.join(dir, 'node_modules', packageName)
      mkdirSync(p)
      writeFileSync(path.join(p, 'package.json'), JSON.stringify({ name: packageName, version: pkg.version, main: file }))
      writeFileSync(path.join(p, file), o.platformPackageNode)
    }
    return dir
  }

  /** Loads the copy in a child process; returns its backend and its BSON2JSON_FALLBACK warnings. */
  function load(dir: string): { backend: string; warnings: string[] } {
    const script = `
      const warnings = []
      process.on('warning', (w) => { if (w.code === 'BSON2JSON_FALLBACK') warnings.push(w.message) })
      const b = require(${JSON.stringify(path.join(dir, 'index.js'))})
      setImmediate(() => console.log(JSON.stringify({ backend: b.backend, warnings })))
    `
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const k of Object.keys(env)) if (k.startsWith('NAPI_RS_') || k === 'BSON2JSON_FORCE_FALLBACK') delete env[k]
    try {
      return JSON.parse(execFileSync(process.execPath, ['--no-warnings', '-e', script], { env, encoding: 'utf8' }))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  function expectWarning(r: { backend: string; warnings: string[] }, ...parts: string[]): string {
    expect(r.backend).toBe('fallback')
    expect(r.warnings).toHaveLength(1)
    const m = r.warnings[0]
    expect(m).toContain(`no native addon loaded for ${platform}.`)
    expect(m).not.toMatch(/npm has a bug|Cannot find native binding/)
    for (const p of parts) expect(m).toContain(p)
    return m
  }

  it('a source checkout without a build: run `npm run build`', () => {
    expectWarning(
      load(situation({ checkout: true })),
      `${file}: not there`,
      `package ${packageName}: not installed`,
      'this is a source checkout without a build: run `npm run build`',
    )
  })

  it('a tarball packed from a clone (no platform packages listed): install the built clone', () => {
    expectWarning(
      load(situation({})),
      `${file}: not there`,
      `package ${packageName}: not installed`,
      'it was packed from a clone',
      '`npm install /path/to/clone` or `npm link`',
    )
  })

  it('an install without its platform package: install it, naming the version', () => {
    const m = expectWarning(
      load(situation({ optional: true })),
      `package ${packageName}: not installed`,
      `the optional dependency ${packageName} was not installed`,
      `npm install ${packageName}@${rootPkg.version}`,
    )
    expect(m).not.toContain('packed from a clone')
  })

  it('a platform with no prebuilt binary: build from a clone, or keep the fallback', () => {
    expectWarning(
      load(situation({ optional: true, targets: ['x86_64-unknown-freebsd'] })),
      `no prebuilt binary is published for ${platform} (prebuilt: freebsd-x64)`,
      'npm install /path/to/clone',
    )
  })

  it('a binary that is there but does not load: says why (the dlopen error) and to rebuild or reinstall', () => {
    expectWarning(
      load(situation({ checkout: true, localNode: 'not a shared object' })),
      `${file}: present but does not load:`,
      'rebuild it with `npm run build`',
    )
    expectWarning(
      load(situation({ optional: true, platformPackageNode: 'not a shared object' })),
      `package ${packageName} (`,
      'installed but does not load:',
      `reinstall bson2json (rm -rf node_modules/${packageName} && npm install)`,
    )
  })
})
