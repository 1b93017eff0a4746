#!/usr/bin/env bash
# The publish job's steps, in dry-run mode, on a staged copy of the repository (nothing in the
# checkout changes and nothing is published).
#
#   bash scripts/publish-dry-run.sh          after `npm run build`: this machine's target only
#   bash scripts/publish-dry-run.sh --all    after `napi artifacts` filled npm/<platform>/ with
#                                            every target's .node (the CI job of that name)
#
# Steps, as in CI's publish job:
#   1. (host mode) the built .node and the WASI build's .wasm go through `napi artifacts` from
#      artifacts/bindings-<target>/, with napi.targets narrowed to this machine's target and
#      wasm32-wasip1-threads in the staged package.json;
#   2. `napi prepublish -t npm --no-gh-release --dry-run`: validates every platform package
#      (name, files, the .node present, nothing omitted by npm pack);
#   3. `napi prepublish -t npm --no-gh-release --skip-optional-publish`: writes the root's
#      optionalDependencies as the real job does, publishing nothing;
#   4. `npm publish --dry-run --ignore-scripts` of the root package, of one platform package and
#      of bson2json-wasm32-wasi, checking the file lists (the root ships no .node; the platform
#      package ships its .node; the WASI package its .wasm and the generated loader files).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE=host
case "${1:-}" in
  "") ;;
  --all) MODE=all ;;
  *) echo "usage: bash scripts/publish-dry-run.sh [--all]" >&2; exit 2 ;;
esac
log() { printf 'publish-dry-run: %s\n' "$*" >&2; }
fail() { printf 'publish-dry-run: FAIL: %s\n' "$*" >&2; exit 1; }
NAPI="${ROOT}/node_modules/.bin/napi"
[ -x "${NAPI}" ] || fail "@napi-rs/cli is not installed (run npm ci)"

HOST_TARGET=x86_64-unknown-linux-gnu
HOST_PLATFORM=linux-x64-gnu
WASI_TARGET=wasm32-wasip1-threads
if [ "${MODE}" = host ]; then
  [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || fail "host mode knows linux-x64-gnu only; use --all after napi artifacts"
  [ -f "${ROOT}/bson2json.${HOST_PLATFORM}.node" ] || fail "missing bson2json.${HOST_PLATFORM}.node (run npm run build)"
  [ -f "${ROOT}/bson2json.wasm32-wasi.wasm" ] || fail "missing bson2json.wasm32-wasi.wasm (run npm run build:wasi)"
fi

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/bson2json-publish-dry-run.XXXXXX")"
trap 'rm -rf "${STAGE}"' EXIT

# The checkout's tracked files (what a clean CI clone has), plus npm/ as it is now: in --all mode
# it holds the artifacts that `napi artifacts` moved there.
git -C "${ROOT}" ls-files -z | (cd "${ROOT}" && xargs -0 cp --parents -t "${STAGE}")
rm -rf "${STAGE}/npm" && cp -R "${ROOT}/npm" "${STAGE}/npm"
ln -s "${ROOT}/node_modules" "${STAGE}/node_modules"
cd "${STAGE}"

if [ "${MODE}" = host ]; then
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const fs = require("fs");
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
    for (const t of process.argv.slice(1)) if (!pkg.napi.targets.includes(t)) throw new Error(`napi.targets lacks ${t}`);
    pkg.napi.targets = process.argv.slice(1);
    fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");
  ' "${HOST_TARGET}" "${WASI_TARGET}"
  mkdir -p "artifacts/bindings-${HOST_TARGET}" "artifacts/bindings-${WASI_TARGET}"
  cp "${ROOT}/bson2json.${HOST_PLATFORM}.node" "artifacts/bindings-${HOST_TARGET}/"
  cp "${ROOT}/bson2json.wasm32-wasi.wasm" "artifacts/bindings-${WASI_TARGET}/"
  log "napi artifacts (host target ${HOST_TARGET} and ${WASI_TARGET})"
  "${NAPI}" artifacts >/dev/null
fi
targets="$(node -p 'require("./package.json").napi.targets.join(" ")')"

log "napi prepublish --dry-run (${targets})"
"${NAPI}" prepublish -t npm --no-gh-release --dry-run
log "napi prepublish --skip-optional-publish (writes optionalDependencies; publishes nothing)"
"${NAPI}" prepublish -t npm --no-gh-release --skip-optional-publish
optional="$(node -p 'Object.keys(require("./package.json").optionalDependencies || {}).join(" ")')"
[ -n "${optional}" ] || fail "napi prepublish wrote no optionalDependencies"
log "root optionalDependencies: ${optional}"

# npm publish --dry-run prints the tarball's contents; --json gives them as data.
files_of() { node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const j = JSON.parse(s.slice(s.indexOf("{")));
    const r = j.files ? j : Object.values(j)[0];
    console.log(r.id); for (const f of r.files) console.log(f.path);
  });'; }

log "npm publish --dry-run: bson2json"
npm publish --dry-run --ignore-scripts --access public --json 2>/dev/null | files_of >root.list
for f in package.json index.js index.mjs index.d.ts index.d.mts kafka.js kafka.mjs kafka.d.ts kafka.d.mts binding.js binding.d.ts bin/bson2json.js; do
  grep -qx "${f}" root.list || fail "the root package would not ship ${f}"
done
while IFS= read -r f; do
  grep -qx "${f}" root.list || fail "the root package would not ship ${f}"
done < <(git -C "${ROOT}" ls-files lib bin)
if grep -q '\.node$' root.list; then fail "the root package would ship a .node: $(grep '\.node$' root.list)"; fi
log "  $(head -1 root.list): $(($(wc -l <root.list) - 1)) files"

log "npm publish --dry-run: bson2json-${HOST_PLATFORM}"
(cd "npm/${HOST_PLATFORM}" && npm publish --dry-run --ignore-scripts --access public --json 2>/dev/null) | files_of >platform.list
grep -qx "bson2json.${HOST_PLATFORM}.node" platform.list || fail "bson2json-${HOST_PLATFORM} would not ship its .node"
log "  $(head -1 platform.list): $(($(wc -l <platform.list) - 1)) files"
log "npm publish --dry-run: bson2json-wasm32-wasi"
(cd npm/wasm32-wasi && npm publish --dry-run --ignore-scripts --access public --json 2>/dev/null) | files_of >wasi.list
for f in bson2json.wasm32-wasi.wasm bson2json.wasi.cjs wasi-worker.mjs; do
  grep -qx "${f}" wasi.list || fail "bson2json-wasm32-wasi would not ship ${f}"
done
grep -q '"bson2json-wasm32-wasi"' package.json || fail "the root's optionalDependencies lack bson2json-wasm32-wasi"
log "  $(head -1 wasi.list): $(($(wc -l <wasi.list) - 1)) files"
log "PASS"
