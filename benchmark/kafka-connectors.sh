#!/usr/bin/env bash
# bson2json cdc against what users would pick instead: the MongoDB Kafka source connector
# (org.mongodb.kafka:mongo-kafka-connect 2.0.1) and Debezium's MongoDB connector
# (io.debezium:debezium-connector-mongodb 3.0.8.Final), both in Kafka Connect standalone from the
# Kafka 4.1.1 jars of Maven Central, on the same source (SecantusDB, scripts/secantus.sh) and the
# same broker (scripts/kafka.sh). Not part of .ci/run: it takes several minutes.
#
#   bash benchmark/kafka-connectors.sh [live|snapshot|kill|all|fetch]   (default all; fetch: the jars only)
#
# live:     a writer process inserts N ~1 KB documents at RATE per second while the pipeline runs
#           (the pipeline is started first and warmed up: a document read back from its topic);
#           figures: events/s delivered (N / from the writer's first insert to the last event read
#           back, read_committed), the pipeline process's CPU per event (/proc/PID/stat utime+stime
#           over the same span; the JVM for the connectors), and the lag at the end (last event
#           read back minus the writer's last insert).
# snapshot: a collection pre-filled with SNAP documents; cdc --snapshot, the MongoDB connector's
#           startup.mode=copy_existing and Debezium's snapshot.mode=initial copy it: documents/s
#           from the process start (JVM start-up included) and from the first document read back.
# kill:     a writer inserts KILL_N documents at KILL_RATE/s; the pipeline is SIGKILLed KILLS times
#           (every KILL_EVERY s) and restarted at once; then the topic is read read_committed and
#           each _id counted: missing and duplicated events.
# wide:     a database of WIDE collections (default 10) captured whole: cdc --db D --topic-prefix P
#           (`cdc`, `cdc-mongo-kafka`), the MongoDB connector database-wide (`mongo`) or one connector
#           per collection in one Connect worker (`mongo-each`, what a team runs per collection),
#           Debezium database-wide (`debezium`); WRITERS writers (default 4) insert N documents, each
#           insertMany into the next collection in turn, at RATE (0: as fast as the source takes
#           them, insertMany of 500); figures as for live, read back from every collection's topic,
#           and for cdc where its stream waited (its progress lines while events flowed).
# catchup:  the source is not the limit of the writer: N documents over WIDE collections are written
#           first, then the pipeline starts from a cluster time before them (cdc
#           --start-at-operation-time, the MongoDB connector's startup.mode=timestamp; Debezium cannot
#           start there and is left out) and catches up: events/s from its start to the last event
#           read back, and its CPU per event over that span.
# RESULTS=FILE writes the report into FILE as well (benchmark/results/…), with the command, the
# time, the machine's load average at the start and the end, and the Node and Java versions.
# A pipeline that cannot run against SecantusDB is reported with its error and skipped.
# Flat out: RATE=50000 (insertMany of 500 every 10 ms, never waiting: as fast as the source takes
# them), WARM_N=5000 (a warm-up first, WARM_PAUSE seconds to drain it).
# Environment: N (20000), RATE (400), WARM_N (0), WARM_PAUSE (10), SNAP (20000), KILL_N (12000), KILL_RATE (400), KILLS (3),
# KILL_EVERY (8), WIDE (10), WRITERS (4), CDC_ARGS (more flags for every cdc pipeline, split on spaces:
# "--commit-interval-ms 300"), PIPELINES ("cdc mongo debezium"; wide: "cdc cdc-mongo-kafka
# mongo mongo-each debezium"; catchup: "cdc cdc-mongo-kafka mongo mongo-each"), RESULTS, CONNECT_DIR (<repo>/tmp/kafka-connect,
# git-ignored: the jars and the work files), JAVA, MVN; KAFKA_* and SECANTUS_* as in those scripts.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# the command as given (the report names it), and whether RATE and PIPELINES were (wide and catchup
# have defaults of their own)
CMDLINE="$(for v in N RATE WARM_N WIDE WRITERS PIPELINES FORMAT_SNAPSHOT CDC_ARGS; do if [ -n "${!v+x}" ]; then printf '%s=%q ' "$v" "${!v}"; fi; done)bash benchmark/kafka-connectors.sh $*"
RATE_SET="${RATE-}"
PIPELINES_SET="${PIPELINES+1}"
DIR="${CONNECT_DIR:-$ROOT/tmp/kafka-connect}"
JAVA="${JAVA:-java}"
MVN="${MVN:-mvn}"
N="${N:-20000}"
RATE="${RATE:-400}"
SNAP="${SNAP:-20000}"
KILL_N="${KILL_N:-12000}"
KILL_RATE="${KILL_RATE:-400}"
KILLS="${KILLS:-3}"
KILL_EVERY="${KILL_EVERY:-8}"
PIPELINES="${PIPELINES:-cdc mongo debezium}"
KAFKA_VERSION=4.1.1
MONGO_CONNECTOR=2.0.1
DEBEZIUM=3.0.8.Final
HELPER="$ROOT/benchmark/kafka-connectors.mjs"
RUN="$DIR/run"
TICKS="$(getconf CLK_TCK)"

