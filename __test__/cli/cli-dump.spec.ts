import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { createRequire } from 'node:module'
import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { BSON } from 'bson'

// `bson2json [dump] --pretty / --fields / --fieldFile` and the subcommand dispatcher.

const require = createRequire(import.meta.url)
const { toJSON, toNDJSON } = require('../../index.js')
const { Indenter, prettyJSON } = require('../../lib/cli/pretty.js')
const { serverProjection } = require('../../lib/cli/fields.js')
const { readArchive } = require('../../lib/cli/archive.js')
const BIN = resolve(__dirname, '../../bin/bson2json.js')

interface Result {
  code: number | null
  stdout: string
  stderr: string
}

function cli(args: string[], stdin?: Uint8Array): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (c) => out.push(c))
    child.stderr.on('data', (c) => err.push(c))
    child.on('error', fail)
    child.on('close', (code) =>
      done({
        code,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err)
          .toString()
          .split('\n')
          .filter((l) => !l.includes('BSON2JSON_FALLBACK') && !l.includes('--trace-warnings'))
          .join('\n'),
      }),
    )
    child.stdin.on('error', () => {})
    child.stdin.end(stdin ?? new Uint8Array(0))
  })
}

const objects = [
  { _id: 1, a: { b: 1, c: [1, { b: 2, x: 3 }, [{ b: 4 }, 'q']], d: 'x' }, s: 'brackets {[,:]} "quoted" \\ back', e: {}, arr: [] },
  { _id: 2, a: 5, s: 'näme 東京', t: [{ u: { v: 1, w: 2 } }, { u: 3 }, { z: 1 }] },
  { _id: 3, a: { c: 'no b' }, nested: { deep: { er: [[]] } } },
  { a: { b: null }, s: '', noId: true },
]
const docs = objects.map((o) => BSON.serialize(o))
const dump = Buffer.concat(docs)

let dir: string
let file: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bson2json-cli-dump-'))
  file = join(dir, 'in.bson')
  writeFileSync(file, dump)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** What Go's json.Indent(…, "", "\t") gives for compact JSON: JSON.stringify's tab layout. */
function tabIndent(line: string): string {
  return JSON.stringify(JSON.parse(line), null, '\t')
}

/** The server's inclusion projection on plain objects (the reference for --fields). */
function project(v: any, paths: string[][], top = true): any {
  const out: any = {}
  const whole = new Set(paths.filter((p) => p.length === 1).map((p) => p[0]))
  if (top) whole.add('_id')
  for (const [k, val] of Object.entries(v)) {
    if (whole.has(k)) {
      out[k] = val
      continue
    }
    const sub = paths.filter((p) => p.length > 1 && p[0] === k).map((p) => p.slice(1))
    if (sub.length === 0) continue
    const inner = (x: any): any => (Array.isArray(x) ? x.filter((e) => typeof e === 'object' && e !== null).map(inner) : project(x, sub, false))
    if (Array.isArray(val)) out[k] = inner(val)
    else if (typeof val === 'object' && val !== null) out[k] = project(val, sub, false)
  }
  return out
}

describe('bson2json dump --pretty', () => {
  it('indents every document with tabs, like bsondump --pretty (json.Indent)', async () => {
    const r = await cli(['--pretty', file])
    expect(r.code).toBe(0)
    const expected = Buffer.from(toNDJSON(dump)).toString().trimEnd().split('\n').map(tabIndent).join('\n') + '\n'
    expect(r.stdout).toBe(expected)
    const relaxed = await cli(['--pretty', '--dialect', 'relaxed', file])
    expect(relaxed.stdout).toContain('{\n\t"_id": 1,\n\t"a": {\n\t\t"b": 1,')
  })

  it('--pretty --array indents the whole array; gzip input too', async () => {
    const r = await cli(['--pretty', '--array'], gzipSync(dump))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(JSON.stringify(objects.map((o) => JSON.parse(JSON.stringify(o))), null, '\t') + '\n')
  })

  it('the indenter gives the same bytes whatever the chunk boundaries', () => {
    const text = Buffer.from(toNDJSON(dump, { dialect: 'canonical' }))
    const whole = prettyJSON(text)
    for (let cut = 1; cut < 40; cut++) {
      const ind = new Indenter()
      const parts: Buffer[] = []
      for (let i = 0; i < text.length; i += cut) parts.push(ind.push(text.subarray(i, i + cut)))
      expect(Buffer.concat(parts).equals(whole)).toBe(true)
    }
    expect(prettyJSON('{"a":[],"b":{},"c":[{}]}').toString()).toBe('{\n\t"a": [],\n\t"b": {},\n\t"c": [\n\t\t{}\n\t]\n}')
  })
})

