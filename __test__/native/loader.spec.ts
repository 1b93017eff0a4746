/**
 * The loader (lib/native/load.js over the generated binding.js): where neither the native addon nor
 * the WASI build loads, requiring bson2json throws one error that names what it looked for (the
 * local build, the platform package, the WASI build and its package), why each failed, and what
 * to do. Each situation is a copy of the package's JavaScript in a temporary directory.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)

describe('the loader error says what it looked for and what to do', () => {
  const { currentPlatform } = require('../../lib/native/load.js')
  const platform: string = currentPlatform()
  const root = path.join(__dirname, '..', '..')
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

  /** Loads the copy in a child process; returns its backend, or the error requiring it threw. */
  function load(dir: string): { backend?: string; error?: string; code?: string } {
    const script = `
      let out
      try {
        out = { backend: require(${JSON.stringify(path.join(dir, 'index.js'))}).backend }
      } catch (e) {
        out = { error: e.message, code: e.code }
      }
      console.log(JSON.stringify(out))
    `
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const k of Object.keys(env)) if (k.startsWith('NAPI_RS_')) delete env[k]
    try {
      return JSON.parse(execFileSync(process.execPath, ['--no-warnings', '-e', script], { env, encoding: 'utf8' }))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  function expectError(r: { backend?: string; error?: string; code?: string }, ...parts: string[]): string {
    expect(r.backend).toBeUndefined()
    expect(r.code).toBe('ERR_BSON2JSON_NO_BINDING')
    const m = r.error!
    expect(m).toContain(`bson2json: no native addon and no WASI build loaded for ${platform}.`)
    expect(m).toContain('bson2json.wasi.cjs: not there')
    expect(m).not.toMatch(/npm has a bug|Cannot find native binding/)
    for (const p of parts) expect(m).toContain(p)
    return m
  }

  it('a source checkout without a build: run `npm run build`', () => {
    expectError(
      load(situation({ checkout: true })),
      `${file}: not there`,
      `package ${packageName}: not installed`,
      'this is a source checkout without a build: run `npm run build`',
    )
  })

  it('a tarball packed from a clone (no platform packages listed): install the built clone', () => {
    expectError(
      load(situation({})),
      `${file}: not there`,
      `package ${packageName}: not installed`,
      'it was packed from a clone',
      '`npm install /path/to/clone` or `npm link`',
    )
  })

  it('an install without its platform package: install it, naming the version', () => {
    const m = expectError(
      load(situation({ optional: true })),
      `package ${packageName}: not installed`,
      `the optional dependency ${packageName} was not installed`,
      `npm install ${packageName}@${rootPkg.version}`,
    )
    expect(m).not.toContain('packed from a clone')
  })

  it('a platform with no prebuilt binary: build from a clone, or install the WASI build', () => {
    expectError(
      load(situation({ optional: true, targets: ['x86_64-unknown-freebsd'] })),
      `no prebuilt binary is published for ${platform} (prebuilt: freebsd-x64)`,
      'npm install /path/to/clone',
      `package bson2json-wasm32-wasi: not installed`,
      `npm install bson2json-wasm32-wasi@${rootPkg.version}`,
    )
  })

  it('a binary that is there but does not load: says why (the dlopen error) and to rebuild or reinstall', () => {
    expectError(
      load(situation({ checkout: true, localNode: 'not a shared object' })),
      `${file}: present but does not load:`,
      'rebuild it with `npm run build`',
    )
    expectError(
      load(situation({ optional: true, platformPackageNode: 'not a shared object' })),
      `package ${packageName} (`,
      'installed but does not load:',
      `reinstall bson2json (rm -rf node_modules/${packageName} && npm install)`,
    )
  })
})
