#!/usr/bin/env bash
# Resolves Apache Kafka 4.3.1's classpath (jvm/apache-kafka/pom.xml) from Maven Central once, into
# .jvm/apache-kafka-<version>/ (a jar directory the launcher runs kafka.Kafka from). Idempotent: a
# re-run with an unchanged pom takes milliseconds. Never runs at test time: `make test` runs it
# first, the tests only read the cache.
#
# Steps:
#   1. check Java 17+ and Maven
#   2. skip when the cache's stamp matches the pom's hash
#   3. mvn dependency:copy-dependencies into a temp dir, then move it into place (a half-copied
#      cache is never seen), and record the stamp
#   4. (with .venv set up) start and stop a broker once to write a class-data-sharing archive
#      of its classes next to the jars; later JVM starts map it
set -euo pipefail
cd "$(dirname "$0")/.."
POM=jvm/apache-kafka/pom.xml
VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM")
DEST=".jvm/apache-kafka-$VERSION"
say() { printf '[setup-kafka] %s\n' "$*"; }

# Step 1
# shellcheck source=scripts/jvm_common.sh
. scripts/jvm_common.sh
require_jvm setup-kafka "Apache Kafka $VERSION"

# Step 2
want=$(sha256sum "$POM" | cut -d' ' -f1)
if [ -f "$DEST/.stamp" ] && [ "$(cat "$DEST/.stamp")" = "$want" ]; then
  say "Apache Kafka $VERSION classpath is up to date ($DEST)"
else
# Step 3
start=$(date +%s)
say "resolving Apache Kafka $VERSION from Maven Central into $DEST"
mkdir -p .jvm
tmp=$(mktemp -d .jvm/.resolve.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mvn -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$(pwd)/$tmp/lib"
echo "$want" > "$tmp/lib/.stamp"
rm -rf "$DEST"
mv "$tmp/lib" "$DEST"
say "done in $(( $(date +%s) - start ))s ($(ls "$DEST"/*.jar | wc -l) jars)"
fi

# Step 4: a class-data-sharing archive of the broker's classes (cuts each JVM start by seconds)
if [ ! -f "$DEST/kafka-cds.jsa" ] && [ -x .venv/bin/python ]; then
  .venv/bin/python -c 'import time; from streams_runtime.brokers.apache_kafka import build_cds_archive as b; t = time.monotonic(); p = b(); print(f"[setup-kafka] class-data-sharing archive {p} in {time.monotonic() - t:.0f}s")'
fi