// --fields, --exclude and --redact are the addon's projection (the fallback refuses them)
describe('bson2json dump --fields', () => {
  const cases = ['a.b', 's', 'a.b,s', 'a', 'a.c.b', 't.u.v', 't.u', 'nested.deep.er,arr', 'missing', 'a.b,a', 'a,a.b']
  it.each(cases)('--fields %s equals the server projection of each document', async (fields) => {
    const r = await cli(['--fields', fields, file])
    expect(r.code).toBe(0)
    const paths = fields.split(',').map((f) => f.split('.'))
    const expected = Buffer.from(toNDJSON(objects.map((o) => BSON.serialize(project(o, paths))))).toString()
    expect(r.stdout).toBe(expected)
  })

  it('keeps field order, nested arrays and BSON types exactly (hand-checked)', () => {
    const p = toJSON(docs[0], { projection: serverProjection(['a.c.b', 's']) })
    expect(JSON.parse(p)).toEqual(JSON.parse(JSON.stringify({ _id: 1, a: { c: [{ b: 2 }, [{ b: 4 }]] }, s: objects[0].s })))
    const typed = BSON.serialize({ x: new BSON.Int32(1), y: { z: BSON.Long.fromString('9007199254740993'), w: new BSON.Double(1) }, _id: 'k' })
    const q = toNDJSON(typed, { projection: serverProjection(['y.z']), dialect: 'canonical' })
    expect(Buffer.from(q).toString()).toBe('{"y":{"z":{"$numberLong":"9007199254740993"}},"_id":"k"}\n')
  })

  it('--fieldFile, -f, and usage errors', async () => {
    const ff = join(dir, 'fields.txt')
    writeFileSync(ff, 'a.b\n\ns\n')
    const r = await cli(['--fieldFile', ff, file])
    expect(r.stdout).toBe((await cli(['-f', 'a.b,s', file])).stdout)
    for (const args of [['--fields', '', file], ['--fields', 'a..b', file], ['--fields', '$x', file], ['--fieldFile', join(dir, 'none.txt'), file]]) {
      const u = await cli(args)
      expect(u.code, args.join(' ')).toBe(2)
      expect(u.stderr).toMatch(/^bson2json: /)
    }
  })

  it('--stats with --fields counts the input bytes, not the projected ones', async () => {
    const many = Buffer.concat(Array.from({ length: 20000 }, (_, i) => BSON.serialize({ _id: i, keep: i, drop: 'x'.repeat(100) })))
    const f = join(dir, 'stats-fields.bson')
    writeFileSync(f, many)
    const r = await cli(['--stats', '--quiet', '--fields', 'keep', f])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(new RegExp(`^bson2json: 20000 documents, ${(many.length / 1e6).toFixed(1).replace('.', '\\.')} MB BSON in, `))
  })

  it('corrupt input under --fields: exit 1, the input offset of the bad byte, earlier documents written', async () => {
    const bad = Buffer.from(dump)
    const k = 2
    const start = docs[0].length + docs[1].length
    bad[start + docs[k].length - 1] = 1 // bad terminator: the projection passes it on unchanged
    const r = await cli(['--fields', 's'], bad)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`document ${k}, byte offset ${start + docs[k].length - 1}:`)
    expect(r.stdout.split('\n')).toHaveLength(3)
    const utf8 = Buffer.from(BSON.serialize({ _id: 9, s: 'ok', t: 'xx' }))
    const at = utf8.indexOf('xx')
    utf8[at] = 0xff // invalid UTF-8 inside a kept field: found by the transcoder after projection
    const r2 = await cli(['--fields', 't'], Buffer.concat([docs[0], utf8]))
    expect(r2.code).toBe(1)
    expect(r2.stderr).toContain(`document 1, byte offset ${docs[0].length + at}:`) // the bad byte's, in the input
    expect(r2.stderr).toContain('BSON_INVALID_UTF8')
  })
})

