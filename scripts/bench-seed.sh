#!/usr/bin/env bash
# bench-seed: seed time of the fast and rest strategies, both modes, each on
# a fresh local stack (realm creation slows down as realms accumulate, so a
# shared stack would favour whichever runs first), plus growth and snapshot
# restore. Usage: scripts/bench-seed.sh [REALM_TENANTS] [ORG_TENANTS] [POLICY]
set -euo pipefail
cd "$(dirname "$0")/.."
RT=${1:-100}
OT=${2:-300}
POLICY=${3:-default}
BIN=${KCBENCH_BIN:-bin/kcbench}
STATE=$(mktemp -d /tmp/kcbench-bench-seed.XXXXXX)
chmod 755 "$STATE"
trap '$BIN down --state-dir "$STATE" >/dev/null 2>&1 || true; rm -rf "$STATE"' EXIT
K=(--state-dir "$STATE")
echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
run() { # mode tenants strategy
  $BIN up "${K[@]}" >/dev/null
  $BIN seed "${K[@]}" --mode "$1" --tenants "$2" --strategy "$3" --password-policy "$POLICY" 2>/dev/null | head -1
  $BIN down "${K[@]}" >/dev/null
}
echo "== realms mode, $RT tenants, policy $POLICY"
run realms "$RT" fast
run realms "$RT" rest
echo "== orgs mode, $OT tenants, policy $POLICY"
run orgs "$OT" fast
run orgs "$OT" rest
echo "== growth, realms mode: $RT then $((2*RT)) tenants (fast)"
$BIN up "${K[@]}" >/dev/null
$BIN seed "${K[@]}" --tenants "$RT" --password-policy "$POLICY" 2>/dev/null | head -1
$BIN seed "${K[@]}" --tenants "$((2*RT))" --password-policy "$POLICY" 2>/dev/null | head -1
if $BIN snapshot -h >/dev/null 2>&1; then
  echo "== snapshot of $((2*RT)) realm tenants: save, then restore (Keycloak ready)"
  $BIN snapshot save "${K[@]}" bench
  $BIN snapshot restore "${K[@]}" bench
fi
$BIN down "${K[@]}" >/dev/null
