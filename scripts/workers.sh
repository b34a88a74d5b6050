#!/usr/bin/env bash
# Start, scale, stop and check stream worker instances on one machine.
#
#   scripts/workers.sh start N [M]   start N instances of $APP with M stream threads each (default 1)
#   scripts/workers.sh scale N       add or stop instances until N run (new ones use $THREADS)
#                                    start and scale return once each new instance reports RUNNING;
#                                    one that exits first, or is not RUNNING within $START_TIMEOUT
#                                    seconds (default 120), fails the command with its log's tail
#   scripts/workers.sh status        one line per instance: pid, alive or dead, log file
#   scripts/workers.sh stop          SIGTERM every instance (each closes its KafkaStreams), wait
#
# Every instance is one `streams-runtime worker --instances 1` process sharing the application id,
# so the group assigns tasks across them (scaling out is just starting another one). Each has
#   PID file  $STREAMS_RUNTIME_HOME/workers/<i>.pid
#   log       $STREAMS_RUNTIME_HOME/logs/worker-<i>.log
#   state     $STATE_DIR/worker-<i>   (kept across restarts, so a restart restores little)
#   HTTP API  port $HTTP_PORT+<i> when HTTP_PORT is set (interactive queries, /metrics, /health),
#             advertised as $HTTP_HOST (--http-host) and bound to $HTTP_BIND (--http-bind) when
#             set (default: the app's, else 127.0.0.1); the bearer token is read by the worker
#             from $STREAMS_RUNTIME_HTTP_TOKEN when set
# Kafka: $BOOTSTRAP_SERVERS, else the broker recorded by `streams-runtime broker start` (started
# here when none runs, so all instances share one).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export STREAMS_RUNTIME_HOME=${STREAMS_RUNTIME_HOME:-$ROOT/.streams-runtime}
APP=${APP:-streams_runtime.demo.app:app}
THREADS=${THREADS:-1}
STATE_DIR=${STATE_DIR:-$STREAMS_RUNTIME_HOME/state}
CLI=${CLI:-$ROOT/.venv/bin/streams-runtime}
PIDS=$STREAMS_RUNTIME_HOME/workers
LOGS=$STREAMS_RUNTIME_HOME/logs
STOP_TIMEOUT=${STOP_TIMEOUT:-60}
START_TIMEOUT=${START_TIMEOUT:-120}
mkdir -p "$PIDS" "$LOGS"

alive() { [ -f "$PIDS/$1.pid" ] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }
running() { for f in "$PIDS"/*.pid; do [ -e "$f" ] || continue; i=$(basename "$f" .pid); alive "$i" && echo "$i"; done | sort -n; }
count() { running | wc -l | tr -d ' '; }

ensure_broker() {
  if [ -z "${BOOTSTRAP_SERVERS:-}" ] && ! "$CLI" broker status >/dev/null 2>&1; then
    "$CLI" broker start
  fi
}

# The state each instance publishes (streams_runtime.worker's STATUS_FILE; one instance per worker).
status_file() { echo "$STATE_DIR/worker-$1/instance-0/status.json"; }

start_one() {
  local i=$1 http=()
  rm -f "$(status_file "$i")"  # a RUNNING left by the previous run is no answer
  if [ -n "${HTTP_PORT:-}" ]; then http=(--http-port "$((HTTP_PORT + i))"); fi
  if [ -n "${HTTP_HOST:-}" ]; then http+=(--http-host "$HTTP_HOST"); fi
  if [ -n "${HTTP_BIND:-}" ]; then http+=(--http-bind "$HTTP_BIND"); fi
  nohup "$CLI" worker --app "$APP" --instances 1 --threads "$THREADS" \
    --state-dir "$STATE_DIR/worker-$i" "${http[@]}" >>"$LOGS/worker-$i.log" 2>&1 &
  echo $! >"$PIDS/$i.pid"
  echo "worker $i started (pid $!, $THREADS threads, log $LOGS/worker-$i.log)"
}

stop_one() {
  local i=$1 pid
  pid=$(cat "$PIDS/$i.pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq $((STOP_TIMEOUT * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "worker $i (pid $pid) did not stop in ${STOP_TIMEOUT}s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDS/$i.pid"
  echo "worker $i stopped"
}

fail_start() {
  echo "worker $1 $2; the end of $LOGS/worker-$1.log:" >&2
  tail -n 20 "$LOGS/worker-$1.log" >&2 || true
  exit 1
}

reported_running() { grep -q '"state": *"RUNNING"' "$(status_file "$1")" 2>/dev/null; }

wait_running() {
  local i deadline
  for i in "$@"; do
    deadline=$((SECONDS + START_TIMEOUT))
    until reported_running "$i"; do
      if ! alive "$i"; then
        # it may have reported RUNNING between the check above and its exit: look once more
        reported_running "$i" && break
        fail_start "$i" "exited before it was running"
      fi
      [ "$SECONDS" -lt "$deadline" ] || fail_start "$i" "is not running after ${START_TIMEOUT}s"
      sleep 0.2
    done
    echo "worker $i running"
  done
}

scale_to() {
  local want=$1 have next started=()
  have=$(count)
  while [ "$have" -lt "$want" ]; do
    next=1; while [ -f "$PIDS/$next.pid" ] && alive "$next"; do next=$((next + 1)); done
    start_one "$next"; have=$((have + 1)); started+=("$next")
  done
  [ "${#started[@]}" -eq 0 ] || wait_running "${started[@]}"
  while [ "$have" -gt "$want" ]; do
    stop_one "$(running | tail -n 1)"; have=$((have - 1))
  done
}

case "${1:-}" in
  start)
    [ -n "${2:-}" ] || { echo "usage: $0 start N [M]" >&2; exit 2; }
    THREADS=${3:-$THREADS}; ensure_broker; scale_to "$2" ;;
  scale)
    [ -n "${2:-}" ] || { echo "usage: $0 scale N" >&2; exit 2; }
    ensure_broker; scale_to "$2" ;;
  status)
    n=0
    for f in "$PIDS"/*.pid; do
      [ -e "$f" ] || continue; i=$(basename "$f" .pid); n=$((n + 1))
      if alive "$i"; then state=running; else state=dead; fi
      echo "worker $i: pid $(cat "$f") $state, log $LOGS/worker-$i.log"
    done
    echo "$(count) of $n recorded workers running"
    [ "$(count)" -eq "$n" ] ;;
  stop)
    for i in $(running); do stop_one "$i"; done
    rm -f "$PIDS"/*.pid ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
