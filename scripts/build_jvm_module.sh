#!/usr/bin/env bash
# Builds a Maven module under jvm/ (its jar and its runtime classpath in one directory) once, into
# .jvm/<artifactId>-<version>/. Idempotent: a re-run with an unchanged pom and unchanged sources takes
# milliseconds. Usage: scripts/build_jvm_module.sh jvm/kafka-streams-bench
#
# Steps:
#   1. check Java 17+, a JDK and Maven
#   2. skip when the cache's stamp matches the hash of the pom and the sources
#   3. mvn package + dependency:copy-dependencies into a temp dir (Maven Central on the first run;
#      offline, -o, once the local repository holds everything), then move it into place (a
#      half-built cache is never seen), and record the stamp
set -euo pipefail
cd "$(dirname "$0")/.."
MODULE=${1:?usage: build_jvm_module.sh jvm/<module>}
POM=$MODULE/pom.xml
NAME=$(basename "$MODULE")
VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM")
DEST=".jvm/$NAME-$VERSION"
say() { printf '[build-%s] %s\n' "$NAME" "$*"; }
# shellcheck source=scripts/jvm_common.sh
. scripts/jvm_common.sh

# Step 1
require_jvm "build-$NAME" "$NAME" jdk

# Step 2
want=$( (cat "$POM"; find "$MODULE/src" -type f -name '*.java' | LC_ALL=C sort | xargs cat) | sha256sum | cut -d' ' -f1)
if [ -f "$DEST/.stamp" ] && [ "$(cat "$DEST/.stamp")" = "$want" ]; then
  say "up to date ($DEST)"
  exit 0
fi

# Step 3
start=$(date +%s)
say "building $NAME into $DEST"
mkdir -p .jvm
tmp=$(mktemp -d ".jvm/.$NAME.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
goals=(package dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$(pwd)/$tmp/lib"
       -Dmodule.build.dir="$(pwd)/$tmp/target")
if ! mvn -o -q -B -Dstyle.color=never -f "$POM" "${goals[@]}" >/dev/null 2>&1; then
  mvn -q -B -Dstyle.color=never -f "$POM" "${goals[@]}"
fi
mv "$tmp/target/$NAME.jar" "$tmp/lib/"
echo "$want" > "$tmp/lib/.stamp"
rm -rf "$DEST"
mv "$tmp/lib" "$DEST"
say "done in $(( $(date +%s) - start ))s ($(ls "$DEST"/*.jar | wc -l) jars)"
