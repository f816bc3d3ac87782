#!/bin/bash
# run_stress.sh NAME: runs the stress test cases/NAME.sh in a fresh temporary directory with the
# helpers below.
#
# CMake sets the environment: RHEAP_LIB (librheap.so), RHEAP_CLI
# (the rheap command), RIPTALLY, PROGS (the test programs), DSO (the library dlchurn loads),
# CASES and SQLITE3. RHEAP_TEST_KEEP=1 keeps the directory of a failed test. RHEAP_STRESS_SCALE
# multiplies the sizes of the heavier cases (default 1; the figures in docs/RELIABILITY.md were
# measured at larger scales by hand).
set -euo pipefail

NAME=$1
KIND=stress
SCALE=${RHEAP_STRESS_SCALE:-1}
. "$(dirname "$0")/../harness.sh"

# no_double_live DIR...: riptally check (not strict: frees of blocks allocated before the
# recording started are allowed) finds no address allocated twice and nothing lost.
no_double_live() {
    local line
    tally check "$@" >"$WORK/check.txt"
    while read -r line; do
        [ "$(field "$line" double_live)" = 0 ] && [ "$(field "$line" lost)" = 0 ] ||
            fail "inconsistent recording: $line"
    done <"$WORK/check.txt"
}

# sum_threads FILE: sums the allocs, frees and bytes of the "thread" lines of a riptally summary
# into "threads=T allocs=N frees=N bytes=N".
sum_threads() {
    awk '/^thread / { t++; for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] += kv[2] } }
         END { printf "threads=%d allocs=%d frees=%d bytes=%d\n", t, s["allocs"], s["frees"], s["bytes"] }' "$1"
}

# convert OUT.db DIR...: rheap convert, which must exit 0 (or 3 when $CONVERT_WARN_OK is set).
convert() {
    local db=$1 status=0
    shift
    "$RHEAP_CLI" convert -q -o "$db" "$@" >"$WORK/convert.out" 2>"$WORK/convert.err" || status=$?
    if [ "$status" -ne 0 ] && { [ "$status" -ne 3 ] || [ -z "${CONVERT_WARN_OK:-}" ]; }; then
        head -n 20 "$WORK/convert.err" >&2
        fail "rheap convert exited with status $status"
    fi
    [ -s "$db" ] || fail "rheap convert wrote no database"
}

# sql DB QUERY: one value from sqlite3.
sql() {
    [ -x "${SQLITE3:-}" ] || skip "sqlite3 not found"
    "$SQLITE3" -batch -noheader "$1" "$2" || fail "sqlite3 failed on: $2"
}

. "$CASES/$NAME.sh"
echo "PASS ($NAME)"
