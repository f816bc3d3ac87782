#!/bin/bash
# bytes.sh: how small the information in a recording can get, next to what rheap writes. Records
# churn (1 thread, depth 0) and the python3 workload with librheap, then compresses the same
# decompressed thread files (rip format 2.0: records and columns of varints) with zstd -19 and
# xz -9e, two compressors with entropy coding, which lz4 lacks. Prints bytes per event for each.
#
#   bench/floor/bytes.sh        (build librheap and rheap first: scripts/build.sh)
#
# Events are counted as the benchmark counts them: allocations plus frees, a realloc that moved
# or freed a block being one of each.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$ROOT/${RHEAP_BUILD:-build}
LIB=$BUILD/libtrace/librheap.so
RHEAP=$BUILD/cli/rheap
for f in "$LIB" "$RHEAP"; do
    [ -e "$f" ] || { echo "bytes.sh: $f missing: run scripts/build.sh first" >&2; exit 1; }
done
missing=""
for tool in lz4 zstd xz; do command -v $tool >/dev/null 2>&1 || missing="$missing $tool"; done
if [ -n "$missing" ]; then
    pkgs=$(echo "$missing" | sed 's/ xz/ xz-utils/')
    echo "bytes.sh: installing$pkgs" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get install -y -qq $pkgs >/dev/null
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-bytes.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -pthread "$ROOT/bench/churn.c" -o "$WORK/churn.bin"

# measure NAME: the recording in $WORK/NAME, one line of the table.
measure() {
    local name=$1 events=0 lz=0 raw=0 zs=0 xzb=0 f n
    for f in "$WORK/$name"/*/*.rip; do
        n=$("$RHEAP" dump "$f" | awk '/^alloc / { e++; if ($0 ~ / old=0x[1-9a-f]/) e++ } /^free / { e++ } END { print e + 0 }')
        events=$((events + n))
        lz=$((lz + $(stat -c %s "$f")))
        lz4 -dcq "$f" >"$WORK/raw"
        raw=$((raw + $(stat -c %s "$WORK/raw")))
        zs=$((zs + $(zstd -19 -q -c "$WORK/raw" | wc -c)))
        xzb=$((xzb + $(xz -9e -c "$WORK/raw" | wc -c)))
    done
    awk -v n="$name" -v e="$events" -v r="$raw" -v l="$lz" -v z="$zs" -v x="$xzb" 'BEGIN {
        printf "| %s | %d | %.2f | %.2f | %.2f | %.2f |\n", n, e, r / e, l / e, z / e, x / e }'
}

mkdir "$WORK/churn" "$WORK/python3"
LD_PRELOAD=$LIB RHEAP_DIR=$WORK/churn "$WORK/churn.bin" 1000000 1 0 >/dev/null 2>&1
LD_PRELOAD=$LIB RHEAP_DIR=$WORK/python3 PYTHONMALLOC=malloc PYTHONHASHSEED=0 \
    /usr/bin/python3 "$ROOT/bench/workloads/pywork.py" 4 >/dev/null
printf '| workload | events | uncompressed B/event | lz4 (as written) | zstd -19 | xz -9e |\n'
printf '|---|--:|--:|--:|--:|--:|\n'
measure churn
measure python3
