#!/usr/bin/env bash
# A Spark standalone cluster on this machine for the backfills: one master and two workers, run
# from pyspark's own bin/spark-class (no separate Spark download), bound to 127.0.0.1.
#
#   scripts/spark_cluster.sh start    start the master, then the workers; returns once the master
#                                     lists every worker ALIVE (fails with the logs' tails if not
#                                     within $START_TIMEOUT seconds, default 90)
#   scripts/spark_cluster.sh status   the master URL, its UI, and each daemon alive or dead
#   scripts/spark_cluster.sh stop     SIGTERM every daemon (workers first), wait for them to exit
#
# Point the backfills at it with the Airflow connection streams_spark, e.g.
#   AIRFLOW_CONN_STREAMS_SPARK='{"conn_type": "spark", "host": "spark://127.0.0.1", "port": 7077}'
#
# Settings (environment):
#   SPARK_CLUSTER_DIR        pid files, logs, work dirs (default .streams-runtime/spark-cluster)
#   SPARK_MASTER_PORT        the master's port (default 7077)
#   SPARK_MASTER_WEBUI_PORT  its UI, whose /json/ lists workers and applications (default 8080)
#   SPARK_WORKERS            how many workers (default 2)
#   SPARK_WORKER_CORES       cores each worker offers (default 1)
#   SPARK_WORKER_MEMORY      memory each worker offers its executors (default 1g)
#   SPARK_DAEMON_MEMORY      heap of the master and worker JVMs themselves (default 256m)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DIR=${SPARK_CLUSTER_DIR:-$ROOT/.streams-runtime/spark-cluster}
PORT=${SPARK_MASTER_PORT:-7077}
UI_PORT=${SPARK_MASTER_WEBUI_PORT:-8080}
WORKERS=${SPARK_WORKERS:-2}
CORES=${SPARK_WORKER_CORES:-1}
MEMORY=${SPARK_WORKER_MEMORY:-1g}
START_TIMEOUT=${START_TIMEOUT:-90}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
MASTER_URL="spark://127.0.0.1:$PORT"
UI="http://127.0.0.1:$UI_PORT"
say() { printf '[spark-cluster] %s\n' "$*"; }
fail() { printf '[spark-cluster] error: %s\n' "$*" >&2; exit 1; }

SPARK_HOME=$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') \
  || fail "no pyspark in $PYTHON (run make setup)"
export SPARK_HOME SPARK_LOCAL_IP=127.0.0.1 SPARK_DAEMON_MEMORY=${SPARK_DAEMON_MEMORY:-256m}
export SPARK_NO_DAEMONIZE=1 PYSPARK_PYTHON=${PYSPARK_PYTHON:-$PYTHON}
mkdir -p "$DIR"

alive() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }
daemons() { echo master; for i in $(seq 1 "$WORKERS"); do echo "worker-$i"; done; }

# alive_workers: how many workers the master's JSON lists ALIVE (0 when it does not answer)
alive_workers() {
  "$PYTHON" - "$UI/json/" <<'EOF' 2>/dev/null || echo 0
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    print(sum(w.get("state") == "ALIVE" for w in json.load(r).get("workers", [])))
EOF
}

launch() {  # launch NAME CLASS ARGS...: spark-class in the background, its pid recorded
  local name=$1
  shift
  nohup "$SPARK_HOME/bin/spark-class" "$@" >"$DIR/$name.log" 2>&1 &
  echo $! >"$DIR/$name.pid"
}

tails() { for d in $(daemons); do echo "--- $DIR/$d.log"; tail -n 15 "$DIR/$d.log" 2>/dev/null || true; done; }

start() {
  for d in $(daemons); do alive "$d" && fail "$d already runs (pid $(cat "$DIR/$d.pid")); stop it first"; done
  command -v java >/dev/null 2>&1 || fail "Spark needs Java 17+ (apt-get install openjdk-17-jdk-headless)"
  launch master org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$PORT" --webui-port "$UI_PORT"
  for i in $(seq 1 "$WORKERS"); do
    mkdir -p "$DIR/work-$i"
    launch "worker-$i" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --webui-port 0 \
      --cores "$CORES" --memory "$MEMORY" --work-dir "$DIR/work-$i" "$MASTER_URL"
  done
  local deadline=$(( $(date +%s) + START_TIMEOUT ))
  while [ "$(alive_workers)" -lt "$WORKERS" ]; do
    for d in $(daemons); do
      alive "$d" || { tails >&2; stop >/dev/null; fail "$d exited during start (log: $DIR/$d.log)"; }
    done
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tails >&2; stop >/dev/null; fail "the master did not list $WORKERS workers ALIVE within ${START_TIMEOUT}s"
    fi
    sleep 0.5
  done
  say "master $MASTER_URL (UI $UI), $WORKERS workers x $CORES core(s), $MEMORY; logs in $DIR"
}

stop() {  # SIGTERM to every daemon at once, then wait for each (SIGKILL after 15 s)
  local d pid
  for d in $(daemons); do alive "$d" && kill "$(cat "$DIR/$d.pid")" 2>/dev/null || true; done
  for d in $(daemons); do
    [ -f "$DIR/$d.pid" ] || continue
    pid=$(cat "$DIR/$d.pid")
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    rm -f "$DIR/$d.pid"
    say "stopped $d (pid $pid)"
  done
}

status() {
  local d code=0
  say "master $MASTER_URL (UI $UI): $(alive_workers) worker(s) ALIVE"
  for d in $(daemons); do
    if alive "$d"; then say "$d pid $(cat "$DIR/$d.pid") alive ($DIR/$d.log)"; else say "$d not running"; code=3; fi
  done
  return $code
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) fail "usage: $0 start|stop|status (got '${1:-}')" ;;
esac
