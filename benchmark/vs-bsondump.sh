#!/usr/bin/env bash
# Side-by-side CLI speed: MongoDB's bsondump vs `bson2json --dialect canonical` (the same output,
# docs/bsondump.md) on one dump, alternated ROUNDS times in one shell; prints each pair's wall
# times, throughput and peak RSS, then the median ratio and bson2json's median MB/s. Output goes
# to /dev/null for both. bson2json runs with its default --threads (one per core) unless
# THREADS is set. INPUT=stdin (bson2json reads `< FILE`), pipe (`cat FILE |`, cat's CPU counted)
# or gz (FILE gzipped once to tmp/NAME.gz, read as a file; bsondump still reads FILE) measures
# the other inputs; BSON2JSON_DUMP=stream runs them through the transcode stream.
#
#   bash scripts/mongo-tools.sh && node scripts/sample-dump.mjs --docs 400000 --out tmp/s400k.bson
#   bash benchmark/vs-bsondump.sh tmp/s400k.bson [ROUNDS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FILE="${1:?usage: bash benchmark/vs-bsondump.sh FILE.bson [ROUNDS]}"
ROUNDS="${2:-3}"
BSONDUMP="${BSONDUMP:-$ROOT/tmp/mongo-tools/bin/bsondump}"
[ -x "$BSONDUMP" ] || { echo "no bsondump at $BSONDUMP (bash scripts/mongo-tools.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time) for peak RSS" >&2; exit 1; }
THREADS_ARG=()
[ -n "${THREADS:-}" ] && THREADS_ARG=(--threads "$THREADS")
BYTES=$(stat -L -c %s "$FILE")
# shellcheck source=benchmark/cli-input.sh
. "$ROOT/benchmark/cli-input.sh"
# Prints "SECONDS PEAK_RSS_KB" for one run of the command.
run() { /usr/bin/time -f '%e %M' -o /tmp/vs-bsondump.$$ "$@" >/dev/null; cat /tmp/vs-bsondump.$$; }
ratios=()
rates=()
for r in $(seq 1 "$ROUNDS"); do
  read -r a arss < <(run "$BSONDUMP" --quiet "$FILE")
  read -r b brss < <(run bash -c 'b2j "$@"' b2j "$ROOT/bin/bson2json.js" -q --dialect canonical "${THREADS_ARG[@]}")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')
  rate=$(awk -v n="$BYTES" -v b="$b" 'BEGIN { print n / 1e6 / b }')
  ratios+=("$ratio")
  rates+=("$rate")
  printf 'round %d: bsondump %.2f s (%d MB RSS), bson2json --dialect canonical %.2f s = %.0f MB/s (%d MB RSS), ratio %.1fx\n' \
    "$r" "$a" "$((arss / 1024))" "$b" "$rate" "$((brss / 1024))" "$ratio"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
printf 'median: ratio %.1fx, bson2json %.0f MB/s (%s as %s%s, %d MB, %d cores, load %s)\n' "$(median "${ratios[@]}")" "$(median "${rates[@]}")" \
  "$(basename "$FILE")" "$INPUT" "${BSON2JSON_DUMP:+, BSON2JSON_DUMP=$BSON2JSON_DUMP}" "$((BYTES / 1000000))" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
rm -f /tmp/vs-bsondump.$$
