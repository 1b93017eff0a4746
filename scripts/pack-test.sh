#!/usr/bin/env bash
# Packaging test: what a user gets from `npm install bson2json` on linux-x64-gnu.
#
# Run from anywhere after `npm run build` (needs bson2json.linux-x64-gnu.node,
# binding.js, binding.d.ts, index.js and index.d.ts in the repository root):
#
#   bash scripts/pack-test.sh
#
# 1. `npm pack` the root package and a temporary copy of npm/linux-x64-gnu
#    with the built .node copied in (as `napi artifacts` does). The staged
#    root manifest gets the optionalDependencies `napi prepublish` adds, so the
#    install sees the published shape (the other platform packages do not
#    exist on the registry yet and must not break the install).
# 2. Install both tarballs into a fresh temporary project.
# 3. From there, every documented entry point (`bson2json`, `bson2json/kafka`,
#    `bson2json/kafka.js`, `bson2json/package.json`) with require() and with
#    import (named exports; also on Node 26, Bun and Deno), the `exports` map closing the rest, the installed
#    `bson2json` command, and `tsc --strict` of consumers under
#    `module: nodenext` (.ts and .mts) and `moduleResolution: bundler`, with
#    Node's types (`Buffer` results, required change-event fields) and without.
# 4. The root tarball alone (no platform package, no WASI package): requiring it
#    throws one error that names what it looked for and what to do.
#
# Exits non-zero on any failure; temporary directories are always removed
# (set PACK_TEST_KEEP=1 to keep them for debugging).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PLATFORM="linux-x64-gnu"
BINARY="bson2json.${PLATFORM}.node"
TSC="${ROOT}/node_modules/typescript/bin/tsc"
# Node's types for the consumers' `Buffer` (a pinned release, installed into the temporary
# project only: the repository itself has no @types/node).
TYPES_NODE="@types/node@24.19.2"

