#!/usr/bin/env bash
# Side-by-side CLI speed: MongoDB's bsondump vs `bson2json --dialect canonical` (the same output,
# docs/bsondump.md) on one dump, alternated ROUNDS times in one shell; prints each pair's wall
# times, throughput and peak RSS, then the median ratio and bson2json's median MB/s. Output goes
# to /dev/null for both. bson2json runs with its default --threads (one per core) unless
# THREADS is set. INPUT=stdin (bson2json reads `< FILE`), pipe (`cat FILE |`, cat's CPU counted)
# or gz (FILE gzipped once to tmp/NAME.gz, read as a file; bsondump still reads FILE) measures
# the other inputs; BSON2JSON_DUMP=stream runs them through the transcode stream. REPEAT=n runs
# bson2json n times a round (bsondump once) and takes the median wall time and CPU of those: a
# run of the CLI takes ~0.2 s, so one run a round is at the mercy of a single scheduling hiccup.
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
REPEAT="${REPEAT:-1}"
OF_RUNS=""
[ "$REPEAT" -gt 1 ] && OF_RUNS=", median of $REPEAT runs"
# Prints "SECONDS PEAK_RSS_KB CPU_SECONDS" for one run of the command.
run() { /usr/bin/time -f '%e %M %U %S' -o /tmp/vs-bsondump.$$ "$@" >/dev/null; awk '{ print $1, $2, $3 + $4 }' /tmp/vs-bsondump.$$; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratios=()
rates=()
cpus=()
for r in $(seq 1 "$ROUNDS"); do
  read -r a arss _ < <(run "$BSONDUMP" --quiet "$FILE")
  walls=()
  cpu_runs=()
  brss=0
  for _ in $(seq 1 "$REPEAT"); do
    read -r w rss c < <(run bash -c 'b2j "$@"' b2j "$ROOT/bin/bson2json.js" -q --dialect canonical "${THREADS_ARG[@]}")
    walls+=("$w")
    cpu_runs+=("$c")
    if [ "$rss" -gt "$brss" ]; then brss=$rss; fi
  done
  b=$(median "${walls[@]}")
  bcpu=$(median "${cpu_runs[@]}")
  cpus+=("$bcpu")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')
  rate=$(awk -v n="$BYTES" -v b="$b" 'BEGIN { print n / 1e6 / b }')
  ratios+=("$ratio")
  rates+=("$rate")
  printf 'round %d: bsondump %.2f s (%d MB RSS), bson2json --dialect canonical %.2f s = %.0f MB/s, %.2f s CPU (%d MB RSS%s), ratio %.1fx\n' \
    "$r" "$a" "$((arss / 1024))" "$b" "$rate" "$bcpu" "$((brss / 1024))" "$OF_RUNS" "$ratio"
done
printf 'median: ratio %.1fx, bson2json %.0f MB/s, %.2f s CPU (%s as %s%s, %d MB, %d cores, load %s)\n' "$(median "${ratios[@]}")" "$(median "${rates[@]}")" "$(median "${cpus[@]}")" \
  "$(basename "$FILE")" "$INPUT" "${BSON2JSON_DUMP:+, BSON2JSON_DUMP=$BSON2JSON_DUMP}" "$((BYTES / 1000000))" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
rm -f /tmp/vs-bsondump.$$