describe('subcommands', () => {
  it('`dump` names the default command; unknown words are files', async () => {
    const a = await cli(['dump', file])
    const b = await cli([file])
    expect(a.code).toBe(0)
    expect(a.stdout).toBe(b.stdout)
    const c = await cli(['nosuchcommand'])
    expect(c.code).toBe(2)
    expect(c.stderr).toBe("bson2json: 'nosuchcommand' is neither a command nor a file (commands: dump, export, cdc, help)\n")
    const d = await cli(['dump', 'nosuchcommand'])
    expect(d.code).toBe(2)
    expect(d.stderr).toBe('bson2json: nosuchcommand: no such file\n')
  })

  it('--help names the subcommands', async () => {
    const r = await cli(['--help'])
    expect(r.stdout).toContain('bson2json [dump]')
    expect(r.stdout).toContain('--pretty')
    expect(r.stdout).toContain('--fields')
  })
})

// __test__/support/fixtures/mongodump.archive(.gz): written by mongo-tools' mongodump --archive (and
// --archive --gzip) from the in-repo test server holding exactly these collections.
const ARCHIVE = resolve(__dirname, '../support/fixtures/mongodump.archive')
const archived: Record<string, object[]> = {
  'shop.orders': Array.from({ length: 5 }, (_, i) => ({ _id: i, total: BSON.Decimal128.fromString(`${i}.50`), name: `n${i}` })),
  'shop.users': [
    { _id: 'u1', email: 'a@x' },
    { _id: 'u2', email: 'b@x' },
  ],
  'crm.notes': [{ _id: 1, text: 'hello' }],
}
const ndjsonOf = (objs: object[], dialect = 'compat') => Buffer.from(toNDJSON(objs.map((o) => BSON.serialize(o)), { dialect })).toString()

/** Runs the archive reader over `buf` cut into `chunk`-byte pieces. */
async function readAll(buf: Buffer, chunk: number, include: string[]) {
  const input = (async function* () {
    for (let i = 0; i < buf.length; i += chunk) yield buf.subarray(i, i + chunk)
  })()
  const r = readArchive(input, include)
  const out: Buffer[] = []
  let error: Error | null = null
  try {
    for await (const c of r.chunks) out.push(c)
  } catch (e) {
    error = e as Error
  }
  return { docs: Buffer.concat(out), error, namespaces: r.namespaces, origin: r.origin }
}