log() { printf 'pack-test: %s\n' "$*" >&2; }
fail() { printf 'pack-test: FAIL: %s\n' "$*" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/bson2json-pack-test.XXXXXX")"
cleanup() {
  if [ "${PACK_TEST_KEEP:-0}" = "1" ]; then
    log "keeping ${WORK}"
  else
    rm -rf "${WORK}"
  fi
}
trap cleanup EXIT

# --- preconditions --------------------------------------------------------
for f in package.json index.js index.d.ts binding.js binding.d.ts "${BINARY}" "npm/${PLATFORM}/package.json"; do
  [ -e "${ROOT}/${f}" ] || fail "missing ${f} (run \`npm run build\` first; index.js/index.d.ts are the public entry)"
done
[ -x "${TSC}" ] || [ -f "${TSC}" ] || fail "typescript not installed in ${ROOT}/node_modules (run npm ci)"

ROOT_VERSION="$(node -p "require('${ROOT}/package.json').version")"
PLATFORM_NAME="$(node -p "require('${ROOT}/npm/${PLATFORM}/package.json').name")"
PLATFORM_VERSION="$(node -p "require('${ROOT}/npm/${PLATFORM}/package.json').version")"
[ "${PLATFORM_NAME}" = "bson2json-${PLATFORM}" ] || fail "npm/${PLATFORM} is named ${PLATFORM_NAME}"
[ "${PLATFORM_VERSION}" = "${ROOT_VERSION}" ] ||
  fail "npm/${PLATFORM} is at ${PLATFORM_VERSION} but the root package at ${ROOT_VERSION} (run \`napi version\`)"

# --- 1. pack ----------------------------------------------------------------
mkdir -p "${WORK}/tarballs" "${WORK}/stage"

log "staging root package"
# Stage a copy of the root so the repository is never modified: only
# package.json and the files the `files` field would ship are needed.
cp "${ROOT}/package.json" "${WORK}/stage/"
for f in README.md README LICENSE LICENSE.md; do
  [ -e "${ROOT}/${f}" ] && cp "${ROOT}/${f}" "${WORK}/stage/"
done
# shellcheck disable=SC2016 # JavaScript, not shell
node -e '
  const fs = require("fs"), path = require("path");
  const [root, stage] = process.argv.slice(1);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  for (const entry of pkg.files || []) {
    const src = path.join(root, entry);
    if (fs.existsSync(src)) fs.cpSync(src, path.join(stage, entry), { recursive: true });
  }
  // What `napi prepublish` writes before publishing.
  const optional = { ...(pkg.optionalDependencies || {}) };
  const npmDir = path.join(root, "npm");
  for (const dir of fs.readdirSync(npmDir).sort()) {
    const manifest = path.join(npmDir, dir, "package.json");
    if (fs.existsSync(manifest)) optional[JSON.parse(fs.readFileSync(manifest, "utf8")).name] = pkg.version;
  }
  pkg.optionalDependencies = optional;
  // Lifecycle scripts of the repository have no business in the staged pack.
  delete pkg.scripts;
  fs.writeFileSync(path.join(stage, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
' "${ROOT}" "${WORK}/stage"

log "npm pack bson2json"
(cd "${WORK}/stage" && npm pack --silent --pack-destination "${WORK}/tarballs" >/dev/null)

log "npm pack ${PLATFORM_NAME}"
cp -R "${ROOT}/npm/${PLATFORM}" "${WORK}/platform"
cp "${ROOT}/${BINARY}" "${WORK}/platform/"
(cd "${WORK}/platform" && npm pack --silent --pack-destination "${WORK}/tarballs" >/dev/null)

ROOT_TGZ="${WORK}/tarballs/bson2json-${ROOT_VERSION}.tgz"
PLATFORM_TGZ="${WORK}/tarballs/${PLATFORM_NAME}-${PLATFORM_VERSION}.tgz"
[ -f "${ROOT_TGZ}" ] || fail "npm pack did not produce ${ROOT_TGZ}"
[ -f "${PLATFORM_TGZ}" ] || fail "npm pack did not produce ${PLATFORM_TGZ}"

log "checking tarball contents"
ROOT_LIST="$(tar -tzf "${ROOT_TGZ}")"
PLATFORM_LIST="$(tar -tzf "${PLATFORM_TGZ}")"
for f in package.json index.js index.d.ts binding.js binding.d.ts LICENSE; do
  grep -qx "package/${f}" <<<"${ROOT_LIST}" || fail "root tarball lacks ${f}"
done
# Whatever package.json points at must ship too.
while IFS= read -r f; do
  [ -n "${f}" ] || continue
  grep -qx "package/${f}" <<<"${ROOT_LIST}" || fail "root tarball lacks ${f} (referenced by package.json)"
done < <(node -e '
  const pkg = require(process.argv[1]);
  const out = [pkg.main, pkg.types, pkg.typings];
  // Every file the exports map points at (conditions nest).
  const walk = (x) => { if (typeof x === "string") out.push(x); else if (x) Object.values(x).forEach(walk) };
  walk(pkg.exports);
  if (typeof pkg.bin === "string") out.push(pkg.bin);
  else if (pkg.bin) out.push(...Object.values(pkg.bin));
  for (const f of out) if (f) console.log(require("path").posix.normalize(f).replace(/^\.\//, ""));
' "${ROOT}/package.json")
for d in lib bin; do
  if [ -d "${ROOT}/${d}" ] && [ -n "$(ls -A "${ROOT}/${d}")" ]; then
    grep -q "^package/${d}/" <<<"${ROOT_LIST}" || fail "root tarball lacks ${d}/"
  fi
done
if grep -q '\.node$' <<<"${ROOT_LIST}"; then
  fail "root tarball ships a .node binary: $(grep '\.node$' <<<"${ROOT_LIST}" | tr '\n' ' ')"
fi
grep -qx "package/${BINARY}" <<<"${PLATFORM_LIST}" || fail "${PLATFORM_NAME} tarball lacks ${BINARY}"
log "root tarball: $(wc -l <<<"${ROOT_LIST}") files; ${PLATFORM_NAME}: $(wc -l <<<"${PLATFORM_LIST}") files"

# --- 2. install into a fresh project -----------------------------------------
APP="${WORK}/app"
mkdir -p "${APP}"
cat >"${APP}/package.json" <<'JSON'
{
  "name": "bson2json-pack-test-consumer",
  "version": "0.0.0",
  "private": true
}
JSON

log "npm install both tarballs (and ${TYPES_NODE} for the TypeScript checks)"
install_log="${WORK}/install.log"
if ! (cd "${APP}" && npm install --no-audit --no-fund --no-package-lock \
  "${ROOT_TGZ}" "${PLATFORM_TGZ}" "${TYPES_NODE}") >"${install_log}" 2>&1; then
  # The other platform packages are optional; if npm cannot even resolve them
  # (offline, registry errors), install without optionals: the local platform
  # tarball is a direct dependency of the consumer and is installed regardless.
  log "install with optional dependencies failed; retrying with --omit=optional"
  sed 's/^/  | /' "${install_log}" >&2
  rm -rf "${APP}/node_modules"
  (cd "${APP}" && npm install --no-audit --no-fund --no-package-lock --omit=optional \
    "${ROOT_TGZ}" "${PLATFORM_TGZ}" "${TYPES_NODE}") >"${install_log}" 2>&1 || {
    sed 's/^/  | /' "${install_log}" >&2
    fail "npm install of the tarballs failed"
  }
fi
[ -f "${APP}/node_modules/bson2json/package.json" ] || fail "bson2json not installed"
[ -f "${APP}/node_modules/${PLATFORM_NAME}/${BINARY}" ] || fail "${PLATFORM_NAME} not installed with ${BINARY}"

# --- 3. consume it -----------------------------------------------------------
# {"hello": "world", "n": 1 (int32)} written out byte by byte.
BSON_BYTES='0x1d,0x00,0x00,0x00, 0x02,0x68,0x65,0x6c,0x6c,0x6f,0x00, 0x06,0x00,0x00,0x00,0x77,0x6f,0x72,0x6c,0x64,0x00, 0x10,0x6e,0x00,0x01,0x00,0x00,0x00, 0x00'
EXPECTED='{"hello":"world","n":1}'

cd "${APP}"
unset NODE_PATH
export NAPI_RS_ENFORCE_VERSION_CHECK=1

log "CommonJS: require() of every entry point"
node -e "
  const assert = require('node:assert');
  const path = require('node:path');
  const mod = require('bson2json');
  assert.strictEqual(typeof mod.toJSON, 'function', 'toJSON is not exported');
  assert.strictEqual(mod.backend, 'native');
  const out = mod.toJSON(Buffer.from([${BSON_BYTES}]));
  assert.strictEqual(out, '${EXPECTED}');
  assert.ok(Buffer.isBuffer(mod.toNDJSON([Buffer.from([${BSON_BYTES}])])), 'toNDJSON returns a Buffer');
  // The binary must come from the platform package, not from a stray copy.
  const resolved = require.resolve('${PLATFORM_NAME}');
  assert.ok(resolved.startsWith(path.join(process.cwd(), 'node_modules', '${PLATFORM_NAME}') + path.sep), resolved);
  assert.ok(require.cache[require.resolve('${PLATFORM_NAME}')], 'the platform package was not loaded');
  const k = require('bson2json/kafka');
  assert.strictEqual(require('bson2json/kafka.js'), k, 'bson2json/kafka and bson2json/kafka.js are different modules');
  assert.strictEqual(require('bson2json/package.json').name, 'bson2json');
  // Only the exports map's paths are public.
  assert.throws(() => require('bson2json/lib/stream.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
  console.log('  cjs ok:', out);
" || fail "CommonJS consumer"

log "CommonJS: require('bson2json/kafka') loads without its optional peer @platformatic/kafka"
node -e "
  const assert = require('node:assert');
  const k = require('bson2json/kafka');
  for (const f of ['changeStreamToKafka', 'readCheckpoint', 'transactionalIdOf']) assert.strictEqual(typeof k[f], 'function', f);
  k.readCheckpoint({ brokers: ['127.0.0.1:9'], checkpointTopic: 'c', id: 'i' }).then(
    () => { console.error('readCheckpoint resolved without the Kafka client'); process.exit(1) },
    (e) => { assert.strictEqual(e.code, 'ERR_BSON2JSON_KAFKA_CLIENT', String(e)); console.log('  kafka entry ok:', e.message) },
  );
" || fail "bson2json/kafka entry"

log "ESM: import of every entry point, named exports equal to require()'s"
cat >consumer.mjs <<EOF
import assert from 'node:assert';
import { createRequire } from 'node:module';
import { toJSON, toNDJSON } from 'bson2json';
import * as ns from 'bson2json';
import bson2json from 'bson2json';
import { changeStreamToKafka, readCheckpoint, transactionalIdOf, KafkaFencedError } from 'bson2json/kafka';
import * as kafkaNs from 'bson2json/kafka';
import * as kafkaJsNs from 'bson2json/kafka.js';
import pkg from 'bson2json/package.json' with { type: 'json' };

const require = createRequire(import.meta.url);
const bytes = new Uint8Array([${BSON_BYTES}]);
assert.strictEqual(typeof toJSON, 'function', 'named export toJSON missing under ESM');
assert.strictEqual(toJSON(Buffer.from(bytes)), '${EXPECTED}');
assert.ok(Buffer.isBuffer(toNDJSON([bytes])));
assert.strictEqual(ns.toJSON, toJSON);
assert.strictEqual(bson2json.toJSON, toJSON);
// Every name require() gives is a named ESM export (Node's CommonJS export detection sees them all).
const named = (m) => Object.keys(m).filter((k) => k !== 'default' && k !== 'module.exports').sort();
assert.deepStrictEqual(named(ns), Object.keys(require('bson2json')).sort());
assert.deepStrictEqual(named(kafkaNs), Object.keys(require('bson2json/kafka')).sort());
assert.deepStrictEqual(named(kafkaJsNs), named(kafkaNs));
for (const f of [changeStreamToKafka, readCheckpoint, transactionalIdOf, KafkaFencedError]) assert.strictEqual(typeof f, 'function');
assert.strictEqual(kafkaJsNs.changeStreamToKafka, changeStreamToKafka);
assert.strictEqual(pkg.name, 'bson2json');
await assert.rejects(import('bson2json/lib/stream.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
console.log('  esm ok:', toJSON(Buffer.from(bytes)), named(ns).length + ' + ' + named(kafkaNs).length + ' named exports');
EOF
node consumer.mjs || fail "ESM consumer"

# The README's import on every supported runtime: Node 20 (this machine's) and 26, Bun and Deno
# (scripts/node-versions.sh installs the pinned ones). Their loaders see only the names the ESM
# entries write out (index.mjs, kafka.mjs); Node would also guess them from the CommonJS file.
log "ESM: import { toJSON } from 'bson2json' on Node 20 and 26, Bun and Deno, installed and linked"
cat >any-runtime.mjs <<EOF
import { createRequire } from 'node:module';
import { toJSON, toNDJSON, backend } from 'bson2json';
import * as ns from 'bson2json';
import bson2json from 'bson2json';
import { changeStreamToKafka, transactionalIdOf } from 'bson2json/kafka';
import * as kafkaNs from 'bson2json/kafka';
const require = createRequire(import.meta.url);
const fail = (m) => { console.error(m); process.exit(1); };
const named = (m) => JSON.stringify(Object.keys(m).filter((k) => k !== 'default' && k !== 'module.exports').sort());
const out = toJSON(new Uint8Array([${BSON_BYTES}]));
if (out !== '${EXPECTED}') fail('toJSON gave ' + out);
if (toNDJSON([new Uint8Array([${BSON_BYTES}])]).length !== out.length + 1) fail('toNDJSON');
if (backend !== 'native' || bson2json.toJSON !== toJSON) fail('backend ' + backend + ' or the default export');
if (named(ns) !== JSON.stringify(Object.keys(require('bson2json')).sort())) fail('named exports ' + named(ns));
if (named(kafkaNs) !== JSON.stringify(Object.keys(require('bson2json/kafka')).sort())) fail('bson2json/kafka named exports ' + named(kafkaNs));
if (typeof changeStreamToKafka !== 'function' || transactionalIdOf('x') !== require('bson2json/kafka').transactionalIdOf('x')) fail('bson2json/kafka');
const v = globalThis.Deno ? 'Deno ' + Deno.version.deno : globalThis.Bun ? 'Bun ' + Bun.version : 'Node ' + process.version;
console.log('  import ok on ' + v + ': ' + out);
EOF
# Also from a linked local build (README: `npm install /path/to/clone` links node_modules/bson2json
# to the clone), where Deno takes the clone's .js files for ES modules and guesses no names.
LINKED="${WORK}/linked"
mkdir -p "${LINKED}/node_modules"
echo '{ "name": "bson2json-pack-test-linked", "version": "0.0.0", "private": true }' >"${LINKED}/package.json"
ln -s "${ROOT}" "${LINKED}/node_modules/bson2json"
cp any-runtime.mjs "${LINKED}/"
for where in "${APP}" "${LINKED}"; do
  for runtime in 20 26 bun deno; do
    case "${runtime}" in
      bun) run=(bun any-runtime.mjs) ;;
      deno) run=(deno run --allow-read --allow-env --allow-ffi --allow-sys any-runtime.mjs) ;;
      *) run=(node any-runtime.mjs) ;;
    esac
    (cd "${where}" && bash "${ROOT}/scripts/node-versions.sh" "${runtime}" "${run[@]}") 2>"${WORK}/runtime.log" || {
      sed 's/^/  | /' "${WORK}/runtime.log" >&2
      fail "import { toJSON } from 'bson2json' on ${runtime} in ${where}"
    }
  done
done

log "the installed command: bson2json --version"
[ "$(./node_modules/.bin/bson2json --version)" = "${ROOT_VERSION}" ] || fail "node_modules/.bin/bson2json --version"

# TypeScript consumers. `common.ts` uses every entry point and what the README shows; each
# configuration compiles it with the shipped declarations (never skipLibCheck).
mkdir -p ts
cat >ts/common.ts <<EOF
import {
  toJSON, toJSONBuffer, toJSONList, toJSONArray, toNDJSON, toNDJSONAsync, toJSONAsync, cursorBatch,
  createTranscodeStream, watch, find, isTranscodeError, backend, type ChangeEvent, type ResumeToken,
  type Row,
} from 'bson2json';
import { changeStreamToKafka, transactionalIdOf } from 'bson2json/kafka';
import * as kafkaJs from 'bson2json/kafka.js';

export const start: typeof changeStreamToKafka = changeStreamToKafka;
export const sameKafka: typeof changeStreamToKafka = kafkaJs.changeStreamToKafka;
export const txid: string = transactionalIdOf('orders');
export const which: 'native' | 'wasi' = backend;

const bytes = new Uint8Array([${BSON_BYTES}]);
export const text: string = toJSON(bytes);
export const list: string[] = toJSONList([bytes]);
export const array: string = toJSONArray([bytes]);
export const later: Promise<string> = toJSONAsync(bytes);
export const bad: boolean = isTranscodeError(new Error('x'));

// The README's change-stream loop, unchanged, under strict: no '!' needed.
declare function route(operationType: string, documentKey: string | undefined, fullDocument: string | null | undefined): void;
declare function checkpoint(token: ResumeToken): Promise<void>;
export async function follow(collection: object): Promise<number> {
  for await (const ev of watch(collection, [], { fullDocument: 'updateLookup' })) {
    route(ev.operationType, ev.documentKey, ev.fullDocument);
    await checkpoint(ev.resumeToken);
    const at: { t: number; i: number } = ev.clusterTime;
    return at.t;
  }
  return 0;
}
export const firstEvent = (ev: ChangeEvent): string => ev.operationType;
// With rows: true the documents are rows (docs/rows.md).
export async function followRows(collection: object): Promise<Row | null | undefined> {
  for await (const ev of watch(collection, [], { rows: true })) return ev.fullDocument;
  return undefined;
}
export const cursor = find({}, { status: 'open' });

// Byte results: a Buffer where the runtime returns one (a Uint8Array without Node's types).
export { bytes, toJSONBuffer, toNDJSON, toNDJSONAsync, cursorBatch, createTranscodeStream };
EOF
cat >ts/buffers.ts <<EOF
import { toJSONBuffer, toNDJSON, toNDJSONAsync, cursorBatch, createTranscodeStream, find, watch } from 'bson2json';
import { changeStreamToKafka } from 'bson2json/kafka';
import { bytes } from './common${TS_EXT:-}';

// Node's AbortSignal where the declarations take a structural one.
export const stream = watch({}, [], { signal: new AbortController().signal });
export const run = changeStreamToKafka({
  source: {}, brokers: 'h:9092', topic: 't', checkpointTopic: 'c', id: 'i', signal: AbortSignal.timeout(1000),
});

export const out: Buffer = toNDJSON([bytes]);
export const one: Buffer = toJSONBuffer(bytes);
export const pbrt: Buffer | null = cursorBatch(bytes).postBatchResumeToken;
export async function more(): Promise<number> {
  const later: Buffer = await toNDJSONAsync([bytes]);
  let n = later.length;
  for await (const chunk of createTranscodeStream()) {
    const c: Buffer = chunk;
    n += c.length;
  }
  for await (const b of find({}).ndjson()) {
    const c: Buffer = b;
    n += c.length;
  }
  return n + out.toString('utf8').length + one.length + (pbrt ? pbrt.length : 0);
}
EOF
cat >ts/no-node-types.ts <<EOF
import { toJSONBuffer, toNDJSON, toNDJSONAsync } from 'bson2json';
import { bytes } from './common${TS_EXT:-}';

// Without @types/node the byte results are typed as their Uint8Array base.
export const out: Uint8Array = toNDJSON([bytes]);
export const one: Uint8Array = toJSONBuffer(bytes);
export const later: Promise<Uint8Array> = toNDJSONAsync([bytes]);
EOF
cat >ts/consumer.mts <<EOF
import { toJSON, toNDJSON } from 'bson2json';
import * as ns from 'bson2json';
import { changeStreamToKafka } from 'bson2json/kafka';
import { KafkaFencedError } from 'bson2json/kafka.js';
import pkg from 'bson2json/package.json' with { type: 'json' };

const bytes = new Uint8Array([${BSON_BYTES}]);
export const text: string = toJSON(bytes);
export const out: Buffer = toNDJSON([bytes]);
export const same: typeof toJSON = ns.toJSON;
export const start: typeof changeStreamToKafka = changeStreamToKafka;
export const fenced: string = new KafkaFencedError().code;
export const version: string = pkg.version;
EOF
cat >ts/consumer.cts <<EOF
import bson2json = require('bson2json');
import kafka = require('bson2json/kafka');
import pkg = require('bson2json/package.json');

export const text: string = bson2json.toJSON(new Uint8Array([${BSON_BYTES}]));
export const out: Buffer = bson2json.toNDJSON([]);
export const start: typeof kafka.changeStreamToKafka = kafka.changeStreamToKafka;
export const version: string = pkg.version;
EOF
run_tsc() {
  local what="$1"
  shift
  log "TypeScript: ${what}"
  node "${TSC}" --noEmit --strict --skipLibCheck false --target es2022 "$@" || fail "TypeScript consumer does not type-check: ${what}"
}
NODENEXT=(--module nodenext --moduleResolution nodenext --resolveJsonModule)
run_tsc "module nodenext (.ts as CommonJS, .mts, .cts), with @types/node" \
  "${NODENEXT[@]}" --types node ts/common.ts ts/buffers.ts ts/consumer.mts ts/consumer.cts
# `"types": []` (no types package at all, so the installed @types/node stays out) has no
# command-line spelling: a tsconfig.
cat >ts/tsconfig.no-node-types.json <<'EOF'
{
  "compilerOptions": { "types": [], "lib": ["es2022"] },
  "files": ["common.ts", "no-node-types.ts"]
}
EOF
run_tsc "module nodenext, without @types/node" "${NODENEXT[@]}" -p ts/tsconfig.no-node-types.json
run_tsc "moduleResolution bundler, with @types/node" \
  --module esnext --moduleResolution bundler --resolveJsonModule --types node ts/common.ts ts/buffers.ts ts/consumer.mts
log "  tsc ok"

# --- 4. the root package alone ------------------------------------------------
# What `npm install` of a tarball packed from a clone gives (the .node is left out by
# design): an error that says so and what to do (there is no JavaScript implementation).
ALONE="${WORK}/alone"
mkdir -p "${ALONE}"
echo '{ "name": "bson2json-pack-test-alone", "version": "0.0.0", "private": true }' >"${ALONE}/package.json"
log "npm install the root tarball alone, as packed from a clone"
node -e '
  const fs = require("fs");
  const p = process.argv[1], pkg = JSON.parse(fs.readFileSync(p, "utf8"));
  delete pkg.optionalDependencies;
  fs.writeFileSync(p, JSON.stringify(pkg, null, 2) + "\n");
' "${WORK}/stage/package.json"
(cd "${WORK}/stage" && npm pack --silent --pack-destination "${ALONE}" >/dev/null)
(cd "${ALONE}" && npm install --no-audit --no-fund --no-package-lock "./bson2json-${ROOT_VERSION}.tgz") >"${install_log}" 2>&1 || {
  sed 's/^/  | /' "${install_log}" >&2
  fail "npm install of the root tarball alone failed"
}
(cd "${ALONE}" && node --no-warnings -e "
  const assert = require('node:assert');
  let m;
  try {
    require('bson2json');
  } catch (e) {
    assert.strictEqual(e.code, 'ERR_BSON2JSON_NO_BINDING', e.stack);
    m = e.message;
  }
  assert.ok(m !== undefined, 'requiring the root tarball alone did not throw');
  for (const want of ['bson2json.${PLATFORM}.node: not there', 'package ${PLATFORM_NAME}: not installed', 'package bson2json-wasm32-wasi: not installed', 'packed from a clone', 'npm install /path/to/clone']) {
    assert.ok(m.includes(want), 'the error lacks ' + JSON.stringify(want) + ':\n' + m);
  }
  assert.ok(!/npm has a bug/.test(m), m);
  console.log('  loader error ok:', m.split('\n').join(' | '));
") || fail "root tarball alone: the loader error"

log "PASS"
