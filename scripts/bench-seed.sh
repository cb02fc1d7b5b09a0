#!/usr/bin/env bash
# bench-seed: seed time of the clone, fast and rest strategies, both modes, each on
# a fresh local stack (realm creation slows down as realms accumulate, so a
# shared stack would favour whichever runs first), plus growth and snapshot
# restore. Usage: scripts/bench-seed.sh [REALM_TENANTS] [ORG_TENANTS] [POLICY] [SNAPSHOT_TENANTS]
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
SNAP=${4:-500}
secs() { sed -n 's/.* in \([0-9.]*\) s,.*/\1/p'; }
run() { # mode tenants strategy → prints the result line, keeps the seconds in $LAST
  $BIN up "${K[@]}" >/dev/null
  local line
  line=$($BIN seed "${K[@]}" --mode "$1" --tenants "$2" --strategy "$3" --password-policy "$POLICY" 2>/dev/null | head -1)
  echo "$line"
  LAST=$(echo "$line" | secs)
  $BIN down "${K[@]}" >/dev/null
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "?" }'; }
for m in "realms $RT" "orgs $OT"; do
  set -- $m
  echo "== $1 mode, $2 tenants, policy $POLICY, each on a fresh stack"
  run "$1" "$2" clone; C=$LAST
  run "$1" "$2" fast; F=$LAST
  run "$1" "$2" rest; R=$LAST
  echo "rest/clone $(ratio "$R" "$C"), rest/fast $(ratio "$R" "$F")"
done
echo "== growth, realms mode: $RT then $((2*RT)) tenants (default strategy)"
$BIN up "${K[@]}" >/dev/null
$BIN seed "${K[@]}" --tenants "$RT" --password-policy "$POLICY" 2>/dev/null | head -1
$BIN seed "${K[@]}" --tenants "$((2*RT))" --password-policy "$POLICY" 2>/dev/null | head -1
echo "== snapshot of $SNAP realm tenants: save, then restore (Keycloak ready)"
$BIN seed "${K[@]}" --tenants "$SNAP" --password-policy "$POLICY" 2>/dev/null | head -1
$BIN snapshot save "${K[@]}" bench
$BIN snapshot restore "${K[@]}" bench
$BIN down "${K[@]}" >/dev/null
