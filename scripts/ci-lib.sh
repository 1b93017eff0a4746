# shellcheck shell=bash
# The step runner of .ci/run and scripts/long-checks.sh (sourced, not run):
#
#   ci_step NAME CMD...      run a step now; its output goes to $CI_DIR/logs/NN-NAME.log
#   ci_bg NAME CMD...        start a step in the background
#   ci_lane NAME CMD...      a background step that runs steps of its own (its log stays quiet)
#   ci_wait [NAME...]        wait for those background steps (all of this shell's, without names);
#                            a lane may wait for a step the main script started
#   ci_summary               the table of steps and times, then the tests counted in every log
#
# Each step prints one line when it starts and one when it ends, with its time. A failing step
# prints the failing tests' names (vitest, cargo test, libFuzzer, miri, sanitizers) and the end of
# its log, every other running step is stopped, and the script exits 1. CI_STEP_LIMIT (seconds,
# default 1800) stops a step that hangs, CI_LANE_LIMIT (default 5000) a lane. CMD may be a shell
# function of the sourcing script.

CI_DIR="${CI_DIR:-tmp/ci}"
CI_LOGS="${CI_DIR}/logs"
CI_START="${CI_START:-$(date +%s)}"
export CI_START
CI_MAIN="${BASHPID}"
rm -rf "${CI_LOGS}" "${CI_DIR}/status" "${CI_DIR}/groups" "${CI_DIR}/seq" "${CI_DIR}/seq.lock" "${CI_DIR}/first-failure"
mkdir -p "${CI_LOGS}" "${CI_DIR}/status" "${CI_DIR}/groups"
: >"${CI_DIR}/steps.tsv"
declare -A CI_PIDS=()
# Status lines and failure reports go to the script's own output, also from inside a lane (and
# from a script run as a step that uses this runner too: it inherits 3 and 4).
CI_NESTED=1
{ true >&3 && true >&4; } 2>/dev/null || { exec 3>&1 4>&2; CI_NESTED=0; }

ci__clock() {
  local s=$(($(date +%s) - CI_START))
  printf '%02d:%02d' $((s / 60)) $((s % 60))
}

ci__slug() { tr -c 'A-Za-z0-9.\n-' '-' <<<"$1" | tr -s '-' | cut -c1-60; }

# The failing tests and errors a log names, then its last lines.
ci__report() {
  local name="$1" log="$2" rc="$3" secs="$4" failing
  printf '\n!!! FAILED: %s (exit %s after %s s); log: %s\n' "${name}" "${rc}" "${secs}" "${log}"
  failing="$(sed 's/\x1b\[[0-9;]*m//g' "${log}" | grep -aE \
    '^ *FAIL |^ +× |^test .* \.\.\. FAILED$|^---- .* stdout ----$|panicked at|^error(\[E[0-9]+\])?: |Undefined Behavior|SUMMARY: AddressSanitizer|ERROR: libFuzzer|^==[0-9]+== (Invalid|Conditional|Use of)|FAIL: |over the step limit' |
    awk '!seen[$0]++' | head -n 60 || true)"
  [ -z "${failing}" ] || printf '!!! failing tests and errors in %s:\n%s\n' "${name}" "${failing}"
  printf '!!! the last 150 lines of %s:\n' "${log}"
  sed 's/\x1b\[[0-9;]*m//g' "${log}" | tail -n 150
  printf '!!! end of %s\n\n' "${name}"
}

# Tests counted in logs: vitest's "Tests  N passed | M skipped", cargo's "test result:".
ci__count() {
  sed 's/\x1b\[[0-9;]*m//g' "$@" 2>/dev/null | awk '
    /^ *Tests +[0-9]/ || /^test result: / {
      for (i = 1; i < NF; i++) {
        if ($(i + 1) ~ /^passed/) p += $i
        if ($(i + 1) ~ /^failed/) f += $i
        if ($(i + 1) ~ /^(skipped|todo|ignored)/) s += $i
      }
    }
    END { printf "%d %d %d\n", p, f, s }'
}

# Sets CI_LOG to the next step's log file (numbered across lanes, in start order).
ci__log() {
  local n
  n="$(flock "${CI_DIR}/seq.lock" bash -c 'n=$(( $(cat "$1" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$1"; echo "$n"' _ "${CI_DIR}/seq")"
  CI_LOG="$(printf '%s/%02d-%s.log' "${CI_LOGS}" "${n}" "$(ci__slug "$1")")"
}

