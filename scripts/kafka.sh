#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft, no ZooKeeper) for tests and benchmarks, from the
# Maven Central jars: org.apache.kafka:kafka_2.13 plus log4j-slf4j-impl, fetched with
# `mvn dependency:copy-dependencies` into a git-ignored cache directory. Used only as a test peer.
#
#   bash scripts/kafka.sh fetch     # the jars into $KAFKA_JARS (default <repo>/tmp/kafka/jars), once
#   bash scripts/kafka.sh start     # fetch if needed, format storage, start on 127.0.0.1, wait, print HOST:PORT
#   bash scripts/kafka.sh addr      # print HOST:PORT of the running broker
#   bash scripts/kafka.sh addr-sasl-ssl  # print HOST:PORT of its SASL_SSL listener
#   bash scripts/kafka.sh stop      # stop it (SIGTERM, then SIGKILL after 20 s)
#   bash scripts/kafka.sh restart   # stop and start again on the same port with the same data
#   bash scripts/kafka.sh kill      # SIGKILL the broker (chaos tests), keeping its data
#
# The broker listens on 127.0.0.1 only (client port KAFKA_PORT, default a free port; controller port
# a second free port), keeps its data in $KAFKA_DIR/data (wiped by `start` when no broker ran there
# before with the same port, kept by `restart`), runs with -Xmx512m, and sets the replication factor
# and min ISR of its internal topics (__consumer_offsets, __transaction_state) to 1.
# A second client listener speaks SASL_SSL (a free port): TLS with a certificate for 127.0.0.1
# and localhost signed by a CA made here with keytool ($KAFKA_DIR/tls/ca.pem, the file clients
# trust), SASL PLAIN and SCRAM-SHA-256/512 for user `alice`, password `alice-secret`.
# Environment: KAFKA_DIR (default <repo>/tmp/kafka), KAFKA_JARS (default $KAFKA_DIR/jars),
# KAFKA_PORT, JAVA (default java), MVN (default mvn).
set -euo pipefail
KAFKA_VERSION=4.1.1
LOG4J_VERSION=2.24.3
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${KAFKA_DIR:-$ROOT/tmp/kafka}"
JARS="${KAFKA_JARS:-$DIR/jars}"
DATA="$DIR/data"
PIDFILE="$DIR/kafka.pid"
ADDRFILE="$DIR/addr"
LOG="$DIR/kafka.log"
JAVA="${JAVA:-java}"
MVN="${MVN:-mvn}"

log() { echo "kafka.sh: $*" >&2; }

fetch() {
  if [ -f "$JARS/.complete-$KAFKA_VERSION" ]; then return 0; fi
  mkdir -p "$JARS" "$DIR/pom"
  log "fetching kafka_2.13 $KAFKA_VERSION and its dependencies into $JARS"
  cat >"$DIR/pom/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.bson2json</groupId>
  <artifactId>kafka-broker-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>$LOG4J_VERSION</version></dependency>
  </dependencies>
</project>
POM
  "$MVN" -B -q -f "$DIR/pom/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$JARS" -DincludeScope=runtime >&2
  touch "$JARS/.complete-$KAFKA_VERSION"
  log "$(find "$JARS" -name '*.jar' | wc -l) jars"
}

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# The broker answers when its client port accepts a connection and the log says it started.
wait_ready() {
  local port="$1" i
  for i in $(seq 1 240); do
    if ! running; then
      log "broker exited during start-up; last lines of $LOG:"
      tail -n 30 "$LOG" >&2
      return 1
    fi
    if grep -q 'Kafka Server started' "$LOG" 2>/dev/null &&
      python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()' "$port" 2>/dev/null; then
      return 0
    fi
    sleep 0.25
  done
  log "broker not ready after 60 s; last lines of $LOG:"
  tail -n 30 "$LOG" >&2
  return 1
}

