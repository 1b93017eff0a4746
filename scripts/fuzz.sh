#!/usr/bin/env bash
# Builds and runs every cargo-fuzz target for a fixed time each, one job at a time.
# Usage: scripts/fuzz.sh [seconds-per-target] [target...]
# Needs nightly and cargo-fuzz (`cargo +nightly install cargo-fuzz --locked`). Builds are optimised
# (-O) with debug assertions and overflow checks on (-a), so an arithmetic overflow is a finding.
# Prints execs, coverage (cov/ft from libFuzzer's final stats) and corpus size per target;
# exits non-zero if any target crashes, panics, times out or runs out of memory.
# Crash inputs land in fuzz/artifacts/<target>/; the committed seeds are fuzz/corpus/<target>/seed-*
# (regenerate with `python3 fuzz/gen_corpus.py`). New corpus entries are git-ignored.
set -uo pipefail
SECS="${1:-30}"
shift || true
cd "$(dirname "$0")/../fuzz"
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(transcode structured differential swar batch framing project split)
fi
[ -d corpus/transcode ] || python3 gen_corpus.py
mkdir -p logs
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"
for t in "${TARGETS[@]}"; do cargo +nightly fuzz build -O -a "$t" || exit 2; done
status=0
printf '%-13s %8s %12s %10s %8s %8s %s\n' target seconds execs exec/s cov ft "corpus/result"
for t in "${TARGETS[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log="logs/$t.log"
  cargo +nightly fuzz run -O -a "$t" "corpus/$t" -- \
    -max_total_time="$SECS" -rss_limit_mb=2048 -max_len=65536 \
    -timeout=20 -print_final_stats=1 >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: [0-9]+' | tail -1)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
  files=$(ls "corpus/$t" | wc -l)
  if [ $rc -ne 0 ] || grep -qE 'ERROR: libFuzzer|panicked at|deadly signal|SUMMARY: AddressSanitizer' "$log"; then
    result="FAIL (rc $rc, see fuzz/$log and fuzz/artifacts/$t)"
    status=1
  else
    result="ok"
  fi
  printf '%-13s %8s %12s %10s %8s %8s %s\n' "$t" "$SECS" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$files files, $result"
done
exit $status