# ci__run NAME LOG QUIET LIMIT CMD...: runs CMD in its own process group, records the result,
# prints the end line (and the report of a failure, unless QUIET: a lane's steps report themselves).
ci__run() {
  local name="$1" log="$2" quiet="$3" limit="$4"
  shift 4
  local t0 rc=0 slug
  slug="$(ci__slug "${name}")"
  t0=$(date +%s)
  printf '[%s] >>> %s\n' "$(ci__clock)" "${name}" >&3
  set -m
  # `times`: the CPU seconds of the step and of every process it waited for.
  (
    ("$@") >"${log}" 2>&1 </dev/null
    step_rc=$?
    times >"${log}.cpu"
    exit "${step_rc}"
  ) &
  local pid=$!
  set +m
  : >"${CI_DIR}/groups/${pid}"
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
  rm -f "${CI_DIR}/groups/${pid}"
  kill "${dog}" 2>/dev/null || true
  local secs=$(($(date +%s) - t0)) stopped=0 cpu
  cpu="$(tr ' ' '\n' 2>/dev/null <"${log}.cpu" | awk -F'[ms]' 'NF > 1 { t += $1 * 60 + $2 } END { if (NR) printf "%d", t + 0.5 }' || true)"
  rm -f "${log}.cpu"
  # Ended by the stop that another step's failure sent: that one's report is the one to read.
  [ "${rc}" = 0 ] || ! ci__failed_any || stopped=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${name}" "${rc}" "$((t0 - CI_START))" "${secs}" "${log}" "${cpu:-?}" >>"${CI_DIR}/steps.tsv"
  echo "${rc}" >"${CI_DIR}/status/${slug}"
  if [ "${rc}" = 0 ]; then
    local p f k counted=""
    read -r p f k < <(ci__count "${log}")
    [ "$((p + f + k))" = 0 ] || counted=", tests: ${p} passed, ${k} skipped"
    printf '[%s] ok  %s (%s s, cpu %s s%s)\n' "$(ci__clock)" "${name}" "${secs}" "${cpu:-?}" "${counted}" >&3
  elif [ "${stopped}" = 1 ]; then
    printf '[%s] stopped %s (%s s): another step failed\n' "$(ci__clock)" "${name}" "${secs}" >&4
  else
    # Fail fast: the other steps stop now, not when the script next waits for them.
    ci__stop_all
    [ -f "${CI_DIR}/first-failure" ] || echo "${name}" >"${CI_DIR}/first-failure"
    if [ "${quiet}" = 1 ] && [ ! -s "${log}" ]; then
      printf '[%s] FAILED %s (%s s)\n' "$(ci__clock)" "${name}" "${secs}" >&4
    else
      ci__report "${name}" "${log}" "${rc}" "${secs}" >&4
    fi
  fi
  return "${rc}"
}

# Stops every running step's process group but the caller's own.
ci__stop_all() {
  local f pid mine
  mine="$(ps -o pgid= "${BASHPID}" | tr -d ' ')"
  for f in "${CI_DIR}/groups"/*; do
    [ -e "${f}" ] || continue
    pid="${f##*/}"
    [ "${pid}" = "${mine}" ] || kill -TERM -- "-${pid}" 2>/dev/null || true
  done
}

# Stopped from outside (a failure elsewhere, the step limit): stop this script's steps too.
trap 'ci__stop_all; exit 143' TERM INT

ci__fail() {
  ci__stop_all
  if [ "${BASHPID}" = "${CI_MAIN}" ]; then
    wait 2>/dev/null || true
    ci_summary
    echo "ci: FAILED: $(cat "${CI_DIR}/first-failure" 2>/dev/null || echo "$*")" >&4
  fi
  exit 1
}

ci__failed_any() { grep -qv '^0$' "${CI_DIR}"/status/* 2>/dev/null; }

ci_step() {
  local name="$1"
  shift
  ci__failed_any && ci__fail "a step failed"
  ci__log "${name}"
  ci__run "${name}" "${CI_LOG}" 0 "${CI_STEP_LIMIT:-1800}" "$@" || ci__fail "${name}"
}

ci_bg() {
  local name="$1"
  shift
  ci__failed_any && ci__fail "a step failed"
  ci__log "${name}"
  ci__run "${name}" "${CI_LOG}" 0 "${CI_STEP_LIMIT:-1800}" "$@" &
  CI_PIDS["${name}"]=$!
}

ci_lane() {
  local name="$1"
  shift
  ci__failed_any && ci__fail "a step failed"
  ci__log "${name}"
  ci__run "${name}" "${CI_LOG}" 1 "${CI_LANE_LIMIT:-5000}" "$@" &
  CI_PIDS["${name}"]=$!
}

ci_wait() {
  local names=("$@") n failed=() status
  [ "${#names[@]}" -gt 0 ] || names=("${!CI_PIDS[@]}")
  for n in "${names[@]}"; do
    if [ -n "${CI_PIDS[${n}]:-}" ]; then
      wait "${CI_PIDS[${n}]}" 2>/dev/null || true
      unset "CI_PIDS[${n}]"
    fi
    # Started by another shell (the main script, for a lane): its status file says when it ends.
    status="${CI_DIR}/status/$(ci__slug "${n}")"
    while [ ! -f "${status}" ]; do
      ci__failed_any && ci__fail "a step failed while waiting for ${n}"
      sleep 1
    done
    [ "$(cat "${status}")" = 0 ] || failed+=("${n}")
  done
  [ "${#failed[@]}" -eq 0 ] || ci__fail "${failed[*]}"
}

# The summary: on the terminal at the top level, in the step's log when nested (a step runs it).
ci_summary() {
  [ -s "${CI_DIR}/steps.tsv" ] || return 0
  local out=3
  [ "${CI_NESTED}" = 0 ] || out=1
  {
    printf '\n=== steps: start, duration and CPU seconds (start from the start of the run)\n'
    sort -t$'\t' -k3,3n "${CI_DIR}/steps.tsv" | awk -F'\t' '{ printf "%6d %6d %6s  %-4s %s\n", $3, $4, $6, ($2 == 0 ? "ok" : "FAIL"), $1 }'
    printf 'total: %s s\n' "$(($(date +%s) - CI_START))"
    local p f s
    read -r p f s < <(find "${CI_DIR}" -name '*.log' -path '*/logs/*' -exec cat {} + | ci__count)
    printf 'ci: %s passed, %s failed, %s skipped\n' "${p}" "${f}" "${s}"
  } >&"${out}"
}