describe('bson2json dump: mongodump --archive input', () => {
  it.each(Object.keys(archived))('--nsInclude %s gives that collection', async (ns) => {
    const r = await cli(['--nsInclude', ns, ARCHIVE])
    expect(r.stderr).toMatch(new RegExp(`^bson2json: ${archived[ns].length} documents, [\\d.]+ MB BSON in, [\\d.]+ MB JSON out, [\\d.]+ s, [\\d.]+ MB/s\n$`))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(ndjsonOf(archived[ns]))
  })

  it('--archive --gzip on stdin; patterns with *; several --nsInclude', async () => {
    const r = await cli(['--nsInclude', 'shop.*', '--dialect', 'canonical'], readFileSync(`${ARCHIVE}.gz`))
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split('\n').sort()
    expect(lines).toEqual((ndjsonOf(archived['shop.orders'], 'canonical') + ndjsonOf(archived['shop.users'], 'canonical')).trimEnd().split('\n').sort())
    const two = await cli(['--nsInclude', 'crm.notes', '--nsInclude', 'shop.users', ARCHIVE])
    expect(two.stdout.trimEnd().split('\n').sort()).toEqual((ndjsonOf(archived['crm.notes']) + ndjsonOf(archived['shop.users'])).trimEnd().split('\n').sort())
    const all = await cli(['--nsInclude', '*', '--array', ARCHIVE])
    expect(JSON.parse(all.stdout)).toHaveLength(8)
  })

  it('several collections and no --nsInclude: exit 2 naming them; --nsInclude on a plain dump: exit 2', async () => {
    const r = await cli([ARCHIVE])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('mongodump archive holds 3 collections (crm.notes, shop.orders, shop.users): choose with --nsInclude')
    expect(r.stdout).toBe('')
    const plain = await cli(['--nsInclude', 'a.b', file])
    expect(plain.code).toBe(2)
    expect(plain.stderr).toContain('--nsInclude applies to a mongodump --archive input only')
  })

  it('the same documents whatever the chunking; every truncation is an error after the documents before it', async () => {
    const buf = readFileSync(ARCHIVE)
    const whole = await readAll(buf, buf.length, ['*'])
    expect(whole.error).toBeNull()
    expect(whole.namespaces.map((n: any) => n.ns).sort()).toEqual(['crm.notes', 'shop.orders', 'shop.users'])
    expect(Buffer.from(toNDJSON(whole.docs)).toString().trimEnd().split('\n').sort()).toEqual(
      Object.values(archived)
        .flatMap((objs) => ndjsonOf(objs).trimEnd().split('\n'))
        .sort(),
    )
    for (const chunk of [1, 3, 64]) expect((await readAll(buf, chunk, ['*'])).docs.equals(whole.docs)).toBe(true)
    // Where each document ends in the archive: a cut after that end must still yield it.
    const ends: [number, number][] = [] // [end in the archive, end in the document stream]
    for (let at = 0, i = 0; at < whole.docs.length; i++) {
      const len = whole.docs.readInt32LE(at)
      ends.push([whole.origin(i, at) + len, at + len])
      at += len
    }
    let clean = 0
    for (let cut = 0; cut < buf.length; cut++) {
      const r = await readAll(buf.subarray(0, cut), 97, ['*'])
      const expected = ends.filter(([e]) => e <= cut).reduce((m, [, o]) => Math.max(m, o), 0)
      expect(r.docs.length, `cut ${cut}`).toBe(expected)
      expect(whole.docs.subarray(0, r.docs.length).equals(r.docs), `cut ${cut}`).toBe(true)
      if (r.error === null) clean++
      else expect(r.error.message, `cut ${cut}`).toMatch(/^mongodump archive: .* at byte offset \d+$/)
    }
    expect(clean).toBe(0) // a cut anywhere, between blocks too, is an error (a collection's end block is missing)
  })

  it('a corrupt document inside an archive: exit 1 with its offset in the archive', async () => {
    const buf = Buffer.from(readFileSync(ARCHIVE))
    const at = buf.indexOf('hello')
    buf[at] = 0xff // invalid UTF-8 in crm.notes' only document
    const r = await cli(['--nsInclude', 'crm.notes'], buf)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`corrupt BSON at document 0, byte offset ${at}:`)
    expect(r.stderr).toContain('BSON_INVALID_UTF8')
  })
})

