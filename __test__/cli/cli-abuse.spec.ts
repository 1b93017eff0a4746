/**
 * The command line under abuse (issue 48): what a user's mistake or an attacker's input does to
 * `bson2json dump` / `export`, run as a child process. Nothing is lost (an output that is the
 * input is refused before a byte is written), nothing leaks (every URI and address in a message
 * is redacted), and odd inputs get a usage error or a clean failure with the count written.
 * docs/reliability.md ("Abuse cases") lists each case and the test here that shows it.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import { existsSync, linkSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { BSON } from 'bson'
import { run } from '../support/cli-run'
import type { RunOptions } from '../support/cli-run'

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
      // oxlint-disable-next-line no-control-regex -- the control characters are what is checked
      expect(r.stderr, 'no raw escape or bidi character').not.toMatch(/[\x1b\x07\u202e]/)
      expect(r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('Try ')), r.stderr).toHaveLength(1)
      expect(r.stderr).toMatch(/\\n|\\u001b/)
    }
  })
})

describe('no leaks: every address a message quotes is redacted', () => {
  const SECRET = 'hunter2'
  const forms: [string, string][] = [
    ['userinfo', `mongodb://bob:${SECRET}@127.0.0.1:1/db`],
    ['userinfo, mongodb+srv', `mongodb+srv://bob:${SECRET}@nonexistent.invalid/db`],
    ['a wrong scheme', `MONGODB://bob:${SECRET}@127.0.0.1:1/db`],
    ['no scheme', `bob:${SECRET}@127.0.0.1:1/db`],
    ['proxyPassword', `mongodb://127.0.0.1:1/db?proxyHost=127.0.0.1&proxyUsername=u&proxyPassword=${SECRET}`],
    ['tlsCertificateKeyFilePassword', `mongodb://127.0.0.1:1/db?tls=true&tlsCertificateKeyFilePassword=${SECRET}`],
    ['AWS_SESSION_TOKEN', `mongodb://127.0.0.1:1/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:${SECRET}`],
    ['an unescaped @ in the password', `mongodb://bob:hun@${SECRET}@127.0.0.1:1/db`],
    ['a bad port', `mongodb://bob:${SECRET}@127.0.0.1:99999/db`],
    ['a space in the password', `mongodb://bob:hun ${SECRET}@127.0.0.1:1/db`],
  ]
  const commands: [string, (uri: string) => string[]][] = [
    ['export', (uri) => ['export', '--uri', uri, '--db', 'db', '-c', 'c', '--timeout', '1']],
    ['cdc', (uri) => ['cdc', '--uri', uri, '--kafka', '127.0.0.1:1', '--topic', 't', '--checkpoint-topic', 'cp', '--id', 'x', '--timeout', '1', '--kafka-timeout', '1', '--mongo-retry-timeout', '1']],
  ]
  for (const [cmd, args] of commands) {
    it(`${cmd}: each secret-bearing URI form, on its error path`, async () => {
      const leaks: string[] = []
      const todo = [...forms]
      const worker = async () => {
        for (let f = todo.shift(); f !== undefined; f = todo.shift()) {
          const [form, uri] = f
          const r = await run(args(uri), { killAfter: 30_000 })
          if (r.stderr.includes(SECRET) || r.stderr.includes('internal error') || ![1, 2, 3].includes(r.code!)) leaks.push(`${form}: exit ${r.code}: ${r.stderr}`)
        }
      }
      await Promise.all([worker(), worker()])
      expect(leaks).toEqual([])
    }, 180_000)
  }

  it('cdc --kafka with SASL userinfo: the usage error quotes it redacted', async () => {
    const r = await run(['cdc', '--uri', 'mongodb://127.0.0.1:1/', '--kafka', `alice:${SECRET}@127.0.0.1:9092`, '--topic', 't', '--checkpoint-topic', 'cp', '--id', 'x'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('alice:****@127.0.0.1:9092')
    expect(r.stderr).not.toContain(SECRET)
  })

  it('a malformed URI is a usage error (exit 2) quoting it redacted; an unresolvable SRV name is not "authentication failed"', async () => {
    for (const uri of [`mongodb://bob:hun@${SECRET}@127.0.0.1:1/db`, `mongodb://bob:${SECRET}@127.0.0.1:99999/db`, `mongodb://127.0.0.1/db?tls=maybe&password=${SECRET}`]) {
      const r = await run(['export', '--uri', uri, '-c', 'c', '--timeout', '1'])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(/^bson2json export: --uri .*\*\*\*\*.*\nTry 'bson2json export --help'\.\n$/)
    }
    const srv = await run(['export', '--uri', `mongodb+srv://bob:${SECRET}@nonexistent.invalid/db`, '-c', 'c', '--timeout', '1'])
    expect(srv.code).toBe(1)
    expect(srv.stderr).not.toMatch(/authentication/)
    expect(srv.stderr).toMatch(/^bson2json export: cannot resolve mongodb\+srv:\/\/bob:\*\*\*\*@nonexistent\.invalid\/db: /)
  })
})

describe('redactAddress, the one redaction of addresses (lib/errors.js)', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { redactAddress } = require('../../lib/errors')
  const cases: [string, string][] = [
    ['mongodb://bob:hunter2@host/db', 'mongodb://bob:****@host/db'],
    ['mongodb+srv://bob:hunter2@c.example.net/?retryWrites=true&w=majority', 'mongodb+srv://bob:****@c.example.net/?retryWrites=true&w=majority'],
    ['MONGODB://bob:hunter2@h:27017/', 'MONGODB://bob:****@h:27017/'],
    ['bob:hunter2@host/db', 'bob:****@host/db'],
    ['mongodb://bob:hunter2@h1,h2:27018/db?replicaSet=rs', 'mongodb://bob:****@h1,h2:27018/db?replicaSet=rs'],
    ['mongodb://h/?proxyUsername=u&proxyPassword=hunter2', 'mongodb://h/?proxyUsername=u&proxyPassword=****'],
    ['mongodb://h/?ProxyPassword=hunter2', 'mongodb://h/?ProxyPassword=****'],
    ['mongodb://h/?tlsCertificateKeyFilePassword=hunter2&tls=true', 'mongodb://h/?tlsCertificateKeyFilePassword=****&tls=true'],
    ['mongodb://h/?sslPEMKeyPassword=hunter2', 'mongodb://h/?sslPEMKeyPassword=****'],
    ['mongodb://h/?password=hunter2;w=1', 'mongodb://h/?password=****;w=1'],
    ['mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN:hunter2,SERVICE_NAME:mongo', 'mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN:****,SERVICE_NAME:mongo'],
    ['mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN%3Ahunter2', 'mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN%3A****'],
    ['mongodb://bob:hun@ter2@host/db?appName=a@b', 'mongodb://bob:****@host/db?appName=a@b'],
    ['mongodb://bob:hun/ter2@host/db', 'mongodb://bob:****@host/db'],
    ['mongodb://bob:hun?ter2@host/db', 'mongodb://bob:****@host/db'],
    ['mongodb://bob:hun ter2@host/db', 'mongodb://bob:****@host/db'],
    ['mongodb://host/db', 'mongodb://host/db'],
    ['alice:hunter2@b1:9092,b2:9092', 'alice:****@b1:9092,b2:9092'],
    ['cannot reach mongodb://bob:hunter2@127.0.0.1:1/db: connect ECONNREFUSED 127.0.0.1:1', 'cannot reach mongodb://bob:****@127.0.0.1:1/db: connect ECONNREFUSED 127.0.0.1:1'],
    ["got 'MONGODB://bob:hunter2@h/x'.", "got 'MONGODB://bob:****@h/x'."],
    ['no address here: 127.0.0.1:27017', 'no address here: 127.0.0.1:27017'],
  ]
  it.each(cases)('%s', (input, expected) => {
    expect(redactAddress(input)).toBe(expected)
    expect(redactAddress(redactAddress(input)), 'idempotent').toBe(expected)
  })
})

describe('bounded time: export --timeoutMS', () => {
  it('a silent server and a drip-fed reply: exit 1 within the bound, naming the host and the command', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startTestServer } = require('../../tools/test-server')
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { MongoClient } = require('mongodb')
    const server = await startTestServer({ port: 0 })
    const client = new MongoClient(server.uri)
    try {
      await client.connect()
      await client.db('abuse').collection('docs').insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: i })))
      for (const fault of [{ command: 'find', kind: 'silence' }, { command: 'getMore', kind: 'drip', dripMs: 20 }]) {
        server.injectFault(fault)
        const r = await run(['export', '--uri', server.uri, '-d', 'abuse', '-c', 'docs', '--batchSize', '2', '--timeoutMS', '700'])
        expect(r.code, r.stderr).toBe(1)
        expect(r.ms).toBeLessThan(5000)
        expect(r.stderr).toMatch(new RegExp(`^bson2json export: no reply from mongodb://127\\.0\\.0\\.1:\\d+/\\S* to ${fault.command} within 700 ms \\(--timeoutMS\\) while reading abuse\\.docs \\((\\d) documents? written`))
        expect(r.stdout.split('\n').length - 1).toBe(fault.command === 'find' ? 0 : 2)
        server.clearFaults()
      }
    } finally {
      await client.close()
      await server.close()
    }
  }, 60_000)
})

const SIGNAL_READY = join(__dirname, '../support/fixtures/signal-ready.cjs')

/** Resolves true once `file` exists (the child added its signal listener: support/fixtures/signal-ready.cjs). */
async function ready(file: string): Promise<boolean> {
  for (let k = 0; k < 400; k++) {
    if (existsSync(file)) return true
    await new Promise((r) => setTimeout(r, 25))
  }
  return false
}

