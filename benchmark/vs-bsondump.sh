#!/usr/bin/env bash
# Side-by-side CLI speed: MongoDB's bsondump vs `bson2json --dialect canonical` (the same output,
# docs/bsondump.md) on one dump, alternated ROUNDS times in one shell; prints each pair's times and
# ratio, then the median ratio. Output goes to /dev/null for both.
#
#   bash scripts/mongo-tools.sh && node scripts/sample-dump.mjs --docs 100000 --out tmp/s100k.bson
#   bash benchmark/vs-bsondump.sh tmp/s100k.bson [ROUNDS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FILE="${1:?usage: bash benchmark/vs-bsondump.sh FILE.bson [ROUNDS]}"
ROUNDS="${2:-3}"
BSONDUMP="${BSONDUMP:-$ROOT/tmp/mongo-tools/bin/bsondump}"
[ -x "$BSONDUMP" ] || { echo "no bsondump at $BSONDUMP (bash scripts/mongo-tools.sh)" >&2; exit 1; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'; }
ratios=()
for r in $(seq 1 "$ROUNDS"); do
  a=$(secs "$BSONDUMP" --quiet "$FILE")
  b=$(secs node "$ROOT/bin/bson2json.js" -q --dialect canonical "$FILE" -o /dev/null)
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')
  ratios+=("$ratio")
  printf 'round %d: bsondump %.2f s, bson2json --dialect canonical %.2f s, ratio %.1fx\n' "$r" "$a" "$b" "$ratio"
done
printf 'median ratio %.1fx (%s, %s MB)\n' "$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')" \
  "$(basename "$FILE")" "$(( $(stat -c %s "$FILE") / 1000000 ))"
