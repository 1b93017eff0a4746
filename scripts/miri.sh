#!/usr/bin/env bash
# miri (strict provenance) over the twin tests of the core's fast routines: the SWAR scans
# (scan::), the escaper (escape::), the unchecked output stores (sink::), the lane
# classification and widening (lanes::), text, number writers and, on x86-64, the SSE2
# UTF-8 → UTF-16 conversion (utf8::). Each twin test compares a fast path with a
# plain one; under miri their loops shrink (`cfg(miri)`).
#
#   bash scripts/miri.sh                               little-endian x86-64 (SSE2 paths)
#   bash scripts/miri.sh s390x-unknown-linux-gnu       big-endian (the SWAR paths' byte order)
#
# Miri takes a SIMD path only when its target feature is on at compile time (its run-time
# detection reports the compile-time features), so the runs above check the SSE2 and SWAR
# paths. The SSSE3 UTF-16 step and the AVX2 escaper run under miri with, e.g.,
#   RUSTFLAGS="-Ctarget-feature=+ssse3,+popcnt,+avx2" MIRIFLAGS=-Zmiri-strict-provenance \
#     cargo +nightly miri test -p bson2json-core --lib -- utf8:: lanes::   (about 4 min; by hand)
#
# MIRI_FILTERS replaces the list of test-name filters (e.g. "lanes:: sink::", the modules that hold
# the core's unsafe code: scripts/long-checks.sh --bounded).
#
# Needs nightly with the miri and rust-src components
# (`rustup toolchain install nightly --component miri,rust-src`). Exit status is non-zero on any
# undefined behaviour miri reports or any failing test.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${1:-x86_64-unknown-linux-gnu}"
if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^miri'; then
  echo "miri.sh: nightly has no miri component (rustup toolchain install nightly --component miri,rust-src)" >&2
  exit 2
fi
filters=(scan:: escape:: sink:: lanes:: text:: number::)
# utf8:: is the x86-64 SSE2 code; on other targets it is the scalar loop the other twins cover.
[ "${TARGET}" = x86_64-unknown-linux-gnu ] && filters+=(utf8::)
[ -z "${MIRI_FILTERS:-}" ] || read -ra filters <<<"${MIRI_FILTERS}"
export MIRIFLAGS="-Zmiri-strict-provenance ${MIRIFLAGS:-}"
cargo +nightly miri setup --target "${TARGET}"
# The two exhaustive short-input twins take hours under miri; the randomised twins of the same
# routines stay in.
cargo +nightly miri test -p bson2json-core --lib --target "${TARGET}" -- "${filters[@]}" \
  --skip escape::tests::short_plain_runs_agree_with_the_table \
  --skip scan::tests::short_key_agrees_with_plain_scans
echo "miri.sh: ${TARGET}: no undefined behaviour in ${filters[*]}"
