#!/usr/bin/env bash
# Public real-world JSON for benchmark/realworld.mjs: twitter.json, canada.json and
# citm_catalog.json (the classic parser benchmarks of nativejson-benchmark), as the crates.io
# package facet-json-classics 0.44.4 ships them (brotli-compressed), fetched with cargo into a
# git-ignored directory and decompressed to tmp/realworld/*.json.
#
#   bash scripts/realworld-data.sh     # prints the directory
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/tmp/realworld"
VERSION=0.44.4
if [ -s "$OUT/twitter.json" ] && [ -s "$OUT/canada.json" ] && [ -s "$OUT/citm_catalog.json" ]; then
  echo "$OUT"
  exit 0
fi
mkdir -p "$OUT/fetch/src"
cat > "$OUT/fetch/Cargo.toml" <<TOML
[package]
name = "realworld-fetch"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
facet-json-classics = "=$VERSION"
TOML
echo 'fn main() {}' > "$OUT/fetch/src/main.rs"
(cd "$OUT/fetch" && cargo fetch -q)
SRC="$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name "facet-json-classics-$VERSION" | head -1)"
[ -n "$SRC" ] || { echo "realworld-data.sh: facet-json-classics $VERSION not found after cargo fetch" >&2; exit 1; }
node -e '
const fs = require("fs"), zlib = require("zlib"), path = require("path")
const [src, out] = process.argv.slice(1)
for (const f of ["twitter", "canada", "citm_catalog"]) {
  const json = zlib.brotliDecompressSync(fs.readFileSync(path.join(src, "fixtures", f + ".json.br")))
  JSON.parse(json)
  fs.writeFileSync(path.join(out, f + ".json"), json)
}' "$SRC" "$OUT"
echo "$OUT"
