/**
 * The one options table (lib/option-table.js) drives these checks:
 * - every option is accepted by exactly the APIs it lists and rejected by every other with a
 *   coded TypeError that gives a hint (the closest name, or the APIs that take it);
 * - every CLI flag it lists parses for exactly its commands, and is an unknown flag elsewhere;
 * - its defaults, flag bits and limits are those of the binding;
 * - with every option name (and every name of a nested option object) set on
 *   `Object.prototype`, nothing any API does changes;
 * - docs/options.md is what the table gives, and the .d.ts option types name the same options.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BSON } from 'bson'
import * as M7 from 'mongodb'
import { useMongo } from '../support/mongo'

const require = createRequire(import.meta.url)
const b2j = require('../..')
const { APIS, COMMANDS, ROWS, OPTIONS, namesOf, flagsOf, apisOf, rowOf } = require('../../lib/option-table')
const { checkOptions } = require('../../lib/kafka/options')
const native = require('../../lib/native')
const root = join(__dirname, '..', '..')

const doc = BSON.serialize({ _id: 1, a: 1, b: { c: 2 }, ssn: 'S-1', s: 'x' })
const dir = mkdtempSync(join(tmpdir(), 'b2j-opt-table-'))
const keyFile = join(dir, 'key')
writeFileSync(keyFile, 'k3y\n')
const fieldFile = join(dir, 'fields')
writeFileSync(fieldFile, 'a\n')
const pemFile = join(dir, 'pem')
writeFileSync(pemFile, '-----BEGIN CERTIFICATE-----\n')

const mongo = useMongo()
let client: M7.MongoClient
let coll: M7.Collection
beforeAll(async () => {
  client = new M7.MongoClient(mongo.uri)
  await client.connect()
  coll = client.db(mongo.dbName('opt_table')).collection('c')
  await coll.insertOne({ _id: 1 as any, a: 1 })
})
afterAll(async () => {
  await client?.close()
})

/** A value each option accepts, from its type; options of other types get one of their own. */
function example(row: any): unknown {
  const t = row.type
  if (t.kind === 'enum') return t.values[t.values.length - 1]
  if (t.kind === 'boolean') return row.default === true ? true : false
  if (t.kind === 'int') return Math.max(t.min, 1)
  if (t.kind === 'string') return 'x'
  if (t.kind === 'function') return () => {}
  const own: Record<string, unknown> = {
    validation: { utf8: true },
    projection: { a: 1 },
    clientProjection: { a: 1 },
    redact: { paths: ['ssn'] },
    fieldsAsRaw: {},
    highWaterMark: 16,
    readableHighWaterMark: 16,
    writableHighWaterMark: 16,
    session: undefined, // set per call: a driver session
    signal: new AbortController().signal,
    sort: { a: 1 },
    limit: 1,
    skip: 0,
    hint: { _id: 1 },
    maxTimeMS: 1000,
    collation: { locale: 'simple' },
    comment: 'c',
    let: { x: 1 },
    allowDiskUse: true,
    readConcern: { level: 'local' },
    min: { _id: 0 },
    max: { _id: 9 },
    returnKey: false,
    showRecordId: false,
    bypassDocumentValidation: false,
    resumeAfter: { _data: '826' },
    startAfter: { _data: '826' },
    startAtOperationTime: new M7.Timestamp({ t: 1, i: 0 }),
    source: undefined, // set per call: a Collection
    pipeline: [],
    brokers: '127.0.0.1:9092',
    kafka: {},
    topics: { 'd.c': 't2' },
    include: ['d'],
    exclude: ['x'],
    format: 'bson2json', // Kafka's (the stream's is an enum)
  }
  if (!(row.name in own)) throw new Error(`no example for option ${row.name}: add one`)
  return own[row.name]
}

const KAFKA_BASE = () => ({ source: coll, brokers: ['127.0.0.1:9092'], topic: 't', checkpointTopic: 'c', id: 'i' })

