/**
 * Runs the command line as a child process, for the CLI suites: its exit status, stdout, stderr
 * (less the one-time BSON2JSON_FALLBACK warning) and wall time.
 */
import { spawn } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { resolve } from 'node:path'

export const BIN = resolve(__dirname, '../../bin/bson2json.js')

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
  /** the command to run instead of `node bin/bson2json.js` (its arguments before ARGS) */
  prefix?: string[]
}

/** Runs `node bin/bson2json.js ARGS`; resolves its exit status, output and wall time. */
export function run(args: string[], o: RunOptions = {}): Promise<Result> {
  return new Promise((done, fail) => {
    const started = Date.now()
    const inFd = typeof o.stdin === 'string' && o.stdin !== 'open' ? openSync(o.stdin, 'r') : null
    const outFd = o.stdout ? openSync(o.stdout.file, o.stdout.flags) : null
    const stdio: any[] = [inFd ?? (o.stdin ? 'pipe' : 'ignore'), outFd ?? 'pipe', 'pipe']
    const argv = [...(o.prefix ?? [process.execPath]), BIN, ...args]
    const child = spawn(argv[0], argv.slice(1), { stdio, env: { ...process.env, ...o.env } })
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
