// Loaders for the peer BSON->JSON implementations compared in the benchmark.
// Each loader returns { ok: true, version, ... } or { ok: false, reason }.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const CACHE = join(HERE, '.cache');
const require = createRequire(import.meta.url);

function errMsg(e) {
  return String(e && e.message ? e.message : e).split('\n')[0];
}

/**
 * bson2json itself: require() of the repo root (index.js), or of $BSON2JSON_MODULE when set
 * (to benchmark another build, or a mock when testing the runner).
 */
export function loadBson2json() {
  const target = process.env.BSON2JSON_MODULE || ROOT;
  try {
    const mod = require(target);
    const fns = ['toJSON', 'toJSONBuffer', 'toJSONList', 'toJSONArray', 'toNDJSON'];
    const present = fns.filter((f) => typeof mod[f] === 'function');
    let version = '?';
    try {
      version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    } catch {
      // ignore
    }
    return { ok: true, mod, present, missing: fns.filter((f) => !present.includes(f)), version };
  } catch (e) {
    return { ok: false, reason: `require('${target}') failed: ${errMsg(e)}` };
  }
}

/** mongodb-js/bson-ext: the C++ BSON parser (deserialize) + JSON.stringify. */
export function loadBsonExt({ build = false } = {}) {
  const tryLoad = () => {
    const ext = require('bson-ext');
    const version = JSON.parse(readFileSync(require.resolve('bson-ext/package.json'), 'utf8')).version;
    return { ok: true, ext, version };
  };
  try {
    return tryLoad();
  } catch (e) {
    let pkgDir;
    try {
      pkgDir = dirname(require.resolve('bson-ext/package.json'));
    } catch {
      return { ok: false, reason: 'bson-ext is not installed (npm install -D bson-ext)' };
    }
    if (!build) {
      return {
        ok: false,
        reason: `bson-ext native addon not built (${errMsg(e)}); npm skips its install script: run with --build-peers, or (cd ${pkgDir} && npx node-gyp rebuild)`,
      };
    }
    try {
      const gyp = ['rebuild'];
      if (existsSync('/usr/include/node/node.h')) gyp.push('--nodedir=/usr');
      execFileSync('npx', ['--yes', 'node-gyp', ...gyp], { cwd: pkgDir, stdio: 'inherit' });
      return tryLoad();
    } catch (e2) {
      return { ok: false, reason: `bson-ext native build failed: ${errMsg(e2)}` };
    }
  }
}

/**
 * zbjornson/bson-to-json 2.0.3 (a C++ addon; not on the npm registry reachable here):
 * `scripts/bson-to-json.sh` builds it from a git checkout, one build per Node major, in
 * tmp/peers/bson-to-json-2.0.3-node<major> ($BSON_TO_JSON_DIR overrides the directory).
 * Its API is `new Transcoder().transcode(doc)`, which returns the JSON as a Buffer.
 */
export function loadBsonToJson() {
  const major = process.versions.node.split('.')[0];
  const dir = process.env.BSON_TO_JSON_DIR || join(ROOT, `tmp/peers/bson-to-json-2.0.3-node${major}`);
  const addon = join(dir, 'build/Release/bsonToJson.node');
  if (!existsSync(addon)) {
    return { ok: false, reason: `${addon}: not built (BSON_TO_JSON_SRC=<bson-to-json git dir> bash scripts/bson-to-json.sh builds it)` };
  }
  try {
    const m = require(addon);
    const t = new m.Transcoder();
    let version = '2.0.3';
    try {
      version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    } catch {
      // the build directory has no package.json: the script's pinned version stands
    }
    return { ok: true, version, isa: m.ISE, transcode: (doc) => t.transcode(doc) };
  } catch (e) {
    return { ok: false, reason: `${addon}: ${errMsg(e)}` };
  }
}

const PS_PKG = '@powersync/service-module-mongodb';

/**
 * PowerSync's direct BSON -> JSON converter lives in
 * dist/replication/bufferToSqlite.js (+ JsonBufferWriter.js) of @powersync/service-module-mongodb.
 * The package cannot be installed whole here, so we `npm pack` its tarball into
 * benchmark/.cache (gitignored), copy only those two files into .cache/ps-shim, replace
 * their two package imports with a tiny shim (Decimal128 from js-bson; date-compat
 * classes that are only used for years outside 0..9999) and export the whole-document
 * serializer `serializeNestedObjectToJson`, which bufferToSqlite uses for nested values.
 */
