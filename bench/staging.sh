#!/bin/sh
# What the staging area costs: churn recorded by two builds of librheap, side by side with the
# untraced program, medians of RUNS runs each (alternating, so a noisy neighbour hits all three
# alike). Prints one Markdown row per churn variant.
#
#   bench/staging.sh CHURN BEFORE_LIB AFTER_LIB [RUNS] [OPS]
#
# CHURN is bench/churn.c built (build-bench/bench/churn), BEFORE_LIB and AFTER_LIB two
# librheap.so files (e.g. one built from the commit before the staging area). Recordings go to a
# temporary directory on the file system of $TMPDIR and are removed after each run.
set -eu
[ $# -ge 3 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
CHURN=$1 BEFORE=$2 AFTER=$3 RUNS=${4:-5} OPS=${5:-2000000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rheap-staging.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

secs() { # secs [LIB] ARGS...: wall time of one churn run, in seconds
    lib=$1
    shift
    start=$(date +%s.%N)
    if [ -n "$lib" ]; then
        env LD_PRELOAD="$lib" RHEAP_DIR="$TMP" "$CHURN" "$@" >/dev/null
    else
        "$CHURN" "$@" >/dev/null
    fi
    end=$(date +%s.%N)
    rm -rf "$TMP"/rip-*
    echo "$end - $start" | bc
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "| churn $OPS steps | untraced s | before s | after s | before / untraced | after / untraced | after / before |"
echo "|---|---|---|---|---|---|---|"
for variant in "1 0" "2 0" "1 32"; do
    set -- $variant
    threads=$1 depth=$2
    : >"$TMP/u" ; : >"$TMP/b" ; : >"$TMP/a"
    for _ in $(seq "$RUNS"); do
        secs "" "$OPS" "$threads" "$depth" >>"$TMP/u"
        secs "$BEFORE" "$OPS" "$threads" "$depth" >>"$TMP/b"
        secs "$AFTER" "$OPS" "$threads" "$depth" >>"$TMP/a"
    done
    u=$(median <"$TMP/u") b=$(median <"$TMP/b") a=$(median <"$TMP/a")
    printf '| %s thread(s), depth %s | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.3f |\n' \
        "$threads" "$depth" "$u" "$b" "$a" "$(echo "$b / $u" | bc -l)" "$(echo "$a / $u" | bc -l)" \
        "$(echo "$a / $b" | bc -l)"
done
