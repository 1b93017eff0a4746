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
# 3. From there: require() (CommonJS), import (ESM), and `tsc --noEmit --strict`
#    of small consumers against the shipped index.d.ts.
#
# Exits non-zero on any failure; temporary directories are always removed
# (set PACK_TEST_KEEP=1 to keep them for debugging).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PLATFORM="linux-x64-gnu"
BINARY="bson2json.${PLATFORM}.node"
TSC="${ROOT}/node_modules/typescript/bin/tsc"

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
for f in package.json index.js index.d.ts binding.js binding.d.ts; do
  grep -qx "package/${f}" <<<"${ROOT_LIST}" || fail "root tarball lacks ${f}"
done
# Whatever package.json points at must ship too.
while IFS= read -r f; do
  [ -n "${f}" ] || continue
  grep -qx "package/${f}" <<<"${ROOT_LIST}" || fail "root tarball lacks ${f} (referenced by package.json)"
done < <(node -e '
  const pkg = require(process.argv[1]);
  const out = [pkg.main, pkg.types, pkg.typings];
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

log "npm install both tarballs"
install_log="${WORK}/install.log"
if ! (cd "${APP}" && npm install --no-audit --no-fund --no-package-lock \
  "${ROOT_TGZ}" "${PLATFORM_TGZ}") >"${install_log}" 2>&1; then
  # The other platform packages are optional; if npm cannot even resolve them
  # (offline, registry errors), install without optionals: the local platform
  # tarball is a direct dependency of the consumer and is installed regardless.
  log "install with optional dependencies failed; retrying with --omit=optional"
  sed 's/^/  | /' "${install_log}" >&2
  rm -rf "${APP}/node_modules"
  (cd "${APP}" && npm install --no-audit --no-fund --no-package-lock --omit=optional \
    "${ROOT_TGZ}" "${PLATFORM_TGZ}") >"${install_log}" 2>&1 || {
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

log "CommonJS: require('bson2json')"
node -e "
  const assert = require('node:assert');
  const path = require('node:path');
  const mod = require('bson2json');
  assert.strictEqual(typeof mod.toJSON, 'function', 'toJSON is not exported');
  const out = mod.toJSON(Buffer.from([${BSON_BYTES}]));
  assert.strictEqual(out, '${EXPECTED}');
  // The binary must come from the platform package, not from a stray copy.
  const resolved = require.resolve('${PLATFORM_NAME}');
  assert.ok(resolved.startsWith(path.join(process.cwd(), 'node_modules', '${PLATFORM_NAME}') + path.sep), resolved);
  assert.ok(require.cache[require.resolve('${PLATFORM_NAME}')], 'the platform package was not loaded');
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

log "ESM: import { toJSON } from 'bson2json'"
cat >consumer.mjs <<EOF
import assert from 'node:assert';
import { toJSON } from 'bson2json';
import * as ns from 'bson2json';
import bson2json from 'bson2json';

const bytes = new Uint8Array([${BSON_BYTES}]);
assert.strictEqual(typeof toJSON, 'function', 'named export toJSON missing under ESM');
assert.strictEqual(toJSON(Buffer.from(bytes)), '${EXPECTED}');
assert.strictEqual(ns.toJSON, toJSON);
assert.strictEqual(bson2json.toJSON, toJSON);
console.log('  esm ok:', toJSON(Buffer.from(bytes)));
EOF
node consumer.mjs || fail "ESM consumer"

log "TypeScript: tsc --noEmit --strict against the shipped index.d.ts"
cat >consumer.ts <<EOF
import { toJSON } from 'bson2json';
import { changeStreamToKafka, transactionalIdOf } from 'bson2json/kafka';

export const start: typeof changeStreamToKafka = changeStreamToKafka;
export const txid: string = transactionalIdOf('orders');

const bytes = new Uint8Array([${BSON_BYTES}]);
const text: string = toJSON(bytes);
export const parsed: unknown = JSON.parse(text);
EOF
cat >consumer.mts <<EOF
import { toJSON } from 'bson2json';
import * as ns from 'bson2json';

const bytes = new Uint8Array([${BSON_BYTES}]);
export const text: string = toJSON(bytes);
export const same: typeof toJSON = ns.toJSON;
EOF
tsc_types=()
if [ -d "${ROOT}/node_modules/@types/node" ]; then
  tsc_types=(--typeRoots "${ROOT}/node_modules/@types" --types node)
fi
node "${TSC}" --noEmit --strict --target es2022 --module nodenext --moduleResolution nodenext \
  "${tsc_types[@]}" consumer.ts consumer.mts || fail "TypeScript consumer does not type-check"
log "  tsc ok"

log "PASS"
