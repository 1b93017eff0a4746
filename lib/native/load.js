'use strict'

/**
 * Chooses the implementation through the generated loader (`binding.js`): the native addon, or,
 * where no native binary matches or loads, the WASI build (the same Rust core compiled to
 * `wasm32-wasip1-threads`, wrapped by lib/native/wasi.js; `NAPI_RS_FORCE_WASI=1` forces it). When
 * neither loads, the error says which files and packages were looked for, why each failed, and
 * what to do ({@link diagnoseNativeLoad}). There is no JavaScript implementation behind them.
 */

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')

/** The wrapped WASI binding, made once (lib/native/wasi.js keeps views of its staged regions). */
let wasi

/**
 * The generated loader (`binding.js`) with `NAPI_RS_FORCE_WASI=1` read as napi-rs's strict
 * `error` mode (WASI or nothing: no native fallback behind it). napi-rs itself accepts only
 * `true` and `error`; `1` is this project's documented spelling.
 */
function requireBinding() {
  const env = process.env
  if (env.NAPI_RS_FORCE_WASI !== '1') return quietWasi(() => require('../../binding.js'))
  env.NAPI_RS_FORCE_WASI = 'error'
  try {
    return quietWasi(() => require('../../binding.js'))
  } finally {
    env.NAPI_RS_FORCE_WASI = '1'
  }
}

/**
 * Runs `load` without Node's "WASI is an experimental feature" warning, which the WASI loader
 * would print once on this thread and once per wasm worker thread. On this thread the warning
 * is dropped as it is emitted during the load; the WASI loader takes `Worker` from
 * `node:worker_threads` while it loads, and gets a subclass that adds
 * `--disable-warning=ExperimentalWarning` to each worker's `execArgv` (the workers run only the
 * wasm threads; nested ones inherit it). Both are put back right after the load.
 * `node:worker_threads` is patched as the load requires it, not before: a native load never
 * does, and loading it (with Node's streams) is a sixth of the CLI's start-up.
 */
function quietWasi(load) {
  const Module = require('node:module')
  const moduleLoad = Module._load
  let threads = null
  let Worker = null
  Module._load = function (request) {
    const exports = moduleLoad.apply(this, arguments)
    if (threads === null && (request === 'node:worker_threads' || request === 'worker_threads')) {
      threads = exports
      Worker = exports.Worker
      threads.Worker = class extends Worker {
        constructor(filename, options = {}) {
          const execArgv = [...(options.execArgv || process.execArgv), '--disable-warning=ExperimentalWarning']
          super(filename, { ...options, execArgv })
        }
      }
    }
    return exports
  }
  const emitWarning = process.emitWarning
  process.emitWarning = function (warning, ...rest) {
    const type = typeof rest[0] === 'string' ? rest[0] : rest[0] && rest[0].type
    if (type === 'ExperimentalWarning' && String(warning).startsWith('WASI')) return
    return emitWarning.call(this, warning, ...rest)
  }
  try {
    return load()
  } finally {
    process.emitWarning = emitWarning
    Module._load = moduleLoad
    if (threads !== null) threads.Worker = Worker
  }
}

/**
 * @returns {{ name: 'native' | 'wasi', binding: any }}
 */
function loadBackend() {
  let binding
  try {
    binding = requireBinding()
  } catch (err) {
    let e
    if (process.env.NAPI_RS_FORCE_WASI === '1') {
      const why = []
      for (let c = err; c && why.length < 4; c = c.cause) why.push(firstLine(c))
      e = new Error(`bson2json: NAPI_RS_FORCE_WASI=1 is set, but the WASI build did not load: ${why.join(': ')}`)
    } else {
      e = new Error(`bson2json: ${diagnoseNativeLoad()}`)
    }
    e.code = 'ERR_BSON2JSON_NO_BINDING'
    e.cause = err
    throw e
  }
  if (binding.__napiBindingTarget === 'wasm32-wasi') {
    if (wasi === undefined) wasi = require('./wasi.js').wrapWasi(binding)
    return { name: 'wasi', binding: wasi }
  }
  return { name: 'native', binding }
}

/** The napi-rs platform name of a Rust target triple (`x86_64-unknown-linux-gnu` → `linux-x64-gnu`). */
function platformOfTriple(triple) {
  const [cpu, ...rest] = triple.split('-')
  const arch = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm', riscv64gc: 'riscv64' }[cpu] || cpu
  const sys = rest.join('-')
  if (sys.endsWith('apple-darwin')) return `darwin-${arch}`
  if (sys.endsWith('windows-msvc')) return `win32-${arch}-msvc`
  if (sys.includes('linux')) return `linux-${arch}-${sys.endsWith('musl') ? 'musl' : 'gnu'}`
  if (sys.includes('freebsd')) return `freebsd-${arch}`
  return null
}

