#!/usr/bin/env bash
# MongoDB's own `bsondump` and `mongoexport` (mongo-tools, Go, Apache-2.0), built from the Go module
# proxy into a git-ignored directory, used only as test oracles (never shipped).
#
#   bash scripts/mongo-tools.sh          # build if needed; prints the two binaries' paths, one a line
#
# Idempotent: a second run only prints the paths. Needs `go`: the module is downloaded through
# GOPROXY, its vendor/ directory dropped and its dependencies resolved as modules instead.
# Where the module proxy does not serve the mongo-tools module itself, point MONGO_TOOLS_SRC at a
# checkout of the same commit (a source tree, or a git directory: the pinned commit is exported
# from it); its dependencies still come through GOPROXY. Without either the script exits 3, and the
# tests that need the tools skip.
# Environment: MONGO_TOOLS_DIR (default <repo>/tmp/mongo-tools), MONGO_TOOLS_SRC.
set -euo pipefail
MODULE=github.com/mongodb/mongo-tools
VERSION=v0.0.0-20260821190201-8fa3cfc8263b
COMMIT=8fa3cfc8263b
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${MONGO_TOOLS_DIR:-$ROOT/tmp/mongo-tools}"
BIN="$DIR/bin"
STAMP="$BIN/.version"

if [ -x "$BIN/bsondump" ] && [ -x "$BIN/mongoexport" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  echo "$BIN/bsondump"
  echo "$BIN/mongoexport"
  exit 0
fi

command -v go >/dev/null 2>&1 || { echo "mongo-tools.sh: go is not installed" >&2; exit 1; }
echo "mongo-tools.sh: building bsondump and mongoexport ($MODULE@$VERSION)" >&2
mkdir -p "$DIR"
rm -rf "$DIR/src"
src="$(go mod download -json "$MODULE@$VERSION" 2>/dev/null | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' || true)"
if [ -n "$src" ] && [ -d "$src" ]; then
  cp -r "$src" "$DIR/src"
elif [ -n "${MONGO_TOOLS_SRC:-}" ] && git -C "$MONGO_TOOLS_SRC" rev-parse --verify -q "$COMMIT^{commit}" >/dev/null 2>&1; then
  echo "mongo-tools.sh: the module proxy did not serve $MODULE; exporting $COMMIT from $MONGO_TOOLS_SRC" >&2
  mkdir -p "$DIR/src"
  git -C "$MONGO_TOOLS_SRC" archive "$COMMIT" | tar -x -C "$DIR/src"
elif [ -n "${MONGO_TOOLS_SRC:-}" ] && [ -f "$MONGO_TOOLS_SRC/go.mod" ]; then
  echo "mongo-tools.sh: the module proxy did not serve $MODULE; building $MONGO_TOOLS_SRC" >&2
  cp -r "$MONGO_TOOLS_SRC" "$DIR/src"
else
  echo "mongo-tools.sh: the module proxy did not serve $MODULE@$VERSION and MONGO_TOOLS_SRC names no checkout of it" >&2
  exit 3
fi
chmod -R u+w "$DIR/src"
rm -rf "$DIR/src/vendor"
mkdir -p "$BIN"
(
  cd "$DIR/src"
  export GOFLAGS="-mod=mod -buildvcs=false"
  go build -o "$BIN/bsondump" ./bsondump/main
  go build -o "$BIN/mongoexport" ./mongoexport/main
)
echo "$VERSION" >"$STAMP"
echo "$BIN/bsondump"
echo "$BIN/mongoexport"
