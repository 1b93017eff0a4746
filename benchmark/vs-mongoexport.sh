#!/usr/bin/env bash
# Side-by-side export: MongoDB's mongoexport vs `bson2json export` on the same collection of the
# same server, alternated ROUNDS times in one shell, output to /dev/null. For each format (relaxed
# JSON, canonical JSON, CSV) it prints wall time and client CPU (user + sys of the exporting
# process, from bash's `time`) per run, then the medians and the ratios. The server's own time is
# in the wall time of both and bounds it; client CPU per document is what the tools control.
#
#   node scripts/sample-dump.mjs --docs 50000 --out tmp/s50k.bson
#   node benchmark/load-collection.mjs URI bench orders tmp/s50k.bson
#   bash benchmark/vs-mongoexport.sh URI bench orders [ROUNDS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
URI="${1:?usage: bash benchmark/vs-mongoexport.sh URI DB COLLECTION [ROUNDS]}"
DB="${2:?db}"
COLL="${3:?collection}"
ROUNDS="${4:-3}"
MONGOEXPORT="${MONGOEXPORT:-$ROOT/tmp/mongo-tools/bin/mongoexport}"
[ -x "$MONGOEXPORT" ] || { echo "no mongoexport at $MONGOEXPORT (bash scripts/mongo-tools.sh)" >&2; exit 1; }
FIELDS="${FIELDS:-_id,status,total,customer.name,customer.address.city,items}"
TIMEFORMAT='%R %U %S'
# "wall cpu status" of one run (a failed run is reported and left out of the medians)
RC="$(mktemp)"
trap 'rm -f "$RC"' EXIT
measure() {
  local t
  t=$({ time { "$@" >/dev/null 2>&1; echo $? >"$RC"; }; } 2>&1)
  echo "$t $(cat "$RC")" | awk '{ printf "%.3f %.3f %s\n", $1, $2 + $3, $4 }'
}
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for fmt in ${FORMATS:-relaxed canonical csv}; do
  if [ "$fmt" = csv ]; then extra=(--type csv --fields "$FIELDS"); else extra=(--jsonFormat "$fmt"); fi
  mw=(); mc=(); bw=(); bc=()
  for r in $(seq 1 "$ROUNDS"); do
    read -r w c s1 < <(measure "$MONGOEXPORT" --quiet --uri "$URI" -d "$DB" -c "$COLL" "${extra[@]}" -o /dev/null)
    read -r w2 c2 s2 < <(measure node "$ROOT/bin/bson2json.js" export --quiet --uri "$URI" -d "$DB" -c "$COLL" "${extra[@]}" -o /dev/null)
    printf '%-9s round %d: mongoexport %s s wall, %s s CPU (exit %s) | bson2json export %s s wall, %s s CPU (exit %s)\n' "$fmt" "$r" "$w" "$c" "$s1" "$w2" "$c2" "$s2"
    if [ "$s1" = 0 ]; then mw+=("$w"); mc+=("$c"); fi
    if [ "$s2" = 0 ]; then bw+=("$w2"); bc+=("$c2"); fi
  done
  a=$(printf '%s\n' "${mw[@]}" | median); b=$(printf '%s\n' "${bw[@]}" | median)
  x=$(printf '%s\n' "${mc[@]}" | median); y=$(printf '%s\n' "${bc[@]}" | median)
  awk -v f="$fmt" -v a="$a" -v b="$b" -v x="$x" -v y="$y" 'BEGIN { printf "%-9s median: wall %.2f vs %.2f s (%.2fx), client CPU %.2f vs %.2f s (%.2fx)\n", f, a, b, a / b, x, y, x / y }'
done
