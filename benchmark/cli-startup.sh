#!/usr/bin/env bash
# The CLI's fixed cost: `bson2json -q --dialect canonical ONE.bson` (one 20-byte document, stdout
# to /dev/null) against `node -e 0`, alternated ROUNDS times in one shell, each run under
# `perf stat` (task-clock: CPU; duration_time: wall); prints the median of each and the CLI's
# excess over bare Node. A=DIR adds another checkout (built) to the rotation, e.g. main.
# CALLGRIND=1 adds each command's instruction count under valgrind --tool=callgrind (the same
# from run to run, unlike the times; less V8's random hash-seed prime search, which varies by
# millions of instructions from run to run).
#
#   bash benchmark/cli-startup.sh [ROUNDS]                       # this checkout, default 20
#   A=/path/to/main NODE=/path/to/node CALLGRIND=1 bash benchmark/cli-startup.sh 20
#
# NODE_EXTRA_CA_CERTS is unset for every run: Node parses the certificates it names at start-up
# (~50 ms on the 2-core VM, whose image sets it), which is no part of bson2json. Node 22.1+ runs
# with the compile cache the CLI enables (bin/bson2json.js); one untimed run of each checkout
# fills it first.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROUNDS="${1:-20}"
NODE="${NODE:-node}"
command -v perf >/dev/null || { echo "needs perf (linux-perf)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$NODE" -e "process.stdout.write(require('$ROOT/node_modules/bson').BSON.serialize({ _id: 1, a: 'b' }))" >"$T/one.bson"
names=(node B)
cmds=("$NODE -e 0" "$NODE $ROOT/bin/bson2json.js -q --dialect canonical $T/one.bson")
if [ -n "${A:-}" ]; then
  names+=(A)
  cmds+=("$NODE $A/bin/bson2json.js -q --dialect canonical $T/one.bson")
fi
for i in "${!cmds[@]}"; do env -u NODE_EXTRA_CA_CERTS ${cmds[$i]} >/dev/null; done
for r in $(seq 1 "$ROUNDS"); do
  for i in "${!cmds[@]}"; do
    # task-clock in ms, duration_time in ns
    env -u NODE_EXTRA_CA_CERTS perf stat -x, -e task-clock,duration_time -o "$T/stat" ${cmds[$i]} >/dev/null
    awk -F, -v n="${names[$i]}" '$3 == "task-clock" { c = $1 } $3 == "duration_time" { w = $1 / 1e6 } END { print n, c, w }' "$T/stat" >>"$T/all"
  done
done
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "$("$NODE" --version), $ROUNDS rounds, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${names[@]}"; do
  c=$(awk -v n="$n" '$1 == n { print $2 }' "$T/all" | med)
  w=$(awk -v n="$n" '$1 == n { print $3 }' "$T/all" | med)
  echo "$n $c $w" >>"$T/med"
done
base_c=$(awk '$1 == "node" { print $2 }' "$T/med")
base_w=$(awk '$1 == "node" { print $3 }' "$T/med")
while read -r n c w; do
  label=$n
  [ "$n" = node ] && label='node -e 0'
  [ "$n" = B ] && label="bson2json ($ROOT)"
  [ "$n" = A ] && label="bson2json ($A)"
  if [ "$n" = node ]; then
    printf '  %-40s task-clock %6.1f ms, elapsed %6.1f ms (medians)\n' "$label" "$c" "$w"
  else
    printf '  %-40s task-clock %6.1f ms, elapsed %6.1f ms (+%.1f / +%.1f ms over node -e 0)\n' "$label" "$c" "$w" "$(awk -v a="$c" -v b="$base_c" 'BEGIN { print a - b }')" "$(awk -v a="$w" -v b="$base_w" 'BEGIN { print a - b }')"
  fi
done <"$T/med"
if [ -n "${CALLGRIND:-}" ]; then
  command -v valgrind >/dev/null || { echo "CALLGRIND=1 needs valgrind" >&2; exit 1; }
  for i in "${!cmds[@]}"; do
    env -u NODE_EXTRA_CA_CERTS valgrind --tool=callgrind --callgrind-out-file="$T/cg" ${cmds[$i]} >/dev/null 2>&1
    total=$(awk '/^summary:/ { print $2 }' "$T/cg")
    seed=$(callgrind_annotate --inclusive=yes "$T/cg" 2>/dev/null | awk '/HashSeed::InitializeRoots/ && !done { gsub(",", "", $1); print $1; done = 1 }')
    printf '  %-40s %.1f M instructions (callgrind, less %.1f M of hash-seed search)\n' "${names[$i]}" "$(awk -v t="$total" -v s="${seed:-0}" 'BEGIN { print (t - s) / 1e6 }')" "$(awk -v s="${seed:-0}" 'BEGIN { print s / 1e6 }')"
  done
fi
