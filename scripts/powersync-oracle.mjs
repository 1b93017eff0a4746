#!/usr/bin/env node
// PowerSync's own BSON → SQLite row converter, fetched for the row tests and benchmarks
// (__test__/rows-powersync.spec.ts, benchmark/rows.mjs): `bufferToSqlite` from
// `@powersync/service-module-mongodb` 0.21.1 (dist/replication/bufferToSqlite.js and
// JsonBufferWriter.js), checked against the SHA-256 sums below, into tmp/powersync-oracle/.
//
// Fetched at test time, not committed: the package is under the Functional Source License
// (FSL-1.1-ALv2), which permits use for testing but asks redistributed copies to carry its
// terms, and becomes Apache-2.0 only two years after release. The package's other
// dependencies do not all install from the registry, so the two files run with:
// - `@powersync/service-sync-rules` 0.38.1 (a devDependency: its `DateTimeValue` renders
//   dates outside years 0-9999),
// - js-bson 6 (the devDependency `bson6`), through a three-line stand-in for
//   `@powersync/lib-service-mongodb` written here (it exports `mongo = { ...BSON, BSON }`).
// Never a runtime dependency of bson2json.
//
// Usage: node scripts/powersync-oracle.mjs → prints the path of bufferToSqlite.js (fetching
// it first unless it is there and intact). Needs npm and the registry the first time.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE = '@powersync/service-module-mongodb@0.21.1'
const FILES = {
  'bufferToSqlite.js': '2501f1e38a4f2fc2a45a9ef7f9a75636de7923a9b58e32aa225dfdac84481444',
  'JsonBufferWriter.js': '4e1cab988c606ecfacb04964060ff11ac6522e44726ba03ab25b1a9d81f7a1eb',
}
const ROOT = resolve(fileURLToPath(import.meta.url), '../..')
export const ORACLE_DIR = join(ROOT, 'tmp', 'powersync-oracle')

const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex')
const intact = () => Object.entries(FILES).every(([f, sum]) => existsSync(join(ORACLE_DIR, f)) && sha256(join(ORACLE_DIR, f)) === sum)

/** The path of bufferToSqlite.js, fetched first if needed. */
export function powersyncOracle() {
  if (!intact()) fetchOracle()
  return join(ORACLE_DIR, 'bufferToSqlite.js')
}

function fetchOracle() {
  mkdirSync(join(ROOT, 'tmp'), { recursive: true })
  const work = mkdtempSync(join(ROOT, 'tmp', 'powersync-pack-'))
  try {
    const tgz = execFileSync('npm', ['pack', PACKAGE, '--silent', '--pack-destination', work], { cwd: work, encoding: 'utf8' }).trim().split('\n').pop()
    execFileSync('tar', ['xzf', join(work, tgz), '-C', work])
    mkdirSync(ORACLE_DIR, { recursive: true })
    for (const [f, sum] of Object.entries(FILES)) {
      const from = join(work, 'package', 'dist', 'replication', f)
      const got = sha256(from)
      if (got !== sum) throw new Error(`${PACKAGE} ${f}: SHA-256 ${got}, expected ${sum}`)
      writeFileSync(join(ORACLE_DIR, f), readFileSync(from))
      // their source maps too (the files name them; a test runner looks for them)
      const map = `${from}.map`
      if (existsSync(map)) writeFileSync(join(ORACLE_DIR, `${f}.map`), readFileSync(map))
    }
    writeFileSync(join(ORACLE_DIR, 'LICENSE'), readFileSync(join(work, 'package', 'LICENSE')))
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  writeFileSync(join(ORACLE_DIR, 'package.json'), '{ "type": "module", "private": true }\n')
  writeFileSync(
    join(ORACLE_DIR, 'SOURCE.txt'),
    `${Object.keys(FILES).join(' and ')}: dist/replication/ of ${PACKAGE} (npm), FSL-1.1-ALv2 (LICENSE).\nFetched by scripts/powersync-oracle.mjs for tests; not part of bson2json.\n`,
  )
  const shim = join(ORACLE_DIR, 'node_modules', '@powersync', 'lib-service-mongodb')
  mkdirSync(shim, { recursive: true })
  writeFileSync(join(shim, 'package.json'), '{ "name": "@powersync/lib-service-mongodb", "type": "module", "main": "index.js" }\n')
  writeFileSync(join(shim, 'index.js'), "// a stand-in: PowerSync's converter needs only js-bson 6 from it\nimport * as BSON from 'bson6'\nexport const mongo = { ...BSON, BSON }\n")
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(powersyncOracle())
}
