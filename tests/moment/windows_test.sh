#!/bin/bash
# windows_test.sh: `--at` and `--from/--to` outside the windows of a recording. windows.c is
# recorded in two windows of rheap_enable .. rheap_disable (two recordings of one process,
# each timed from its own start); a moment inside both, inside the longer one only, at a
# window's very end, and after both; then, in a copy whose windows rows say that recording 2
# went on late and paused once, a moment before its window and one in its gap.
# Environment (CMake): RHEAP, WINDOWS. RHEAP_TEST_KEEP=1 keeps a failed test's directory.
set -euo pipefail

NAME=run_windows KIND=moment
source "$(dirname "$0")/../testdir.sh"

mkdir rec
"$WINDOWS" rec >run.out 2>&1 || { cat run.out >&2; fail "windows"; }
"$RHEAP" convert -q rec/rip-* -o w.db >conv.out 2>&1 || { cat conv.out >&2; fail "rheap convert"; }
sql() { sqlite3 -batch -bail "${DB:-w.db}" "$@"; }
pid=$(sql "SELECT DISTINCT pid FROM processes")
expect_eq "recordings" "$(sql "SELECT group_concat(recording) FROM processes")" "1,2"
off1=$(sql "SELECT off_t FROM windows WHERE recording = 1")
off2=$(sql "SELECT off_t FROM windows WHERE recording = 2")
[ "$off1" -lt "$off2" ] || fail "window 1 ($off1 ns) is not the shorter ($off2 ns)"
line2=$(grep -n 'two\[i\] = malloc(2000)' "$(dirname "$0")/windows.c" | cut -d: -f1)
ms() { awk -v t="$1" 'BEGIN { printf "%.3f", t / 1e6 }'; }

# live AT: "bytes blocks site" of report --raw --at AT's section, one line per pid line and site.
live() { "$RHEAP" report w.db --raw --at "$1" | sed -n '/^Live at/,/^$/p' | sed '1d;$d'; }

# Inside both windows: each recording's own heap then.
expect_eq "--at 1000 (inside both)" "$(live 1000)" \
"  pid $pid: 0 bytes in 0 blocks at 1000 ns
  pid $pid recording 2: 0 bytes in 0 blocks at 1000 ns
  (nothing live)"
# After window 1 went off, inside window 2: window 1 is not made up; window 2 holds hold_two's.
mid=$(((off1 + off2) / 2))
expect_eq "--at $mid (window 2 only)" "$(live $mid)" \
"  pid $pid: not recording then (recorded 0.000 .. $(ms "$off1") ms)
  pid $pid recording 2: 10000 bytes in 5 blocks at $mid ns
       bytes   blocks  site
       10000        5  hold_two  windows.c:$line2"
"$RHEAP" export collapsed w.db --at "$mid" >mid.folded || fail "export --at $mid"
expect_eq "export --at $mid" "$(sed 's/.*;//' mid.folded)" "hold_two 10000"
# A window's end is inside it: hold_one's blocks were live when window 1 went off.
expect_eq "--at $off1 (window 1's end)" "$(live "$off1" | head -1)" \
    "  pid $pid: 10000 bytes in 10 blocks at $off1 ns"
# After both: no heap is made up; the error names the windows.
want="rheap: error: w.db: --at 1s: no recording was on then; expected a time inside a window, counted from its recording's start (pid $pid: 0.000 .. $(ms "$off1") ms; pid $pid recording 2: 0.000 .. $(ms "$off2") ms)"
for cmd in "report" "export collapsed" "export pprof -o x.pb.gz" "report --html -o x.html"; do
    run e "$RHEAP" $cmd w.db --at 1s
    expect_eq "$cmd --at 1s: status" "$STATUS" 1
    expect_eq "$cmd --at 1s" "$(cat e.err)" "$want"
    [ ! -e x.pb.gz ] && [ ! -e x.html ] || fail "$cmd --at 1s wrote a file"
done
run e "$RHEAP" export collapsed w.db --from 1s --to 2s
expect_eq "--from 1s --to 2s: status" "$STATUS" 1
expect_eq "--from 1s --to 2s" "$(cat e.err)" "rheap: error: w.db: --from 1s --to 2s: no recording was on at any time of it; expected a range that meets a window, counted from its recording's start (pid $pid: 0.000 .. $(ms "$off1") ms; pid $pid recording 2: 0.000 .. $(ms "$off2") ms)"
# A range that meets one window is that window's highest point.
expect_eq "--from $mid --to 1s" "$("$RHEAP" export collapsed w.db --from "$mid" --to 1s | sed 's/.*;//')" "hold_two 10000"

# Windows the converter writes when recording goes on late or pauses: recording 2 on at 1 us,
# off 1 ms after window 1's end and on again 2 ms after it (after hold_two's blocks, so the
# heap is theirs on both sides). Before its window and in its gap it shows nothing; in the
# gap, nothing was recording at all.
cp w.db g.db
gap1=$((off1 + 1000000)) gap2=$((off1 + 2000000))
DB=g.db sql "UPDATE windows SET on_t = 1000, off_t = $gap1 WHERE recording = 2;
    INSERT INTO windows (pid, recording, on_t, on_how, off_t, off_how)
    VALUES ($pid, 2, $gap2, 'signal', $off2, 'api');"
[ "$gap2" -lt "$off2" ] && [ "$gap1" -gt "$off1" ] || fail "the gap is not after window 1 and inside window 2"
"$RHEAP" report g.db --raw --at 500 | sed -n '/^Live at/,/^$/p' | sed '1d;$d' >before.txt
expect_eq "--at 500 (before recording 2's window)" "$(cat before.txt)" \
"  pid $pid: 0 bytes in 0 blocks at 500 ns
  pid $pid recording 2: not recording then (recorded 0.001 .. $(ms "$gap1") ms, $(ms "$gap2") .. $(ms "$off2") ms)
  (nothing live)"
in_gap=$(((gap1 + gap2) / 2))
run e "$RHEAP" report g.db --at "$in_gap"
expect_eq "--at $in_gap (in the gap): status" "$STATUS" 1
expect_eq "--at $in_gap (in the gap)" "$(cat e.err)" "rheap: error: g.db: --at $in_gap: no recording was on then; expected a time inside a window, counted from its recording's start (pid $pid: 0.000 .. $(ms "$off1") ms; pid $pid recording 2: 0.001 .. $(ms "$gap1") ms, $(ms "$gap2") .. $(ms "$off2") ms)"
# Either side of the gap, the heap of window 2 is hold_two's.
expect_eq "--at $gap2" "$("$RHEAP" export collapsed g.db --at "$gap2" | sed 's/.*;//')" "hold_two 10000"
echo "moment: outside windows as expected"
