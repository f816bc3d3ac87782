#!/bin/bash
# run.sh: where the floor of a backtrace-on-every-allocation tracer lies on this machine, next
# to librheap. Runs bench/churn.c (1 thread, depth 0 and 32) untraced, under the bare shim
# (clock + unw_backtrace + hash per call, nothing recorded; shim.c), under the shim without
# unwinding, under librheap, and under librheap without backtraces (RHEAP_SAMPLE_RATE=0).
# Prints the median CPU time (user + system) of RUNS runs each and the ratio to untraced, then
# what one read of each clock costs (clock.c).
#
#   bench/floor/run.sh [RUNS]        (default 5; build librheap first: scripts/build.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${1:-5}
LIB=$ROOT/${RHEAP_BUILD:-build}/libtrace/librheap.so
[ -e "$LIB" ] || { echo "run.sh: $LIB missing: run scripts/build.sh first" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-floor.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -pthread "$ROOT/bench/churn.c" -o "$WORK/churn"
cc -O2 -fPIC -shared "$ROOT/bench/floor/shim.c" -o "$WORK/shim.so" -ldl -lunwind
cc -O2 "$ROOT/bench/floor/clock.c" -o "$WORK/clock"
mkdir "$WORK/rec"

# cpu ENV...: median CPU seconds of RUNS runs of churn with that environment.
cpu() {
    local i t all=()
    for i in $(seq "$RUNS"); do
        t=$( { /usr/bin/time -f '%U %S' env "$@" "$WORK/churn" 2000000 1 "$DEPTH" >/dev/null; } 2>&1 |
            tail -n 1 | awk '{ print $1 + $2 }')
        all+=("$t")
        rm -rf "$WORK"/rec/*
    done
    printf '%s\n' "${all[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

printf '| depth | untraced s | shim: clock + unwind | shim: clock only | librheap | librheap, no backtraces |\n'
printf '|--:|--:|--:|--:|--:|--:|\n'
for DEPTH in 0 32; do
    base=$(cpu X=1)
    shim=$(cpu LD_PRELOAD="$WORK/shim.so")
    clock=$(cpu LD_PRELOAD="$WORK/shim.so" SHIM_UNWIND=0)
    rheap=$(cpu LD_PRELOAD="$LIB" RHEAP_DIR="$WORK/rec")
    nostack=$(cpu LD_PRELOAD="$LIB" RHEAP_DIR="$WORK/rec" RHEAP_SAMPLE_RATE=0)
    awk -v d="$DEPTH" -v b="$base" -v s="$shim" -v c="$clock" -v r="$rheap" -v n="$nostack" 'BEGIN {
        printf "| %s | %.2f | %.2f (%.1fx) | %.2f (%.1fx) | %.2f (%.1fx) | %.2f (%.1fx) |\n",
            d, b, s, s / b, c, c / b, r, r / b, n, n / b }'
done

printf '\n| clock | ns per read |\n|---|--:|\n'
"$WORK/clock"
