/**
 * The ESM entries (index.mjs, kafka.mjs) name every export of the CommonJS entries (index.js,
 * kafka.js), no more, as the same values: Deno's and Bun's loaders see only the names written
 * there. The `exports` map sends `import` to them and `require` to the CommonJS files.
 * (scripts/pack-test.sh runs the installed package's imports on Node, Bun and Deno.)
 */
import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const ROOT = resolve(__dirname, '../..')

describe.each([
  ['index', '.'],
  ['kafka', './kafka'],
])('%s.mjs', (file, subpath) => {
  // Run by the runtime itself (vitest's own module loader would stand between).
  it('exports exactly the CommonJS entry names, as the same values, and the module as default', () => {
    const script = `
      import { createRequire } from 'node:module'
      const cjs = createRequire(import.meta.url)(${JSON.stringify(`${ROOT}/${file}.js`)})
      const esm = await import(${JSON.stringify(pathToFileURL(`${ROOT}/${file}.mjs`).href)})
      const named = Object.keys(esm).filter((k) => k !== 'default').sort()
      const differ = Object.keys(cjs).filter((k) => esm[k] !== cjs[k])
      console.log(JSON.stringify({ named, cjs: Object.keys(cjs).sort(), differ, isDefault: esm.default === cjs }))`
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    const got = JSON.parse(r.stdout)
    expect(got.named).toEqual(got.cjs)
    expect(got.differ).toEqual([])
    expect(got.isDefault).toBe(true)
  })

  it('is what `import` resolves to in package.json, with its own types; `require` gets the CommonJS file', () => {
    const entry = require(`${ROOT}/package.json`).exports[subpath]
    expect(entry.import).toEqual({ types: `./${file}.d.mts`, default: `./${file}.mjs` })
    expect(entry.require).toEqual({ types: `./${file}.d.ts`, default: `./${file}.js` })
    expect(require(`${ROOT}/package.json`).files).toEqual(expect.arrayContaining([`${file}.mjs`, `${file}.d.mts`]))
  })
})
