#!/bin/bash
# run_test.sh NAME: runs the tracer test cases/NAME.sh in a fresh temporary directory, then
# checks every .rip file the test produced with `lz4 -t`.
#
# CMake sets the environment: RHEAP_LIB (librheap.so), RIPTALLY, PROGS (test programs), DSO
# (the test library for dlopen), EXAMPLES, CASES, and the real programs SQLITE3, PYTHON3, PERL,
# CMAKE and CC. Set RHEAP_TEST_KEEP=1 to keep the directory of a failed test.
set -euo pipefail

NAME=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-tracer-$NAME.XXXXXX")
REC=$WORK/rec          # RHEAP_DIR of every traced run
mkdir "$REC"
cd "$WORK"

finish() {
    local status=$?
    if [ "$status" -ne 0 ] && [ -n "${RHEAP_TEST_KEEP:-}" ]; then
        echo "kept $WORK" >&2
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap finish EXIT

fail() {
    echo "FAIL ($NAME): $*" >&2
    exit 1
}

skip() {
    echo "SKIP ($NAME): $*"
    exit 77
}

# expect_eq WHAT GOT WANT
expect_eq() {
    [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

# traced LOG [VAR=VALUE...] COMMAND ARGS...: runs COMMAND with librheap preloaded, recording
# into $REC, stdout into LOG.out and stderr into LOG.err. Sets STATUS; never fails by itself.
traced() {
    local log=$1
    shift
    STATUS=0
    env LD_PRELOAD="$RHEAP_LIB" RHEAP_DIR="$REC" "$@" >"$log.out" 2>"$log.err" </dev/null ||
        STATUS=$?
}

# plain LOG COMMAND ARGS...: the same without the recorder.
plain() {
    local log=$1
    shift
    STATUS=0
    "$@" >"$log.out" 2>"$log.err" </dev/null || STATUS=$?
}

# expect_status LOG WANT: STATUS of the last run must be WANT; shows the run's output if not.
expect_status() {
    if [ "$STATUS" != "$2" ]; then
        echo "--- $1.out" >&2; tail -n 20 "$1.out" >&2
        echo "--- $1.err" >&2; tail -n 20 "$1.err" >&2
        fail "$1: exit status $STATUS, expected $2"
    fi
}

# no_rheap_messages LOG: the recorder said nothing on stderr.
no_rheap_messages() {
    if grep -q '^rheap:' "$1.err"; then
        grep '^rheap:' "$1.err" >&2
        fail "$1: unexpected rheap messages on stderr"
    fi
}

# tally ARGS...: riptally, which must succeed (it exits non-zero on any reader error).
tally() {
    "$RIPTALLY" "$@" || fail "riptally $* exited with status $?"
}

# recordings: the recording directories in $REC, sorted by name.
recordings() {
    find "$REC" -mindepth 1 -maxdepth 1 -type d -name 'rip-*' | sort
}

# expect_recordings N: exactly N recording directories exist.
expect_recordings() {
    local n
    n=$(recordings | wc -l)
    if [ "$n" -ne "$1" ]; then
        ls -l "$REC" >&2
        fail "expected $1 recording directories, found $n"
    fi
}

# same_lines WHAT WANT_FILE GOT_FILE: the two files hold the same lines in the same order.
same_lines() {
    if ! diff -u "$2" "$3" >"$WORK/diff.txt"; then
        cat "$WORK/diff.txt" >&2
        fail "$1 differ (- expected, + recorded)"
    fi
    [ -s "$2" ] || fail "$1: nothing expected, the test is broken"
}

# same_sorted WHAT WANT_FILE GOT_FILE: the same lines in any order.
same_sorted() {
    sort "$2" >"$2.sorted"
    sort "$3" >"$3.sorted"
    same_lines "$1" "$2.sorted" "$3.sorted"
}

# expected LOG PREFIX: the lines of LOG.out that start with "PREFIX", without it.
expected() {
    grep "^$2" "$1.out" | sed "s/^$2//" || true
}

# has_line FILE LINE: FILE has exactly this line.
has_line() {
    grep -qxF -- "$2" "$1" || { cat "$1" >&2; fail "$1: no line '$2'"; }
}

# clean_check DIR...: riptally's consistency check passes (no missing event, nothing lost).
clean_check() {
    local status=0
    "$RIPTALLY" --strict check "$@" >"$WORK/check.txt" || status=$?
    if [ "$status" -ne 0 ]; then
        cat "$WORK/check.txt" >&2
        fail "consistency check failed (riptally status $status) for $*"
    fi
}

# field LINE KEY: the value of KEY=VALUE in LINE.
field() {
    sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"
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
