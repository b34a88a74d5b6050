#!/usr/bin/env bash
# Prints the path of the Python interpreter asked for, or says what is missing and exits 1.
#
#   scripts/find_python.sh 3.12                 a version: python3.12 on PATH, else pyenv's newest 3.12.x
#   scripts/find_python.sh python3.12           a command: itself when it runs, else as for 3.12
#   scripts/find_python.sh /opt/py/bin/python3  a path or any other command: itself, when it runs
#
# pyenv's shims answer to the name of every installed version (`python3.12`) but run only the
# versions pyenv has selected (`pyenv global`, `.python-version`); a shim that refuses to run is
# passed over for the interpreter under `$(pyenv root)/versions/`. Used by scripts/setup.sh
# (PYTHON=) and scripts/test_pythons.sh.
set -euo pipefail
want=${1:?usage: find_python.sh VERSION|COMMAND|PATH}

version_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }

version=
if [[ $want =~ ^(python)?(3\.[0-9]+)$ ]]; then
  version=${BASH_REMATCH[2]}
fi
command=$want
[[ $want =~ ^3\.[0-9]+$ ]] && command=python$want

# 1. the command itself (on PATH, or a path), when it runs and is the version asked for
if path=$(command -v "$command" 2>/dev/null) && got=$(version_of "$path"); then
  if [ -z "$version" ] || [ "$got" = "$version" ]; then
    echo "$path"
    exit 0
  fi
fi
if [ -z "$version" ]; then
  echo "error: $want does not run (not found, or not a Python interpreter)" >&2
  exit 1
fi

# 2. pyenv's newest X.Y.Z of that version (plain CPython builds only: no 3.13t, no -dev)
root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
if [ -d "$root/versions" ]; then
  newest=$(find "$root/versions" -mindepth 1 -maxdepth 1 -printf '%f\n' \
    | grep -E "^${version//./\\.}\.[0-9]+$" | sort -V | tail -n 1 || true)
  candidate="$root/versions/$newest/bin/python$version"
  if [ -n "$newest" ] && [ "$(version_of "$candidate")" = "$version" ]; then
    echo "$candidate"
    exit 0
  fi
fi
echo "error: Python $version not found (tried $command on PATH and $root/versions/$version.*);" \
  "install it: pyenv install $version, or your system's python$version package" >&2
exit 1
