#!/bin/bash
# harness.sh: what the shell-driven tests of a traced program share. A driver sets NAME (the
# case) and KIND (its folder), sources this file, adds its own helpers and sources the case.
# testdir.sh makes the temporary directory WORK and the checks every shell test uses; this file
# adds REC, the RHEAP_DIR of every traced run, and the runs and checks of a traced program. The
# environment comes from CMake: RHEAP_LIB (librheap.so) and RIPTALLY at least.

. "$(dirname "${BASH_SOURCE[0]}")/testdir.sh"
REC=$WORK/rec
mkdir "$REC"
PRELOAD=$RHEAP_LIB

# traced LOG [VAR=VALUE...] COMMAND ARGS...: COMMAND with librheap preloaded, recording into
# $REC; stdout into LOG.out, stderr into LOG.err. Sets STATUS; never fails by itself.
traced() {
    local log=$1
    shift
    STATUS=0
    env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$@" >"$log.out" 2>"$log.err" </dev/null ||
        STATUS=$?
}

# plain LOG COMMAND ARGS...: the same without the recorder (testdir.sh's run).
plain() {
    run "$@"
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

# one_rheap_message LOG: stderr is exactly one line, and it starts with "rheap:".
one_rheap_message() {
    if [ "$(wc -l <"$1.err")" -ne 1 ] || ! grep -q '^rheap:' "$1.err"; then
        echo "--- $1.err" >&2; head -n 20 "$1.err" >&2
        fail "$1: expected exactly one 'rheap:' line on stderr"
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
        head -n 40 "$WORK/diff.txt" >&2
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

# field LINE KEY: the value of KEY=VALUE in LINE.
field() {
    sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"
}

# clean_check DIR...: riptally's strict consistency check passes.
clean_check() {
    local status=0
    "$RIPTALLY" --strict check "$@" >"$WORK/check.txt" || status=$?
    if [ "$status" -ne 0 ]; then
        grep -v ' unmatched_frees=0 double_live=0 lost=0 ' "$WORK/check.txt" | head -n 20 >&2
        fail "consistency check failed (riptally status $status)"
    fi
}
