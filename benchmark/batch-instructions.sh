#!/usr/bin/env bash
# Instructions per document on the main thread (valgrind --tool=callgrind, so independent of the
# machine's load) of toNDJSON on an array of documents, toNDJSON on one concatenated Buffer of
# them, and toJSON per document: the first 1,000 documents of a benchmark/workloads.mjs workload (views into one
# Buffer, as a driver's raw batch), 300 passes after 300 of warm-up, less a run with the warm-up
# only.
#
#   bash benchmark/batch-instructions.sh [workload] [package directory]   # tiny, this checkout
#   NODE=/path/to/node24 bash benchmark/batch-instructions.sh small250 /path/to/other/checkout
#
# Each method costs two runs of Node under callgrind (about half a minute each).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORKLOAD="${1:-tiny}"
PKG="$(cd "${2:-$ROOT}" && pwd)"
NODE="${NODE:-node}"
PROG="$(mktemp --suffix=.mjs)"
trap 'rm -f "$PROG"' EXIT
cat >"$PROG" <<'JS'
import { createRequire } from 'node:module';
const [root, pkg, workload, method, passes] = process.argv.slice(2);
const require = createRequire(`${root}/benchmark/`);
const m = require(`${pkg}/index.js`);
const docs = (await import(`${root}/benchmark/workloads.mjs`)).loadWorkload(workload, { quick: true }).docs.slice(0, 1000);
const concat = Buffer.concat(docs);
const f = {
  array: () => m.toNDJSON(docs),
  concatenated: () => m.toNDJSON(concat),
  toJSON: () => {
    for (const d of docs) m.toJSON(d);
  },
}[method];
for (let i = 0; i < 300; i++) f();
// As in call-instructions.sh: under valgrind V8's concurrent TurboFan job may not finish until
// the main thread blocks, so the counted passes would run whichever code was ready.
await new Promise((resolve) => setTimeout(resolve, 300));
for (let i = 0; i < Number(passes); i++) f();
JS
# glibc's memcpy / memset without `rep movsb` / `rep stosb` (callgrind counts each byte they move).
source "$ROOT/benchmark/callgrind-env.sh"
# The main thread's instructions only (--separate-threads: its file ends in -01): V8's JIT and GC
# threads run a varying amount of work, which summed in made a 2% difference unreadable.
count() {
  local d n
  d="$(mktemp -d)"
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$d/cg.out" "$NODE" "$PROG" "$ROOT" "$PKG" "$WORKLOAD" "$1" "$2" >/dev/null 2>&1
  n="$(sed -n 's/^summary: //p' "$d/cg.out-01")"
  rm -rf "$d"
  echo "$n"
}
echo "$("$NODE" --version), $WORKLOAD, $PKG:"
for method in array concatenated toJSON; do
  warm="$(count "$method" 0)"
  all="$(count "$method" 300)"
  echo "  $method: $(((all - warm) / 300000)) instructions a document"
done
