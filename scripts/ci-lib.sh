# shellcheck shell=bash
# The step runner of .ci/run and scripts/long-checks.sh (sourced, not run):
#
#   ci_step NAME CMD...      run a step now; its output goes to tmp/ci/logs/NN-NAME.log
#   ci_bg NAME CMD...        start a step in the background (its own process group)
#   ci_wait [NAME...]        wait for those background steps (all, without names)
#   ci_summary               the table of steps and times, then the tests counted in every log
#
# Each step prints one line when it starts and one when it ends, with its time. A failing step
# prints the failing tests' names (vitest, cargo test, libFuzzer, miri) and the end of its log,
# every other running step is stopped, and the script exits 1. CI_STEP_LIMIT (seconds, default
# 1800) ends a step that hangs. CMD may be a shell function of the sourcing script.

CI_DIR="${CI_DIR:-tmp/ci}"
CI_LOGS="${CI_DIR}/logs"
CI_STEPS="${CI_DIR}/steps.tsv"
CI_START="${CI_START:-$(date +%s)}"
rm -rf "${CI_LOGS}"
mkdir -p "${CI_LOGS}"
: >"${CI_STEPS}"
rm -f "${CI_DIR}"/failed.* "${CI_DIR}/groups"
declare -A CI_PIDS=()
CI_N=0

ci__clock() {
  local s=$(($(date +%s) - CI_START))
  printf '%02d:%02d' $((s / 60)) $((s % 60))
}

ci__slug() { tr -c 'A-Za-z0-9.\n-' '-' <<<"$1" | tr -s '-' | cut -c1-60; }

# The failing tests a log names, then its last lines.
ci__report() {
  local name="$1" log="$2" rc="$3" secs="$4"
  {
    printf '\n!!! FAILED: %s (exit %s after %s s); log: %s\n' "${name}" "${rc}" "${secs}" "${log}"
    local failing
    failing="$(sed 's/\x1b\[[0-9;]*m//g' "${log}" | grep -aE \
      '^ *FAIL |^ +× |^test .* \.\.\. FAILED$|^---- .* stdout ----$|panicked at|^error(\[E[0-9]+\])?: |Undefined Behavior|SUMMARY: AddressSanitizer|ERROR: libFuzzer|^==[0-9]+== (Invalid|Conditional|Use of)|FAIL: |: FAIL' |
      sort -u | head -n 60 || true)"
    if [ -n "${failing}" ]; then
      printf '!!! failing tests and errors in %s:\n%s\n' "${name}" "${failing}"
    fi
    printf '!!! the last 150 lines of %s:\n' "${log}"
    sed 's/\x1b\[[0-9;]*m//g' "${log}" | tail -n 150
    printf '!!! end of %s\n\n' "${name}"
  } >&2
}

# ci__run NAME LOG CMD...: runs CMD (in this subshell), records the result, prints the end line.
ci__run() {
  local name="$1" log="$2"
  shift 2
  local t0 rc=0 limit="${CI_STEP_LIMIT:-1800}"
  t0=$(date +%s)
  printf '[%s] >>> %s\n' "$(ci__clock)" "${name}"
  # The command runs in its own process group (job control on), so that the watchdog, and a
  # failure elsewhere, can end it with everything it started.
  set -m
  ("$@") >"${log}" 2>&1 </dev/null &
  local pid=$!
  set +m
  echo "${pid}" >>"${CI_DIR}/groups"
  (
    trap 'kill "${nap}" 2>/dev/null; exit 0' TERM
    sleep "${limit}" &
    nap=$!
    wait "${nap}"
    echo "ci: ${name}: over the step limit of ${limit} s, stopped" >>"${log}"
    kill -TERM -- "-${pid}" 2>/dev/null
  ) </dev/null >/dev/null 2>&1 &
  local dog=$!
  wait "${pid}" || rc=$?
  kill "${dog}" 2>/dev/null || true
  local t1 secs
  t1=$(date +%s)
  secs=$((t1 - t0))
  printf '%s\t%s\t%s\t%s\t%s\n' "${name}" "${rc}" "$((t0 - CI_START))" "${secs}" "${log}" >>"${CI_STEPS}"
  if [ "${rc}" = 0 ]; then
    local p f k counted=""
    read -r p f k < <(ci__count "${log}")
    [ "$((p + f + k))" = 0 ] || counted=", tests: ${p} passed, ${k} skipped"
    printf '[%s] ok  %s (%s s%s)\n' "$(ci__clock)" "${name}" "${secs}" "${counted}"
  else
    ci__report "${name}" "${log}" "${rc}" "${secs}"
    touch "${CI_DIR}/failed.$(ci__slug "${name}")"
  fi
  return "${rc}"
}