describe('bson2json dump --threads', () => {
  // ~3 MB of documents, so that several 1 MiB batches are in flight at once.
  const big: Uint8Array[] = []
  for (let i = 0; i < 6000; i++) big.push(BSON.serialize({ _id: i, s: 'x'.repeat(i % 900), n: i * 1.5, a: [i, { b: String(i) }] }))
  const bigDump = Buffer.concat(big)
  const at = (k: number) => big.slice(0, k).reduce((n, d) => n + d.length, 0)

  it('every --threads value gives the output, messages and exit code of --threads 1', async () => {
    const bad = Buffer.from(bigDump)
    bad[at(4500) + big[4500].length - 1] = 7 // a bad terminator in a later batch
    bad[at(1200) + big[1200].length - 1] = 7
    const cases: [string, Buffer, string[]][] = [
      ['good.bson', bigDump, []],
      ['bad.bson', bad, []],
      ['bad2.bson', bad, ['--skip-invalid']],
      ['arr.bson', bad, ['--skip-invalid', '--array', '--dialect', 'canonical']],
    ]
    for (const [name, bytes, flags] of cases) {
      const f = join(dir, name)
      writeFileSync(f, bytes)
      const one = await cli([...flags, '--threads', '1', f])
      expect(one.stdout.length).toBeGreaterThan(100000)
      for (const t of [undefined, '2', '5']) {
        const r = await cli([...flags, ...(t === undefined ? [] : ['--threads', t]), f])
        // With more than one thread the reader runs ahead of the transcoding (under WASI also
        // while the wasm threads start): how many MB had been read when a corrupt document
        // surfaced is timing, not output. The documents, the messages, the written count and the
        // exit code are compared; a successful run reads the whole file, so its MB count is too.
        const readIn = (x: Result, e: string) => (x.code !== 0 ? e.replace(/[\d.]+ MB BSON in/, 'N MB BSON in') : e)
        const untimed = (x: Result) => ({ ...x, stderr: readIn(x, x.stderr.replace(/[\d.]+ s\b/g, 'T s').replace(/[\d.]+ MB\/s/g, 'R MB/s')) })
        expect({ name, t, ...untimed(r) }).toEqual({ name, t, ...untimed(one) })
      }
    }
  })
})

describe('bson2json dump --exclude / --redact (the addon projection)', () => {
  it('--exclude drops the paths, through arrays of documents; --redact writes null or an HMAC pseudonym', async () => {
    const list = [
      { _id: 1, name: 'a', card: { number: '4111', exp: '12/30' }, cards: [{ number: '5500', exp: '1' }, 'x'], ssn: '123' },
      { _id: 2, name: 'b', card: 'none', ssn: 7 },
    ]
    const f = join(dir, 'pii.bson')
    writeFileSync(f, Buffer.concat(list.map((d) => BSON.serialize(d))))
    const ex = await cli(['--exclude', 'ssn,card.number,cards.number', f])
    expect(ex.code).toBe(0)
    expect(ex.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual([
      { _id: 1, name: 'a', card: { exp: '12/30' }, cards: [{ exp: '1' }, 'x'] },
      { _id: 2, name: 'b', card: 'none' },
    ])
    const nul = await cli(['--redact', 'ssn,cards.number', '--fields', 'ssn,cards', f])
    expect(nul.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual([
      { _id: 1, cards: [{ number: null, exp: '1' }, 'x'], ssn: null },
      { _id: 2, ssn: null },
    ])
    const keyFile = join(dir, 'key.txt')
    writeFileSync(keyFile, 'secret key\n')
    const h = await cli(['--redact', 'ssn', '--redact-key-file', keyFile, f])
    const mac = (v: unknown) => {
      const el = BSON.serialize({ v })
      return createHmac('sha256', 'secret key').update(Buffer.concat([el.subarray(4, 5), el.subarray(7, el.length - 1)])).digest('hex')
    }
    expect(h.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).ssn)).toEqual([mac('123'), mac(7)])
  })

  it('usage errors: --exclude with --fields, a collision, --redact-key-file alone or missing', async () => {
    for (const args of [
      ['--exclude', 'a', '--fields', 'b', file],
      ['--exclude', 'a,a.b', file],
      ['--redact-key-file', join(dir, 'key.txt'), file],
      ['--redact', 'a', '--redact-key-file', join(dir, 'none.txt'), file],
      ['--redact', 'a..b', file],
    ]) {
      const u = await cli(args)
      expect(u.code, args.join(' ')).toBe(2)
      expect(u.stderr).toMatch(/^bson2json: /)
    }
  })
})