log() { echo "kafka-connectors.sh: $*" >&2; }

# Maven Central jars: the Connect runtime (plus connect-json and kafka-tools), and one plugin
# directory per connector, plugins/NAME/NAME (its jars without org.apache.kafka, which the runtime
# provides; plugin.path=plugins/NAME, so the connector is the one plugin there).
pom() {
  mkdir -p "$DIR/pom/$1"
  cat >"$DIR/pom/$1/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.bson2json</groupId>
  <artifactId>connect-$1</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>$2</dependencies>
</project>
POM
}
dep() { echo "<dependency><groupId>$1</groupId><artifactId>$2</artifactId><version>$3</version></dependency>"; }
fetch() {
  if [ -f "$DIR/.complete-$KAFKA_VERSION-$MONGO_CONNECTOR-$DEBEZIUM" ]; then return 0; fi
  log "fetching Kafka Connect $KAFKA_VERSION, mongo-kafka-connect $MONGO_CONNECTOR and debezium-connector-mongodb $DEBEZIUM into $DIR"
  pom runtime "$(dep org.apache.kafka connect-runtime "$KAFKA_VERSION")$(dep org.apache.kafka connect-json "$KAFKA_VERSION")$(dep org.apache.kafka kafka-tools "$KAFKA_VERSION")$(dep org.apache.logging.log4j log4j-slf4j-impl 2.24.3)"
  pom mongo "$(dep org.mongodb.kafka mongo-kafka-connect "$MONGO_CONNECTOR")"
  pom debezium "$(dep io.debezium debezium-connector-mongodb "$DEBEZIUM")"
  rm -rf "$DIR/jars" "$DIR/plugins"
  "$MVN" -B -q -f "$DIR/pom/runtime/pom.xml" dependency:copy-dependencies -DoutputDirectory="$DIR/jars" -DincludeScope=runtime >&2
  local p
  for p in mongo debezium; do
    "$MVN" -B -q -f "$DIR/pom/$p/pom.xml" dependency:copy-dependencies -DoutputDirectory="$DIR/plugins/$p/$p" \
      -DincludeScope=runtime -DexcludeGroupIds=org.apache.kafka >&2
  done
  touch "$DIR/.complete-$KAFKA_VERSION-$MONGO_CONNECTOR-$DEBEZIUM"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# CPU seconds (user + system) of a process so far, from /proc/PID/stat (fields 14 and 15).
cpu_of() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || { echo 0; return; }
  stat="${stat##*) }"
  # shellcheck disable=SC2086
  set -- $stat
  awk -v a="${12}" -v b="${13}" -v t="$TICKS" 'BEGIN { printf "%.3f\n", (a + b) / t }'
}

# The topic prefix of pipeline $1, and the topic it writes to for database $2 and collection $3 (default c).
prefix_of() {
  case "$1" in
    mongo | mongo-each | debezium) echo "${1%-each}" ;;
    cdc) echo cdc ;;
    cdc-mongo-kafka) echo cdcmk ;;
    cdc-debezium) echo cdcdbz ;;
  esac
}
topic_of() {
  if [ "$1" = cdc ] && [ -z "${DBWIDE:-}" ]; then echo "cdc-$2"; else echo "$(prefix_of "$1").$2.${3:-c}"; fi
}
# The collections a run writes: c, or c0 … c(WIDE-1) for the database-wide runs (wide, catchup).
colls() {
  if [ -n "${DBWIDE:-}" ] && [ "${WIDE_RUN:-}" = 1 ]; then seq -f 'c%g' 0 $((${WIDE:-10} - 1)) | tr '\n' ' '; else echo c; fi
}
topics_of() {
  local kind="$1" db="$2" coll out=""
  for coll in $(colls); do out="$out${out:+,}$(topic_of "$kind" "$db" "$coll")"; done
  echo "$out"
}

