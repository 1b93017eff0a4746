/**
 * A full garbage collection, on every runtime the suites run on: V8's `gc` exposed at run time
 * (Node, Deno), or Bun's own `Bun.gc(true)` (JavaScriptCore has no `--expose-gc`).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun

function v8gc(): () => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc')
}

export const gc: () => void = bun ? () => bun.gc(true) : v8gc()
