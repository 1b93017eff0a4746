#!/usr/bin/env bash
# bson-to-json 2.0.3 (github.com/zbjornson/bson-to-json, a C++ node-gyp addon, MIT), built from a
# git checkout into a directory outside the package, used only as a benchmark peer by
# benchmark/realworld.mjs (never a dependency, never shipped). It is not on the npm registry
# (the npm package of that name is someone else's fork), so its sources come from a git checkout;
# its only dependency, node-addon-api ^8.3.0, comes from npm.
#
#   BSON_TO_JSON_SRC=/path/to/bson-to-json/.git bash scripts/bson-to-json.sh   # prints the directory
#   NODE=/path/to/node24 BSON_TO_JSON_SRC=... bash scripts/bson-to-json.sh      # the same for another Node
#
# An addon is built per Node ABI: the default directory is tmp/peers/bson-to-json-2.0.3-node<major>
# (git-ignored). node-gyp would download Node's headers from nodejs.org; instead --nodedir points
# at the headers installed next to the Node binary (<prefix>/include/node). Idempotent: a second run
# only prints the directory. Without a checkout of the pinned commit the script exits 3.
# The addon is compiled with its own flags (-O3 from node-gyp's release config, -march=native).
# Environment: BSON_TO_JSON_SRC (a git directory holding the commit, or a source tree of it),
# NODE (default: node on PATH), BSON_TO_JSON_DIR (the build directory).
set -euo pipefail
VERSION=2.0.3
COMMIT=c82063c
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NODE="${NODE:-node}"
NODE_BIN="$(command -v "$NODE")"
MAJOR="$("$NODE_BIN" -p 'process.versions.node.split(".")[0]')"
DIR="${BSON_TO_JSON_DIR:-$ROOT/tmp/peers/bson-to-json-$VERSION-node$MAJOR}"
ADDON="$DIR/build/Release/bsonToJson.node"
STAMP="$DIR/.built-for"
WANT="$VERSION $("$NODE_BIN" -p 'process.versions.modules')"

if [ -f "$ADDON" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$WANT" ]; then
  echo "$DIR"
  exit 0
fi

# A stale build is replaced; anything else in the way is left alone.
if [ -n "$(ls -A "$DIR" 2>/dev/null)" ] && [ ! -f "$DIR/binding.gyp" ]; then
  echo "bson-to-json.sh: $DIR exists and holds no bson-to-json build; not touching it" >&2
  exit 1
fi
rm -rf "$DIR"
mkdir -p "$DIR"
SRC="${BSON_TO_JSON_SRC:-}"
if [ -n "$SRC" ] && git -C "$SRC" rev-parse --verify -q "$COMMIT^{commit}" >/dev/null 2>&1; then
  git -C "$SRC" archive "$COMMIT" | tar -x -C "$DIR"
elif [ -n "$SRC" ] && [ -f "$SRC/binding.gyp" ] && grep -q "\"version\": \"$VERSION\"" "$SRC/package.json"; then
  cp -r "$SRC/." "$DIR"
  rm -rf "$DIR/.git" "$DIR/build" "$DIR/node_modules"
else
  echo "bson-to-json.sh: BSON_TO_JSON_SRC names no checkout of bson-to-json $VERSION ($COMMIT)" >&2
  rmdir "$DIR" 2>/dev/null || true
  exit 3
fi

PREFIX="$(cd "$(dirname "$NODE_BIN")/.." && pwd)"
[ -f "$PREFIX/include/node/node_api.h" ] || { echo "bson-to-json.sh: no Node headers at $PREFIX/include/node" >&2; exit 1; }
GYP="$PREFIX/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js"
NPM_CLI="$PREFIX/lib/node_modules/npm/bin/npm-cli.js"
npm_() { if [ -f "$NPM_CLI" ]; then "$NODE_BIN" "$NPM_CLI" "$@"; else npm "$@"; fi; }
(
  cd "$DIR"
  # Only the runtime dependency (node-addon-api); no install scripts, no lock file.
  npm_ install --omit=dev --ignore-scripts --no-package-lock --no-audit --no-fund
  if [ -f "$GYP" ]; then
    "$NODE_BIN" "$GYP" rebuild --nodedir="$PREFIX"
  else
    npx --yes node-gyp@latest rebuild --nodedir="$PREFIX"
  fi
) >&2
[ -f "$ADDON" ] || { echo "bson-to-json.sh: the build left no $ADDON" >&2; exit 1; }
"$NODE_BIN" -e 'const { Transcoder } = require(process.argv[1]); if (new Transcoder().transcode(Buffer.from([5, 0, 0, 0, 0])).toString() !== "{}") process.exit(1)' "$ADDON"
echo "$WANT" >"$STAMP"
echo "$DIR"
