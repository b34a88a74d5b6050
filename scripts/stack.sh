#!/usr/bin/env bash
# docker-compose.yml's services as native processes on 127.0.0.1 (no Docker), with the values of
# deploy/stack.env (a variable of the same name in the environment wins):
#
#   scripts/stack.sh up       Kafka (3 nodes), PostgreSQL, Airflow (api-server, scheduler,
#                             dag-processor, triggerer), Spark (master + workers), the topics
#                             (provisioning DAG), the stream workers, Prometheus; fails with the
#                             log tail of a service that does not come up (after stopping the rest)
#   scripts/stack.sh status   each service: pid, address, health; exit 0 all healthy, 3 none runs
#   scripts/stack.sh down     stop everything in reverse order (idempotent)
#
# Everything lives under $STACK_HOME (default .streams-runtime/stack); see scripts/stack.py.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
case "${1:-}" in
  up | down | status) ;;
  *) echo "usage: $0 up|down|status (got '${*:-}')" >&2; exit 2 ;;
esac
[ $# -eq 1 ] || { echo "usage: $0 up|down|status (got '$*')" >&2; exit 2; }
exec "$PYTHON" scripts/stack.py "$1"
