#!/bin/bash
# run_test.sh NAME: runs the profile-mode test cases/NAME.sh in a fresh temporary directory.
# CMake sets RHEAP (the rheap command), RHEAP_LIB, SITES (sites.c), EXAMPLES and CASES.
set -euo pipefail

NAME=$1
KIND=profile
. "$(dirname "$0")/../harness.sh"

# q DB SQL: one value from the database.
q() {
    sqlite3 -batch -noheader "$1" "$2"
}

# truth FIELD SITE: the program's own count for a site (sites.out), e.g. truth bytes small_temporary.
truth() {
    field "$(grep "^site $2 " sites.out)" "$1"
}

# within WHAT GOT WANT PERCENT: |GOT - WANT| <= PERCENT% of WANT.
within() {
    awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }' ||
        fail "$1: got $2, expected $3 within $4%"
}

# record MODE INTERVAL DB: runs sites in MODE, converts its recording into DB; sites.out holds
# what the program says it did.
record() {
    mkdir -p "rec-$1"
    env RHEAP_SAMPLE_SEED=20261124 "$SITES" "$1" "$2" "$WORK/rec-$1" >sites.out 2>sites.err ||
        fail "sites $1: $(cat sites.err)"
    "$RHEAP" convert -q "$(sed -n 's/^recording //p' sites.out)" -o "$3" ||
        fail "rheap convert of the $1 recording failed"
}

# site_sql DB SITE COLUMN: a stack_stats column summed over the stacks whose site is SITE.
site_sql() {
    q "$1" "SELECT coalesce(sum(s.$3), 0) FROM stack_stats AS s JOIN stacks AS k ON k.id = s.bt
            WHERE k.function = '$2'"
}

SITE_NAMES="small_temporary medium_half_kept large_blocks aligned_pages grown_by_realloc"

. "$CASES/$NAME.sh"
echo "PASS ($NAME)"
