#!/bin/sh
# bigheap.sh: what converting a big heap costs, beside heaptrack_print.
#
# Records bench/bigheap.c holding N small blocks (default 8,000,000) with librheap and with
# heaptrack, then, RUNS times (default 3) and alternating: converts rheap's recording, analyses
# heaptrack's with heaptrack_print, and runs the program under `rheap run` (its live conversion).
# Prints each run's wall time, CPU time (user + system) and peak resident memory, the medians,
# the events per second of wall and of CPU time (on a shared machine the CPU figure moves less) and
# the converter's memory per live block: its peak minus the peak of converting a recording of
# 1,000 blocks (the baseline: code, SQLite, buffers), over the N live blocks. For `rheap run` the
# peak is the rheap process's own (VmHWM read while it runs), not the program's. For `rheap
# convert` the CPU time is also split by thread: the converting thread (the process's first:
# pairing, summaries, rows, the drain; decode and merge too when the recording has no reading
# thread), the reading thread (`rheap reader`: decode and merge) and the others (the database
# writer, the store's page filler), read from /proc/PID/task every 50 ms; the threads share two
# cores, so the conversion cannot take less wall time than the largest of them. The load average is printed first and last: wall
# times mean something only when it is low. Nothing is kept.
# With MEMORY set, both convert and run get `--memory $MEMORY` (the live-block store's budget) and
# the bytes each conversion spilled to its temporary file are printed too.
#
# Usage: [MEMORY=SIZE] bench/bigheap.sh [N [RUNS]]    (RHEAP_BUILD: the build, default build/)
set -eu
cd "$(dirname "$0")/.."
N=${1:-8000000}
RUNS=${2:-3}
BUILD=${RHEAP_BUILD:-build}
MEMORY=${MEMORY:-none}
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" --target rheap rheap_lib rheap_bench_bigheap -j"$(nproc)" >/dev/null
RHEAP=$(pwd)/$BUILD/cli/rheap
LIB=$(pwd)/$BUILD/libtrace/librheap.so
PROG=$(pwd)/$BUILD/bench/bigheap
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-bigheap.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

mkdir small big
RHEAP_DIR=$WORK/small LD_PRELOAD=$LIB "$PROG" 1000 >/dev/null
RHEAP_DIR=$WORK/big LD_PRELOAD=$LIB "$PROG" "$N" >/dev/null
SMALL=$(ls -d small/rip-*)
RIP=$(ls -d big/rip-*)
HT=
if command -v heaptrack >/dev/null; then
    heaptrack -o "$WORK/ht" "$PROG" "$N" >/dev/null 2>&1 || true
    HT=$(ls "$WORK"/ht*.zst "$WORK"/ht*.gz 2>/dev/null | head -n 1 || true)
fi
echo "bigheap: $N blocks live at the end; recording $(du -sh "$RIP" | cut -f1)"

echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
now() { date +%s.%N; }
# timed NAME CMD...: one run; appends "seconds kilobytes cpu-seconds" to NAME.txt, and the MiB
# of the spill file the command's note gave to NAME.spill
timed() {
    name=$1
    shift
    /usr/bin/time -f "%e %M %U %S" -o t.txt "$@" >/dev/null 2>err.txt || { cat err.txt >&2; echo "$name failed" >&2; exit 1; }
    awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' t.txt >>"$name.txt"
    spill=$(sed -n 's/.*went to disk on the way (\([0-9.]*\) MiB of temporary file.*/\1/p' err.txt)
    echo "${spill:-0}" >>"$name.spill"
    echo "  $name: $(tail -n 1 "$name.txt" | cut -d' ' -f1) s, $(($(cut -d' ' -f2 t.txt) / 1024)) MiB, $(tail -n 1 "$name.txt" | cut -d' ' -f3) s CPU, ${spill:-0} MiB spilled"
}
# run_timed: one `rheap run` of the program; the peak is rheap's own, read from /proc while it
# runs (a zombie has no VmHWM line, which ends the loop).
run_timed() {
    rm -f run.db
    t0=$(now)
    "$RHEAP" run -q --memory "$MEMORY" -o run.db -- "$PROG" "$N" >/dev/null 2>&1 &
    pid=$!
    hwm=0
    cpu=0
    tck=$(getconf CLK_TCK)
    while h=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [ -n "$h" ]; do
        hwm=$h
        # utime + stime of rheap's own threads (the program is a child and not counted)
        c=$(awk -v t="$tck" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$pid/stat" 2>/dev/null) || c=
        [ -z "$c" ] || cpu=$c
        sleep 0.1
    done
    wait "$pid" || { echo "rheap run failed" >&2; exit 1; }
    t1=$(now)
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    echo "$s $hwm $cpu" >>run.txt
    echo "  rheap run: $s s, $((hwm / 1024)) MiB, $cpu s CPU (rheap itself)"
}
# threads_timed: one `rheap convert` of the big recording under /usr/bin/time, its threads' CPU
# read from /proc while it runs; appends "seconds kilobytes cpu converting-cpu others-cpu
# reader-cpu" to convert.txt.
threads_timed() {
    rm -f out.db t.txt
    /usr/bin/time -f "%e %M %U %S" -o t.txt "$RHEAP" convert --no-progress --memory "$MEMORY" "$RIP" -o out.db >/dev/null 2>err.txt &
    tpid=$!
    tck=$(getconf CLK_TCK)
    pid=
    conv=0
    reader=0
    while kill -0 "$tpid" 2>/dev/null; do
        [ -n "$pid" ] || pid=$(pgrep -P "$tpid" || true)
        if [ -n "$pid" ]; then
            # the first thread's utime + stime (fields 14 and 15 of its stat)
            c=$(awk -v t="$tck" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / t }' \
                "/proc/$pid/task/$pid/stat" 2>/dev/null) || c=
            [ -z "$c" ] || conv=$c
            # the reading thread's, while it lives (it ends before the drain)
            for task in /proc/"$pid"/task/*; do
                [ "$(cat "$task/comm" 2>/dev/null)" = "rheap reader" ] || continue
                c=$(awk -v t="$tck" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / t }' \
                    "$task/stat" 2>/dev/null) || c=
                [ -z "$c" ] || reader=$c
            done
        fi
        sleep 0.05
    done
    wait "$tpid" || { echo "convert failed" >&2; exit 1; }
    awk -v r="$conv" -v d="$reader" '{ c = $3 + $4; printf "%s %s %.2f %.2f %.2f %.2f\n", $1, $2, c, r, c - r - d, d }' t.txt >>convert.txt
    spill=$(sed -n 's/.*went to disk on the way (\([0-9.]*\) MiB of temporary file.*/\1/p' err.txt)
    echo "${spill:-0}" >>convert.spill
    set -- $(tail -n 1 convert.txt)
    echo "  convert: $1 s, $(($2 / 1024)) MiB, $3 s CPU: converting thread $4 s, reading thread $6 s, writer and filler $5 s; ${spill:-0} MiB spilled"
}
timed baseline "$RHEAP" convert --no-progress "$SMALL" -o small.db
i=0
while [ $i -lt "$RUNS" ]; do
    threads_timed
    [ -z "$HT" ] || timed heaptrack_print heaptrack_print -f "$HT"
    run_timed
    i=$((i + 1))
done
EVENTS=$(sqlite3 out.db 'SELECT count(*) + count(dealloc_after) FROM allocations')
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(cut -d' ' -f2 baseline.txt)
if [ -f heaptrack_print.txt ]; then
    awk -v a="$(cut -d' ' -f1 convert.txt | median)" -v b="$(cut -d' ' -f1 heaptrack_print.txt | median)" \
        -v c="$(cut -d' ' -f2 convert.txt | median)" -v d="$(cut -d' ' -f2 heaptrack_print.txt | median)" \
        'BEGIN { printf "convert / heaptrack_print: %.1fx the time, %.1fx the memory\n", a / b, c / d }'
fi
for name in convert heaptrack_print run; do
    [ -f "$name.txt" ] || continue
    s=$(cut -d' ' -f1 "$name.txt" | median)
    kb=$(cut -d' ' -f2 "$name.txt" | median)
    cpu=$(cut -d' ' -f3 "$name.txt" | median)
    spilled=
    [ ! -f "$name.spill" ] || spilled=", $(median <"$name.spill") MiB spilled"
    echo "median $name: $s s, $((kb / 1024)) MiB, $cpu s CPU$spilled"
    [ "$name" = heaptrack_print ] && continue
    if [ "$name" = convert ]; then
        r=$(cut -d' ' -f4 convert.txt | median)
        w=$(cut -d' ' -f5 convert.txt | median)
        d=$(cut -d' ' -f6 convert.txt | median)
        awk -v r="$r" -v w="$w" -v d="$d" -v e="$EVENTS" 'BEGIN {
            printf "convert by thread: converting %.2f s of CPU (%.2f M events/s), reading %.2f s, writer and filler %.2f s (%.2f M events/s)\n",
                   r, e / r / 1e6, d, w, e / w / 1e6 }'
    fi
    awk -v kb="$kb" -v base="$base" -v n="$N" -v e="$EVENTS" -v s="$s" -v c="$cpu" -v name="$name" 'BEGIN {
        printf "%s: %.2f M events/s, %.2f M per CPU second (%d events); %.1f B per live block over the baseline of %d MiB, %.1f B over 64 MiB\n",
               name, e / s / 1e6, e / c / 1e6, e, (kb - base) * 1024 / n, base / 1024, (kb * 1024 - 64 * 1048576) / n }'
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
