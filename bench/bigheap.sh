#!/bin/sh
# bigheap.sh: what converting a big heap costs, beside heaptrack_print.
#
# Records bench/bigheap.c holding N small blocks (default 8,000,000) with librheap and with
# heaptrack, then converts rheap's recording RUNS times (default 3) and analyses heaptrack's with
# heaptrack_print as many times, alternating; prints each run's wall time and peak resident
# memory, the medians, and the converter's memory per live block. Nothing is kept.
#
# Usage: bench/bigheap.sh [N [RUNS]]    (RHEAP_BUILD: the build to use, default build/)
set -eu
cd "$(dirname "$0")/.."
N=${1:-8000000}
RUNS=${2:-3}
BUILD=${RHEAP_BUILD:-build}
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" --target rheap rheap_lib rheap_bench_bigheap -j"$(nproc)" >/dev/null
RHEAP=$(pwd)/$BUILD/cli/rheap
LIB=$(pwd)/$BUILD/libtrace/librheap.so
PROG=$(pwd)/$BUILD/bench/bigheap
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-bigheap.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

RHEAP_DIR=$WORK LD_PRELOAD=$LIB "$PROG" "$N" >/dev/null
RIP=$(ls -d rip-*)
HT=
if command -v heaptrack >/dev/null; then
    heaptrack -o "$WORK/ht" "$PROG" "$N" >/dev/null 2>&1 || true
    HT=$(ls "$WORK"/ht*.zst "$WORK"/ht*.gz 2>/dev/null | head -n 1 || true)
fi
echo "bigheap: $N blocks live at the end; recording $(du -sh "$RIP" | cut -f1)"

# timed NAME CMD...: one run; appends "seconds kilobytes" to NAME.txt
timed() {
    name=$1
    shift
    /usr/bin/time -f "%e %M" -o t.txt "$@" >/dev/null 2>&1 || { echo "$name failed" >&2; exit 1; }
    cat t.txt >>"$name.txt"
    echo "  $name: $(cut -d' ' -f1 t.txt) s, $(($(cut -d' ' -f2 t.txt) / 1024)) MiB"
}
i=0
while [ $i -lt "$RUNS" ]; do
    rm -f out.db
    timed convert "$RHEAP" convert --no-progress "$RIP" -o out.db
    [ -z "$HT" ] || timed heaptrack_print heaptrack_print -f "$HT"
    i=$((i + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for name in convert heaptrack_print; do
    [ -f "$name.txt" ] || continue
    s=$(cut -d' ' -f1 "$name.txt" | median)
    kb=$(cut -d' ' -f2 "$name.txt" | median)
    echo "median $name: $s s, $((kb / 1024)) MiB"
done
kb=$(cut -d' ' -f2 convert.txt | median)
awk -v kb="$kb" -v n="$N" 'BEGIN { printf "convert: %.1f bytes of peak resident memory per live block (%d MiB over 64 MiB: %.1f B)\n", kb * 1024 / n, kb / 1024, (kb * 1024 - 64 * 1048576) / n }'
