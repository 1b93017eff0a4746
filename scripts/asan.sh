#!/usr/bin/env bash
# Runs the bson2json-core test suite (unit + integration tests, not doctests) under
# AddressSanitizer on nightly. The core is `#![forbid(unsafe_code)]`, so this mainly guards the
# dependencies (simdutf8's SIMD paths, ryu-js, itoa) and std against out-of-bounds reads.
# Usage: scripts/asan.sh [extra cargo test args, e.g. -- --skip depth_2m]
# Env: ASAN_SKIP_SLOW=1 skips the 16 MB / 96 MB limit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="-Zsanitizer=address ${RUSTFLAGS:-}"
export RUSTDOCFLAGS="-Zsanitizer=address"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/asan}"
skip=()
if [ "${ASAN_SKIP_SLOW:-0}" = 1 ]; then
  skip=(--skip depth_2m_16mb --skip output_cap_16mb_of_control_chars --skip two_million_element_arrays)
fi
cargo +nightly test -j1 -p bson2json-core --target x86_64-unknown-linux-gnu --tests "$@" -- "${skip[@]}"
echo "asan: bson2json-core tests passed under AddressSanitizer"