/** Runs `options` through `api`: the error its options cause, or null when it takes them. */
async function attempt(api: string, name: string, value: unknown): Promise<any> {
  const options: any = { [name]: value }
  if (name === 'session') options.session = client.startSession()
  if (name === 'source') options.source = coll
  // an option that goes with another (for an API that takes both)
  if (name === 'dateRenderMode' && (api === 'row' || api === 'watch')) options.rowFormat = 'powersync'
  if ((name === 'rowFormat' || name === 'dateRenderMode') && api === 'watch') options.rows = true
  try {
    let r: any
    switch (api) {
      case 'toJSON':
        b2j.toJSON(doc, options)
        b2j.toJSONBuffer(doc, options)
        b2j.cursorBatch(BSON.serialize({ id: 0n, ns: 'd.c', firstBatch: [{ a: 1 }] }), options)
        await b2j.toJSONAsync(doc, options)
        return null
      case 'batch':
        b2j.toJSONList([doc], options)
        b2j.toJSONArray([doc], options)
        b2j.toNDJSON([doc], options)
        await b2j.toNDJSONAsync([doc], options)
        return null
      case 'row':
        b2j.toRow(doc, options)
        b2j.toRows([doc], options)
        await b2j.toRowsAsync([doc], options)
        return null
      case 'stream':
        b2j.createTranscodeStream(options).destroy()
        return null
      case 'find':
        r = b2j.find(coll, {}, options)
        break
      case 'aggregate':
        r = b2j.aggregate(coll, [], options)
        break
      case 'watch':
        r = b2j.watch(coll, [], options)
        break
      case 'kafka':
        checkOptions({ ...KAFKA_BASE(), ...options })
        return null
      default:
        throw new Error(`unknown API ${api}`)
    }
    // find, aggregate and watch report an argument error on first use (they never throw)
    try {
      if (api !== 'watch') await r.toArray()
      else await Promise.race([r.next(), new Promise((resolve) => setTimeout(resolve, 300))])
    } finally {
      await r.close().catch(() => {})
    }
    return null
  } catch (e: any) {
    if (e && typeof e.code === 'string' && e.code.startsWith('ERR_INVALID_ARG')) return e
    if (e instanceof TypeError || e instanceof RangeError) return e
    return null // a server's answer to what was sent: the option was taken
  } finally {
    if (options.session) await options.session.endSession()
  }
}