# Starts pipeline $1 on database $2 (collection c; database-wide with DBWIDE) with start mode $3
# (stream | snapshot | catchup: from cluster time $STARTAT) in its own process group; the pid goes to
# $RUN/$2.pid, the output to $RUN/$2.log (appended).
launch() {
  local kind="$1" db="$2" mode="$3" work="$RUN/${PIDKEY:-$2}"
  mkdir -p "$work"
  case "$kind" in
    cdc | cdc-mongo-kafka | cdc-debezium)
      local extra=() scope=() format=()
      [ "$mode" = snapshot ] && extra=(--snapshot)
      [ "$mode" = catchup ] && extra=(--start-at-operation-time "$STARTAT")
      # database-wide (DBWIDE=1): one stream for every collection, a topic per collection as the
      # connectors name them; else collection c into its topic
      scope=(--collection c --topic "$(topic_of "$kind" "$db")")
      [ -n "${DBWIDE:-}" ] && scope=(--topic-prefix "$(prefix_of "$kind")")
      # the connectors' record formats, written by cdc
      [ "$kind" = cdc ] || format=(--format "${kind#cdc-}")
      # progress lines every second: where the stream waited (kafka_phases)
      # CDC_ARGS: flags of the run (e.g. --commit-interval-ms 300), split on spaces
      local args=()
      read -r -a args <<<"${CDC_ARGS:-}"
      setsid node "$ROOT/bin/bson2json.js" cdc --uri "$URI" --db "$db" "${scope[@]}" --kafka "$BROKER" \
        "${format[@]}" --checkpoint-topic "$kind-$db-checkpoints" --id "$kind-$db" --progress-interval 1 \
        "${extra[@]}" "${args[@]}" >>"$work.log" 2>&1 </dev/null &
      ;;
    mongo | mongo-each | debezium)
      local plugin="${kind%-each}" connectors=()
      cat >"$work/worker.properties" <<PROPS
bootstrap.servers=$BROKER
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.storage.file.filename=$work/offsets
plugin.path=$DIR/plugins/$plugin
listeners=http://127.0.0.1:$(free_port)
PROPS
      cat >"$work/log4j2.properties" <<L4J
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = $work.connect.log
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
# mongo-kafka-connect 2.0.1 reads the cluster time out of every getMore's postBatchResumeToken for
# a metric (ResumeTokenUtils.getTimestampFromResumeToken), assuming MongoDB's KeyString layout;
# SecantusDB's tokens differ ("Expected canonical type equal to 130, but found 76"), and the
# driver logs that WARN with its stack trace per getMore. Not logged, so its CPU is not counted.
logger.mongoevent.name = org.mongodb.driver.protocol.event
logger.mongoevent.level = ERROR
L4J
      if [ "$plugin" = mongo ]; then
        local startup=latest coll
        [ "$mode" = snapshot ] && startup=copy_existing
        [ "$mode" = catchup ] && startup=timestamp
        # mongo: one connector (collection c, or the database with DBWIDE); mongo-each: one
        # connector per collection, all in this worker
        local scopes=("${DBWIDE:+#}collection=c")
        if [ "$kind" = mongo-each ]; then
          scopes=()
          for coll in $(colls); do scopes+=("collection=$coll"); done
        fi
        local k=0 scope
        for scope in "${scopes[@]}"; do
          k=$((k + 1))
          cat >"$work/connector-$k.properties" <<PROPS
name=mongo-$db-$k
connector.class=com.mongodb.kafka.connect.MongoSourceConnector
tasks.max=1
connection.uri=$URI
database=$db
$scope
topic.prefix=mongo
startup.mode=$startup
${STARTAT:+startup.mode.timestamp.start.at.operation.time=${STARTAT%%.*}}
output.format.key=json
output.format.value=json
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
topic.creation.default.replication.factor=1
topic.creation.default.partitions=1
PROPS
          connectors+=("$work/connector-$k.properties")
        done
      else
        local snap=no_data
        [ "$mode" = snapshot ] && snap=initial
        cat >"$work/connector-1.properties" <<PROPS
