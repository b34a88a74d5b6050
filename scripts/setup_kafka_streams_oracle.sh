#!/usr/bin/env bash
# Builds the Kafka Streams oracle (jvm/kafka-streams-oracle: Apache Kafka Streams 4.3.1 and its
# TopologyTestDriver behind a JSON-lines program, docs/oracle.md) once, into
# .jvm/kafka-streams-oracle-<version>/ (its jar and its classpath in one directory), through
# scripts/build_jvm_module.sh: idempotent, a re-run with an unchanged pom and unchanged sources
# takes milliseconds. Never runs at test time: `make test` runs it first; tests/oracle only start
# the program from the cache, and fail, naming `make setup-oracle`, when the cache is missing or
# older than the sources (kafka_streams_side.py computes the same stamp: the hash of the pom, then
# every source file in byte order of its path).
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/build_jvm_module.sh jvm/kafka-streams-oracle
