#!/usr/bin/env bash
# Resolves Spark's own Kafka connector for the pinned pyspark (jvm/spark-kafka/pom.xml: the four
# jars pyspark's jars/ lacks) from Maven Central once, into .jvm/spark-kafka-<version>/, where
# spark_jobs/session.py finds them and hands them to every session with spark.jars. Idempotent: a
# re-run with an unchanged pom takes milliseconds. Never runs at test or job time (no Ivy, no
# spark.jars.packages): `make test` runs it first, the sessions only read the cache.
#
# Steps:
#   1. check Java 17+ and Maven, and that the pom's Spark version is the pinned pyspark's
#   2. skip when the cache's stamp matches the pom's hash
#   3. mvn dependency:copy-dependencies into a temp dir, then move it into place (a half-copied
#      cache is never seen), and record the stamp
set -euo pipefail
cd "$(dirname "$0")/.."
POM=jvm/spark-kafka/pom.xml
VERSION=$(sed -n 's:.*<spark.version>\(.*\)</spark.version>.*:\1:p' "$POM")
DEST=".jvm/spark-kafka-$VERSION"
say() { printf '[setup-spark-kafka] %s\n' "$*"; }

# Step 1
# shellcheck source=scripts/jvm_common.sh
. scripts/jvm_common.sh
require_jvm setup-spark-kafka "Spark's Kafka connector $VERSION"
pinned=$(sed -n 's/^pyspark==\(.*\)$/\1/p' requirements.lock)
if [ "$pinned" != "$VERSION" ]; then
  echo "[setup-spark-kafka] error: $POM has spark.version $VERSION but requirements.lock pins pyspark==$pinned; make them equal" >&2
  exit 1
fi

# Step 2
want=$(sha256sum "$POM" | cut -d' ' -f1)
if [ -f "$DEST/.stamp" ] && [ "$(cat "$DEST/.stamp")" = "$want" ]; then
  say "Spark's Kafka connector $VERSION is up to date ($DEST)"
  exit 0
fi

# Step 3
start=$(date +%s)
say "resolving Spark's Kafka connector $VERSION from Maven Central into $DEST"
mkdir -p .jvm
tmp=$(mktemp -d .jvm/.resolve.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mvn -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$(pwd)/$tmp/lib"
echo "$want" > "$tmp/lib/.stamp"
rm -rf "$DEST"
mv "$tmp/lib" "$DEST"
say "done in $(( $(date +%s) - start ))s ($(ls "$DEST"/*.jar | wc -l) jars)"
