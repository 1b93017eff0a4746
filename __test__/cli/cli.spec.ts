import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { createRequire } from 'node:module'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { BSON } from 'bson'

const require = createRequire(import.meta.url)
const { toNDJSON, toJSONArray } = require('../../index.js')
const BIN = resolve(__dirname, '../../bin/bson2json.js')

interface Result {
  code: number | null
  stdout: Buffer
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
    // Under BSON2JSON_FORCE_FALLBACK the library's one-time fallback warning is expected on
    // stderr; it is not the CLI's output, so it is filtered out here.
    child.on('close', (code) =>
      done({
        code,
        stdout: Buffer.concat(out),
        stderr: withoutFallbackWarning(Buffer.concat(err).toString()),
      }),
    )
    child.stdin.on('error', () => {})
    if (stdin) child.stdin.end(stdin)
    else child.stdin.end()
  })
}

const docs: Uint8Array[] = []
for (let i = 0; i < 40; i++) {
  docs.push(
    BSON.serialize({
      _id: new BSON.ObjectId(Buffer.alloc(12, i)),
      i,
      name: `näme ${i} 東京`,
      at: new Date(1700000000000 + i * 1000),
      n: BSON.Long.fromNumber(i * 3),
      price: BSON.Decimal128.fromString(`${i}.50`),
      tags: ['a', 'b'].slice(0, i % 3),
    }),
  )
}
const dump = Buffer.concat(docs)
const starts: number[] = []
{
  let off = 0
  for (const d of docs) {
    starts.push(off)
    off += d.length
  }
}
const ndjson = Buffer.from(toNDJSON(dump)).toString()
const lines = ndjson.split('\n')

let dir: string
let file: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bson2json-cli-'))
  file = join(dir, 'orders.bson')
  writeFileSync(file, dump)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Drops the library's one-time fallback warning (expected under BSON2JSON_FORCE_FALLBACK). */
function withoutFallbackWarning(stderr: string): string {
  return stderr
    .split('\n')
    .filter((l) => !l.includes('BSON2JSON_FALLBACK') && !l.includes('--trace-warnings'))
    .join('\n')
}

/** The summary `dump` prints at the end (not with --quiet), also when stderr is not a terminal. */
const SUMMARY = /^bson2json: (\d+) documents(?: \((\d+) skipped, (\d+) bytes\))?, [\d.]+ MB BSON in, [\d.]+ MB JSON out, [\d.]+ s, [\d.]+ MB\/s\n$/

