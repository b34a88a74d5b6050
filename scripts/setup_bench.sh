#!/usr/bin/env bash
# What bench/peers.py needs beyond `make setup`: Apache Kafka (scripts/setup_kafka.sh), Kafka Streams
# 4.3.1 with the benchmark's workloads (jvm/kafka-streams-bench, built into .jvm/), and Quix Streams
# in its own .venv-quix (it pins a confluent-kafka older than the project's), synced from
# bench/requirements-quix.lock with the project's uv. Idempotent; never run by the benchmark itself.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[setup-bench] %s\n' "$*"; }
bash scripts/setup_kafka.sh
bash scripts/build_jvm_module.sh jvm/kafka-streams-bench
PY=$(.venv/bin/python -c 'import sys; print(sys.executable)')
if [ ! -x .venv-quix/bin/python ]; then
  say "creating .venv-quix"
  .venv/bin/uv venv -q --python "$PY" .venv-quix
fi
.venv/bin/uv pip sync -q --python .venv-quix/bin/python bench/requirements-quix.lock
say "Quix Streams $(.venv-quix/bin/python -c 'import importlib.metadata as m; print(m.version("quixstreams"))') in .venv-quix"
