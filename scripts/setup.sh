#!/usr/bin/env bash
# Sets up .venv from requirements.lock. Idempotent: a re-run with an unchanged lock takes seconds.
#
# Steps:
#   1. check Python (3.11, 3.12 or 3.13) and Java 17 (Spark needs Java; we say how to get it when missing)
#   2. create .venv and put the pinned uv into it
#   3. sync .venv to requirements.lock, byte-compiling (PYTHONDONTWRITEBYTECODE=1 on these machines);
#      the lock is compiled for 3.11: on 3.12/3.13 it is resolved again for that interpreter with every
#      locked version as a constraint (same pins; only packages behind version markers may be added)
#   4. install this project in editable mode and record the lock hash as a stamp
# Steps 2-4 run under an exclusive flock on .venv.lock (next to .venv): a second setup started
# meanwhile (two `make` targets at once) waits, then finds the stamp up to date and reuses .venv.
# SETUP_VENV (default: .venv) puts the virtualenv, its lock and stamp elsewhere (the tests use it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="${SETUP_VENV:-$ROOT/.venv}"
LOCK="$ROOT/requirements.lock"
STAMP="$VENV/.lock-stamp"
UV_VERSION=0.13.9

say() { printf '[setup] %s\n' "$*"; }

# Step 1: interpreters
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for cand in python3.11 python3.12 python3.13 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))'; then
      PY=$cand; break
    fi
  done
fi
if [ -z "$PY" ]; then
  echo "[setup] error: Python 3.11, 3.12 or 3.13 is required (none found). Install one, or set PYTHON=/path/to/python3.1x." >&2
  exit 1
fi
if ! "$PY" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))'; then
  echo "[setup] error: $PY is Python $("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])'); 3.11, 3.12 or 3.13 is required." >&2
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

want=$( (cat "$LOCK" pyproject.toml; echo "$PY") | sha256sum | cut -d' ' -f1)
up_to_date() { [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; }
if up_to_date; then
  say ".venv is up to date with requirements.lock"
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
    say ".venv is up to date with requirements.lock (set up by the other run)"
    exit 0
  fi
else
  say "warning: flock (util-linux) not found: do not run two setups of this checkout at once"
fi

start=$(date +%s)
# Step 2: venv and uv
if [ ! -x "$VENV/bin/python" ]; then
  say "creating .venv with $PY"
  "$PY" -m venv "$VENV"
fi
if ! "$VENV/bin/uv" --version 2>/dev/null | grep -q "$UV_VERSION"; then
  say "installing uv $UV_VERSION into .venv"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
fi

# Step 3: dependencies, exactly as locked
say "syncing .venv to requirements.lock (a cold install takes about a minute)"
PYVER=$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
SYNC="$LOCK"
if [ "$PYVER" != "3.11" ]; then
  SYNC="$VENV/requirements-$PYVER.lock"
  "$VENV/bin/uv" pip compile -q pyproject.toml --extra ops --extra dev --extra deploy \
    --python "$VENV/bin/python" -c "$LOCK" -o "$SYNC"
fi
"$VENV/bin/uv" pip sync --python "$VENV/bin/python" --compile-bytecode "$SYNC"

# Step 4: this project
"$VENV/bin/uv" pip install --python "$VENV/bin/python" --no-deps --compile-bytecode -e "$ROOT" -q
echo "$want" > "$STAMP"
say "done in $(( $(date +%s) - start ))s"
