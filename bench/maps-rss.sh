#!/bin/sh
# What sampling resident memory and recording the program's own mappings cost: churn (which
# maps nothing itself) and maps (bench/maps.c: nothing but mmap, mremap and munmap) untraced,
# recorded by a librheap without either (BEFORE_LIB, e.g. built from the commit before them),
# and by one with both, on (its defaults) and off (RHEAP_RSS_MS=0 RHEAP_MMAP=0). Medians of RUNS
# wall times, the variants alternating in each round so that a noisy neighbour hits all alike.
#
#   bench/maps-rss.sh CHURN MAPS BEFORE_LIB AFTER_LIB [RUNS] [OPS] [MAPS_N]
#
# Both libraries must be named librheap.so (in two directories): preloaded under another name,
# librheap does not start recording by itself.
# With valgrind installed, also the instructions (callgrind) of churn 200000 1 0 under each.
set -eu
[ $# -ge 4 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
CHURN=$1 MAPS=$2 BEFORE=$3 AFTER=$4 RUNS=${5:-7} OPS=${6:-2000000} MAPS_N=${7:-200000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rheap-maps-rss.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

secs() { # secs VARIANT PROGRAM ARGS...: wall time of one run, in seconds
    variant=$1
    shift
    start=$(date +%s.%N)
    case $variant in
    untraced) "$@" >/dev/null ;;
    before) env LD_PRELOAD="$BEFORE" RHEAP_DIR="$TMP" "$@" >/dev/null ;;
    off) env LD_PRELOAD="$AFTER" RHEAP_DIR="$TMP" RHEAP_RSS_MS=0 RHEAP_MMAP=0 "$@" >/dev/null ;;
    on) env LD_PRELOAD="$AFTER" RHEAP_DIR="$TMP" "$@" >/dev/null ;;
    esac
    end=$(date +%s.%N)
    # librheap records only when it is preloaded under its own name (librheap.so).
    if [ "$variant" != untraced ] && ! ls -d "$TMP"/rip-* >/dev/null 2>&1; then
        echo "maps-rss.sh: $variant made no recording (is the library named librheap.so?)" >&2
        exit 1
    fi
    rm -rf "$TMP"/rip-*
    echo "$end - $start" | bc
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "| workload | untraced s | before s | after, both off s | after, both on s | on / before | on / off |"
echo "|---|--:|--:|--:|--:|--:|--:|"
for w in "churn 1 0:$CHURN $OPS 1 0" "churn 2 0:$CHURN $OPS 2 0" "churn 1 32:$CHURN $OPS 1 32" \
         "maps $MAPS_N:$MAPS $MAPS_N 16"; do
    name=${w%%:*} cmd=${w#*:}
    for v in untraced before off on; do : >"$TMP/$v"; done
    for _ in $(seq "$RUNS"); do
        for v in untraced before off on; do
            # shellcheck disable=SC2086
            secs "$v" $cmd >>"$TMP/$v"
        done
    done
    u=$(median <"$TMP/untraced") b=$(median <"$TMP/before") f=$(median <"$TMP/off")
    o=$(median <"$TMP/on")
    printf '| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n' "$name" "$u" "$b" "$f" "$o" \
        "$(echo "$o / $b" | bc -l)" "$(echo "$o / $f" | bc -l)"
done

command -v valgrind >/dev/null || exit 0
echo
echo "| churn 200000 1 0, callgrind | instructions (M) |"
echo "|---|--:|"
for v in before off on; do
    case $v in
    before) set -- env LD_PRELOAD="$BEFORE" ;;
    off) set -- env LD_PRELOAD="$AFTER" RHEAP_RSS_MS=0 RHEAP_MMAP=0 ;;
    on) set -- env LD_PRELOAD="$AFTER" ;;
    esac
    RHEAP_DIR=$TMP "$@" valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" \
        "$CHURN" 200000 1 0 >/dev/null 2>"$TMP/cg.err"
    ls -d "$TMP"/rip-* >/dev/null 2>&1 || { echo "maps-rss.sh: callgrind $v made no recording" >&2; exit 1; }
    rm -rf "$TMP"/rip-*
    ir=$(sed -n 's/^summary: //p' "$TMP/cg.out")
    printf '| %s | %.1f |\n' "$v" "$(echo "$ir / 1000000" | bc -l)"
done
