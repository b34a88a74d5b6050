# Sourced by the scripts that need a JVM: one home for the Java 17+ / Maven / JDK checks.
# require_jvm TAG WHAT [jdk]: fail, naming the package to install, unless Java 17+ and Maven (and, with
# "jdk", javac) are on PATH. TAG prefixes the messages ("setup-kafka"), WHAT names what needs them.
require_jvm() {
  local tag=$1 what=$2 need_jdk=${3:-}
  if ! command -v java >/dev/null 2>&1; then
    echo "[$tag] error: $what needs Java 17+ (apt-get install openjdk-17-jdk-headless)" >&2
    exit 1
  fi
  local jver
  jver=$(java -version 2>&1 | head -n1 | sed -E 's/.*version "([0-9]+).*/\1/')
  if [ "${jver:-0}" -lt 17 ] 2>/dev/null; then
    echo "[$tag] error: Java $jver found; $what needs Java 17+" >&2
    exit 1
  fi
  if ! command -v mvn >/dev/null 2>&1; then
    echo "[$tag] error: Maven (mvn) is needed once to build $what (apt-get install maven)" >&2
    exit 1
  fi
  if [ "$need_jdk" = jdk ] && ! command -v javac >/dev/null 2>&1; then
    echo "[$tag] error: a JDK (javac) is needed once to build $what (apt-get install openjdk-17-jdk-headless)" >&2
    exit 1
  fi
}
