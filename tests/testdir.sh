#!/bin/bash
# testdir.sh: the head every shell-driven test shares. A driver sets NAME (the case) and KIND
# (its folder, for the temporary directory's name) and sources this file: it makes a fresh
# temporary directory WORK, goes there and removes it at exit, running the commands a case
# appends to CLEANUP first (killing what it left running). RHEAP_TEST_KEEP=1 keeps the
# directory of a failed test. harness.sh adds what the tests of a traced program share.

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-$KIND-$NAME.XXXXXX")
cd "$WORK"
CLEANUP=()

finish() {
    local status=$?
    local c
    for c in "${CLEANUP[@]}"; do eval "$c" || true; done
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

# has_line FILE LINE: FILE holds exactly this line.
has_line() {
    grep -qxF -- "$2" "$1" || { cat "$1" >&2; fail "$1 has no line '$2'"; }
}

# has_lines FILE TEXT: FILE holds the lines of TEXT one after the other (a message wrapped to
# the width, as a person reads it).
has_lines() {
    local nl=$'\n'
    [[ "$nl$(cat "$1")$nl" == *"$nl$2$nl"* ]] || { cat "$1" >&2; fail "$1 has no lines '$2'"; }
}

# run LOG CMD...: stdout to LOG.out, stderr to LOG.err, status in STATUS; never fails by itself.
run() {
    local log=$1
    shift
    STATUS=0
    "$@" >"$log.out" 2>"$log.err" </dev/null || STATUS=$?
}

# sql DB SQL...: sqlite3's rows, without headers.
sql() {
    sqlite3 -batch -noheader "$@"
}

# wait_for WHAT COMMAND...: returns once COMMAND succeeds, tried every 10 ms; fails naming WHAT
# after a minute. A test waits on what it needs to have happened, never on a guess of how long
# that takes on a loaded machine.
wait_for() {
    local what=$1
    shift
    for _ in $(seq 6000); do
        "$@" && return 0
        sleep 0.01
    done
    fail "$what (waited a minute)"
}