name=debezium-$db
connector.class=io.debezium.connector.mongodb.MongoDbConnector
tasks.max=1
mongodb.connection.string=${URI%%\?*}?replicaSet=$SETNAME
topic.prefix=debezium
database.include.list=$db
${DBWIDE:+#}collection.include.list=$db.c
snapshot.mode=$snap
topic.creation.default.replication.factor=1
topic.creation.default.partitions=1
PROPS
        connectors=("$work/connector-1.properties")
      fi
      setsid "$JAVA" -Xmx512m -Xms128m -Djava.awt.headless=true -Dlog4j2.configurationFile="$work/log4j2.properties" \
        -cp "$DIR/jars/*" org.apache.kafka.connect.cli.ConnectStandalone "$work/worker.properties" "${connectors[@]}" \
        >>"$work.log" 2>&1 </dev/null &
      ;;
  esac
  echo $! >"$RUN/${PIDKEY:-$db}.pid"
  disown "$!" # no "Killed" notice from the shell on SIGKILL
}

stop_pipeline() {
  local pid
  pid="$(cat "$RUN/$1.pid" 2>/dev/null)" || return 0
  kill -"${2:-TERM}" -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$RUN/$1.pid"
}

# The first error lines of a pipeline that did not deliver (its own output and Connect's log).
why() {
  local db="$1"
  {
    # Debezium 3.0.8's CloudEventsConverter fails to load on Kafka 4.1 (JsonConverter.convertToConnect
    # is gone); Connect logs it and goes on: not the cause of anything here.
    grep -hE '(Exception|Error)(: |$)|configuration is invalid' -A1 "$RUN/$db.connect.log" "$RUN/$db.log" 2>/dev/null |
      grep -vE 'Failed to discover|CloudEventsConverter|convertToConnect|ExceptionInInitializer|^\s+at |^--$|^\s*$' | sort -u | tail -n 3
  } | cut -c1-400
}

helper() { node "$HELPER" "$@"; }

# Pipeline $1 streaming from database $2: launch, warm up; prints nothing and returns 1 on failure.
# Pipeline $1 streaming from database $2: launch, warm up; prints nothing and returns 1 on failure.
start_streaming() {
  local kind="$1" db="$2" first
  first="$(colls | cut -d' ' -f1)"
  launch "$kind" "$db" stream
  if ! helper warm --uri "$URI" --db "$db" --coll "$first" --brokers "$BROKER" --topic "$(topic_of "$kind" "$db" "$first")" --timeout 120 >&2; then
    FAIL[$kind]="$(why "$db")"
    log "$kind did not stream: ${FAIL[$kind]}"
    stop_pipeline "$db"
    return 1
  fi
}

declare -A FAIL=()
declare -A LIVE=() SNAPR=() KILLR=() CATCHUP=()
json() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# The process whose CPU counts: the JVM for the connectors (setsid may have forked it), else $1.
cpu_pid() {
  local kind="$1" pid="$2"
  case "$kind" in cdc*) echo "$pid" ;; *) pgrep -P "$pid" java || echo "$pid" ;; esac
}

# Where cdc's stream waited while events flowed: its progress lines with events (one a second),
# each share weighted by the line's events, and the events per transaction committed over those
# lines; "" for the connectors.
cdc_phases() {
  [ -f "$1" ] || return 0
  python3 - "$1" <<'PY'
import re, sys
tot = [0.0, 0.0, 0.0]; n = 0; txs = 0; prev = None
for line in open(sys.argv[1], errors='replace'):
    m = re.search(r'\(\+(\d+), .*?(\d+) transactions, .*the stream waited on the source (\d+)%, wrote records (\d+)%, waited on Kafka (\d+)%', line)
    if not m: continue
    tx = int(m.group(2)); dtx = tx - prev if prev is not None and tx >= prev else 0; prev = tx
    if int(m.group(1)) == 0: continue
    w = int(m.group(1)); n += w; txs += dtx
    for k in range(3): tot[k] += w * int(m.group(k + 3))
if n: print(f"source {tot[0] / n:.0f}%, records {tot[1] / n:.0f}%, Kafka {tot[2] / n:.0f}%" + (f"; {n / txs:.0f} events/transaction" if txs else ""))
PY
}

