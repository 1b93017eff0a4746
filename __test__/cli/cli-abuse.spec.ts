/**
 * The command line under abuse (issue 48): what a user's mistake or an attacker's input does to
 * `bson2json dump` / `export`, run as a child process. Nothing is lost (an output that is the
 * input is refused before a byte is written), nothing leaks (every URI and address in a message
 * is redacted), and odd inputs get a usage error or a clean failure with the count written.
 * docs/reliability.md ("Abuse cases") lists each case and the test here that shows it.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { spawn } from 'node:child_process'
import { closeSync, linkSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { BSON } from 'bson'

const BIN = resolve(__dirname, '../../bin/bson2json.js')

export interface Result {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
  ms: number
}

export interface RunOptions {
  /** stdin from this file (its descriptor), bytes (then closed), or 'open' (a pipe left open) */
  stdin?: string | Uint8Array | 'open'
  /** stdout to this file (`flags`: 'w' as `>`, 'a' as `>>`) */
  stdout?: { file: string; flags: 'w' | 'a' }
  env?: Record<string, string>
  onSpawn?: (child: ReturnType<typeof spawn>) => void
  /** kill the child after this many ms (default 30 s) */
  killAfter?: number
}

/** Runs `node bin/bson2json.js ARGS`; resolves its exit status, output and wall time. */
export function run(args: string[], o: RunOptions = {}): Promise<Result> {
  return new Promise((done, fail) => {
    const started = Date.now()
    const inFd = typeof o.stdin === 'string' && o.stdin !== 'open' ? openSync(o.stdin, 'r') : null
    const outFd = o.stdout ? openSync(o.stdout.file, o.stdout.flags) : null
    const stdio: any[] = [inFd ?? (o.stdin ? 'pipe' : 'ignore'), outFd ?? 'pipe', 'pipe']
    const child = spawn(process.execPath, [BIN, ...args], { stdio, env: { ...process.env, ...o.env } })
    if (inFd !== null) closeSync(inFd)
    if (outFd !== null) closeSync(outFd)
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout?.on('data', (c) => out.push(c))
    child.stderr!.on('data', (c) => err.push(c))
    child.on('error', fail)
    if (o.stdin instanceof Uint8Array) {
      child.stdin!.on('error', () => {})
      child.stdin!.end(o.stdin)
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), o.killAfter ?? 30_000)
    o.onSpawn?.(child)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      done({
        code,
        signal,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err)
          .toString()
          .split('\n')
          .filter((l) => !l.includes('BSON2JSON_FALLBACK') && !l.includes('--trace-warnings'))
          .join('\n'),
        ms: Date.now() - started,
      })
    })
  })
}

let dir: string
let input: string
let bytes: Buffer

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bson2json-abuse-'))
  bytes = Buffer.concat(Array.from({ length: 20 }, (_, i) => BSON.serialize({ _id: i, s: 'x'.repeat(i) })))
  input = join(dir, 'in.bson')
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('nothing lost: an output that is the input is refused before a byte is written', () => {
  const cases: [string, (f: string) => { args: string[]; o?: RunOptions }][] = [
    ['-o the same path', (f) => ({ args: [f, '-o', f] })],
    ['-o a symlink to it', (f) => ({ args: [f, '-o', link(f, 'sym')] })],
    ['-o a hard link to it', (f) => ({ args: [f, '-o', link(f, 'hard')] })],
    ['-o a relative path with ./ and ..', (f) => ({ args: [f, '-o', join(dir, '.', '..', dir.split('/').pop()!, 'in.bson')] })],
    ['stdin is the file, -o the file', (f) => ({ args: ['-', '-o', f], o: { stdin: f } })],
    ['stdout appends to the file (>>)', (f) => ({ args: [f], o: { stdout: { file: f, flags: 'a' } } })],
    ['--array, stream path (--pretty)', (f) => ({ args: ['--array', '--pretty', f, '-o', link(f, 'sym2')] })],
  ]
  function link(f: string, kind: string): string {
    const l = join(dir, `${kind}-link.bson`)
    rmSync(l, { force: true })
    if (kind === 'hard') linkSync(f, l)
    else symlinkSync(f, l)
    return l
  }
  for (const [name, make] of cases) {
    it(name, async () => {
      writeFileSync(input, bytes)
      const { args, o } = make(input)
      const r = await run(args, o)
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(/^bson2json: the output .* is the input .*\nTry 'bson2json --help'\.\n$/)
      expect(readFileSync(input).equals(bytes), 'the input is untouched').toBe(true)
    })
  }

  it('a file name given twice through different paths is still converted when the output is another file', async () => {
    writeFileSync(input, bytes)
    const out = join(dir, 'out.ndjson')
    const r = await run([input, '-o', out])
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(out, 'utf8').split('\n')).toHaveLength(21)
  })
})

describe('nothing lost: an output that is one of the files a flag reads is refused too', () => {
  it('dump -o the --fieldFile, export -o the --queryFile', async () => {
    writeFileSync(input, bytes)
    const fields = join(dir, 'fields.txt')
    writeFileSync(fields, 's\n')
    const a = await run([input, '--fieldFile', fields, '-o', fields])
    expect(a.code, a.stderr).toBe(2)
    expect(a.stderr).toMatch(/the output \S+fields\.txt is the input \S+fields\.txt/)
    expect(readFileSync(fields, 'utf8')).toBe('s\n')
    const query = join(dir, 'query.json')
    writeFileSync(query, '{}')
    const b = await run(['export', '--uri', 'mongodb://127.0.0.1:1/db', '-c', 'c', '--queryFile', query, '-o', query])
    expect(b.code, b.stderr).toBe(2)
    expect(b.stderr).toMatch(/^bson2json export: the output \S+query\.json is the input \S+query\.json/)
    expect(readFileSync(query, 'utf8')).toBe('{}')
  })
})
