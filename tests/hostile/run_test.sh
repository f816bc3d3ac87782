#!/bin/bash
# run_test.sh NAME: runs the hostile case cases/NAME.sh in a fresh temporary directory, then
# checks every .rip file it produced with `lz4 -t` (unless the case sets NO_LZ4_CHECK=1).
#
# CMake sets the environment: RHEAP_LIB (librheap.so), RHEAP (the command), RIPTALLY, PROGS
# (the test programs), SQLITE3. Set RHEAP_TEST_KEEP=1 to keep the directory of a failed test.
set -euo pipefail

NAME=$1
KIND=hostile
CASES=$(dirname "$0")/cases
. "$(dirname "$0")/../harness.sh"

# sql DB QUERY: runs QUERY on DB.
sql() {
    [ -n "$SQLITE3" ] || skip "no sqlite3"
    "$SQLITE3" -batch "$1" "$2" || fail "sqlite3: $2"
}

. "$CASES/$NAME.sh"
if [ -z "${NO_LZ4_CHECK:-}" ]; then
    while IFS= read -r f; do
        lz4 -t -q "$f" 2>/dev/null || fail "lz4 -t fails on $f"
    done < <(find "$WORK" -name '*.rip')
fi
echo "PASS ($NAME)"
