#!/bin/bash
# crossing_test.sh: the heap at moments of a recording whose blocks cross checkpoints by the
# thousand (the synthetic writer's four threads, each with a window of 4,096 live blocks), so
# each checkpoint's list of blocks that outlive its interval passes the 1 KiB the converter
# keeps in memory and goes through its temporary file. At checkpoint times, the nanosecond
# after, and halfway to the next, the collapsed export must be, byte for byte, what SQL over
# `allocations` says was live.
# Environment (CMake): RHEAP, GEN. RHEAP_TEST_KEEP=1 keeps a failed test's directory.
set -euo pipefail

NAME=crossing KIND=moment
source "$(dirname "$0")/../testdir.sh"

mkdir rec
"$GEN" rec/rip-9999 4 1000000 >gen.out 2>&1 || { cat gen.out >&2; fail "the synthetic writer"; }
"$RHEAP" convert -q rec/rip-9999 -o c.db >conv.out 2>&1 || { cat conv.out >&2; fail "rheap convert"; }
sql() { sqlite3 -batch -bail c.db "$@"; }
source "$(dirname "$0")/live_sql.sh"

big=$(sql "SELECT count(*) FROM checkpoints WHERE length(later) > 1024")
[ "$big" -gt 0 ] || fail "no checkpoint list over 1 KiB: the temporary file is not reached"

checked=0
for t in $(sql "WITH k AS (SELECT t, lead(t) OVER (ORDER BY ck) AS next, ck FROM checkpoints WHERE t >= 0)
                SELECT t || ' ' || (t + 1) || ' ' || ((t + next) / 2) FROM k
                WHERE next IS NOT NULL AND ck % (1 + (SELECT count(*) FROM checkpoints) / 6) = 3"); do
    "$RHEAP" export collapsed c.db --at "$t" -o got.folded -f 2>export.err ||
        { cat export.err >&2; fail "export --at $t"; }
    live_sql "$t" >want.folded
    [ -s want.folded ] || fail "nothing live at $t ns"
    cmp -s got.folded want.folded ||
        { diff want.folded got.folded >&2 || true; fail "--at $t: the export differs from SQL"; }
    checked=$((checked + 1))
done
[ "$checked" -ge 3 ] || fail "only $checked moments checked"
echo "moment: $checked moments across $big checkpoint lists over 1 KiB equal to SQL"
