#!/bin/bash
# moment_test.sh: `--at` and `--from/--to` against SQL over `allocations`.
# phases.c is recorded once with the real librheap (rheap run); then, at each of its markers,
# at times taken from its own events (each one, and the nanosecond before), and for ranges
# between markers and times, the collapsed export must be, byte for byte, what SQL says was
# live then, and the highest point of a range the one SQL finds over every event.
# Environment (CMake): RHEAP, PHASES. RHEAP_TEST_KEEP=1 keeps a failed test's directory.
set -euo pipefail

NAME=run_exact KIND=moment
source "$(dirname "$0")/../testdir.sh"

"$RHEAP" run -q -o p.db -- "$PHASES" >run.out 2>&1 || { cat run.out >&2; fail "rheap run"; }
sql() { sqlite3 -batch -bail p.db "$@"; }

source "$(dirname "$0")/live_sql.sh"

# check_at WHAT NS: the export --at WHAT equals SQL's live heap at NS.
checked=0
check_at() {
    "$RHEAP" export collapsed p.db --at "$1" -o got.folded -f 2>export.err ||
        { cat export.err >&2; fail "export --at $1"; }
    live_sql "$2" >want.folded
    cmp -s got.folded want.folded || { diff want.folded got.folded >&2 || true; fail "--at $1 (ns $2): the export differs from SQL"; }
    checked=$((checked + 1))
}

# The program's phases, at its markers: exact sums known from phases.c.
for label in start a_done b_done c_done end; do
    check_at "$label" "$(sql "SELECT t FROM markers WHERE label = '$label'")"
done
sum_at() { "$RHEAP" export collapsed p.db --at "$1" | awk '{ s += $NF } END { print s + 0 }'; }
[ "$(sum_at start)" = 0 ] || fail "live at start: $(sum_at start)"
[ "$(sum_at a_done)" = 100000 ] || fail "live at a_done: $(sum_at a_done), expected 100 x 1000"
[ "$(sum_at b_done)" = 150000 ] || fail "live at b_done: $(sum_at b_done), expected 50 x 1000 + 50 x 2000"
[ "$(sum_at c_done)" = 150000 ] || fail "live at c_done: $(sum_at c_done)"
[ "$(sum_at end)" = 53000 ] || fail "live at end: $(sum_at end), expected 50 x 1000 + 10 x 300"

# At the program's own event times, each and the nanosecond before: an allocation counts from
# its instant, a free from its own (the rows near a checkpoint's edges included).
for t in $(sql "SELECT DISTINCT t FROM (SELECT alloc_after AS t FROM allocations WHERE size IN (1000, 2000, 1048576)
                UNION SELECT dealloc_after FROM allocations WHERE size IN (1000, 2000, 1048576) AND dealloc_after IS NOT NULL)
                ORDER BY t" | awk 'NR % 9 == 1'); do
    check_at "$t" "$t"
    check_at "$((t - 1))" "$((t - 1))"
done
# With units: 1 ms is 1000000 ns.
check_at 1ms 1000000
check_at 2500us 2500000

