#!/usr/bin/env bash
# SecantusDB (PyPI `secantusdb`, GPL-2.0), an independent MongoDB-compatible server written in Python,
# used only as a test peer: run as a separate process on 127.0.0.1, never shipped or linked.
#
#   bash scripts/secantus.sh install   # pinned secantusdb into a git-ignored venv (tmp/secantus/venv)
#   bash scripts/secantus.sh start     # install if needed, start on a free 127.0.0.1 port, print the URI
#   bash scripts/secantus.sh uri       # print the URI of the running server
#   bash scripts/secantus.sh stop      # stop it (pid file tmp/secantus/secantusd.pid)
#
# `start` serves an in-memory single-node replica set (`--storage-path :memory:`) with the test
# commands enabled (`configureFailPoint`/`failCommand`), waits until it answers `hello`, writes the
# pid file and prints mongodb://127.0.0.1:<port>/?directConnection=true on stdout (and into
# tmp/secantus/uri). The server's log goes to tmp/secantus/secantusd.log.
# Environment: SECANTUS_DIR (default <repo>/tmp/secantus), SECANTUS_PORT (default: a free port),
# PYTHON (default python3).
set -euo pipefail
VERSION=0.7.0b3
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${SECANTUS_DIR:-$ROOT/tmp/secantus}"
VENV="$DIR/venv"
PIDFILE="$DIR/secantusd.pid"
URIFILE="$DIR/uri"
LOG="$DIR/secantusd.log"
PY="${PYTHON:-python3}"

log() { echo "secantus.sh: $*" >&2; }

install() {
  if [ -x "$VENV/bin/secantusd-py" ] && [ "$(cat "$VENV/.secantus-version" 2>/dev/null)" = "$VERSION" ]; then
    return 0
  fi
  mkdir -p "$DIR"
  log "installing secantusdb==$VERSION into $VENV"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "secantusdb==$VERSION" >&2
  echo "$VERSION" >"$VENV/.secantus-version"
}

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# hello over OP_MSG with the standard library only (the venv has no driver of its own).
ping() {
  "$PY" - "$1" <<'PYEOF'
import socket, struct, sys
port = int(sys.argv[1])
def cstr(s): return s.encode() + b"\0"
body = b"\x10" + cstr("hello") + struct.pack("<i", 1) + b"\x02" + cstr("$db") + struct.pack("<i", 6) + cstr("admin")
doc = struct.pack("<i", len(body) + 5) + body + b"\0"
try:
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    # header (length, requestID, responseTo, OP_MSG), flagBits, one kind-0 section
    s.sendall(struct.pack("<iiii", 16 + 4 + 1 + len(doc), 1, 0, 2013) + struct.pack("<I", 0) + b"\0" + doc)
    h = s.recv(16)
    n = struct.unpack("<i", h[:4])[0]
    data = h
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk: break
        data += chunk
    sys.exit(0 if len(data) == n and b"ok" in data else 1)
except OSError:
    sys.exit(1)
PYEOF
}

start() {
  if running; then
    cat "$URIFILE"
    return 0
  fi
  install
  local port="${SECANTUS_PORT:-$(free_port)}"
  mkdir -p "$DIR"
  # setsid: its own process group, so `stop` ends the server and nothing else.
  setsid "$VENV/bin/secantusd-py" --host 127.0.0.1 --port "$port" --storage-path :memory: \
    --enable-test-commands >"$LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local uri="mongodb://127.0.0.1:$port/?directConnection=true"
  for _ in $(seq 1 150); do
    if ! running; then
      log "secantusd exited during startup; its log ($LOG):"
      tail -n 40 "$LOG" >&2 || true
      rm -f "$PIDFILE"
      return 1
    fi
    if ping "$port"; then
      echo "$uri" >"$URIFILE"
      echo "$uri"
      return 0
    fi
    sleep 0.2
  done
  log "secantusd did not answer on 127.0.0.1:$port within 30 s; its log ($LOG):"
  tail -n 40 "$LOG" >&2 || true
  stop
  return 1
}

stop() {
  if [ -f "$PIDFILE" ]; then
    local pid
    pid="$(cat "$PIDFILE")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$PIDFILE" "$URIFILE"
  fi
}

case "${1:-}" in
  install) install; echo "$VENV/bin/secantusd-py" ;;
  start) start ;;
  stop) stop ;;
  uri) if running; then cat "$URIFILE"; else log "not running"; exit 1; fi ;;
  *) echo "usage: bash scripts/secantus.sh install|start|uri|stop" >&2; exit 2 ;;
esac
