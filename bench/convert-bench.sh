#!/bin/sh
# convert-bench.sh: times `rheap convert` on a large synthetic recording.
#
# Builds rheap and the recording generator (tests/convert/bench_gen.c) into $RHEAP_BUILD
# (default build/), writes a recording of EVENTS events over THREADS thread files with the real
# rip writer, converts it, and reports events/s and the peak resident memory. With HELD, the
# recording first allocates HELD blocks that stay live to the end (a big heap under the churn),
# and holds HELD + EVENTS events. Results are not kept: they depend on the machine.
#
# Usage: bench/convert-bench.sh [EVENTS [THREADS [HELD]]]  (default 10000000 events, 4 threads, 0)
set -eu
cd "$(dirname "$0")/.."
EVENTS=${1:-10000000}
THREADS=${2:-4}
HELD=${3:-0}
BUILD=${RHEAP_BUILD:-build}
# An existing build directory is reused as it is configured.
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" --target rheap convert_bench_gen -j"$(nproc)" >/dev/null
RHEAP="$BUILD/cli/rheap"
GEN="$BUILD/tests/convert/convert_bench_gen"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-convert-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$GEN" "$WORK/rip-9999" "$THREADS" "$EVENTS" "$HELD"
EVENTS=$((EVENTS + HELD))
echo "recording: $EVENTS events ($HELD held live), $THREADS threads, $(du -sh "$WORK/rip-9999" | cut -f1) on disk"

/usr/bin/time -v "$RHEAP" convert --no-progress "$WORK/rip-9999" -o "$WORK/out.db" \
    2>"$WORK/time.txt" || { cat "$WORK/time.txt" >&2; exit 1; }
# The summary note and the lines it wraps onto.
awk '/^rheap: wrote/ { on = 1 } on && /^rheap: (wrote|  )/ { print; next } { on = 0 }' "$WORK/time.txt"
secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt" |
       awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
user=$(sed -n 's/.*User time (seconds): //p' "$WORK/time.txt")
sys=$(sed -n 's/.*System time (seconds): //p' "$WORK/time.txt")
awk -v e="$EVENTS" -v s="$secs" -v r="$rss" -v u="$user" -v y="$sys" 'BEGIN {
    printf "wall %.2f s (user %.2f s, sys %.2f s): %.2f M events/s (%.2f M per CPU second); peak RSS %.1f MiB; database %s\n",
           s, u, y, e / s / 1e6, e / (u + y) / 1e6, r / 1024, "'"$(du -h "$WORK/out.db" | cut -f1)"'" }'