export async function loadPowerSync() {
  try {
    mkdirSync(CACHE, { recursive: true });
    const extractDir = join(CACHE, 'ps');
    const distDir = join(extractDir, 'package', 'dist', 'replication');
    if (!existsSync(join(distDir, 'bufferToSqlite.js'))) {
      let tgz = readdirSync(CACHE).find((f) => f.startsWith('powersync-service-module-mongodb-') && f.endsWith('.tgz'));
      if (!tgz) {
        execFileSync('npm', ['pack', PS_PKG, '--pack-destination', CACHE], { stdio: ['ignore', 'ignore', 'inherit'] });
        tgz = readdirSync(CACHE).find((f) => f.startsWith('powersync-service-module-mongodb-') && f.endsWith('.tgz'));
      }
      if (!tgz) return { ok: false, reason: `npm pack ${PS_PKG} produced no tarball` };
      mkdirSync(extractDir, { recursive: true });
      execFileSync('tar', ['xzf', join(CACHE, tgz), '-C', extractDir]);
    }
    const version = JSON.parse(readFileSync(join(extractDir, 'package', 'package.json'), 'utf8')).version;
    const shimDir = join(CACHE, 'ps-shim');
    mkdirSync(shimDir, { recursive: true });
    writeFileSync(join(shimDir, 'package.json'), '{"type":"module"}\n');
    writeFileSync(join(shimDir, 'JsonBufferWriter.js'), readFileSync(join(distDir, 'JsonBufferWriter.js')));
    let src = readFileSync(join(distDir, 'bufferToSqlite.js'), 'utf8');
    const before = src;
    src = src.replace(/^import \{[^}]*\} from '@powersync\/lib-service-mongodb';$/m, "import { mongo } from './shim.mjs';");
    src = src.replace(
      /^import \{[^}]*\} from '@powersync\/service-sync-rules';$/m,
      "import { CompatibilityContext, CompatibilityOption, DateTimeValue, TimeValuePrecision } from './shim.mjs';",
    );
    if (src === before || /from '@powersync\//.test(src) || !/function serializeNestedObjectToJson\(/.test(src)) {
      return { ok: false, reason: `${PS_PKG}@${version}: converter layout changed (imports / serializeNestedObjectToJson not found)` };
    }
    src += '\nexport { serializeNestedObjectToJson as __serializeNestedObjectToJson, SHARED_WRITER as __SHARED_WRITER };\n';
    writeFileSync(join(shimDir, 'bufferToSqlite.js'), src);
    writeFileSync(
      join(shimDir, 'shim.mjs'),
      [
        "import { Decimal128 } from 'bson';",
        'export const mongo = { Decimal128 };',
        "export const TimeValuePrecision = { seconds: 'seconds', milliseconds: 'milliseconds', microseconds: 'microseconds', nanoseconds: 'nanoseconds' };",
        "export const CompatibilityOption = { timestampsIso8601: 'timestampsIso8601' };",
        'export class CompatibilityContext {',
        '  constructor(o) { this.o = o; this.maxTimeValuePrecision = o && o.maxTimeValuePrecision; }',
        '  isEnabled() { return true; }',
        '}',
        'CompatibilityContext.FULL_BACKWARDS_COMPATIBILITY = new CompatibilityContext({});',
        'export class DateTimeValue {',
        "  constructor() { throw new Error('benchmark shim: dates outside years 0..9999 are not supported'); }",
        '}',
        '',
      ].join('\n'),
    );
    const mod = await import(pathToFileURL(join(shimDir, 'bufferToSqlite.js')).href);
    const serialize = mod.__serializeNestedObjectToJson;
    const writer = mod.__SHARED_WRITER;
    // DateRenderMode.ISO_MILLISECONDS (1): "YYYY-MM-DDTHH:MM:SS.mmmZ", like Date#toJSON.
    const toJSON = (buf) => {
      writer.reset();
      serialize(buf, 0, 0, writer, 1);
      return writer.toString();
    };
    return { ok: true, version, toJSON };
  } catch (e) {
    return { ok: false, reason: `${PS_PKG}: ${errMsg(e)}` };
  }
}
