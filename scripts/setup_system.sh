#!/usr/bin/env bash
# Installs the Debian packages the tests drive (idempotent; seconds when all are present):
#   chromium    the headless browser for the console, Swagger UI and Airflow form tests
#   graphviz    `dot`, which lays out topology pictures (describe --format svg, the console)
#   prometheus  `promtool`, which checks the alerting rules under deploy/, and `prometheus`, which
#               scripts/stack.sh runs
#   postgresql-15  Airflow's metadata database of scripts/stack.sh (/usr/lib/postgresql/15/bin)
#   iproute2    `ip` (/sbin/ip), which makes the network namespaces of the multi-host test
# Needs root (or sudo) when something is missing; otherwise says what to install and fails.
set -euo pipefail
declare -A need=([chromium]=chromium [dot]=graphviz [promtool]=prometheus [prometheus]=prometheus
  [/usr/lib/postgresql/15/bin/initdb]=postgresql-15 [/sbin/ip]=iproute2)
missing=()
for bin in "${!need[@]}"; do
  command -v "$bin" >/dev/null 2>&1 || missing+=("${need[$bin]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "[setup] installing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "[setup] error: need root to install ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# (sorted -u: promtool and prometheus come from one package)
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