describe('bounded time: SIGINT/SIGTERM answered within a second in every state', () => {
  /**
   * A second, or more on a machine whose run queue is longer than its cores (load per core, at
   * most 5x): the process must answer, not wait for a timeout, and its exit itself takes longer
   * on a starved machine.
   */
  const bound = () => Math.round(1000 * Math.min(5, Math.max(1, loadavg()[0] / cpus().length)))
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const net = require('node:net')
  let black: any
  let blackPort = 0
  let big: string
  beforeAll(async () => {
    // a server that accepts connections and never answers
    black = net.createServer(() => {})
    await new Promise<void>((r) => black.listen(0, '127.0.0.1', r))
    blackPort = black.address().port
    big = join(dir, 'big.bson')
    writeFileSync(big, Buffer.concat(Array.from({ length: 300_000 }, (_, i) => BSON.serialize({ _id: i, s: 'x'.repeat(80) }))))
  })
  afterAll(() => black?.close())
  let readyRuns = 0

  /**
   * Runs ARGS, waits until the process catches the signal and `settle` ms more (it is then in
   * the state), sends it, and returns how long the answer took.
   */
  async function answered(args: string[], o: RunOptions & { settle?: number; signal?: 'SIGINT' | 'SIGTERM' } = {}) {
    const signal = o.signal ?? 'SIGTERM'
    let sent = 0
    let caught = false
    const flag = join(dir, `ready-${++readyRuns}`)
    const r = await run(args, {
      ...o,
      env: { ...o.env, SIGNAL_READY_FILE: flag, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${SIGNAL_READY}` },
      killAfter: 30_000,
      onSpawn: (c) => {
        o.onSpawn?.(c)
        void ready(flag).then(async (ok) => {
          caught = ok
          await new Promise((res) => setTimeout(res, o.settle ?? 500))
          sent = Date.now()
          c.kill(signal)
        })
      },
    })
    const took = Date.now() - sent
    expect(caught, `${args.join(' ')}: the handler was installed`).toBe(true)
    expect(r.code === (signal === 'SIGINT' ? 130 : 143) || r.signal === signal, `${args.join(' ')}: exit ${r.code} ${r.signal}: ${r.stderr}`).toBe(true)
    const most = bound()
    expect(took, `${args.join(' ')}: answered in ${took} ms (bound ${most} ms)`).toBeLessThan(most)
    expect(r.stderr, args.join(' ')).toMatch(new RegExp(`interrupted by ${signal}`))
    return r
  }

  const engines: [string, Record<string, string>][] = [
    ['native', {}],
    ['stream', { BSON2JSON_DUMP: 'stream' }],
  ]
  for (const [engine, env] of engines) {
    it(`dump (${engine}): stdin open with nothing coming`, async () => {
      await answered(['-'], { env, stdin: 'open' })
    })
    it(`dump (${engine}): stdout a pipe nobody reads (the writes blocked)`, async () => {
      await answered([big], { env, onSpawn: (c) => c.stdout!.pause(), settle: 800 })
    })
    it(`dump (${engine}): mid-run (stdin fed without pause), SIGINT`, async () => {
      const chunk = readFileSync(big)
      await answered(['-', '-o', '/dev/null', '--threads', '1'], {
        env,
        stdin: 'open',
        settle: 300,
        signal: 'SIGINT',
        onSpawn: (c) => {
          c.stdin!.on('error', () => {})
          const feed = () => {
            if (!c.stdin!.destroyed && c.stdin!.write(chunk)) setImmediate(feed)
          }
          c.stdin!.on('drain', feed)
          feed()
        },
      })
    })
  }

  it('cdc: connecting to a MongoDB or a Kafka that never answers (before its handler: the signal\'s default action)', async () => {
    for (const [mongo, kafka] of [
      [`mongodb://127.0.0.1:${blackPort}/db`, '127.0.0.1:1'],
      ['mongodb://127.0.0.1:1/db', `127.0.0.1:${blackPort}`],
    ]) {
      let sent = 0
      const r = await run(['cdc', '--uri', mongo, '--kafka', kafka, '--topic', 't', '--checkpoint-topic', 'cp', '--id', 'x'], {
        onSpawn: (c) =>
          setTimeout(() => {
            sent = Date.now()
            c.kill('SIGTERM')
          }, 3000),
      })
      expect(r.code === 143 || r.signal === 'SIGTERM', `${mongo} ${kafka}: ${r.code} ${r.signal} ${r.stderr}`).toBe(true)
      expect(Date.now() - sent).toBeLessThan(bound())
    }
  })

  it('export: connecting to a server that never answers', async () => {
    await answered(['export', '--uri', `mongodb://127.0.0.1:${blackPort}/db`, '-c', 'c'])
  })

  it('export: a reply that never comes, and stdout nobody reads', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startTestServer } = require('../../tools/test-server')
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { MongoClient } = require('mongodb')
    const server = await startTestServer({ port: 0 })
    const client = new MongoClient(server.uri)
    try {
      await client.connect()
      const docs = client.db('abuse').collection('docs')
      for (let i = 0; i < 4; i++) await docs.insertMany(Array.from({ length: 5000 }, (_, k) => ({ _id: i * 5000 + k, s: 'x'.repeat(200) })))
      server.injectFault({ command: 'getMore', kind: 'silence' })
      await answered(['export', '--uri', server.uri, '-d', 'abuse', '-c', 'docs', '--batchSize', '100'])
      server.clearFaults()
      await answered(['export', '--uri', server.uri, '-d', 'abuse', '-c', 'docs'], { onSpawn: (c) => c.stdout!.pause(), settle: 1500 })
    } finally {
      await client.close()
      await server.close()
    }
  }, 60_000)
})
