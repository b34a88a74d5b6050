#!/usr/bin/env bash
# Sets up .venv from requirements.lock. Idempotent: a re-run with an unchanged lock takes seconds.
#
# Steps:
#   1. pick the interpreter (3.11, 3.12 or 3.13) and check Java 17 (Spark needs Java; we say how to
#      get it when missing). PYTHON= names the interpreter: a version (3.12), a command (python3.12)
#      or a path; scripts/find_python.sh finds it, on PATH or under pyenv. Without PYTHON= an
#      existing .venv keeps its interpreter, and a new one takes the first of 3.11, 3.12, 3.13 found
#   2. create .venv and put the pinned uv into it; a .venv made by another Python version (X.Y) than
#      the one asked for, or whose interpreter no longer runs, is deleted and made again
#   3. sync .venv to requirements.lock, byte-compiling (PYTHONDONTWRITEBYTECODE=1 on these machines);
#      the lock is compiled for 3.11: on 3.12/3.13 it is resolved again for that interpreter with every
#      locked version as a constraint (same pins; only packages behind version markers may be added)
#   4. install this project in editable mode and record the lock hash and the Python version as a stamp
# Steps 2-4 run under an exclusive flock on .venv.lock (next to .venv): a second setup started
# meanwhile (two `make` targets at once) waits, then finds the stamp up to date and reuses .venv.
# SETUP_VENV (default: .venv) puts the virtualenv, its lock and stamp elsewhere (scripts/test_pythons.sh
# and the tests use it); SETUP_COMPILE=0 leaves out step 3's byte-compilation (scripts/test_pythons.sh:
# its test run compiles what it imports, a fraction of the 10,500 files).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="${SETUP_VENV:-$ROOT/.venv}"
LOCK="$ROOT/requirements.lock"
STAMP="$VENV/.lock-stamp"
NAME=${VENV#"$ROOT"/} # how the messages name it
UV_VERSION=0.13.9

say() { printf '[setup] %s\n' "$*"; }

# Step 1: interpreters
py_version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
supported() { case "$1" in 3.11 | 3.12 | 3.13) return 0 ;; *) return 1 ;; esac; }
VENV_PY=$(py_version "$VENV/bin/python" || true) # empty: no venv yet, or its interpreter is gone
if [ -n "${PYTHON:-}" ]; then
  PY=$(bash "$ROOT/scripts/find_python.sh" "$PYTHON" 2>&1) || {
    echo "[setup] error: PYTHON=$PYTHON: ${PY#error: } (or give its path: PYTHON=/path/to/python3.1x)" >&2
    exit 1
  }
elif supported "$VENV_PY"; then
  PY="$VENV/bin/python"
else
  PY=
  for cand in 3.11 3.12 3.13 python3; do
    if found=$(bash "$ROOT/scripts/find_python.sh" "$cand" 2>/dev/null) && supported "$(py_version "$found")"; then
      PY=$found
      break
    fi
  done
  if [ -z "$PY" ]; then
    echo "[setup] error: Python 3.11, 3.12 or 3.13 is required (none found). Install one, or set PYTHON=/path/to/python3.1x." >&2
    exit 1
  fi
fi
PY_VERSION=$(py_version "$PY" || true)
if ! supported "$PY_VERSION"; then
  echo "[setup] error: $PY is Python ${PY_VERSION:-?}; 3.11, 3.12 or 3.13 is required." >&2
  exit 1
fi
if command -v java >/dev/null 2>&1; then
  jver=$(java -version 2>&1 | head -n1 | sed -E 's/.*version "([0-9]+).*/\1/')
  if [ "${jver:-0}" -lt 17 ] 2>/dev/null; then
    say "warning: Java $jver found; Spark backfills need Java 17+ (apt-get install openjdk-17-jre-headless)."
  fi
else
  say "warning: Java not found; Spark backfills need Java 17: apt-get install openjdk-17-jre-headless"
  say "         (the streams runtime, the broker and the demo work without it)."
fi

want=$( (cat "$LOCK" pyproject.toml; echo "python $PY_VERSION") | sha256sum | cut -d' ' -f1)
up_to_date() {
  [ "$(py_version "$VENV/bin/python" || true)" = "$PY_VERSION" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]
}
if up_to_date; then
  say "$NAME is up to date with requirements.lock (Python $PY_VERSION)"
  exit 0
fi

# One setup at a time from here on (the lock is released when this script exits)
if command -v flock >/dev/null 2>&1; then
  exec 9>"$VENV.lock"
  if ! flock -n 9; then
    say "another setup is updating $VENV: waiting for it"
    flock 9
  fi
  if up_to_date; then
    say "$NAME is up to date with requirements.lock (Python $PY_VERSION, set up by the other run)"
    exit 0
  fi
else
  say "warning: flock (util-linux) not found: do not run two setups of this checkout at once"
fi

start=$(date +%s)
# Step 2: venv and uv
VENV_PY=$(py_version "$VENV/bin/python" || true) # again: another setup may have changed it meanwhile
if [ -e "$VENV" ] && [ "$VENV_PY" != "$PY_VERSION" ]; then
  if [ ! -f "$VENV/pyvenv.cfg" ]; then
    echo "[setup] error: $VENV is not a virtualenv (no pyvenv.cfg); move it away and rerun" >&2
    exit 1
  fi
  say "rebuilding $NAME: it was made with Python ${VENV_PY:-(an interpreter that no longer runs)}, and Python $PY_VERSION is asked for"
  rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $NAME with $PY (Python $PY_VERSION)"
  "$PY" -m venv "$VENV"
fi
if ! "$VENV/bin/uv" --version 2>/dev/null | grep -q "$UV_VERSION"; then
  say "installing uv $UV_VERSION into $NAME"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
fi

# Step 3: dependencies, exactly as locked
say "syncing $NAME to requirements.lock (a cold install takes one to three minutes)"
SYNC="$LOCK"
if [ "$PY_VERSION" != "3.11" ]; then
  SYNC="$VENV/requirements-$PY_VERSION.lock"
  compile=("$VENV/bin/uv" pip compile -q pyproject.toml --extra ops --extra dev --extra deploy
    --python "$VENV/bin/python" -c "$LOCK" -o "$SYNC")
  # From uv's cache first, online only when it lacks something: every pin comes from the lock, and
  # an online resolve revalidates pyspark's sdist, which the index can answer as modified: uv then
  # downloads its 430 MB again and rebuilds it (20 s and more) although the build is in the cache.
  "${compile[@]}" --offline 2>/dev/null || "${compile[@]}"
fi
compile_bytecode=(--compile-bytecode)
[ "${SETUP_COMPILE:-1}" = 0 ] && compile_bytecode=()
"$VENV/bin/uv" pip sync --python "$VENV/bin/python" "${compile_bytecode[@]}" "$SYNC"

# Step 4: this project
"$VENV/bin/uv" pip install --python "$VENV/bin/python" --no-deps --compile-bytecode -e "$ROOT" -q
echo "$want" > "$STAMP"
say "done in $(( $(date +%s) - start ))s"
