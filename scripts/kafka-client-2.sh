#!/usr/bin/env bash
# Runs a command with `@platformatic/kafka` 2.x in place of the checkout's 1.35 (the lock keeps
# 1.35 so that `npm ci` works on Node 20; 2.x is ESM and declares Node >= 22.22 or >= 24.6):
#
#   bash scripts/kafka-client-2.sh npx vitest run __test__/kafka/kafka.spec.ts
#   bash scripts/node-versions.sh 24 bash scripts/kafka-client-2.sh npx vitest run __test__/kafka/kafka.spec.ts
#
# The pinned version is installed once into the git-ignored tmp/kafka-client-2 (its own
# package.json and node_modules: the checkout's node_modules and package-lock.json are not
# touched). scripts/kafka-client-override.cjs, preloaded through NODE_OPTIONS, then resolves every
# require('@platformatic/kafka') of the command and of the processes it starts (the cdc CLI the
# tests spawn) to that copy. The script prints the version and the Node it runs on. Exit status is
# the command's.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=2.12.1
DIR="tmp/kafka-client-2"
installed() { node -e "process.stdout.write(require('./${DIR}/node_modules/@platformatic/kafka/package.json').version)" 2>/dev/null || true; }
if [ "$(installed)" != "${VERSION}" ]; then
  echo "kafka-client-2.sh: installing @platformatic/kafka@${VERSION} into ${DIR}" >&2
  mkdir -p "${DIR}"
  echo '{"name":"bson2json-kafka-client-2","private":true}' >"${DIR}/package.json"
  (cd "${DIR}" && npm install --no-audit --no-fund --loglevel=error "@platformatic/kafka@${VERSION}" >&2)
fi
echo "kafka-client-2.sh: @platformatic/kafka $(installed) on Node $(node --version): $*" >&2
export B2J_KAFKA_CLIENT_DIR="$PWD/${DIR}"
export NODE_OPTIONS="${NODE_OPTIONS:+${NODE_OPTIONS} }--require $PWD/scripts/kafka-client-override.cjs"
exec "$@"