# The highest point inside [A, B], found by SQL over every event, and the export at it.
peak_sql() {
    sql "
WITH ev(t, d) AS (SELECT alloc_after, size FROM allocations
                  UNION ALL SELECT dealloc_after, -size FROM allocations WHERE dealloc_after IS NOT NULL),
inst AS (SELECT t, sum(d) AS d FROM ev GROUP BY t),
h AS (SELECT t, sum(d) OVER (ORDER BY t) AS live FROM inst)
SELECT t || ' ' || live FROM (SELECT $1 AS t, (SELECT total(d) FROM ev WHERE t <= $1) AS live
                              UNION ALL SELECT t, live FROM h WHERE t > $1 AND t <= $2)
ORDER BY live DESC, t LIMIT 1;" | awk '{ printf "%s %d\n", $1, $2 }'
}
marker() { sql "SELECT t FROM markers WHERE label = '$1'"; }
check_range() { # FROM TO FROM_NS TO_NS
    local want t bytes
    want=$(peak_sql "$3" "$4")
    t=${want% *}
    bytes=${want#* }
    "$RHEAP" export collapsed p.db --from "$1" --to "$2" -o got.folded -f 2>export.err ||
        { cat export.err >&2; fail "export --from $1 --to $2"; }
    live_sql "$t" >want.folded
    cmp -s got.folded want.folded || { diff want.folded got.folded >&2 || true; fail "--from $1 --to $2: not the heap at $t, SQL's highest point"; }
    [ "$(awk '{ s += $NF } END { print s + 0 }' got.folded)" = "$bytes" ] || fail "--from $1 --to $2: not $bytes bytes"
    checked=$((checked + 1))
}
check_range b_done c_done "$(marker b_done)" "$(marker c_done)"
check_range start end "$(marker start)" "$(marker end)"
check_range a_done b_done "$(marker a_done)" "$(marker b_done)"
check_range c_done end "$(marker c_done)" "$(marker end)"
[ "$("$RHEAP" export collapsed p.db --from b_done --to c_done | awk '{ s += $NF } END { print s + 0 }')" = $((150000 + 1048576)) ] ||
    fail "the spike is not the highest point between b_done and c_done"
IFS="|" read -r lo hi <<<"$(sql "SELECT min(alloc_after) + 7, max(alloc_after) - 5 FROM allocations WHERE size = 2000")"
check_range "$lo" "$hi" "$lo" "$hi"
check_range "$lo" "$lo" "$lo" "$lo"

# pprof's inuse at the moment is the same heap.
"$RHEAP" export pprof p.db --at b_done -o at.pb.gz
[ -s at.pb.gz ] || fail "export pprof --at wrote nothing"

# Errors say what was expected.
if "$RHEAP" export collapsed p.db --at nowhere >/dev/null 2>err; then fail "--at nowhere accepted"; fi
grep -qF "rheap: error: p.db: --at: expected a time (1.8s, 250ms, 1200us, 40ns or plain ns since the recording started) or a marker label of the database (a_done, b_done, c_done, end, start); got 'nowhere'" err ||
    { cat err >&2; fail "--at nowhere: message"; }
if "$RHEAP" export collapsed p.db --from a_done >/dev/null 2>err; then fail "--from alone accepted"; fi
grep -qF -- "--from: expected --to too (a range has both ends)" err || { cat err >&2; fail "--from alone: message"; }
if "$RHEAP" export collapsed p.db --from 5ms --to 1ms >/dev/null 2>err; then fail "--from after --to accepted"; fi
grep -qF -- "--from 5ms is after --to 1ms" err || { cat err >&2; fail "--from after --to: message"; }
if "$RHEAP" export collapsed p.db --at 1ms --weight leaked >/dev/null 2>err; then fail "--at with --weight leaked accepted"; fi

# The report's section at the moment: the same heap, its sites largest first.
"$RHEAP" report p.db --raw --at b_done >report.txt || fail "report --at"
pid=$(sql "SELECT pid FROM processes")
grep -qxF "Live at b_done (rheap export collapsed --at b_done)" report.txt || { cat report.txt >&2; fail "report --at: no section"; }
grep -qxF "  pid $pid: 150000 bytes in 100 blocks at $(marker b_done) ns" report.txt || { cat report.txt >&2; fail "report --at: not 150000 bytes in 100 blocks"; }
grep -A4 "^Live at b_done" report.txt | tail -2 | awk '{ print $1, $2, $3 }' >sites.txt
printf '100000 50 hold_b\n50000 50 hold_a\n' | cmp -s - sites.txt || { cat report.txt >&2; fail "report --at: sites"; }
"$RHEAP" report p.db --raw --from b_done --to c_done >report.txt || fail "report --from --to"
spike_t=$(peak_sql "$(marker b_done)" "$(marker c_done)")
grep -qxF "  pid $pid: 1198576 bytes in 101 blocks at ${spike_t% *} ns (of $(marker b_done) ns .. $(marker c_done) ns)" report.txt ||
    { cat report.txt >&2; fail "report --from b_done --to c_done: not the spike"; }
if "$RHEAP" report p.db --at nowhere >/dev/null 2>err; then fail "report --at nowhere accepted"; fi

# The page drawn at a moment: its flamegraph (the peak weight, opened first) is that heap.
if command -v chromium >/dev/null; then
    dom() { # PAGE: the page after its script ran
        local profile
        profile=$(mktemp -d)
        timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
            --disable-background-networking --disable-component-update --disable-sync \
            --user-data-dir="$profile" --window-size=1300,2200 --dump-dom "file://$PWD/$1" 2>/dev/null
        rm -rf "$profile"
    }
    "$RHEAP" report --html -o at.html --at b_done p.db || fail "report --html --at"
    dom at.html >at.dom
    grep -q 'data-ready="1"' at.dom || fail "the page at b_done did not finish drawing"
    grep -q 'data-name="all" data-v="150000"' at.dom || fail "the page at b_done: the whole is not 150000"
    grep -q 'data-name="hold_b" data-v="100000"' at.dom || fail "the page at b_done: hold_b is not 100000"
    grep -q 'data-name="hold_a" data-v="50000"' at.dom || fail "the page at b_done: hold_a is not 50000"
    ! grep -qE 'data-name="(spike|churn|leak)"' at.dom || fail "the page at b_done shows a stack not live then"
    grep -q "class=\"peak\" data-t=\"$(marker b_done)\" data-bytes=\"150000\"" at.dom ||
        fail "the page at b_done: the chart's point is not at the marker"
    "$RHEAP" report --html -o range.html --from b_done --to c_done p.db || fail "report --html --from --to"
    dom range.html >range.dom
    grep -q 'data-name="spike" data-v="1048576"' range.dom || fail "the page from b_done to c_done: no spike"
    grep -q 'data-name="all" data-v="1198576"' range.dom || fail "the page from b_done to c_done: not 1198576"
fi

# checkpoint_stacks holds changes only: no row repeats the figures of its stack's row before, and
# no stack's first row says nothing is live (churn and spike allocate and free between
# checkpoints, which made such rows), while the moments above come out exact.
ckrows=$(sql "SELECT count(*) FROM checkpoint_stacks")
[ "$ckrows" -gt 0 ] || fail "checkpoint_stacks is empty"
redundant=$(sql "WITH x AS (SELECT blocks, bytes, lag(blocks) OVER w AS pb, lag(bytes) OVER w AS py
                 FROM checkpoint_stacks WINDOW w AS (PARTITION BY pid, recording, bt ORDER BY ck))
                 SELECT count(*) FROM x WHERE (pb IS NULL AND blocks = 0 AND bytes = 0)
                                           OR (pb = blocks AND py = bytes)")
[ "$redundant" = 0 ] || fail "checkpoint_stacks: $redundant of $ckrows rows repeat what their stack's row before said"

echo "moment: $checked moments and ranges equal to SQL, $ckrows checkpoint_stacks rows"