# Sets CI_LOG to the next step's log file.
ci__log() {
  CI_N=$((CI_N + 1))
  CI_LOG="$(printf '%s/%02d-%s.log' "${CI_LOGS}" "${CI_N}" "$(ci__slug "$1")")"
}

ci__failed_any() { compgen -G "${CI_DIR}/failed.*" >/dev/null; }

ci__stop_all() {
  local pid
  if [ -f "${CI_DIR}/groups" ]; then
    while read -r pid; do kill -TERM -- "-${pid}" 2>/dev/null || true; done <"${CI_DIR}/groups"
  fi
  for pid in "${CI_PIDS[@]}"; do kill -TERM "${pid}" 2>/dev/null || true; done
  CI_PIDS=()
}

ci__fail() {
  ci__stop_all
  ci_summary
  echo "ci: FAILED: $*" >&2
  exit 1
}

ci_step() {
  local name="$1"
  shift
  ci__failed_any && ci__fail "a background step failed"
  ci__log "${name}"
  ci__run "${name}" "${CI_LOG}" "$@" || ci__fail "${name}"
}

ci_bg() {
  local name="$1"
  shift
  ci__failed_any && ci__fail "a background step failed"
  ci__log "${name}"
  ci__run "${name}" "${CI_LOG}" "$@" &
  CI_PIDS["${name}"]=$!
}

ci_wait() {
  local names=("$@") n failed=()
  [ "${#names[@]}" -gt 0 ] || names=("${!CI_PIDS[@]}")
  for n in "${names[@]}"; do
    [ -n "${CI_PIDS[${n}]:-}" ] || continue
    wait "${CI_PIDS[${n}]}" || failed+=("${n}")
    unset "CI_PIDS[${n}]"
  done
  [ "${#failed[@]}" -eq 0 ] || ci__fail "${failed[*]}"
}

# Tests counted in the logs: vitest's "Tests  N passed | M skipped", cargo's "test result:".
ci__count() {
  sed 's/\x1b\[[0-9;]*m//g' "$@" 2>/dev/null | awk '
    /^ *Tests +[0-9]/ {
      for (i = 1; i <= NF; i++) {
        if ($(i + 1) ~ /^passed/) p += $i
        if ($(i + 1) ~ /^failed/) f += $i
        if ($(i + 1) ~ /^(skipped|todo)/) s += $i
      }
    }
    /^test result: / {
      for (i = 1; i <= NF; i++) {
        if ($(i + 1) ~ /^passed/) p += $i
        if ($(i + 1) ~ /^failed/) f += $i
        if ($(i + 1) ~ /^ignored/) s += $i
      }
    }
    END { printf "%d %d %d\n", p, f, s }'
}

ci_summary() {
  [ -s "${CI_STEPS}" ] || return 0
  printf '\n=== steps: start, duration (seconds from the start of the run)\n'
  sort -t$'\t' -k3,3n "${CI_STEPS}" | awk -F'\t' '{ printf "%6d %6d  %-4s %s\n", $3, $4, ($2 == 0 ? "ok" : "FAIL"), $1 }'
  printf 'total: %s s\n' "$(($(date +%s) - CI_START))"
  local p f s
  read -r p f s < <(ci__count "${CI_LOGS}"/*.log)
  printf 'ci: %s passed, %s failed, %s skipped\n' "${p}" "${f}" "${s}"
}