# The CA and the broker's key store for the SASL_SSL listener (keytool: a CA key pair, the
# broker's key pair, its certificate signed by the CA for 127.0.0.1 and localhost).
tls_material() {
  local tls="$DIR/tls" pw=changeit
  rm -rf "$tls"
  mkdir -p "$tls"
  keytool -genkeypair -alias ca -dname "CN=bson2json test CA" -ext bc:c -keyalg RSA -keysize 2048 -validity 30 \
    -keystore "$tls/ca.p12" -storetype PKCS12 -storepass "$pw" >/dev/null 2>&1
  keytool -exportcert -rfc -alias ca -keystore "$tls/ca.p12" -storepass "$pw" -file "$tls/ca.pem" >/dev/null 2>&1
  keytool -genkeypair -alias broker -dname "CN=127.0.0.1" -keyalg RSA -keysize 2048 -validity 30 \
    -keystore "$tls/broker.p12" -storetype PKCS12 -storepass "$pw" >/dev/null 2>&1
  keytool -certreq -alias broker -keystore "$tls/broker.p12" -storepass "$pw" -file "$tls/broker.csr" >/dev/null 2>&1
  keytool -gencert -alias ca -keystore "$tls/ca.p12" -storepass "$pw" -infile "$tls/broker.csr" -outfile "$tls/broker.pem" \
    -rfc -validity 30 -ext san=ip:127.0.0.1,dns:localhost >/dev/null 2>&1
  keytool -importcert -noprompt -alias ca -file "$tls/ca.pem" -keystore "$tls/broker.p12" -storepass "$pw" >/dev/null 2>&1
  keytool -importcert -noprompt -alias broker -file "$tls/broker.pem" -keystore "$tls/broker.p12" -storepass "$pw" >/dev/null 2>&1
}

write_config() {
  local port="$1" cport="$2" sport="$3"
  cat >"$DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_SSL://127.0.0.1:$sport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sport
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
ssl.keystore.location=$DIR/tls/broker.p12
ssl.keystore.type=PKCS12
ssl.keystore.password=changeit
ssl.key.password=changeit
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
log.dirs=$DATA
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
log.cleaner.backoff.ms=1000
PROPS
  cat >"$DIR/log4j2.properties" <<L4J
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = $LOG
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
L4J
}

launch() {
  local port="$1"
  : >"$LOG"
  # setsid: its own process group, so `stop` ends the broker and nothing else.
  setsid "$JAVA" -Xmx512m -Xms128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$DIR/log4j2.properties" \
    -cp "$JARS/*" kafka.Kafka "$DIR/server.properties" >>"$LOG.out" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  wait_ready "$port"
  echo "127.0.0.1:$port" >"$ADDRFILE"
  cat "$ADDRFILE"
}

start() {
  if running; then
    cat "$ADDRFILE"
    return 0
  fi
  fetch
  mkdir -p "$DIR"
  local port="${KAFKA_PORT:-$(free_port)}" cport sport
  cport="$(free_port)"
  sport="$(free_port)"
  rm -rf "$DATA"
  tls_material
  write_config "$port" "$cport" "$sport"
  echo "127.0.0.1:$sport" >"$DIR/addr-sasl-ssl"
  "$JAVA" -Xmx256m -Dlog4j2.configurationFile="$DIR/log4j2.properties" -cp "$JARS/*" kafka.tools.StorageTool format \
    -t "$(python3 -c 'import uuid,base64
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not s.startswith("-"): break
print(s)')" \
    -S 'SCRAM-SHA-256=[name=alice,password=alice-secret]' -S 'SCRAM-SHA-512=[name=alice,password=alice-secret]' \
    -c "$DIR/server.properties" >"$DIR/format.log" 2>&1 || {
    log "storage format failed:"
    cat "$DIR/format.log" >&2
    return 1
  }
  log "starting broker on 127.0.0.1:$port (log $LOG)"
  launch "$port"
}

stop() {
  if ! running; then
    rm -f "$PIDFILE"
    return 0
  fi
  local pid i
  pid="$(cat "$PIDFILE")"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 80); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "broker did not stop in 20 s: SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
}

restart() {
  [ -f "$ADDRFILE" ] || { log "no broker was started here"; return 1; }
  local port
  port="$(cut -d: -f2 "$ADDRFILE")"
  stop
  launch "$port"
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  addr) running && cat "$ADDRFILE" ;;
  addr-sasl-ssl) running && cat "$DIR/addr-sasl-ssl" ;;
  stop) stop ;;
  restart) restart ;;
  kill)
    if running; then
      pid="$(cat "$PIDFILE")"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
      rm -f "$PIDFILE"
    fi
    ;;
  *)
    echo "usage: $0 fetch|start|addr|addr-sasl-ssl|stop|restart|kill" >&2
    exit 2
    ;;
esac
