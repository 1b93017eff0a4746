#!/usr/bin/env bash
# The long checks, in one place: miri, the addon under emulation, fuzzing and the Kafka chaos run.
# `.ci/run` runs them bounded (--bounded); run them in full by hand before a release, after a
# change to the core's unsafe or word-at-a-time code, the cross-build setup, the fuzz targets or
# the Kafka sink, and in the CI workflow's jobs (miri, fuzz, test-linux on arm64, test-kafka).
#
#   bash scripts/long-checks.sh [--bounded] [CHECK...]     CHECK: miri cross fuzz chaos (all by default)
#
#           full (default)                                 --bounded (.ci/run)
#   miri    scripts/miri.sh: every twin test under miri    on x86-64, the twin tests of the modules that
#           on x86-64 and on big-endian s390x              hold the core's unsafe code (lanes::, sink::)
#                                                          and of the escaper built on them (escape::);
#                                                          big-endian: the core's whole test suite built
#                                                          for s390x and run under qemu instead of miri
#   cross   scripts/cross-test.sh: aarch64 gnu (the addon  (none: the word-at-a-time paths that x86-64
#           built, the core's tests and the JS suites      replaces with SSE2 load their words with
#           under qemu), aarch64 musl and x86_64 musl      u64::from_le_bytes, the same values on every
#                                                          target: the s390x run below tests them, the
#                                                          WASI build's suites in .ci/run run them, and
#                                                          the workflow tests arm64 natively)
#   fuzz    scripts/fuzz.sh 300: every target 5 min        scripts/fuzz.sh 20: every target 20 s, beside
#                                                          miri and the s390x run
#   chaos   scripts/kafka-chaos.js --ops 3000 --kills 12   (none: the Kafka suite in .ci/run runs its
#           --broker-restart against a broker started here  two short chaos runs)
#
# Each check is a step of scripts/ci-lib.sh: its time is printed, and a failure prints the
# failing tests and the end of its log (all logs in tmp/long-checks/logs/). Needs what .ci/run
# installs: nightly with miri and rust-src, cargo-fuzz (scripts/ci-tools.sh), Debian's qemu-user
# and cross compilers (scripts/cross-test.sh installs them), Java and Maven for the broker.
set -euo pipefail
cd "$(dirname "$0")/.."
BOUNDED=0
CHECKS=()
for a in "$@"; do
  case "${a}" in
    --bounded) BOUNDED=1 ;;
    miri | cross | fuzz | chaos) CHECKS+=("${a}") ;;
    *) echo "usage: bash scripts/long-checks.sh [--bounded] [miri|cross|fuzz|chaos]..." >&2; exit 2 ;;
  esac
done
[ "${#CHECKS[@]}" -gt 0 ] || CHECKS=(miri cross fuzz chaos)
CI_DIR="${CI_DIR:-tmp/long-checks}"
# shellcheck source=scripts/ci-lib.sh
source scripts/ci-lib.sh
has() { [[ " ${CHECKS[*]} " == *" $1 "* ]]; }
PATH="$(bash scripts/ci-tools.sh):${PATH}"
export PATH

# The core's whole test suite built for big-endian s390x and run under qemu: the word-at-a-time
# scans and number writers in the byte order miri's s390x run checks, at qemu's speed.
s390x_under_qemu() {
  local target=s390x-unknown-linux-gnu
  local missing=() p
  for p in qemu-user gcc-s390x-linux-gnu libc6-dev-s390x-cross; do
    dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q 'install ok installed' || missing+=("${p}")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  rustup target list --installed | grep -qx "${target}" || rustup target add "${target}"
  CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc \
    CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER="qemu-s390x -L /usr/s390x-linux-gnu" \
    cargo test -p bson2json-core --target "${target}" --profile cross-test
}

if has miri || has fuzz; then
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
fi
if has miri; then
  rustup +nightly component add miri rust-src
  # miri is one thread: the two targets run side by side.
  if [ "${BOUNDED}" = 1 ]; then
    MIRI_FILTERS="lanes:: sink:: escape::" ci_bg "miri x86_64-unknown-linux-gnu: lanes:: sink:: escape:: (scripts/miri.sh)" \
      bash scripts/miri.sh x86_64-unknown-linux-gnu
    ci_bg "the core's tests on big-endian s390x under qemu" s390x_under_qemu
  else
    ci_bg "miri x86_64-unknown-linux-gnu (scripts/miri.sh)" bash scripts/miri.sh x86_64-unknown-linux-gnu
    ci_bg "miri s390x-unknown-linux-gnu (scripts/miri.sh)" bash scripts/miri.sh s390x-unknown-linux-gnu
  fi
  # Full: the cross builds and fuzzing below need both cores to themselves.
  [ "${BOUNDED}" = 1 ] || ci_wait
fi

if [ "${BOUNDED}" = 1 ]; then
  # Bounded: the fuzz smoke beside miri and the s390x run (each fuzz target runs for a fixed
  # time, so sharing the cores costs it iterations, not time). No cross check (above).
  if has cross; then echo "long-checks: cross has no bounded form (scripts/long-checks.sh's header says why)"; fi
  if has fuzz; then
    ci_bg "fuzz: every cargo-fuzz target for 20 s (scripts/fuzz.sh)" bash scripts/fuzz.sh 20
  fi
  ci_wait
else
  if has cross; then
    for target in aarch64-unknown-linux-gnu aarch64-unknown-linux-musl x86_64-unknown-linux-musl; do
      ci_step "${target} (scripts/cross-test.sh)" bash scripts/cross-test.sh "${target}"
    done
  fi
  if has fuzz; then
    ci_step "fuzz: every cargo-fuzz target for 300 s (scripts/fuzz.sh)" bash scripts/fuzz.sh 300
  fi
fi

chaos() {
  local brokers rc=0
  brokers="$(bash scripts/kafka.sh start)"
  node scripts/kafka-chaos.js --kafka "${brokers}" --ops 3000 --kills 12 --rate 100 --broker-restart || rc=$?
  bash scripts/kafka.sh stop
  return "${rc}"
}
if has chaos && [ "${BOUNDED}" = 0 ]; then
  ci_step "Kafka chaos: 3000 writes, 12 SIGKILLs of cdc, one broker restart (scripts/kafka-chaos.js)" chaos
fi

ci_summary