/** This process's napi-rs platform name, as the generated loader composes it. */
function currentPlatform() {
  const { platform, arch } = process
  if (platform === 'win32') return `win32-${arch}-msvc`
  if (platform === 'linux') {
    let glibc = true
    try {
      const report = process.report && process.report.getReport()
      glibc = !report || Boolean(report.header && report.header.glibcVersionRuntime)
    } catch {
      glibc = true
    }
    return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`
  }
  return `${platform}-${arch}`
}

function firstLine(e) {
  return String((e && e.message) || e).split('\n')[0]
}

/**
 * Why neither the native addon nor the WASI build loaded, and what to do, in a few lines: the
 * local build `bson2json.<platform>.node` next to package.json, the platform package
 * `bson2json-<platform>`, the WASI build (`bson2json.wasi.cjs` next to package.json, the package
 * `bson2json-wasm32-wasi`), and which of three situations this is: a source checkout that has not
 * been built, an install without the platform packages (omitted optional dependencies, or a
 * tarball packed from a clone, which has no binary by design), or a platform with no prebuilt
 * binary. Every input is a parameter so the tests can set up each situation.
 */
function diagnoseNativeLoad({
  root = ROOT,
  platform = currentPlatform(),
  env = process.env,
  exists = fs.existsSync,
  load = require,
  resolvePackage = (name) => require.resolve(name, { paths: [root] }),
} = {}) {
  let pkg = {}
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  } catch {
    pkg = {}
  }
  const name = pkg.name || 'bson2json'
  const file = `${name}.${platform}.node`
  const filePath = path.join(root, file)
  const packageName = `${name}-${platform}`
  const targets = ((pkg.napi && pkg.napi.targets) || []).map(platformOfTriple).filter(Boolean)
  const wasiPackage = `${name}-wasm32-wasi`
  const lines = [`no native addon and no WASI build loaded for ${platform}.`]

  if (env.NAPI_RS_NATIVE_LIBRARY_PATH) {
    let why = 'loads now (it failed earlier)'
    try {
      load(env.NAPI_RS_NATIVE_LIBRARY_PATH)
    } catch (e) {
      why = firstLine(e)
    }
    lines.push(`  NAPI_RS_NATIVE_LIBRARY_PATH=${env.NAPI_RS_NATIVE_LIBRARY_PATH}: ${why}`)
    lines.push('  What to do: point NAPI_RS_NATIVE_LIBRARY_PATH at a .node file built for this platform, or unset it.')
    return lines.join('\n')
  }

  // 1. The local build (what `npm run build` writes into a checkout).
  let localBroken = false
  if (exists(filePath)) {
    let why = 'loads now (it failed earlier)'
    try {
      load(filePath)
    } catch (e) {
      why = `present but does not load: ${firstLine(e)}`
      localBroken = true
    }
    lines.push(`  ${filePath}: ${why}`)
  } else {
    lines.push(`  ${filePath}: not there`)
  }

  // 2. The platform package (an optional dependency of the published package).
  let packageState = 'missing'
  let packageResolved
  try {
    packageResolved = resolvePackage(packageName)
  } catch {
    packageResolved = undefined
  }
  if (packageResolved === undefined) {
    lines.push(`  package ${packageName}: not installed`)
  } else {
    try {
      load(packageResolved)
      packageState = 'loads'
      lines.push(`  package ${packageName} (${packageResolved}): loads now (it failed earlier)`)
    } catch (e) {
      packageState = 'broken'
      lines.push(`  package ${packageName} (${packageResolved}): installed but does not load: ${firstLine(e)}`)
    }
  }

  // 3. The WASI build (where no native binary matches; the same core as WebAssembly).
  const wasiLocal = path.join(root, `${name}.wasi.cjs`)
  lines.push(`  ${wasiLocal}: ${exists(wasiLocal) ? 'present but does not load' : 'not there'}`)
  let wasiResolved
  try {
    wasiResolved = resolvePackage(wasiPackage)
  } catch {
    wasiResolved = undefined
  }
  lines.push(`  package ${wasiPackage}: ${wasiResolved === undefined ? 'not installed' : `installed (${wasiResolved}) but does not load`}`)

  // 4. What to do.
  const checkout = exists(path.join(root, 'Cargo.toml')) && exists(path.join(root, 'crates'))
  const listed = Boolean(pkg.optionalDependencies && pkg.optionalDependencies[packageName])
  let todo
  if (localBroken || packageState === 'broken') {
    todo =
      'the binary is there but does not load (built for another platform or libc, or damaged): ' +
      (checkout ? 'rebuild it with `npm run build`.' : `reinstall ${name} (rm -rf node_modules/${packageName} && npm install).`)
  } else if (checkout) {
    todo = `this is a source checkout without a build: run \`npm run build\` in ${root} (needs a Rust toolchain; CONTRIBUTING.md).`
  } else if (!targets.includes(platform)) {
    todo =
      `no prebuilt binary is published for ${platform} (prebuilt: ${targets.join(', ') || 'none'}). ` +
      'Build from a clone of the repository (`npm ci && npm run build`) and install it with `npm install /path/to/clone` ' +
      `(README, "Using a local build"), or install the WASI build: \`npm install ${wasiPackage}@${pkg.version}\`.`
  } else if (!listed) {
    todo =
      `this ${name} lists no platform packages: it was packed from a clone (\`npm pack\` leaves the .node out by design). ` +
      `Install the built clone itself instead: \`npm run build\` there, then \`npm install /path/to/clone\` or \`npm link\` ` +
      '(README, "Using a local build").'
  } else {
    todo =
      `the optional dependency ${packageName} was not installed (optional dependencies omitted with --omit=optional ` +
      'or --no-optional, or a package-lock.json written on another platform without it). ' +
      `Run \`npm install ${packageName}@${pkg.optionalDependencies[packageName]}\`, or reinstall with optional dependencies.`
  }
  lines.push(`  What to do: ${todo}`)
  return lines.join('\n')
}

module.exports = { loadBackend, diagnoseNativeLoad, platformOfTriple, currentPlatform }
