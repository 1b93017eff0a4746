#!/usr/bin/env bash
# Two builds of the CLI side by side against MongoDB's bsondump, for a machine too noisy for
# separate runs: each round runs bsondump once, then A and B alternately at the default
# --threads, --threads 1 and --threads 2 (`--dialect canonical`, output to /dev/null), and prints
# each run's wall time, CPU (user + system), peak RSS, MB/s, its ratio to that round's bsondump
# and the load average; then the median of each over the rounds.
#
#   A=/path/to/checkout-before B=. bash benchmark/cli-ab.sh tmp/s400k.bson [ROUNDS]
#
# A and B are checkouts with a built addon (`npm run build`); B defaults to this one. INPUT=stdin
# (`< FILE`), pipe (`cat FILE |`, cat's CPU counted) or gz (FILE gzipped once to tmp/NAME.gz)
# changes what bson2json reads; bsondump reads FILE.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FILE="${1:?usage: A=DIR [B=DIR] bash benchmark/cli-ab.sh FILE.bson [ROUNDS]}"
ROUNDS="${2:-3}"
A="${A:?A=DIR: the checkout to compare with}"
B="${B:-$ROOT}"
BSONDUMP="${BSONDUMP:-$ROOT/tmp/mongo-tools/bin/bsondump}"
[ -x "$BSONDUMP" ] || { echo "no bsondump at $BSONDUMP (bash scripts/mongo-tools.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time) for peak RSS" >&2; exit 1; }
BYTES=$(stat -L -c %s "$FILE")
# shellcheck source=benchmark/cli-input.sh
. "$ROOT/benchmark/cli-input.sh"
T=$(mktemp)
trap 'rm -f "$T"' EXIT
for r in $(seq 1 "$ROUNDS"); do
  /usr/bin/time -f '%e %M' -o "$T" "$BSONDUMP" --quiet "$FILE" >/dev/null
  read -r bd bdrss <"$T"
  echo "round $r bsondump wall $bd s rss $((bdrss / 1024)) MB load $(cut -d' ' -f1 /proc/loadavg)"
  for t in default 1 2; do
    for side in A B; do
      dir=$A
      [ "$side" = B ] && dir=$B
      args=(-q --dialect canonical)
      [ "$t" != default ] && args+=(--threads "$t")
      /usr/bin/time -f '%e %U %S %M' -o "$T" bash -c 'b2j "$@"' b2j "$dir/bin/bson2json.js" "${args[@]}"
      read -r e u s m <"$T"
      awk -v r="$r" -v side="$side" -v t="$t" -v e="$e" -v u="$u" -v s="$s" -v m="$m" -v n="$BYTES" -v bd="$bd" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
        'BEGIN { printf "round %s %s threads=%s wall %.2f s cpu %.2f s rss %d MB %.0f MB/s ratio %.1fx load %s\n", r, side, t, e, u + s, m / 1024, n / 1e6 / e, bd / e, load }'
    done
  done
done | tee "$T.log"
echo "medians over $ROUNDS rounds ($(basename "$FILE") as $INPUT, $((BYTES / 1000000)) MB, $(nproc) cores, load now $(cut -d' ' -f1-3 /proc/loadavg)):"
for t in default 1 2; do
  for side in A B; do
    grep " $side threads=$t " "$T.log" | awk -v side="$side" -v t="$t" '
      { w[NR] = $6 + 0; c[NR] = $9 + 0; m[NR] = $12 + 0; x[NR] = $14 + 0; q[NR] = $17 + 0 }
      function med(a, n,   i, j, v) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { v = a[i]; a[i] = a[j]; a[j] = v } return a[int((n + 1) / 2)] }
      END { n = NR; printf "  %s threads=%s: wall %.2f s, %d MB/s, cpu %.2f s, rss %d MB, ratio %.1fx\n", side, t, med(w, n), med(x, n), med(c, n), med(m, n), med(q, n) }'
  done
done
rm -f "$T.log"