describe('bson2json CLI', () => {
  it('reads a file and writes NDJSON to stdout, quietly in pipes', async () => {
    const r = await cli([file])
    expect(r.code).toBe(0)
    expect(r.stdout.toString()).toBe(ndjson)
    // stderr is a pipe, not a TTY: no progress bar, only the summary
    expect(r.stderr).toMatch(SUMMARY)
    expect(SUMMARY.exec(r.stderr)![1]).toBe('40')
    expect((await cli(['--quiet', file])).stderr).toBe('')
  })

  it('reads stdin (no file, and -)', async () => {
    for (const args of [[], ['-']]) {
      const r = await cli(args, dump)
      expect(r.code).toBe(0)
      expect(r.stdout.toString()).toBe(ndjson)
    }
    const empty = await cli([], new Uint8Array(0))
    expect(empty.code).toBe(0)
    expect(empty.stdout.length).toBe(0)
  })

  it('--array writes one JSON array', async () => {
    const r = await cli(['--array', file])
    expect(r.code).toBe(0)
    expect(r.stdout.toString()).toBe(`${toJSONArray(dump)}\n`)
    expect(JSON.parse(r.stdout.toString())).toHaveLength(docs.length)
  })

  it('-o FILE and --stats', async () => {
    const out = join(dir, 'out.ndjson')
    const r = await cli([file, '-o', out, '--stats'])
    expect(r.code).toBe(0)
    expect(r.stdout.length).toBe(0)
    expect(readFileSync(out, 'utf8')).toBe(ndjson)
    expect(r.stderr).toMatch(SUMMARY)
    expect(SUMMARY.exec(r.stderr)![1]).toBe('40')
    // --stats prints the summary even with --quiet
    expect((await cli([file, '-o', out, '--stats', '--quiet'])).stderr).toMatch(SUMMARY)
  })

  it('--dialect relaxed / canonical, --utf8, --max-depth', async () => {
    for (const dialect of ['relaxed', 'canonical', 'compat']) {
      const r = await cli(['--dialect', dialect, file])
      expect(r.stdout.toString()).toBe(Buffer.from(toNDJSON(dump, { dialect })).toString())
    }
    const r2 = await cli([`--dialect=relaxed`, '--utf8', 'replace', '--max-depth', '5', file])
    expect(r2.code).toBe(0)
    expect(r2.stdout.toString()).toBe(Buffer.from(toNDJSON(dump, { dialect: 'relaxed' })).toString())
    const deep = await cli(['--max-depth', '1', file])
    expect(deep.code).toBe(1)
    expect(deep.stderr).toContain('BSON_TOO_DEEP')
  })

  it('.bson.gz files and gzip detected by magic bytes (any name, stdin)', async () => {
    const gz = gzipSync(dump)
    const gzFile = join(dir, 'orders.bson.gz')
    const disguised = join(dir, 'orders-gz.bson')
    writeFileSync(gzFile, gz)
    writeFileSync(disguised, gz)
    for (const r of [await cli([gzFile]), await cli([disguised]), await cli([], gz)]) {
      expect(r.code).toBe(0)
      expect(r.stdout.toString()).toBe(ndjson)
    }
  })

  it('corrupt input: exit 1, message names file, document index and offset; earlier documents written', async () => {
    const bad = Buffer.from(dump)
    const k = 23
    bad[starts[k] + docs[k].length - 1] = 1
    const badFile = join(dir, 'bad.bson')
    writeFileSync(badFile, bad)
    const r = await cli([badFile])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(badFile)
    expect(r.stderr).toContain(`document ${k}`)
    expect(r.stderr).toContain(`byte offset ${starts[k] + docs[k].length - 1}`)
    expect(r.stdout.toString()).toBe(lines.slice(0, k).join('\n') + '\n')
  })

  it('truncated input: exit 1 with BSON_TRUNCATED', async () => {
    const r = await cli([], dump.subarray(0, starts[30] + 9))
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('BSON_TRUNCATED')
    expect(r.stderr).toContain('document 30')
    expect(r.stderr).toContain(`byte offset ${starts[30]}`)
    expect(r.stdout.toString()).toBe(lines.slice(0, 30).join('\n') + '\n')
  })

  it('--skip-invalid: exit 0, each bad document reported on stderr', async () => {
    const bad = Buffer.from(dump)
    bad[starts[5] + docs[5].length - 1] = 1
    bad[starts[17] + docs[17].length - 1] = 1
    const r = await cli(['--skip-invalid'], bad)
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('document 5')
    expect(r.stderr).toContain('document 17')
    expect(r.stderr).toContain(`byte offset ${starts[17] + docs[17].length - 1}`)
    const keep = lines.slice(0, 40).filter((_, i) => i !== 5 && i !== 17)
    expect(r.stdout.toString()).toBe(keep.join('\n') + '\n')
    const q = await cli(['--skip-invalid', '--quiet'], bad)
    expect(q.code).toBe(0)
    expect(q.stderr).toBe('')
  })

  it('--help lists every flag and names bsondump; --version', async () => {
    const r = await cli(['--help'])
    expect(r.code).toBe(0)
    const help = r.stdout.toString()
    for (const flag of ['--out', '-o', '--array', '--dialect', '--utf8', '--max-depth', '--threads', '--skip-invalid', '--quiet', '--progress', '--no-progress', '--stats', '--help', '--version']) {
      expect(help).toContain(flag)
    }
    expect(help).toContain('bsondump')
    const v = await cli(['--version'])
    expect(v.code).toBe(0)
    expect(v.stdout.toString().trim()).toBe(require('../../package.json').version)
  })

  it('usage errors exit 2', async () => {
    for (const args of [['--bogus'], ['--dialect', 'xml', file], ['--max-depth', 'x', file], ['--out'], [file, file], ['--array=1', file]]) {
      const r = await cli(args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr).toContain('bson2json:')
    }
    const missing = await cli([join(dir, 'nope.bson')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('nope.bson')
  })

  it('--progress forces progress output; --no-progress / --quiet suppress it', async () => {
    const r = await cli(['--progress', file])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/MB.*docs.*MB\/s/)
    expect(r.stdout.toString()).toBe(ndjson)
    expect((await cli(['--no-progress', file])).stderr).toMatch(SUMMARY)
    expect((await cli(['--progress', '--quiet', file])).stderr).toBe('')
  })

  it('--help lists every command with one line each; help [COMMAND]; --version on every command', async () => {
    const r = await cli(['--help'])
    expect(r.code).toBe(0)
    const commands = /Commands:\n((?:  \S+ +.+\n)+)/.exec(r.stdout.toString())
    expect(commands).not.toBeNull()
    expect(commands![1].trimEnd().split('\n').map((l) => l.trim().split(/\s+/)[0])).toEqual(['dump', 'export', 'cdc', 'help'])
    const h = await cli(['help'])
    expect(h.code).toBe(0)
    expect(h.stdout.toString()).toContain(commands![1])
    for (const c of ['dump', 'export', 'cdc']) {
      const hc = await cli(['help', c])
      expect(hc.code, c).toBe(0)
      expect(hc.stdout.toString()).toBe((await cli([c, '--help'])).stdout.toString())
      for (const v of ['--version', '-v']) {
        const rv = await cli([c, v])
        expect(rv.code, `${c} ${v}`).toBe(0)
        expect(rv.stdout.toString()).toBe(`${require('../../package.json').version}\n`)
      }
    }
    const bad = await cli(['help', 'frobnicate'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe("bson2json help: no command 'frobnicate' (commands: dump, export, cdc, help)\nTry 'bson2json --help'.\n")
  })

  it("a word that is neither a command nor a file; an unknown option's nearest flag", async () => {
    const r = await cli(['frobnicate'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe("bson2json: 'frobnicate' is neither a command nor a file (commands: dump, export, cdc, help)\n")
    const o = await cli([file, '--ouy', 'x'])
    expect(o.code).toBe(2)
    expect(o.stderr).toBe("bson2json: unknown option '--ouy' (did you mean --out?)\nTry 'bson2json --help'.\n")
  })

  it.skipIf(spawnSync('script', ['--version']).status !== 0)('no arguments with stdin a terminal: the usage hint, exit 2 (not a silent wait)', () => {
    // `script` gives the CLI a pseudo-terminal as stdin; without the hint it would wait for input.
    const r = spawnSync('script', ['-qec', `"${process.execPath}" "${BIN}"`, '/dev/null'], { encoding: 'utf8', timeout: 20000, stdio: ['ignore', 'pipe', 'pipe'] })
    expect(r.error).toBeUndefined()
    expect(r.status).toBe(2)
    expect(r.stdout).toContain('bson2json: no input: give a FILE, or pipe BSON into stdin')
    expect(r.stdout).toContain('bson2json export --uri URI')
  })

  it.skipIf(spawnSync('script', ['--version']).status !== 0)('on a terminal the progress bar is wiped and the summary stays', () => {
    const big = join(dir, 'big.bson')
    writeFileSync(big, Buffer.concat(Array.from({ length: 400 }, () => dump)))
    const r = spawnSync('script', ['-qec', `"${process.execPath}" "${BIN}" "${big}" -o /dev/null`, '/dev/null'], { encoding: 'utf8', timeout: 30000, stdio: ['ignore', 'pipe', 'pipe'] })
    expect(r.status).toBe(0)
    // the last thing on the terminal: the wipe, then the summary line
    // oxlint-disable-next-line no-control-regex -- the terminal escape that wipes the progress bar
    expect(r.stdout).toMatch(/\r\x1b\[Kbson2json: 16000 documents, [\d.]+ MB BSON in, [\d.]+ MB JSON out, [\d.]+ s, [\d.]+ MB\/s\r?\n$/)
  })

  it('stdout closed early (| head) exits quietly', async () => {
    const big = Buffer.concat(Array.from({ length: 200 }, () => dump))
    const r = await new Promise<Result>((done) => {
      const child = spawn(process.execPath, [BIN], { stdio: ['pipe', 'pipe', 'pipe'] })
      const err: Buffer[] = []
      child.stderr.on('data', (c) => err.push(c))
      child.stdout.once('data', () => child.stdout.destroy())
      child.stdin.on('error', () => {})
      child.stdin.end(big)
      child.on('close', (code) => done({ code, stdout: Buffer.alloc(0), stderr: withoutFallbackWarning(Buffer.concat(err).toString()) }))
    })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
  })
})