# live and wide: the pipeline warmed up, then N inserts (over colls) at RATE by WRITERS writers.
live() {
  local kind="$1" db="live_$1_$$" pid c0 c1 w r colls_csv
  colls_csv="$(colls | xargs | tr ' ' ',')"
  start_streaming "$kind" "$db" || return 0
  pid="$(cpu_pid "$kind" "$(cat "$RUN/$db.pid")")"
  if [ "${WARM_N:-0}" -gt 0 ]; then
    # a warm-up at the same rate (ids past the measured ones, not counted), then a pause to drain it
    helper write --uri "$URI" --db "$db" --colls "$colls_csv" --n "$WARM_N" --rate "$RATE" --writers "${WRITERS:-1}" --start $((N + 1000000)) >/dev/null
    sleep "${WARM_PAUSE:-10}"
  fi
  c0="$(cpu_of "$pid")"
  local wait_s=$((N / (RATE > 0 ? RATE : 1000) + 180))
  helper wait --brokers "$BROKER" --topics "$(topics_of "$kind" "$db")" --n "$N" --timeout "$wait_s" --settle 0 >"$RUN/$db.wait" &
  local waiter=$!
  w="$(helper write --uri "$URI" --db "$db" --colls "$colls_csv" --n "$N" --rate "$RATE" --writers "${WRITERS:-1}")"
  wait "$waiter"
  c1="$(cpu_of "$pid")"
  r="$(cat "$RUN/$db.wait")"
  stop_pipeline "$db"
  local t0 t1 tl missing phases
  t0="$(json "$w" t0)"
  t1="$(json "$w" t1)"
  tl="$(json "$r" tLast)"
  missing="$(json "$r" missing)"
  phases="$(cdc_phases "$RUN/$db.log")"
  LIVE[$kind]="$(python3 - "$N" "$t0" "$t1" "$tl" "$c0" "$c1" "$missing" "$phases" <<'PY'
import sys
n, t0, t1, tl, c0, c1, missing, phases = sys.argv[1:]
n = int(n); t0 = int(t0); t1 = int(t1); c0 = float(c0); c1 = float(c1); missing = int(missing)
got = n - missing
tl = int(tl) if tl != 'None' else t1
print(f"{got / max(0.001, (tl - t0) / 1000):.0f} | {(c1 - c0) / max(1, got) * 1e6:.0f} | {max(0, tl - t1) / 1000:.1f} | {got}/{n} (writer {n / ((t1 - t0) / 1000):.0f}/s) | {phases}")
PY
)"
  log "live $kind: ${LIVE[$kind]}"
}

# catchup: N documents written first (over colls, as fast as the source takes them), then the
# pipeline from a cluster time before them; from its first event read back to the last.
catchup() {
  local kind="$1" db="catchup_$1_$$" pid r colls_csv
  case "$kind" in debezium | cdc-debezium)
    FAIL[$kind]="Debezium cannot start at a cluster time"
    return 0
    ;;
  esac
  colls_csv="$(colls | xargs | tr ' ' ',')"
  STARTAT="$(helper clustertime --uri "$URI")"
  helper write --uri "$URI" --db "$db" --colls "$colls_csv" --n "$N" --rate 0 --writers "${WRITERS:-1}" >/dev/null
  launch "$kind" "$db" catchup
  pid="$(cat "$RUN/$db.pid")"
  sleep 1 # the JVM's pid (setsid forks when it must)
  pid="$(cpu_pid "$kind" "$pid")"
  r="$(helper wait --brokers "$BROKER" --topics "$(topics_of "$kind" "$db")" --n "$N" --timeout 600 --settle 0 --pid "$pid" --ticks "$TICKS")"
  stop_pipeline "$db"
  unset STARTAT
  if [ "$(json "$r" distinct)" = 0 ]; then
    FAIL[$kind]="$(why "$db" | head -n 1)"
    log "catchup $kind: nothing read back: ${FAIL[$kind]}"
    return 0
  fi
  CATCHUP[$kind]="$(python3 - "$N" "$r" "$(cdc_phases "$RUN/$db.log")" <<'PY'
import json, sys
n = int(sys.argv[1]); r = json.loads(sys.argv[2]); phases = sys.argv[3]
end = r['tAll'] or r['tLast']
span = max(0.001, (end - r['tFirst']) / 1000)
cpu = (r['cpuAll'] - r['cpuFirst']) / max(1, r['distinct'] - r['distinctFirst']) * 1e6 if r.get('cpuAll') is not None else float('nan')
print(f"{(r['distinct'] - r['distinctFirst']) / span:.0f} | {cpu:.0f} | {r['distinct']}/{n}, {r['duplicated']} duplicated | {phases}")
PY
)"
  log "catchup $kind: ${CATCHUP[$kind]}"
}

