#!/bin/bash
# run_test.sh NAME: runs the tracer test cases/NAME.sh in a fresh temporary directory, then
# checks every .rip file the test produced with `lz4 -t`.
#
# CMake sets the environment: RHEAP_LIB (librheap.so), RHEAP (the command), RIPTALLY, PROGS (test programs), DSO
# (the test library for dlopen), EXAMPLES, CASES, and the real programs SQLITE3, PYTHON3, PERL,
# CMAKE and CC. Set RHEAP_TEST_KEEP=1 to keep the directory of a failed test.
set -euo pipefail

NAME=$1
KIND=tracer
. "$(dirname "$0")/../harness.sh"

# expected LOG PREFIX: the lines of LOG.out that start with "PREFIX", without it.
expected() {
    grep "^$2" "$1.out" | sed "s/^$2//" || true
}

# to_db RIPDIR...: converts the recordings into db.sqlite with the `rheap` command.
to_db() {
    rm -f db.sqlite
    "$RHEAP" convert "$@" -o db.sqlite >convert.out 2>&1 || { cat convert.out >&2; fail "rheap convert $*"; }
}

# sql QUERY: runs QUERY on db.sqlite.
sql() {
    [ -n "$SQLITE3" ] || skip "no sqlite3"
    "$SQLITE3" -batch db.sqlite "$1" || fail "sqlite3: $1"
}

# real_program COMMAND ARGS...: runs a real program untraced, then traced: the output and exit
# status must be the same, and every recording it made (one per process) must be consistent.
real_program() {
    plain plain "$@"
    local want=$STATUS
    traced run "$@"
    expect_status run "$want"
    no_rheap_messages run
    if ! cmp -s plain.out run.out; then
        diff plain.out run.out | head -n 20 >&2
        fail "output differs when traced"
    fi
    [ "$(recordings | wc -l)" -ge 1 ] || fail "no recording"
    # shellcheck disable=SC2046 # recording directory names have no spaces
    clean_check $(recordings)
}

# lz4_check: every .rip file produced is a valid lz4 frame. A case that expects no recording
# sets NO_RIP_EXPECTED=1; one whose files may legitimately end early sets NO_LZ4_CHECK=1.
lz4_check() {
    local f count=0
    while IFS= read -r f; do
        lz4 -t -q "$f" 2>/dev/null || fail "lz4 -t fails on $f"
        count=$((count + 1))
    done < <(find "$WORK" -name '*.rip')
    [ "$count" -gt 0 ] || [ -n "${NO_RIP_EXPECTED:-}" ] || fail "the test produced no .rip file"
}

. "$CASES/$NAME.sh"
[ -n "${NO_LZ4_CHECK:-}" ] || lz4_check
echo "PASS ($NAME)"
