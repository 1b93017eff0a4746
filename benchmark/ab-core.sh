#!/usr/bin/env bash
# Side-by-side wall-clock comparison of two builds of the core's `examples/throughput`
# (for example before and after a change), as ARCHITECTURE.md's design decisions report them.
#
#   cargo build --release -p bson2json-core --example throughput --target-dir /tmp/A   # before
#   cargo build --release -p bson2json-core --example throughput --target-dir /tmp/B   # after
#   benchmark/ab-core.sh /tmp/A/release/examples/throughput /tmp/B/release/examples/throughput \
#       compat benchmark/data/doc10k-s20241122-2MB-v1.bson 12
#
# Runs A then B under N environment sizes (each shifts the stack and so the addresses the
# binaries work at: this VM's speed depends on them by several per cent), 0.3 s each, and
# prints both medians and the median of the per-pair ratios B/A. Needs the data files of
# `npm run bench:gen -- --quick`. `METRIC=cpu` compares the rate over the time each run was
# on a CPU (the `cpu N MB/s` the example prints; both builds must print it) instead of wall
# time: on a machine shared with other work it leaves out the time they took.
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,16p' "$0"
  exit 2
fi
a=$1 b=$2 dialect=$3 file=$4 n=${5:-12}
if [ "${METRIC:-wall}" = cpu ]; then
  pick() { awk '{print $(NF-1)}'; }
else
  pick() { awk '{print $2}'; }
fi
ra=() rb=()
for i in $(seq 0 $((n - 1))); do
  pad=$(printf '%*s' $((i * 40 + 1)) '' | tr ' ' x)
  ra+=("$(env PAD="$pad" "$a" "$file" "$dialect" 0.3 | pick)")
  rb+=("$(env PAD="$pad" "$b" "$file" "$dialect" 0.3 | pick)")
done
python3 - "$(basename "$file" | cut -d- -f1)" "$dialect" "${ra[*]}" "${rb[*]}" <<'PY'
import statistics as st, sys
name, dialect, a, b = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3].split()], [float(x) for x in sys.argv[4].split()]
ratios = [y / x for x, y in zip(a, b)]
print(f"{name} {dialect}: A {st.median(a):.0f} MB/s ({min(a):.0f}-{max(a):.0f})  B {st.median(b):.0f} ({min(b):.0f}-{max(b):.0f})  "
      f"B/A median of pair ratios {st.median(ratios):.3f}, ratio of medians {st.median(b) / st.median(a):.3f}")
PY
