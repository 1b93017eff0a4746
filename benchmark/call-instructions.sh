#!/usr/bin/env bash
# Instructions per document of `toJSON` (valgrind --tool=callgrind, main thread only, so
# independent of the machine's load), or with METHOD=array of `toNDJSON` on the array of the
# documents, with METHOD=concatenated of `toNDJSON` on one Buffer of them (METHOD=all: the
# three, one run each): WARM passes over the documents, then PASSES passes
# between two fsync(2) marks, where callgrind cuts its counts (--dump-before=fsync). Datasets:
# citm-events, citm-performances, twitter (public real-world data as BSON, one document each;
# bash scripts/realworld-data.sh fetches it) or a benchmark/workloads.mjs workload (its first
# 1,000 documents). A V8 garbage collection that falls in the measured passes adds its
# instructions (hundreds a document on citm): compare runs by their addon's functions
# (callgrind_annotate on the kept file) when the totals differ by less than that.
#
#   bash benchmark/call-instructions.sh citm-events [package directory]
#   NODE=/path/to/node24 WARM=50 PASSES=50 bash benchmark/call-instructions.sh tiny
#   METHOD=all bash benchmark/call-instructions.sh small250
#
# The array path reaches its final optimized code later than toJSON (V8 reoptimizes
# lib/native's `transcodeViews` after ~100 batches): with METHOD other than toJSON the defaults
# are WARM=300 PASSES=100.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATASET="${1:-citm-events}"
PKG="$(cd "${2:-$ROOT}" && pwd)"
NODE="${NODE:-node}"
OUT="$(mktemp -d)"
METHOD="${METHOD:-toJSON}"
if [ "$METHOD" = toJSON ]; then WARM="${WARM:-50}" PASSES="${PASSES:-50}"; else WARM="${WARM:-300}" PASSES="${PASSES:-100}"; fi
cat >"$OUT/run.mjs" <<'JS'
import { createRequire } from 'node:module';
import { readFileSync, fsyncSync, openSync } from 'node:fs';
import { join } from 'node:path';
const [root, pkg, name, warm, passes, mark, method] = process.argv.slice(2);
const require = createRequire(`${root}/benchmark/`);
const { toJSON, toNDJSON } = require(`${pkg}/index.js`);
const { BSON } = require('bson');
const ser = (o) => Buffer.from(BSON.serialize(o));
const dir = process.env.REALWORLD_DIR || join(root, 'tmp/realworld');
const json = (f) => JSON.parse(readFileSync(join(dir, f), 'utf8'));
const real = {
  'citm-events': () => Object.values(json('citm_catalog.json').events).map(ser),
  'citm-performances': () => json('citm_catalog.json').performances.map(ser),
  twitter: () => json('twitter.json').statuses.map(ser),
};
const docs = real[name] ? real[name]() : (await import(`${root}/benchmark/workloads.mjs`)).loadWorkload(name, { quick: true }).docs.slice(0, 1000);
const concat = Buffer.concat(docs);
let sink = 0;
const pass = {
  toJSON: () => {
    for (const d of docs) sink += toJSON(d).length;
  },
  array: () => {
    sink += toNDJSON(docs).length;
  },
  concatenated: () => {
    sink += toNDJSON(concat).length;
  },
}[method];
for (let i = 0; i < Number(warm); i++) pass();
// Let V8's background threads finish before counting. Valgrind runs one thread at a time, and a
// concurrent TurboFan job queued during the warm-up may not get its turn until the main thread
// blocks; without this pause the counted passes can run in V8's baseline code instead of the
// optimized code.
await new Promise((resolve) => setTimeout(resolve, 300));
const fd = openSync(mark, 'w');
fsyncSync(fd);
for (let i = 0; i < Number(passes); i++) pass();
fsyncSync(fd);
console.log(docs.length * Number(passes), sink > 0);
JS
# glibc's memcpy / memset without `rep movsb` / `rep stosb` (callgrind counts each byte they move).
source "$ROOT/benchmark/callgrind-env.sh"
count() {
  n="$(valgrind --tool=callgrind --separate-threads=yes --dump-instr="${DUMP_INSTR:-no}" --dump-before=fsync \
    --callgrind-out-file="$OUT/$1" "$NODE" "$OUT/run.mjs" "$ROOT" "$PKG" "$DATASET" "$WARM" \
    "$PASSES" "$OUT/mark" "$1" 2>/dev/null | cut -d' ' -f1)"
  total="$(sed -n 's/^summary: *//p;s/^totals: *//p' "$OUT/$1.2-01" | head -1)"
  echo "$("$NODE" --version), $DATASET, $1, $PKG: $((total / n)) instructions a document (main thread; callgrind file $OUT/$1.2-01)"
}
if [ "$METHOD" = all ]; then
  for m in array concatenated toJSON; do count "$m"; done
else
  count "$METHOD"
fi