snapshot() {
  local kind="$1" db="snap_$1_$$" r ts
  helper prefill --uri "$URI" --db "$db" --coll c --n "$SNAP" >/dev/null
  ts="$(date +%s%3N)"
  launch "$kind" "$db" snapshot
  r="$(helper wait --brokers "$BROKER" --topic "$(topic_of "$kind" "$db")" --n "$SNAP" --timeout 300 --settle 0)"
  stop_pipeline "$db"
  if [ "$(json "$r" distinct)" = 0 ]; then
    SNAPR[$kind]="did not copy: $(why "$db" | head -n 1)"
  else
    SNAPR[$kind]="$(python3 - "$SNAP" "$ts" "$r" <<'PY'
import json, sys
n = int(sys.argv[1]); ts = int(sys.argv[2]); r = json.loads(sys.argv[3])
end = r['tAll'] or r['tLast']
print(f"{r['distinct'] / ((end - ts) / 1000):.0f} | {r['distinct'] / max(0.001, (end - r['tFirst']) / 1000):.0f} | {r['distinct']}/{n}, {r['duplicated']} duplicated")
PY
)"
  fi
  log "snapshot $kind: ${SNAPR[$kind]}"
}

kill_test() {
  local kind="$1" db="kill_$1_$$" writer k r
  start_streaming "$kind" "$db" || return 0
  helper write --uri "$URI" --db "$db" --coll c --n "$KILL_N" --rate "$KILL_RATE" >/dev/null &
  writer=$!
  for k in $(seq 1 "$KILLS"); do
    sleep "$KILL_EVERY"
    log "kill $kind: SIGKILL $k"
    stop_pipeline "$db" KILL
    launch "$kind" "$db" stream
  done
  wait "$writer"
  r="$(helper wait --brokers "$BROKER" --topic "$(topic_of "$kind" "$db")" --n "$KILL_N" --timeout 120 --settle 10)"
  stop_pipeline "$db"
  KILLR[$kind]="$(json "$r" missing) | $(json "$r" duplicated)"
  log "kill $kind: missing | duplicated = ${KILLR[$kind]}"
}

name_of() {
  case "$1" in
    cdc) echo "bson2json cdc${CDC_ARGS:+ $CDC_ARGS}" ;;
    cdc-mongo-kafka | cdc-debezium) echo "bson2json cdc --format ${1#cdc-}${CDC_ARGS:+ $CDC_ARGS}" ;;
    mongo) echo "MongoDB connector $MONGO_CONNECTOR${DBWIDE:+, database-wide}" ;;
    mongo-each) echo "MongoDB connector $MONGO_CONNECTOR, one per collection (${WIDE:-10} in one worker)" ;;
    debezium) echo "Debezium MongoDB $DEBEZIUM${DBWIDE:+, database-wide}" ;;
  esac
}

