#!/bin/bash
# serve.sh: what the host collector (rheap serve) costs while it follows a busy recording, and
# how fast it answers. Prints figures; asserts nothing.
#
#   bench/serve.sh [BUILD] [OPS]      BUILD: a build tree (default build), OPS: churn's
#                                     operations per thread (default 2000000; 2 threads)
#   bench/serve.sh long [BUILD] [S]   a week compressed into S seconds (default 300): the
#                                     serve.compact test's holder (50 MiB held, 3000 24-byte
#                                     calls every 10 ms at an interval of 64 bytes, a thread
#                                     started and ended every 10 ms, 128 KiB segments) under
#                                     rheap serve --disk-budget 512K; every
#                                     S/10 seconds the recording's disk use (du), the thread
#                                     files written so far, the collector's VmRSS and VmHWM
#                                     and its rheap_collector_memory_bytes for the process
#
# For trace mode and for profile mode (the default interval): churn runs with librheap preloaded
# into a fresh directory that `rheap serve` follows. Reported: churn's wall time, the
# collector's CPU time (user + system, from /proc) and the most memory it held (VmHWM) over the
# run, the events it read per CPU second (trace mode: rheap_allocations_total * 2, each block
# allocated and freed), and the time `curl` takes to get /debug/pprof/heap?pid=P (the first
# profile: its frames are symbolized then) and /metrics once churn has ended.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LONG=
if [ "${1:-}" = long ]; then
    LONG=${3:-300}
    shift
fi
BUILD=${1:-$ROOT/build}
OPS=${2:-2000000}
RHEAP=$BUILD/cli/rheap
LIB=$BUILD/libtrace/librheap.so
CHURN=$BUILD/bench/churn
[ -x "$CHURN" ] || { echo "serve.sh: $CHURN missing (build the tree first)" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rheap-serve-bench.XXXXXX")
trap 'kill $SPID 2>/dev/null || true; rm -rf "$TMP"' EXIT
SPID=

cpu_s() { # PID: user + system seconds
    awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}

one() { # MODE ENV...
    local mode=$1
    shift
    rm -rf "$TMP/rec" && mkdir "$TMP/rec"
    "$RHEAP" serve --listen 127.0.0.1:0 "$TMP/rec" 2>"$TMP/serve.err" &
    SPID=$!
    local port=""
    while [ -z "$port" ]; do
        sleep 0.05
        port=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$TMP/serve.err")
    done
    local c0 t0 t1 c1
    c0=$(cpu_s $SPID)
    t0=$(date +%s.%N)
    env "$@" LD_PRELOAD="$LIB" RHEAP_DIR="$TMP/rec" "$CHURN" "$OPS" 2 8 >/dev/null
    t1=$(date +%s.%N)
    sleep 1 # the last scan reads the end of the recording
    c1=$(cpu_s $SPID)
    local url=http://127.0.0.1:$port
    local heap_s metrics_s n hwm
    metrics_s=$(curl -s -o "$TMP/metrics" -w '%{time_total}' "$url/metrics")
    local pid
    pid=$(sed -n 's/^rheap_live_bytes{pid="\([0-9]*\)".*/\1/p' "$TMP/metrics")
    heap_s=$(curl -s -o "$TMP/heap.pb.gz" -w '%{time_total}' "$url/debug/pprof/heap?pid=$pid")
    n=$(awk '/^rheap_allocations_total\{/ { print $NF }' "$TMP/metrics")
    hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$SPID/status")
    awk -v m="$mode" -v w="$(echo "$t1 - $t0" | bc)" -v c="$(echo "$c1 - $c0" | bc)" -v n="$n" \
        -v h="$hwm" -v hs="$heap_s" -v ms="$metrics_s" -v sz="$(stat -c %s "$TMP/heap.pb.gz")" \
        -v rec="$(du -sk "$TMP/rec" | cut -f1)" 'BEGIN {
        printf "| %s | %.2f s | %.2f s | %s | %d KiB | %d MiB | %.0f ms (%d KiB) | %.1f ms |\n",
            m, w, c, (c > 0 && m == "trace" ? sprintf("%.1f M/s", 2 * n / c / 1e6) : "-"),
            rec, h / 1024, hs * 1000, sz / 1024, ms * 1000 }'
    kill $SPID
    wait $SPID 2>/dev/null || true
    SPID=
}

# long: the week compressed (see the top).
long_run() {
    local holder=$BUILD/tests/serve/serve_holder
    [ -x "$holder" ] || { echo "serve.sh: $holder missing (build the tree first)" >&2; exit 1; }
    mkdir "$TMP/rec"
    env LD_PRELOAD="$LIB" RHEAP_DIR="$TMP/rec" RHEAP_MODE=profile RHEAP_SAMPLE_INTERVAL=64 \
        RHEAP_SAMPLE_SEED=5 RHEAP_SEGMENT_KB=128 HOLDER_CHURN=3000 HOLDER_THREADS=1 \
        "$holder" 3200 16384 "$TMP/stop" >"$TMP/holder.out" 2>&1 &
    local hpid=$!
    while ! grep -q ready "$TMP/holder.out"; do sleep 0.05; done
    "$RHEAP" serve --listen 127.0.0.1:0 --disk-budget 512K "$TMP/rec" 2>"$TMP/serve.err" &
    SPID=$!
    local port=""
    while [ -z "$port" ]; do
        sleep 0.05
        port=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$TMP/serve.err")
    done
    echo "rheap serve following a profile-mode holder for $LONG s ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
    echo
    echo "| after | recording on disk | thread files written | collector VmRSS | collector VmHWM | collector memory for it | allocations read |"
    echo "|---|---|---|---|---|---|---|"
    local step=$((LONG / 10)) i
    for i in $(seq 10); do
        sleep "$step"
        curl -s "http://127.0.0.1:$port/metrics" >"$TMP/metrics"
        awk -v t=$((i * step)) -v du="$(du -sk "$TMP/rec" | cut -f1)" \
            -v files="$(ls "$TMP/rec"/rip-* | sed -n 's/^t[0-9]*-s\([0-9]*\)\.rip$/\1/p' | sort -n | tail -1)" \
            -v rss="$(awk '/^VmRSS/ { print $2 }' "/proc/$SPID/status")" \
            -v hwm="$(awk '/^VmHWM/ { print $2 }' "/proc/$SPID/status")" \
            -v mem="$(awk '/^rheap_collector_memory_bytes\{/ { print $NF }' "$TMP/metrics")" \
            -v n="$(awk '/^rheap_allocations_total\{/ { print $NF }' "$TMP/metrics")" 'BEGIN {
            printf "| %d s | %d KiB | %d | %d KiB | %d KiB | %d KiB | %.1f M |\n",
                t, du, files, rss, hwm, mem / 1024, n / 1e6 }'
    done
    touch "$TMP/stop"
    wait $hpid || true
    grep -v 'serving http' "$TMP/serve.err" || true
}
if [ -n "$LONG" ]; then
    long_run
    exit 0
fi

echo "rheap serve following churn $OPS 2 8 ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "| mode | churn wall | collector CPU | events read per CPU s | recording | collector max RSS | /debug/pprof/heap | /metrics |"
echo "|---|---|---|---|---|---|---|---|"
one trace
one profile RHEAP_MODE=profile
