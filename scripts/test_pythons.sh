#!/usr/bin/env bash
# The broker-free tests on the other supported Pythons: `make test-pythons` (and CI, .ci/run).
#
#   PYTHONS="3.12 3.13"                       the versions (default); 3.11 is .venv's, run by `make test`
#   PYTHON_TESTS="tests/unit tests/topology tests/tools tests/docs/test_tutorial_blocks.py"
#                                             what runs (default: every test needing no broker,
#                                             no Java and no Airflow)
#   PYTEST_WORKERS=2                          pytest-xdist processes per run (0: one process)
#
# Steps:
#   1. find an interpreter for every version (scripts/find_python.sh: on PATH, else under pyenv);
#      any missing one fails the run before anything is built, naming each missing version
#   2. per version, set up .venv-X.Y with scripts/setup.sh (SETUP_VENV): the same requirements.lock
#      and the same steps as .venv, so the same pins, but no up-front byte-compilation (SETUP_COMPILE=0:
#      compiling all 10,500 files takes 13-40 s here, the test run's own imports about 5 s of CPU); a
#      re-run with nothing changed takes a second
#   3. per version, run the tests in it, writing the bytecode of what they import (PYTHONDONTWRITEBYTECODE
#      unset for that run: the next run finds it); a failure fails the run after every version has run
# Each venv build and test run is timed; the last lines sum them up.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PYTHONS=${PYTHONS:-3.12 3.13}
PYTHON_TESTS=${PYTHON_TESTS:-tests/unit tests/topology tests/tools tests/docs/test_tutorial_blocks.py}
PYTEST_WORKERS=${PYTEST_WORKERS:-2}

say() { printf '[test-pythons] %s\n' "$*"; }

# Step 1
declare -A interpreter
missing=()
for version in $PYTHONS; do
  if found=$(bash scripts/find_python.sh "$version" 2>&1); then
    interpreter[$version]=$found
  else
    missing+=("$version")
    echo "[test-pythons] ${found}" >&2
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[test-pythons] error: missing Python ${missing[*]}: the tests run on every version of" \
    "PYTHONS=\"$PYTHONS\" and a missing one fails the run. Install it, or name the versions to run:" \
    "make test-pythons PYTHONS=\"...\"" >&2
  exit 1
fi

workers=()
[ "$PYTEST_WORKERS" != 0 ] && workers=(-n "$PYTEST_WORKERS")
summary=()
failed=()
began=$(date +%s)
for version in $PYTHONS; do
  venv="$ROOT/.venv-$version"
  # Step 2
  start=$(date +%s)
  SETUP_VENV="$venv" SETUP_COMPILE=0 PYTHON="${interpreter[$version]}" bash scripts/setup.sh
  built=$(($(date +%s) - start))
  # Step 3
  say "Python $version: $PYTHON_TESTS"
  start=$(date +%s)
  log=$(mktemp)
  # shellcheck disable=SC2086 # PYTHON_TESTS is a list of paths
  if env -u PYTHONDONTWRITEBYTECODE "$venv/bin/python" -m pytest -q "${workers[@]}" -p no:cacheprovider \
    --durations=5 $PYTHON_TESTS "$@" \
    2>&1 | tee "$log"; then
    outcome=ok
  else
    outcome=FAILED
    failed+=("$version")
  fi
  ran=$(($(date +%s) - start))
  result=$(grep -E '^(=+ )?[0-9]+ (passed|failed)' "$log" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//' || true)
  rm -f "$log"
  summary+=("Python $version ($("$venv/bin/python" -c 'import platform; print(platform.python_version())')): venv ${built}s, tests ${ran}s: ${result:-no summary} [$outcome]")
done
for line in "${summary[@]}"; do
  say "$line"
done
say "total $(($(date +%s) - began))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "[test-pythons] error: the tests failed on Python ${failed[*]}" >&2
  exit 1
fi