# The records of each connector beside cdc's in the same format, on the same source and broker, the
# same writes (kafka-connectors.mjs workload) on several collections of one database: per topic,
# key and value compared record by record (FORMAT_PIPELINES, FORMAT_COLLS, FORMAT_SCOPE).
formats() {
  local db="fmt_$$" kind ok=0 mode=stream snapcolls=""
  local kinds="${FORMAT_PIPELINES:-mongo cdc-mongo-kafka debezium cdc-debezium}"
  if [ -n "${FORMAT_SNAPSHOT:-}" ]; then
    # the initial snapshot too: collections s1 and s2 hold the fixture's documents before the
    # pipelines start (copy_existing, Debezium's initial, cdc --snapshot), then the same writes
    mode=snapshot
    snapcolls="s1 s2"
    helper prefill-fixture --uri "$URI" --db "$db" --colls s1,s2
  fi
  for kind in $kinds; do
    PIDKEY="$db-$kind" launch "$kind" "$db" "$mode"
  done
  for kind in $kinds; do
    if ! helper warm --uri "$URI" --db "$db" --coll c --brokers "$BROKER" --topic "$(topic_of "$kind" "$db")" --timeout 180 >&2; then
      log "$kind did not stream: $(why "$db-$kind")"
      ok=1
    fi
  done
  local colls="${FORMAT_COLLS:-c d e}" coll until
  helper workload --uri "$URI" --db "$db" --colls "${colls// /,}"
  colls="$snapcolls${snapcolls:+ }$colls"
  for kind in $kinds; do
    for coll in $colls; do
      # a snapshot's topic ends with its last document (the ObjectId _id sorts last)
      until=end
      [[ " $snapcolls " == *" $coll "* ]] && until=65a1b2c3d4e5f60718293a4c
      helper dump --brokers "$BROKER" --topic "$(topic_of "$kind" "$db" "$coll")" --until "$until" --timeout 120 >"$RUN/$db-$kind-$coll.jsonl" || ok=1
    done
  done
  for kind in $kinds; do stop_pipeline "$db-$kind"; done
  local lines=() line
  for kind in mongo debezium; do
    local f="${kind/mongo/mongo-kafka}"
    [[ " $kinds " == *" $kind "* && " $kinds " == *" cdc-$f "* ]] || continue
    for coll in $colls; do
      log "$f, topic of $db.$coll: the connector's records ($RUN/$db-$kind-$coll.jsonl) against cdc --format $f ($RUN/$db-cdc-$f-$coll.jsonl)"
      line="$(helper compare --format "$f" "$RUN/$db-$kind-$coll.jsonl" "$RUN/$db-cdc-$f-$coll.jsonl")" || ok=1
      lines+=("$f $db.$coll: $line")
    done
  done
  {
    echo
    echo "\`$CMDLINE\` ($(date -u '+%Y-%m-%d %H:%M UTC'); database-wide: the MongoDB connector $MONGO_CONNECTOR with \`database=$db\`, Debezium $DEBEZIUM with \`database.include.list=$db\`, each in Kafka Connect $KAFKA_VERSION standalone; \`cdc --db $db --topic-prefix P --format F\`; one SecantusDB, one Kafka $KAFKA_VERSION broker; the writes of __test__/support/fixtures/kafka-connectors.json on collections ${FORMAT_COLLS:-c d e}${snapcolls:+, after an initial snapshot of its first three documents in $snapcolls})"
    echo
    echo "One line per topic: records compared in order, key and value (Debezium: less \`ts_ms\`, \`source.name\`, \`source.version\`, and a snapshot record's \`source\` times and \`last\` mark; \`markedLast\`: the records marked \`\"snapshot\":\"last\"\` in the topic; \`lookupTiming\`: an update's \`after\` null on one side because it looked the document up after the following delete)."
    echo
    echo '```'
    printf '%s\n' "${lines[@]}"
    echo '```'
  } | if [ -n "${RESULTS:-}" ]; then tee "$RESULTS"; else cat; fi
  return $ok
}

main() {
  local what="${1:-all}" kind
  fetch
  [ "$what" = fetch ] && return 0
  if [ "$what" = formats ]; then
    BROKER="$(bash "$ROOT/scripts/kafka.sh" start)"
    URI="$(bash "$ROOT/scripts/secantus.sh" start)"
    SETNAME="$(helper setname --uri "$URI")"
    mkdir -p "$RUN"
    # database-wide unless FORMAT_SCOPE=collection: the connectors with database= / database.include.list
    # and no collection, cdc with --db alone and --topic-prefix
    [ "${FORMAT_SCOPE:-db}" = db ] && DBWIDE=1
    formats
    return $?
  fi
  case "$what" in
    wide | catchup)
      # database-wide over WIDE collections, flat out by default
      DBWIDE=1
      WIDE_RUN=1
      RATE="${RATE_SET:-0}"
      WRITERS="${WRITERS:-4}"
      if [ -z "${PIPELINES_SET:-}" ]; then
        PIPELINES="cdc cdc-mongo-kafka mongo mongo-each"
        [ "$what" = wide ] && PIPELINES="$PIPELINES debezium"
      fi
      ;;
  esac
  BROKER="$(bash "$ROOT/scripts/kafka.sh" start)"
  URI="$(bash "$ROOT/scripts/secantus.sh" start)"
  # Debezium refuses a connection string without replicaSet= for a replica set ("Replica set not
  # specified in connection string for REPLICA_SET cluster."), so it gets one.
  SETNAME="$(helper setname --uri "$URI")"
  rm -rf "$RUN"
  mkdir -p "$RUN"
  log "broker $BROKER, source $URI, work files in $RUN"
  local started load0
  started="$(date -u '+%Y-%m-%d %H:%M UTC')"
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  for kind in $PIPELINES; do
    # A fresh SecantusDB per pipeline: it keeps everything in memory, and with one server for all
    # the writer's rate beside cdc fell from 387/s (fresh) to 159/s (after two full runs): an
    # aging source would favour whichever pipeline goes first.
    bash "$ROOT/scripts/secantus.sh" stop
    URI="$(bash "$ROOT/scripts/secantus.sh" start)"
    log "$kind: fresh source $URI"
    case "$what" in live | wide | all) live "$kind" ;; catchup) catchup "$kind" ;; esac
    [ -n "${FAIL[$kind]:-}" ] && continue
    case "$what" in snapshot | all) snapshot "$kind" ;; esac
    case "$what" in kill | all) kill_test "$kind" ;; esac
  done
  report "$what" "$started" "$load0" | if [ -n "${RESULTS:-}" ]; then tee "$RESULTS"; else cat; fi
}

