#!/usr/bin/env bash
# Builds the Kafka Streams oracle (jvm/kafka-streams-oracle: Apache Kafka Streams 4.3.1 and its
# TopologyTestDriver behind a JSON-lines program, docs/oracle.md) once, into
# .jvm/kafka-streams-oracle-<version>/ (its jar and its classpath in one directory). Idempotent: a
# re-run with an unchanged pom and unchanged sources takes milliseconds. Never runs at test time:
# `make test` runs it first; tests/oracle only start the program from the cache, and fail, naming
# `make setup-oracle`, when the cache is missing or older than the sources.
#
# Steps:
#   1. check Java 17+ and Maven
#   2. skip when the cache's stamp matches the hash of the pom and the sources
#   3. mvn package + dependency:copy-dependencies into a temp dir (Maven Central on the first run;
#      offline, -o, once the local repository holds everything), then move it into place (a
#      half-built cache is never seen), and record the stamp
set -euo pipefail
cd "$(dirname "$0")/.."
MODULE=jvm/kafka-streams-oracle
POM=$MODULE/pom.xml
VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM")
DEST=".jvm/kafka-streams-oracle-$VERSION"
say() { printf '[setup-oracle] %s\n' "$*"; }

# Step 1
if ! command -v java >/dev/null 2>&1; then
  echo "[setup-oracle] error: the Kafka Streams oracle needs Java 17+ (apt-get install openjdk-17-jdk-headless)" >&2
  exit 1
fi
jver=$(java -version 2>&1 | head -n1 | sed -E 's/.*version "([0-9]+).*/\1/')
if [ "${jver:-0}" -lt 17 ] 2>/dev/null; then
  echo "[setup-oracle] error: Java $jver found; Kafka Streams $VERSION needs Java 17+" >&2
  exit 1
fi
if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
  echo "[setup-oracle] error: Maven and a JDK (javac) build the oracle once (apt-get install maven openjdk-17-jdk-headless)" >&2
  exit 1
fi

# Step 2: the stamp hashes the pom, then every source file in byte order of its path (tests/oracle's
# kafka_streams_side.py computes the same hash to tell a stale cache)
want=$( (cat "$POM"; find "$MODULE/src" -type f -name '*.java' | LC_ALL=C sort | xargs cat) | sha256sum | cut -d' ' -f1)
if [ -f "$DEST/.stamp" ] && [ "$(cat "$DEST/.stamp")" = "$want" ]; then
  say "Kafka Streams $VERSION oracle is up to date ($DEST)"
  exit 0
fi

# Step 3
start=$(date +%s)
say "building the Kafka Streams $VERSION oracle into $DEST"
mkdir -p .jvm
tmp=$(mktemp -d .jvm/.oracle.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
goals=(package dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$(pwd)/$tmp/lib"
       -Doracle.build.dir="$(pwd)/$tmp/target")
if ! mvn -o -q -B -Dstyle.color=never -f "$POM" "${goals[@]}" >/dev/null 2>&1; then
  mvn -q -B -Dstyle.color=never -f "$POM" "${goals[@]}"
fi
mv "$tmp/target/kafka-streams-oracle.jar" "$tmp/lib/"
echo "$want" > "$tmp/lib/.stamp"
rm -rf "$DEST"
mv "$tmp/lib" "$DEST"
say "done in $(( $(date +%s) - start ))s ($(ls "$DEST"/*.jar | wc -l) jars)"
