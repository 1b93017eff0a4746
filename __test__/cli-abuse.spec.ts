/**
 * The command line under abuse (issue 48): what a user's mistake or an attacker's input does to
 * `bson2json dump` / `export`, run as a child process. Nothing is lost (an output that is the
 * input is refused before a byte is written), nothing leaks (every URI and address in a message
 * is redacted), and odd inputs get a usage error or a clean failure with the count written.
 * docs/reliability.md ("Abuse cases") lists each case and the test here that shows it.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { linkSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BSON } from 'bson'
import { run } from './cli-run'
import type { RunOptions } from './cli-run'

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

describe('the smaller items', () => {
  it('a directory on stdin is a usage error (it exited 0)', async () => {
    const r = await run([], { stdin: dir })
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/^bson2json: stdin is a directory/)
  })

  it('a file name with a newline or a terminal escape is printed quoted and escaped, on one line', async () => {
    const evil = join(dir, 'a\nb\x1b[31mred\u202e.bson')
    writeFileSync(evil, Buffer.from('not bson at all'))
    const outEvil = join(dir, 'o\x1b]0;title\x07.json')
    for (const [args, code] of [
      [[evil], 1],
      [[join(dir, 'no\nsuch')], 2],
      [[input, '-o', join(dir, 'none', 'x\ny')], 1],
      [[evil, '-o', outEvil], 1],
    ] as [string[], number][]) {
      writeFileSync(input, bytes)
      const r = await run(args)
      expect(r.code, r.stderr).toBe(code)
      const first = r.stderr.split('\n')[0]
      expect(first, r.stderr).toMatch(/^bson2json: /)
      expect(r.stderr, 'no raw escape or bidi character').not.toMatch(/[\x1b\x07\u202e]/)
      expect(r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('Try ')), r.stderr).toHaveLength(1)
      expect(r.stderr).toMatch(/\\n|\\u001b/)
    }
  })
})