# The tables of the run ($1 what, $2 when it started, $3 the load average then).
report() {
  local what="$1" kind
  echo
  echo "\`$CMDLINE\` ($2; load average $3 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
  echo
  echo "$(nproc) CPUs shared with other work; Node $(node --version), $("$JAVA" -version 2>&1 | head -n 1); source SecantusDB (scripts/secantus.sh, a fresh one per pipeline), broker Kafka $KAFKA_VERSION (scripts/kafka.sh)"
  echo
  local writers=""
  [ "${WRITERS:-1}" -gt 1 ] && writers=" by $WRITERS writers"
  local rate="$RATE/s"
  [ "$RATE" = 0 ] && rate="as fast as the source takes them (insertMany of 500)"
  if [ "$what" = live ] || [ "$what" = wide ] || [ "$what" = all ]; then
    if [ "$what" = wide ]; then echo "Database-wide, ${WIDE:-10} collections: $N inserts of ~1 KB$writers, $rate, each insertMany into the next collection"
    else echo "Live: $N inserts of ~1 KB$writers, $rate"; fi
    echo
    echo "| pipeline | events/s delivered | CPU µs/event | lag at the end (s) | delivered | where cdc's stream waited |"
    echo "|---|--:|--:|--:|---|---|"
    for kind in $PIPELINES; do
      if [ -n "${FAIL[$kind]:-}" ]; then
        echo "| $(name_of "$kind") | did not run: ${FAIL[$kind]//$'\n'/; } | | | | |"
      else echo "| $(name_of "$kind") | ${LIVE[$kind]:-} |"; fi
    done
    echo
  fi
  if [ "$what" = catchup ]; then
    echo "Catching up: $N inserts of ~1 KB over ${WIDE:-10} collections written first$writers, then the pipeline from a cluster time before them; from its first event read back to the last"
    echo
    echo "| pipeline | events/s | CPU µs/event | delivered | where cdc's stream waited |"
    echo "|---|--:|--:|---|---|"
    for kind in $PIPELINES; do
      if [ -n "${FAIL[$kind]:-}" ]; then
        echo "| $(name_of "$kind") | did not run: ${FAIL[$kind]//$'\n'/; } | | | |"
      else echo "| $(name_of "$kind") | ${CATCHUP[$kind]:-} |"; fi
    done
    echo
  fi
  if [ "$what" = snapshot ] || [ "$what" = all ]; then
    echo "Initial snapshot of $SNAP pre-written documents"
    echo
    echo "| pipeline | documents/s from the start | documents/s from the first record | copied |"
    echo "|---|--:|--:|---|"
    for kind in $PIPELINES; do [ -n "${SNAPR[$kind]:-}" ] && echo "| $(name_of "$kind") | ${SNAPR[$kind]} |"; done
    echo
  fi
  if [ "$what" = kill ] || [ "$what" = all ]; then
    echo "SIGKILL $KILLS times (every $KILL_EVERY s) while $KILL_N documents are written at $KILL_RATE/s; read_committed"
    echo
    echo "| pipeline | missing | duplicated |"
    echo "|---|--:|--:|"
    for kind in $PIPELINES; do [ -n "${KILLR[$kind]:-}" ] && echo "| $(name_of "$kind") | ${KILLR[$kind]} |"; done
  fi
}

main "$@"