describe('the options table', () => {
  it('names each API and command it uses; every row is well formed', () => {
    for (const row of ROWS) {
      expect(row.apis.length, row.name).toBeGreaterThan(0)
      expect(typeof row.doc, row.name).toBe('string')
      expect(row.default !== undefined || typeof row.defaultText === 'string', row.name).toBe(true)
      for (const c of Object.keys(row.cli || {})) expect(COMMANDS).toContain(c)
    }
  })

  for (const row of ROWS) {
    it(`${row.name}: accepted by exactly ${row.apis.join(', ')}`, async () => {
      const value = example(row)
      for (const api of Object.keys(APIS)) {
        // the API takes the name as another option (format: the stream's output, Kafka's records)
        if (!row.apis.includes(api) && apisOf(row.name).includes(api)) continue
        const e = await attempt(api, row.name, value)
        if (row.apis.includes(api)) {
          expect(e, `${api} should take ${row.name}: ${e && e.message}`).toBeNull()
        } else {
          expect(e, `${api} should reject ${row.name}`).toBeInstanceOf(TypeError)
          expect(e.code, `${api} ${row.name}: ${e.message}`).toBe('ERR_INVALID_ARG_VALUE')
          expect(e.message, api).toMatch(new RegExp(`unknown option '${row.name}'|aggregate\\(\\) has no projection`))
          // a hint: the closest name, the APIs that take it, or (aggregate) where to project
          expect(e.message, api).toMatch(/\((did you mean '\w+'\?|an option of .+ only|for .+ use dialect: '\w+')\)$|clientProjection/)
        }
      }
    })
  }

  /** Arguments a flag needs besides itself, and the flags other flags need. */
  const FLAG_VALUES: Record<string, string> = {
    fields: 'a',
    fieldFile,
    exclude: 'a',
    redact: 'a',
    redactKeyFile: keyFile,
    projection: '{"a":1}',
    sort: '{"a":1}',
    pipeline: '[]',
    resumeAfterText: '8263',
    startAt: '1700000000',
    kafka: '127.0.0.1:9092',
    uri: 'mongodb://127.0.0.1:1',
    db: 'd',
    collection: 'c',
    kafkaTimeout: '5',
    kafkaRetryTimeout: '5',
    mongoRetryTimeout: '5',
    replyTimeout: '5',
    kafkaCa: pemFile,
    kafkaCert: pemFile,
    kafkaKey: pemFile,
    kafkaSasl: 'PLAIN',
    kafkaUser: 'u',
    kafkaPasswordFile: keyFile,
    jsonFormat: 'canonical',
    topicMap: 'd.c=t2',
    include: 'd',
    format: 'bson2json',
  }
  const NEEDS: Record<string, string[]> = {
    '--redact-key-file': ['--redact', 'a'],
    '--collection': ['--db', 'd'],
    '--kafka-cert': ['--kafka-key', pemFile],
    '--kafka-key': ['--kafka-cert', pemFile],
    '--kafka-sasl': ['--kafka-user', 'u', '--kafka-password-file', keyFile],
    '--kafka-user': ['--kafka-sasl', 'PLAIN', '--kafka-password-file', keyFile],
    '--kafka-password-file': ['--kafka-sasl', 'PLAIN', '--kafka-user', 'u'],
    '--jsonFormat': ['--dialect', 'canonical'],
    '--snapshot': ['--db', 'd', '--collection', 'c'],
    '--on-history-lost': ['--db', 'd', '--collection', 'c'],
  }
  /** A command's own flag spelled as another command's option flag (export -d is --db, dump -d is --dialect). */
  const OWN_SPELLING: Record<string, Record<string, [string, string | true]>> = {
    // export writes a JSON array itself (no API option of find); -d is mongoexport's --db
    export: { '-d': ['db', 'v'], '--array': ['array', true] },
  }
  /** What each command needs to run at all. */
  const REQUIRED: Record<string, string[]> = {
    dump: [],
    export: ['--uri', 'mongodb://127.0.0.1:1/d', '--collection', 'c'],
    cdc: ['--uri', 'mongodb://127.0.0.1:1', '--kafka', '127.0.0.1:9092', '--topic', 't', '--checkpoint-topic', 'cp', '--id', 'i'],
  }
  const parseArgs = Object.fromEntries(COMMANDS.map((c: string) => [c, require(`../../lib/cli/${c}`).parseArgs]))
  function flagValue(f: any): string[] {
    if (!f.takesValue) return [f.flag]
    let v: string
    if (Object.hasOwn(FLAG_VALUES, f.key)) v = FLAG_VALUES[f.key]
    else if (f.spec.values || f.row.type.kind === 'enum') v = String((f.spec.values || f.row.type.values).at(-1))
    else if (f.row.type.kind === 'int' || f.spec.int) v = String(Math.max(1, f.spec.min ?? f.row.type.min ?? 0))
    else if (f.row.type.kind === 'string') v = 'x'
    else throw new Error(`no CLI value for ${f.flag}: add one`)
    return [f.flag, v]
  }

  for (const command of COMMANDS) {
    it(`${command}: every option flag the table gives it parses, into its option's key; the others' are unknown`, () => {
      const mine = flagsOf(command)
      for (const f of mine) {
        const req = REQUIRED[command].filter((_, i, a) => a[i] !== f.flag && a[i - 1] !== f.flag)
        const argv = [...flagValue(f), ...(NEEDS[f.flag] ?? []), ...req]
        let o: any
        try {
          o = parseArgs[command](argv)
        } catch (e: any) {
          throw new Error(`${command} ${argv.join(' ')}: ${e.message}`)
        }
        expect(o, `${command} ${f.flag}`).toBeTruthy()
      }
      const given = new Set(mine.map((f: any) => f.flag))
      const others = COMMANDS.filter((c: string) => c !== command).flatMap((c: string) => flagsOf(c)).filter((f: any) => !given.has(f.flag))
      for (const f of others) {
        const own = OWN_SPELLING[command]?.[f.flag]
        if (own !== undefined) {
          // taken, as the command's own flag: it gives that, not the other command's option
          const [key, v] = own
          const o = parseArgs[command]([...REQUIRED[command], f.flag, ...(v === true ? [] : [v])])
          expect(o[key], `${command} ${f.flag}`).toBe(v)
          continue
        }
        let e: any = null
        try {
          parseArgs[command]([...flagValue(f), ...REQUIRED[command]])
        } catch (x) {
          e = x
        }
        expect(e, `${command} should not take ${f.flag}`).not.toBeNull()
        expect(e.name).toBe('UsageError')
        expect(e.message, `${command} ${f.flag}`).toMatch(new RegExp(`^unknown option '${f.flag}'`))
      }
    })
  }

  it("an enum flag's values and an integer flag's range come from the table (usage errors name the flag)", () => {
    const { parseArgs: dump } = require('../../lib/cli/dump')
    expect(dump(['--dialect', 'relaxed']).dialect).toBe('relaxed')
    expect(dump(['-d', 'canonical']).dialect).toBe('canonical')
    expect(() => dump(['-d', 'xml'])).toThrow(/^-d must be compat, relaxed or canonical, got 'xml'$/)
    expect(() => dump(['--threads', '257'])).toThrow(/^--threads must be at most 256$/)
    expect(dump(['--threads', '3']).threads).toBe(3)
    expect(dump(['--array']).array).toBe(true)
    const { parseArgs: cdc } = require('../../lib/cli/cdc')
    expect(() => cdc([...REQUIRED.cdc, '--on-history-lost', 'x'])).toThrow(/^--on-history-lost must be fail or snapshot, got 'x'$/)
    expect(() => cdc([...REQUIRED.cdc, '--snapshot-parallel', '65'])).toThrow(/^--snapshot-parallel must be at most 64$/)
    expect(cdc([...REQUIRED.cdc, '--commit-interval-ms', '0']).commitIntervalMS).toBe(0)
  })

  it("the defaults, limits and flag bits it states are the binding's", () => {
    expect(OPTIONS.maxDepth.default).toBe(native.DEFAULT_MAX_DEPTH)
    expect(OPTIONS.maxOutputBytes.default).toBe(native.DEFAULT_MAX_OUTPUT_BYTES)
    // every flag the table names is a member of the binding's OptionFlag, each used once
    const used = ROWS.flatMap((r: any) => Object.values(r.flags || {}))
    expect([...used].sort()).toEqual(Object.keys(native.OptionFlag).filter((k) => Number.isNaN(Number(k))).sort())
  })

  it('Kafka: the numeric defaults are the Kafka options module\'s', () => {
    const { DEFAULTS, withDefaults } = require('../../lib/kafka/options')
    for (const k of namesOf('kafka')) {
      const row = rowOf('kafka', k)
      if (row.type.kind === 'int' && typeof row.default === 'number') expect(DEFAULTS[k], k).toBe(row.default)
    }
    expect(DEFAULTS.maxTransactionBytes).toBe(8 * 1024 * 1024)
    const o = withDefaults({ topic: 't', maxRequestBytes: 7 })
    expect(Object.getPrototypeOf(o)).toBeNull()
    expect(o.maxRequestBytes).toBe(7)
    expect(o.commitIntervalMS).toBe(OPTIONS.commitIntervalMS.default)
  })

  it('docs/options.md is what the table gives (node scripts/options-doc.mjs --check)', () => {
    const r = spawnSync(process.execPath, [join(root, 'scripts/options-doc.mjs'), '--check'], { encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })

  it('the .d.ts option types name the options the table gives each API', () => {
    const dts = readFileSync(join(root, 'index.d.ts'), 'utf8') + readFileSync(join(root, 'kafka.d.ts'), 'utf8')
    /** The member names of `interface NAME` (its own body), and what it extends. */
    function members(name: string): { names: Set<string>; base: string } {
      const m = new RegExp(`export interface ${name}(?:<[^>]*>)? (?:extends ([^{]+) )?\\{`).exec(dts)
      if (!m) throw new Error(`no interface ${name}`)
      let depth = 1
      let i = m.index + m[0].length
      const start = i
      while (depth > 0) {
        if (dts[i] === '{') depth++
        else if (dts[i] === '}') depth--
        i++
      }
      const body = dts.slice(start, i - 1)
      const names = new Set<string>()
      let d = 0
      for (const line of body.split('\n')) {
        const t = line.trim()
        const mm = d === 0 ? /^(\w+)\??:/.exec(t) : null
        if (mm) names.add(mm[1])
        d += (t.match(/\{/g) || []).length - (t.match(/\}/g) || []).length
      }
      return { names, base: (m[1] || '').trim() }
    }
    /** Every member of an interface and its bases (`Omit<X, 'a' | 'b'>` drops a, b). */
    function all(spec: string): Set<string> {
      const omit = /^Omit<(\w+), ([^>]+)>$/.exec(spec)
      if (omit) {
        const drop = new Set(omit[2].split('|').map((s) => s.trim().replace(/'/g, '')))
        return new Set([...all(omit[1])].filter((n) => !drop.has(n)))
      }
      const { names, base } = members(spec)
      const out = new Set(names)
      if (base) for (const b of base.split(/,(?![^<]*>)/)) for (const n of all(b.trim())) out.add(n)
      return out
    }
    const TYPES: Record<string, string> = {
      toJSON: 'TranscodeOptions',
      row: 'RowOptions',
      batch: 'BatchOptions',
      stream: 'TranscodeStreamOptions',
      find: 'FindOptions',
      aggregate: 'AggregateOptions',
      watch: 'WatchOptions',
      kafka: 'ChangeStreamToKafkaOptions',
    }
    for (const [api, type] of Object.entries(TYPES)) {
      expect([...all(type)].sort(), `${type} (${api})`).toEqual([...namesOf(api)].sort())
    }
  })
})

describe('options are data, read once', () => {
  /** Every option name, and every name of a nested option object (redact's, validation's). */
  const ALL = [...new Set([...ROWS.map((r: any) => r.name), 'paths', 'with', 'key', 'utf8', '0', 'cursor'])]
  // `value` is also a property descriptor's field, which Object.defineProperty reads through the
  // prototype: set there, it breaks the runtime itself (the Kafka check below covers it alone)
  const NAMES = ALL.filter((n) => n !== 'value')
  const POLLUTION: Record<string, unknown> = {
    dialect: 'canonical',
    utf8: 'replace',
    maxDepth: 1,
    maxOutputBytes: 1,
    bsonVersion: 6,
    promoteLongs: false,
    promoteValues: false,
    promoteBuffers: true,
    bsonRegExp: true,
    validation: { utf8: false },
    projection: { a: 1 },
    clientProjection: { a: 1 },
    redact: { paths: ['a'] },
    paths: ['a', 'b', 'ssn'],
    with: 'hmac-sha256',
    key: Buffer.from('attacker'),
    threads: 256,
    format: 'array',
    chunkSize: 1,
    skipInvalid: true,
    concurrency: 7,
    useBigInt64: true,
    raw: true,
    index: 3,
    '0': 'ssn',
  }
  const pollute = (names = NAMES) => {
    for (const n of names) {
      Object.defineProperty(Object.prototype, n, { value: Object.hasOwn(POLLUTION, n) ? POLLUTION[n] : 'polluted', configurable: true, writable: true, enumerable: false })
    }
  }
  const clean = (names = NAMES) => {
    for (const n of names) delete (Object.prototype as any)[n]
  }

  /** What the APIs give: the in-process ones run whole; a cursor's and a change stream's resolved options and command. */
  async function everything() {
    const out: unknown[] = []
    const redact = { paths: ['ssn'] }
    out.push(b2j.toJSON(doc, { dialect: 'relaxed' }))
    out.push(b2j.toJSON(doc, { redact }))
    out.push(b2j.toJSON(doc, { projection: { s: 0 } }))
    out.push(b2j.toJSONBuffer(doc, { redact }).toString())
    out.push(b2j.toJSONList([doc, doc], { redact }))
    out.push(b2j.toJSONArray([doc], {}))
    out.push(b2j.toNDJSON([doc], { dialect: 'canonical' }).toString())
    out.push(b2j.cursorBatch(BSON.serialize({ id: 0n, ns: 'd.c', firstBatch: [{ a: 1, ssn: 2 }] }), { redact }).docs)
    out.push(await b2j.toJSONAsync(doc, { redact }))
    out.push(await b2j.toJSONListAsync([doc], {}))
    const s = b2j.createTranscodeStream({ redact })
    const chunks: Buffer[] = []
    s.on('data', (c: Buffer) => chunks.push(c))
    s.end(Buffer.concat([doc, doc]))
    await new Promise((r) => s.on('end', r))
    out.push(Buffer.concat(chunks).toString())
    const seen = (c: any) => {
      const { flags, packed, maxDepth, maxOutputBytes, dialect, utf8, bsonVersion, threads, shaper } = c._o
      return { o: { flags, packed, maxDepth, maxOutputBytes, dialect, utf8, bsonVersion, threads, shaped: shaper !== undefined }, cmd: JSON.stringify(c._cmd ?? null) }
    }
    const cursors = [b2j.find(coll, {}, { redact }), b2j.aggregate(coll, [], {}), b2j.watch(coll, [], {})]
    for (const c of cursors) out.push(seen(c), c._whole, c._split, c._position, c._operationTime)
    return out
  }

  it('with every option name set on Object.prototype, every API gives what it gave without', async () => {
    const want = await everything()
    pollute()
    let got: unknown[]
    try {
      got = await everything()
    } finally {
      clean()
    }
    expect(got).toEqual(want)
    // and the Kafka checks and defaults see no option that was not given (`value` too)
    const { withDefaults } = require('../../lib/kafka/options')
    const base = KAFKA_BASE()
    const plain = [checkOptions(base), { ...withDefaults(base) }]
    let polluted: unknown[] = []
    let thrown: unknown = null
    pollute(ALL)
    try {
      polluted = [checkOptions(base), { ...withDefaults(base) }]
    } catch (e) {
      thrown = e
    } finally {
      clean(ALL)
    }
    expect(thrown).toBeNull()
    expect(polluted).toEqual(plain)
  })

  it("an in-place edit between calls is honoured: redaction never fails open", () => {
    for (const api of ['toJSON', 'toJSONBuffer', 'toJSONList']) {
      const opts = { redact: { paths: ['a'] }, projection: { _id: 0 } as any }
      const call = () => String(api === 'toJSONList' ? b2j.toJSONList([doc], opts)[0] : b2j[api](doc, opts))
      expect(JSON.parse(call())).toEqual({ a: null, b: { c: 2 }, ssn: 'S-1', s: 'x' })
      opts.redact.paths.push('ssn')
      expect(JSON.parse(call()), api).toEqual({ a: null, b: { c: 2 }, ssn: null, s: 'x' })
      opts.projection.s = 0
      expect(JSON.parse(call()), api).toEqual({ a: null, b: { c: 2 }, ssn: null })
      ;(opts.redact as any).with = 'hmac-sha256'
      ;(opts.redact as any).key = Buffer.from('k')
      expect(JSON.parse(call()).ssn, api).toMatch(/^[0-9a-f]{64}$/)
    }
  })

  it('a frozen redact object whose paths array is not frozen: an edit of the array is still seen', () => {
    const paths = ['a']
    const opts = { redact: Object.freeze({ paths }) }
    expect(JSON.parse(b2j.toJSON(doc, opts)).ssn).toBe('S-1')
    paths.push('ssn')
    expect(JSON.parse(b2j.toJSON(doc, opts)).ssn).toBeNull()
    // a frozen projection cannot change: it is found again without a check, and stays right
    const projection = Object.freeze({ a: 1 })
    for (let i = 0; i < 3; i++) expect(JSON.parse(b2j.toJSON(doc, { projection }))).toEqual({ _id: 1, a: 1 })
  })

  it('a getter on an option runs once per call', () => {
    let reads = 0
    const o = {
      get dialect() {
        reads++
        return reads === 1 ? 'canonical' : 'compat'
      },
    }
    expect(b2j.toJSON(BSON.serialize({ n: 1 }), o)).toBe('{"n":{"$numberInt":"1"}}')
    expect(reads).toBe(1)
  })
})
