#!/usr/bin/env bash
# Lint the GitHub Actions workflows with actionlint (and shellcheck for run:
# scripts when available). Exits non-zero on any finding.
#
#   bash scripts/actionlint.sh            # lints .github/workflows/*.yml
#   bash scripts/actionlint.sh FILE...    # lints the given workflow files
set -euo pipefail

ACTIONLINT_VERSION="v1.7.12"
cd "$(dirname "$0")/.."

log() { printf 'actionlint.sh: %s\n' "$*" >&2; }

if ! command -v actionlint >/dev/null 2>&1; then
  if command -v go >/dev/null 2>&1; then
    gobin="$(go env GOPATH)/bin"
    export PATH="$gobin:$PATH"
  fi
fi

if ! command -v actionlint >/dev/null 2>&1; then
  if ! command -v go >/dev/null 2>&1; then
    log "actionlint is not on PATH and go is not installed to build it"
    exit 1
  fi
  log "installing actionlint ${ACTIONLINT_VERSION} with go install"
  go install "github.com/rhysd/actionlint/cmd/actionlint@${ACTIONLINT_VERSION}"
  command -v actionlint >/dev/null 2>&1 || { log "actionlint not found after go install"; exit 1; }
fi

if ! command -v shellcheck >/dev/null 2>&1; then
  # Optional: actionlint runs shellcheck on run: blocks when it is installed.
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo -n)
  fi
  if command -v apt-get >/dev/null 2>&1; then
    log "installing shellcheck with apt-get (optional)"
    if ! { "${sudo_cmd[@]}" apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq shellcheck >/dev/null 2>&1; }; then
      log "could not install shellcheck; continuing without it"
    fi
  fi
fi

if command -v shellcheck >/dev/null 2>&1; then
  log "using $(actionlint -version | head -n1) with shellcheck $(shellcheck --version | sed -n 's/^version: //p')"
else
  log "using $(actionlint -version | head -n1) without shellcheck"
fi

if [ "$#" -gt 0 ]; then
  exec actionlint "$@"
fi
exec actionlint
