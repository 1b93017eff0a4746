# Sourced by benchmark/cli-ab.sh and benchmark/vs-bsondump.sh (which set ROOT and FILE): how
# bson2json reads the dump. INPUT=file (default), stdin (`< FILE`), pipe (`cat FILE |`, cat's CPU
# counted) or gz (FILE gzipped once to tmp/NAME.gz, read as a file). Defines and exports `b2j BIN
# ARGS...`, which runs `node BIN ARGS...` on that input with its output to /dev/null.
INPUT="${INPUT:-file}"
case "$INPUT" in
  file | stdin | pipe) ;;
  gz)
    GZ="$ROOT/tmp/$(basename "$FILE").gz"
    [ -s "$GZ" ] && [ "$GZ" -nt "$FILE" ] || gzip -c "$FILE" >"$GZ"
    ;;
  *) echo "INPUT must be file, stdin, pipe or gz" >&2; exit 1 ;;
esac
# bson2json (node BIN ARGS...) reading FILE as INPUT says, output to /dev/null.
b2j() {
  local bin=$1
  shift
  case "$INPUT" in
    file) node "$bin" "$@" "$FILE" -o /dev/null ;;
    stdin) node "$bin" "$@" - -o /dev/null <"$FILE" ;;
    pipe) cat "$FILE" | node "$bin" "$@" -o /dev/null ;;
    gz) node "$bin" "$@" "$GZ" -o /dev/null ;;
  esac
}
export -f b2j
export FILE INPUT GZ
# Node reads every certificate NODE_EXTRA_CA_CERTS names at start-up, before any of the CLI runs
# (node -e 0: 77 ms of CPU against 25 ms without it on the 2-core VM, whose image sets it to the
# system bundle). The runs keep the environment as it is; this line says which it was.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then
  echo "note: NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS is set: node parses it at every start-up (run under \`env -u NODE_EXTRA_CA_CERTS\` to leave it out)" >&2
fi
