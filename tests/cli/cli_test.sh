#!/bin/bash
# cli_test.sh CASE: one test of the rheap command line, run in a fresh temporary directory.
# CMake sets the environment: RHEAP (the rheap binary), FAMILY (tests/cli/family.c built),
# LEAKY (examples/leaky), QUERIES (the source tree's queries/), FIXTURES (tests/cli/),
# BUILD_DIR (the build tree, for the install test). RHEAP_TEST_KEEP=1 keeps a failed test's
# directory.
set -euo pipefail

NAME=$1
KIND=cli
. "$(dirname "$0")/../testdir.sh"

# field LINE NAME: the value of NAME=VALUE in a line of words.
field() {
    tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"
}

case_help() {
    for cmd in run attach query report convert dump; do
        run h "$RHEAP" "$cmd" --help
        expect_eq "rheap $cmd --help status" "$STATUS" 0
        grep -q "^Usage: rheap $cmd" h.out || fail "rheap $cmd --help: no usage line"
    done
    run v "$RHEAP" --version
    expect_eq "--version status" "$STATUS" 0
    grep -q '^rheap [0-9]*\.[0-9]*\.[0-9]* ' v.out || fail "--version: $(cat v.out)"
    run m "$RHEAP" --help
    for cmd in run attach report query convert dump; do
        grep -q "^  $cmd " m.out || fail "rheap --help does not list $cmd"
    done
    # Errors say what to do next, and nothing runs.
    touch exists.db
    run e "$RHEAP" run -o exists.db -- touch ran
    expect_eq "existing output status" "$STATUS" 1
    has_line e.err "rheap: error: exists.db exists; use --force to replace it"
    [ ! -e ran ] || fail "the program ran although the output exists"
    run e "$RHEAP" attach -o x.db --depth 0 1
    expect_eq "attach bad depth status" "$STATUS" 1
    has_line e.err "rheap: error: --depth 0: expected a number of frames from 1 to 1024"
    run e "$RHEAP" attach --duration 0 1
    expect_eq "attach bad duration status" "$STATUS" 1
    has_line e.err "rheap: error: --duration 0: expected a time above 0, in seconds or with a unit (250ms, 1.5s)"
    run e "$RHEAP" attach --duration 5x 1
    has_line e.err "rheap: error: --duration 5x: expected a time above 0, in seconds or with a unit (250ms, 1.5s)"
    run e "$RHEAP" attach
    expect_eq "attach no pid status" "$STATUS" 1
    has_line e.err "rheap: error: no PID given (rheap attach [-o OUT.db] PID)"
    run e "$RHEAP" run -o x.db --depth 0 -- touch ran
    expect_eq "bad depth status" "$STATUS" 1
    has_line e.err "rheap: error: --depth 0: expected a number of frames from 1 to 1024"
    run e "$RHEAP" run -o x.db --signal NOPE -- touch ran
    expect_eq "bad signal status" "$STATUS" 1
    run e "$RHEAP" run -o x.db -- ./does-not-exist
    expect_eq "missing program status" "$STATUS" 127
    has_line e.err "rheap: error: cannot run ./does-not-exist: No such file or directory"
    [ ! -e x.db ] || fail "a database was written for a program that never ran"
    [ -z "$(ls -d rheap-run-* 2>/dev/null)" ] || fail "recordings directory left behind"
    run e "$RHEAP" report missing.db
    expect_eq "report of a missing db" "$STATUS" 2
    has_line e.err "rheap: error: missing.db: no such file; make one with rheap run or rheap convert"
    run e "$RHEAP" query leaks exists.db
    expect_eq "query on an empty file" "$STATUS" 2
    has_line e.err "rheap: error: exists.db: empty file, expected a database made by rheap convert"
    # The picture commands and resymbolize parse with getopt_long too, and say so the same way.
    run e "$RHEAP" export collapsed
    expect_eq "export without a database" "$STATUS" 1
    has_line e.err "rheap: error: no database given (rheap export FORMAT DB -o FILE)"
    run e "$RHEAP" export collapsed x.db --output
    expect_eq "export --output without a file" "$STATUS" 1
    has_line e.err "rheap: error: --output needs a file name (try rheap export --help)"
    run e "$RHEAP" export -x collapsed x.db
    expect_eq "export -x" "$STATUS" 1
    has_line e.err "rheap: error: unknown option -x (try rheap export --help)"
    run e "$RHEAP" export --weight=heavy collapsed x.db
    expect_eq "export --weight=heavy" "$STATUS" 1
    has_line e.err "rheap: error: unknown weight 'heavy' (leaked, peak, allocated, allocations, temporary, live-at-stop)"
    run e "$RHEAP" export collapsed a.db b.db
    expect_eq "export of two databases" "$STATUS" 1
    has_line e.err "rheap: error: one database at a time (try rheap export --help)"
    run e "$RHEAP" export jpeg missing.db
    expect_eq "export jpeg" "$STATUS" 1
    has_line e.err "rheap: error: unknown format 'jpeg' (collapsed, pprof)"
    run e "$RHEAP" export collapsed missing.db
    expect_eq "export of a missing db" "$STATUS" 2
    has_line e.err "rheap: error: missing.db: no such file; make one with rheap run or rheap convert"
    run e "$RHEAP" diff a.db b.db c.db
    expect_eq "diff of three databases" "$STATUS" 1
    has_line e.err "rheap: error: two databases, BASE and NEW (try rheap diff --help)"
    run e "$RHEAP" diff --bogus a.db b.db
    expect_eq "diff --bogus" "$STATUS" 1
    has_line e.err "rheap: error: unknown option --bogus (try rheap diff --help)"
    run e "$RHEAP" report --html missing.db
    expect_eq "report --html without -o" "$STATUS" 1
    has_line e.err "rheap: error: --html needs -o FILE (rheap report --html -o FILE DB)"
    run e "$RHEAP" report --html missing.db -o
    expect_eq "report --html -o without a file" "$STATUS" 1
    has_line e.err "rheap: error: -o needs a file name (try rheap report --help)"
    run e "$RHEAP" resymbolize -qz missing.db
    expect_eq "resymbolize -qz" "$STATUS" 1
    has_line e.err "rheap: error: unknown option -z (try rheap resymbolize --help)"
    run e "$RHEAP" resymbolize missing.db --debug-dir
    expect_eq "resymbolize --debug-dir without a directory" "$STATUS" 1
    has_line e.err "rheap: error: --debug-dir needs a directory (try rheap resymbolize --help)"
    run e "$RHEAP" resymbolize a.db b.db
    expect_eq "resymbolize of two databases" "$STATUS" 1
    has_line e.err "rheap: error: one database at a time (try rheap resymbolize --help)"
    run e "$RHEAP" frobnicate
    expect_eq "unknown command status" "$STATUS" 1
    has_line e.err "rheap: error: 'frobnicate' is neither a command nor a recording directory (try rheap --help)"
    # A word close to a command or a query name is taken for a typo of it.
    run e "$RHEAP" qeury leaks x.db
    expect_eq "mistyped command status" "$STATUS" 1
    expect_eq "mistyped command" "$(cat e.err)" "rheap: error: unknown command 'qeury'; did you mean 'query'?"
    run e "$RHEAP" repot x.db
    expect_eq "mistyped report" "$(cat e.err)" "rheap: error: unknown command 'repot'; did you mean 'report'?"
    run e "$RHEAP" query leak x.db
    expect_eq "mistyped query status" "$STATUS" 1
    expect_eq "mistyped query" "$(cat e.err)" "rheap: error: no query named 'leak' in $QUERIES; did you mean 'leaks'?"
    run e "$RHEAP" query top_sites x.db
    expect_eq "mistyped top-sites" "$(cat e.err)" "rheap: error: no query named 'top_sites' in $QUERIES; did you mean 'top-sites'?"
}

# A forked child and an exec'd child: one database, exact counts per process, parent links.
case_run_tree() {
    run r "$RHEAP" run -o tree.db -- "$FAMILY" tree
    expect_eq "status" "$STATUS" 0
    line=$(grep '^parent=' r.out) || fail "program output missing: $(cat r.out r.err)"
    p=$(field "$line" parent)
    c=$(field "$line" child)
    e=$(field "$line" exec)
    sql tree.db "SELECT pid, size, count(*), count(dealloc_after) FROM allocations
                 GROUP BY pid, size ORDER BY pid, size" >got.txt
    printf '%s\n' "$p|1111|7|4" "$c|2222|5|0" "$e|3333|3|1" >want.txt
    diff want.txt got.txt || fail "allocations per process differ"
    # The exec'd child has two recordings under one pid: before and after the exec.
    sql tree.db "SELECT pid, recording, ppid FROM processes ORDER BY pid, recording" >got.txt
    rheap_pid=$(sql tree.db "SELECT ppid FROM processes WHERE pid = $p")
    printf '%s\n' "$p|1|$rheap_pid" "$c|1|$p" "$e|1|$p" "$e|2|$p" >want.txt
    diff want.txt got.txt || fail "process tree differs"
    expect_eq "leaf cmdline" "$(sql tree.db "SELECT cmdline FROM processes WHERE pid = $e AND recording = 2")" \
        "family leaf"
    # Processes are counted by pid: the exec'd image is a second recording of the same process.
    has_line r.err "rheap: 3 processes, 15 allocations, 5 frees, 28886 bytes (28.2 KiB) allocated"
    has_line r.err "rheap: processes, most bytes allocated first:"
    has_line r.err "rheap: never freed: 21109 bytes (20.6 KiB) in 10 blocks"
    # The time is rounded by C's printf, as rheap prints it (SQLite's printf rounds a half up
    # in decimal: 3801500 ns reads 3.802 ms there and 3.801 ms in C).
    peak_t=$(sql tree.db "SELECT max(alloc_after) FROM allocations WHERE pid = $c")
    has_line r.err "rheap: peak live heap 11110 bytes (10.8 KiB) at $(
        awk -v t="$peak_t" 'BEGIN { printf "%.3f ms", t / 1e6 }'), pid $c"
    grep -q '^rheap: *5  10\.8 KiB  blocks *.*family\.c:[0-9]* *[0-9]* *1  '"$c"'$' r.err || fail "top leak line: $(cat r.err)"
    # Removed by a process of rheap's that outlives it.
    no_recordings() { [ -z "$(ls -d rheap-run-* 2>/dev/null)" ]; }
    wait_for "recordings removed" no_recordings
}

# The summary of rheap run leaves out what the built-in suppression list takes, as report does:
# examples/leaky leaks 10 connections of 4096 bytes and 100 sessions of 48, and its printf's
# stdio buffer (4096 bytes) is never freed either.
case_run_suppressed() {
    run r "$RHEAP" run -o leaky.db -- "$LEAKY"
    expect_eq "status" "$STATUS" 0
    has_line r.err "rheap: never freed: 45760 bytes (44.7 KiB) in 110 blocks"
    has_line r.err "rheap: suppressed: 4096 bytes (4.0 KiB) in 1 blocks"
    has_line r.err "rheap:   (rheap report --no-default-suppressions shows them)"
    grep -q "^rheap: .* main .*leaky\.c" r.err && fail "the stdio buffer is listed: $(cat r.err)"
    return 0
}

# The program exits before its child: rheap waits for the orphan and records it too.
# A tree of many short processes, as a build makes: ten `family tree` one after another, 40
# processes in all (each a parent, a forked child, and a child that execs, whose recording
# before the exec is complete once the next one appears). rheap run converts each finished one
# while the shell goes on; the database holds exact counts per process, the same content as a
# conversion of the kept recordings after the run, and one stack per call site across every
# process of the same executable (its module symbolized once, the same file:line for all).
case_run_tree_many() {
    run r "$RHEAP" run -q --keep -o many.db -- sh -c \
        "for i in 1 2 3 4 5 6 7 8 9 10; do \"$FAMILY\" tree || exit 1; sleep 0.05; done"
    expect_eq "status" "$STATUS" 0
    expect_eq "family trees" "$(grep -c '^parent=' r.out)" 10
    : >want.txt
    grep '^parent=' r.out | while read -r line; do
        printf '%s\n' "$(field "$line" parent)|1111|7|4" "$(field "$line" child)|2222|5|0" \
            "$(field "$line" exec)|3333|3|1" >>want.txt
    done
    sort want.txt -o want.txt
    sql many.db "SELECT pid, size, count(*), count(dealloc_after) FROM allocations
                 WHERE size IN (1111, 2222, 3333) GROUP BY pid, size" | sort >got.txt
    diff want.txt got.txt || fail "allocations per process differ"
    fam="(pid, recording) IN (SELECT pid, recording FROM processes WHERE exe LIKE '%/cli_family')"
    expect_eq "family recordings" "$(sql many.db "SELECT count(*) FROM processes WHERE $fam")" 40
    expect_eq "summary per process" "$(sql many.db "SELECT count(*), sum(allocs), sum(frees),
        sum(leaked_bytes) FROM recording_stats WHERE allocs > 0 AND $fam")" "30|150|50|211090"
    # One stack per size across the 30 processes that allocated it, at blocks' malloc.
    line=$(grep -n 'p\[i\] = malloc(size);' "$FIXTURES/family.c" | cut -d: -f1)
    sql many.db "SELECT a.size, count(DISTINCT a.pid), count(DISTINCT a.bt), s.function, s.location
                 FROM allocations AS a JOIN stacks AS s ON s.id = a.bt
                 WHERE a.size IN (1111, 2222, 3333) GROUP BY a.size ORDER BY a.size" >got.txt
    printf '%s\n' "1111|10|1|blocks|$FIXTURES/family.c:$line" "2222|10|1|blocks|$FIXTURES/family.c:$line" \
        "3333|10|1|blocks|$FIXTURES/family.c:$line" >want.txt
    diff want.txt got.txt || fail "stacks across processes differ"
    expect_eq "family modules symbolized" "$(sql many.db "SELECT count(DISTINCT path) FROM modules
        WHERE path LIKE '%/cli_family' AND status = 'ok'")" 1
    # The report's peak lines: the ten recordings with the largest peaks, then how many more.
    run rep "$RHEAP" report --raw many.db
    expect_eq "status of report" "$STATUS" 0
    expect_eq "ten peak lines" "$(sed -n 's/^  peak live heap \([0-9]*\) bytes.*, pid \([0-9]*\)$/\1 \2/p' rep.out)" \
        "$(sql many.db "SELECT peak_bytes, pid FROM recording_stats WHERE allocs > 0
                        ORDER BY peak_bytes DESC, pid, recording LIMIT 10" | tr '|' ' ')"
    more=$(sql many.db "SELECT count(*) - 10 FROM recording_stats WHERE allocs > 0")
    [ "$more" -gt 20 ] || fail "only $more recordings beyond the ten"
    has_line rep.out "  ... $more more recordings, smaller peaks"
    kept=$(sed -n 's/^rheap: recordings kept in //p' r.err)
    [ -n "$kept" ] || fail "--keep did not say where: $(cat r.err)"
    # With fewer open files allowed than there are recordings: a recording's directory is open
    # only while it converts.
    nrec=$(ls -d "$kept"/rip-* | wc -l)
    [ "$nrec" -gt 40 ] || fail "only $nrec recordings kept"
    run c bash -c 'ulimit -n 32 && exec "$@"' limited "$RHEAP" convert -q "$kept"/rip-* -o batch.db
    expect_eq "convert status (32 open files, $nrec recordings)" "$STATUS" 0
    sqlite3 -readonly many.db <"$CANONICAL" >many.txt
    sqlite3 -readonly batch.db <"$CANONICAL" >batch.txt
    cmp -s many.txt batch.txt || { diff many.txt batch.txt | head -5 >&2; fail "run and batch databases differ"; }
}

# Ten family trees at once: their 40 recordings end together and convert two at a time (the
# conversion's two workers; meta.overlapped_recordings counts those begun beside another), with
# each process's blocks exact, and the database the same as a one-worker conversion of the kept
# recordings.
case_run_workers() {
    run r "$RHEAP" run -q --keep -o w.db -- sh -c \
        "for i in 1 2 3 4 5 6 7 8 9 10; do \"$FAMILY\" tree & done; wait"
    expect_eq "status" "$STATUS" 0
    expect_eq "family trees" "$(grep -c '^parent=' r.out)" 10
    : >want.txt
    grep '^parent=' r.out | while read -r line; do
        printf '%s\n' "$(field "$line" parent)|1111|7|4|7777" "$(field "$line" child)|2222|5|0|11110" \
            "$(field "$line" exec)|3333|3|1|9999" >>want.txt
    done
    sort want.txt -o want.txt
    sql w.db "SELECT pid, size, count(*), count(dealloc_after), sum(size) FROM allocations
              WHERE size IN (1111, 2222, 3333) GROUP BY pid, size" | sort >got.txt
    diff want.txt got.txt || fail "allocations per process differ"
    fam="(pid, recording) IN (SELECT pid, recording FROM processes WHERE exe LIKE '%/cli_family')"
    expect_eq "summary per process" "$(sql w.db "SELECT count(*), sum(allocs), sum(frees),
        sum(leaked_bytes) FROM recording_stats WHERE allocs > 0 AND $fam")" "30|150|50|211090"
    over=$(sql w.db "SELECT value FROM meta WHERE key = 'overlapped_recordings'")
    [ "${over:-0}" -ge 1 ] || fail "no recording was converted beside another (overlapped_recordings: $over)"
    kept=$(sed -n 's/^rheap: recordings kept in //p' r.err)
    [ -n "$kept" ] || fail "--keep did not say where: $(cat r.err)"
    run c "$RHEAP" convert -q "$kept"/rip-* -o one.db
    expect_eq "convert status" "$STATUS" 0
    expect_eq "one worker's overlaps" "$(sql one.db "SELECT value FROM meta
        WHERE key = 'overlapped_recordings'")" 0
    sqlite3 -readonly w.db <"$CANONICAL" >w.txt
    sqlite3 -readonly one.db <"$CANONICAL" >one.txt
    cmp -s w.txt one.txt || { diff w.txt one.txt | head -5 >&2; fail "run and batch databases differ"; }
}

# A process that starts others (a build's driver) is not followed while it runs, though it holds
# most of the run's bytes: every event converts after its end (live_events 0), and its child's
# recording was not held behind it.
case_run_driver() {
    run r "$RHEAP" run -q -o d.db -- "$FAMILY" driver
    expect_eq "status" "$STATUS" 0
    expect_eq "driver's blocks" "$(sql d.db "SELECT size, count(*), count(dealloc_after)
        FROM allocations WHERE size IN (48, 1111, 1234, 3333) GROUP BY size")" "$(printf '%s\n' \
        "48|1500000|1500000" "1111|1|1" "1234|2|0" "3333|3|1")"
    expect_eq "recordings (the child forked, then executed)" "$(sql d.db "SELECT count(*) FROM processes")" 3
    expect_eq "events merged while their recording grew" \
        "$(sql d.db "SELECT value FROM meta WHERE key = 'live_events'")" 0
}

# A recording whose process executed another program is complete: it converts at once, not
# followed while the new program runs (live_events 0; a build's driver executes ninja so).
case_run_exec_wait() {
    run r "$RHEAP" run -q -o x.db -- "$FAMILY" execnap
    expect_eq "status" "$STATUS" 0
    expect_eq "blocks per recording" "$(sql x.db "SELECT recording, size, count(*),
        count(dealloc_after) FROM allocations GROUP BY recording, size")" "$(printf '%s\n' \
        "1|3210|3|1" "2|1234|2|0")"
    expect_eq "events merged while their recording grew" \
        "$(sql x.db "SELECT value FROM meta WHERE key = 'live_events'")" 0
}

case_run_orphan() {
    run r "$RHEAP" run -o o.db -- "$FAMILY" orphan
    expect_eq "status" "$STATUS" 0
    p=$(field "$(grep '^parent=' r.out)" parent)
    o=$(field "$(grep '^orphan=' r.out)" orphan)
    [ -n "$o" ] || fail "the orphan's output is missing: rheap did not wait for it"
    expect_eq "orphan's blocks" "$(sql o.db "SELECT count(*) || ' ' || sum(size) FROM allocations WHERE pid = $o")" "4 17776"
    expect_eq "orphan's parent" "$(sql o.db "SELECT ppid FROM processes WHERE pid = $o")" "$p"
}

case_run_status() {
    run r "$RHEAP" run -q -o s0.db -- "$FAMILY" exit 0
    expect_eq "exit 0" "$STATUS" 0
    [ ! -s r.err ] || fail "-q printed: $(cat r.err)"
    run r "$RHEAP" run -o s3.db -- "$FAMILY" exit 3
    expect_eq "exit 3" "$STATUS" 3
    has_line r.err "rheap: the program exited with status 3"
    expect_eq "blocks of exit 3" "$(sql s3.db "SELECT count(*) FROM allocations WHERE size = 1234")" 2
    run r "$RHEAP" run -o s9.db -- "$FAMILY" kill
    expect_eq "SIGKILL" "$STATUS" 137
    has_line r.err "rheap: the program was killed by signal 9 (Killed); exit status 137"
    # What a killed process still had in its buffers is gone, but its process is in the database.
    expect_eq "killed process recorded" "$(sql s9.db "SELECT count(*) FROM processes")" 1
    # --force replaces; a shell's own status passes through too.
    run r "$RHEAP" run -f -q -o s3.db -- sh -c 'exit 42'
    expect_eq "sh exit 42" "$STATUS" 42
    # A directory as output is refused before the program runs, even with --force.
    mkdir outdir
    run r "$RHEAP" run -f -o outdir -- sh -c 'echo ran'
    expect_eq "directory output" "$STATUS" 1
    [ ! -s r.out ] || fail "the program ran: $(cat r.out)"
    has_line r.err "rheap: error: outdir is a directory; give the database file to write"
    # Without -o: rheap-PROG.db, then rheap-PROG.2.db beside it, never replacing; rheap says
    # which.
    mkdir noout && cd noout
    run e "$RHEAP" run -q -- "$FAMILY" exit 0
    expect_eq "no -o status" "$STATUS" 0
    has_line e.err "rheap: no -o given: writing rheap-cli_family.db"
    expect_eq "no -o database" "$(sql rheap-cli_family.db "SELECT count(*) FROM allocations WHERE size = 1234")" 2
    run e "$RHEAP" run -q -- "$FAMILY" exit 0
    has_line e.err "rheap: no -o given: writing rheap-cli_family.2.db"
    expect_eq "second no -o database" "$(sql rheap-cli_family.2.db "SELECT count(*) FROM allocations")" 2
    cd ..
}

case_run_stop_waiting() {
    # The program exits at once, leaving a process in its own session that would run for a
    # minute: SIGTERM to rheap ends the wait, and what was recorded is converted.
    "$RHEAP" run -o w.db -- sh -c 'setsid sleep 61.25 </dev/null >/dev/null 2>&1 & exit 0' \
        >w.out 2>w.err &
    local rp=$! i
    for i in $(seq 100); do grep -q 'waiting for the processes it started' w.err && break; sleep 0.05; done
    grep -q 'waiting for the processes it started' w.err || fail "rheap is not waiting: $(cat w.err)"
    kill -TERM "$rp"
    STATUS=0
    wait "$rp" || STATUS=$?
    pkill -f 'sleep 61.25' || true
    expect_eq "status after stopping the wait" "$STATUS" 0
    grep -q '^rheap: stopped waiting' w.err || fail "no 'stopped waiting' line: $(cat w.err)"
    [ "$(sql w.db "SELECT count(*) FROM processes")" -ge 1 ] || fail "nothing converted"
}

# A program still busy when its recording passes a megabyte is converted while it runs: the
# database is the one `rheap convert` writes from the finished recordings, and its meta table
# says how many events were converted before the program ended.
case_run_live() {
    run r "$RHEAP" run --keep -o live.db -- sh -c "$BUSY; echo done"
    expect_eq "status" "$STATUS" 0
    kept=$(sed -n 's/^rheap: recordings kept in //p' r.err)
    [ -n "$kept" ] || fail "--keep did not say where: $(cat r.err)"
    live=$(sql live.db "SELECT value FROM meta WHERE key = 'live_events'")
    events=$(sql live.db "SELECT value FROM meta WHERE key = 'events'")
    [ "$live" -gt 0 ] && [ "$live" -lt "$events" ] ||
        fail "$live of $events events converted while the program ran"
    busy="pid = (SELECT pid FROM processes WHERE exe LIKE '%/cli_busy')"
    sql live.db "SELECT size, count(*), count(dealloc_after), count(DISTINCT alloc_thread)
                 FROM allocations WHERE $busy AND size IN (4444, 5555, 7777) GROUP BY size" >got.txt
    printf '%s\n' "4444|2000|2000|2" "5555|10|0|2" "7777|7|0|1" >want.txt
    diff want.txt got.txt || fail "blocks of the known sizes differ"
    expect_eq "churned blocks" "$(sql live.db "SELECT count(*) FROM allocations
        WHERE $busy AND size BETWEEN 100 AND 263 AND dealloc_after IS NOT NULL
          AND dealloc_thread = alloc_thread")" $((288000 + 2 * 64000))
    expect_eq "handed blocks freed by the main thread" "$(sql live.db "SELECT count(*)
        FROM allocations WHERE size = 4444 AND dealloc_thread = pid")" 2000
    run c "$RHEAP" convert -q "$kept"/rip-* -o batch.db
    expect_eq "convert status" "$STATUS" 0
    sqlite3 -readonly live.db <"$CANONICAL" >live.txt
    sqlite3 -readonly batch.db <"$CANONICAL" >batch.txt
    cmp -s live.txt batch.txt || { diff live.txt batch.txt | head -5 >&2; fail "live and batch databases differ"; }
}

case_run_options() {
    mkdir recs
    run r "$RHEAP" run --keep --dir recs --depth 3 --sample-rate 0.5 --progress -o k.db -- "$FAMILY" exit 0
    expect_eq "status" "$STATUS" 0
    grep -q 'rheap: converting \[#\{40\}\] 100% ' r.err || fail "--progress drew no full bar: $(cat r.err)"
    kept=$(sed -n 's/^rheap: recordings kept in //p' r.err)
    [ -n "$kept" ] || fail "--keep did not say where: $(cat r.err)"
    case "$kept" in "$WORK/recs/rheap-run-"*) ;; *) fail "kept in $kept, not under --dir" ;; esac
    ls -d "$kept"/rip-* >/dev/null || fail "no rip-* directory in $kept"
    expect_eq "depth and rate" "$(sql k.db "SELECT stack_depth || ' ' || sample_ppm FROM processes")" "3 500000"
    # Off from the start and never toggled: nothing recorded, nothing written.
    run r "$RHEAP" run --off --signal USR2 -o off.db -- "$FAMILY" exit 0
    expect_eq "--off status" "$STATUS" 2
    has_line r.err "rheap: error: no recording was made (recording stayed off); off.db not written"
    [ ! -e off.db ] || fail "off.db written"
    # Off, and toggled on and off again by the program itself with the --signal.
    run r "$RHEAP" run --no-progress --off --signal USR2 -o tg.db -- "$FAMILY" toggle
    expect_eq "toggle status" "$STATUS" 0
    expect_eq "recorded between the toggles" \
        "$(sql tg.db "SELECT size, count(*), count(dealloc_after) FROM allocations GROUP BY size")" "3210|3|1"
    expect_eq "window" "$(sql tg.db "SELECT on_how, off_how FROM windows")" "signal|signal"
    # The program runs 10 steps of nice below rheap by default, --nice N steps, relative to
    # rheap's own (the kernel stops at 19); 0 keeps rheap's. `nice` without arguments prints the
    # niceness it runs at.
    local base
    base=$(nice)
    below() { echo $(($1 + $2 > 19 ? 19 : $1 + $2)); }
    run r "$RHEAP" run -q -o n1.db -- nice
    expect_eq "default nice" "$(cat r.out)" "$(below "$base" 10)"
    run r "$RHEAP" run -q --nice 0 -o n2.db -- nice
    expect_eq "--nice 0" "$(cat r.out)" "$base"
    run r nice -n 3 "$RHEAP" run -q --nice=5 -o n3.db -- nice
    expect_eq "--nice=5 under nice 3" "$(cat r.out)" "$(below "$(below "$base" 3)" 5)"
    run r "$RHEAP" run -q --nice 20 -o n4.db -- nice
    expect_eq "--nice 20 status" "$STATUS" 1
    has_line r.err "rheap: error: --nice 20: expected a number from 0 to 19"
}

# A window (recording toggled on and off by the signal while the program went on): no output
# calls its blocks leaked; each says they were still live when recording stopped, and points to
# growth. family toggle records 3 blocks of 3210 bytes in the window and frees one.
case_window_outputs() {
    run r "$RHEAP" run --no-progress --off --signal USR2 -o w.db -- "$FAMILY" toggle
    expect_eq "status" "$STATUS" 0
    expect_eq "recording_ends" "$(sql w.db "SELECT off_how, until_exit FROM recording_ends")" "signal|0"
    has_line r.err "rheap: live at stop: 6420 bytes (6.3 KiB) in 2 blocks"
    has_line r.err "rheap:   its process went on; rheap query growth w.db shows what grew"
    ! grep -qi "never freed" r.err || fail "the summary says never freed: $(cat r.err)"
    run rep "$RHEAP" report w.db
    has_line rep.out "  live at stop     2 blocks, 6420 bytes (6.3 KiB)"
    has_line rep.out "  (none known: no recording lasted until its process ended; see live at stop)"
    ! grep -qi "never freed" rep.out || fail "the report says never freed: $(cat rep.out)"
    # The canned queries: leaks has no row, the never-freed columns are empty, growth counts them.
    run q "$RHEAP" query leaks w.db --csv
    expect_eq "leaks rows" "$(tail -n +2 q.out)" ""
    has_lines q.err "rheap: 1 recording stopped while the process went on (a window): blocks still
rheap:   live then are not leaks and not counted as such; rheap query growth
rheap:   w.db shows what grew"
    expect_eq "threads" "$("$RHEAP" query threads w.db --csv 2>/dev/null | tail -n +2 | cut -d, -f3-8)" "3,9630,1,3210,,"
    expect_eq "sizes" "$("$RHEAP" query sizes w.db --csv 2>/dev/null | tail -n +2 | cut -d, -f3-6)" "3,9630,,"
    expect_eq "lifetimes" "$("$RHEAP" query lifetimes w.db --csv 2>/dev/null | tail -n +2 | cut -d, -f1-3)" "3,1,"
    expect_eq "growth" "$("$RHEAP" query growth w.db --csv 2>/dev/null | tail -n +2 | cut -d, -f1,2)" "2,6420"
    # diff without markers: from the start to the end, the end being the last event.
    expect_eq "query diff" "$("$RHEAP" query diff w.db --csv 2>/dev/null | tail -n +2 | cut -d, -f5,6,9,10)" \
        "2,6420,0,$(sql w.db "SELECT end_ns FROM recording_stats")"
    # Exports: nothing under leaked, the blocks under live-at-stop; pprof's inuse says what it is.
    run c "$RHEAP" export collapsed w.db
    expect_eq "collapsed leaked" "$(cat c.out)" ""
    has_lines c.err "rheap: 2 blocks, 6420 bytes still live when a window's recording stopped are not
rheap:   leaks; --weight live-at-stop shows them"
    run c "$RHEAP" export collapsed w.db --weight live-at-stop
    expect_eq "collapsed live-at-stop" "$(awk '{ s += $NF } END { print NR, s }' c.out)" "1 6420"
    "$RHEAP" export pprof w.db -o w.pb.gz || fail "export pprof"
    zcat w.pb.gz | grep -aq "inuse = never freed before the process ended or, in a window" ||
        fail "pprof has no comment on inuse"
    # The page: no never-freed card; the live-at-stop figures in its data.
    "$RHEAP" report --html -o w.html w.db || fail "report --html"
    grep -q '"until_exit":0,"stopped_blocks":2,"stopped_bytes":6420' w.html || fail "page data: $(grep -o '"leaked_blocks[^}]*' w.html | head -1)"
    # diff: leaked columns hold leaks only, and a note says what was left out.
    run d "$RHEAP" diff w.db w.db
    has_lines d.err "rheap: w.db: 6420 bytes still live when a window's recording stopped are not
rheap:   leaks, nor in the leaked columns"
}

# One story across processes: sh running family and leaky (examples/leaky.c), three
# executables. The report's sections rank sites across processes by their figure, as SQL over
# every process does; the peak lines say the peaks were not live at once; the page labels each
# frame with its own module (both programs have a `_start` without a source line); pprof's
# first mapping, the one it names as the program, is the root's executable.
case_run_tree_story() {
    run r "$RHEAP" run -q -o mix.db -- sh -c "\"$FAMILY\" exit 0; \"$LEAKY\""
    expect_eq "status" "$STATUS" 0
    expect_eq "executables" "$(sql mix.db "SELECT count(DISTINCT exe) FROM processes")" 3
    run rep "$RHEAP" report --raw --wide mix.db
    # section HEADING: "bytes pid" of its rows, as printed.
    section() {
        sed -n "/^$1/,/^\$/p" rep.out | awk '$1 ~ /^[0-9]+$/ && NF >= 7 { print $2, $NF }'
    }
    site_sql() { # the SQL of a section: a figure of stack_stats per site, across processes
        sql mix.db "SELECT sum(s.$1), s.pid FROM stack_stats AS s LEFT JOIN stacks AS k ON k.id = s.bt
                    WHERE s.$1 > 0 GROUP BY s.pid, s.recording, k.function, k.location
                    ORDER BY 1 DESC, sum(s.${1%bytes}blocks) DESC, k.function, k.location, s.pid LIMIT 10" | tr '|' ' '
    }
    expect_eq "top-sites across processes" "$(section "Top allocating sites")" "$(site_sql bytes)"
    expect_eq "peak across processes" "$(section "Peak live heap")" "$(site_sql peak_bytes)"
    [ "$(section "Top allocating sites" | awk '{ print $2 }' | sort -u | wc -l)" -ge 2 ] ||
        fail "top-sites shows one process only: $(cat rep.out)"
    expect_eq "peak lines" "$(sed -n 's/^  peak live heap \([0-9]*\) bytes.*, pid \([0-9]*\)$/\1 \2/p' rep.out)" \
        "$(sql mix.db "SELECT peak_bytes, pid FROM recording_stats WHERE allocs > 0 ORDER BY peak_bytes DESC, pid LIMIT 10" | tr '|' ' ')"
    has_line rep.out "  (each process's own peak, at a moment of its own: never live at once)"
    "$RHEAP" report --html -o mix.html mix.db || fail "report --html"
    expect_eq "_start frames" "$(grep -o '\["_start",null,0,0,"[^"]*"\]' mix.html | sort)" \
        "$(printf '["_start",null,0,0,"%s"]\n' "$LEAKY" "$FAMILY" | sort)"
    if command -v go >/dev/null; then
        export HOME=$PWD/home GOCACHE=$PWD/gocache GOTOOLCHAIN=local
        mkdir -p "$HOME"
        "$RHEAP" export pprof mix.db -o mix.pb.gz 2>/dev/null || fail "export pprof"
        root=$(sql mix.db "SELECT exe FROM processes ORDER BY start_ns LIMIT 1")
        expect_eq "pprof's program" "$(go tool pprof -top mix.pb.gz 2>/dev/null | sed -n 's/^File: //p')" "${root##*/}"
    fi
}

# What a person sees at 80 columns: sh running family and leaky (three processes) and a
# window recording, every output with COLUMNS=80: no line wider, every function name of the
# rows whole (as the CSV has it), the figures exact.
case_fit_80() {
    export COLUMNS=80
    run r "$RHEAP" run -o mix.db -- sh -c "\"$FAMILY\" exit 0; \"$LEAKY\""
    expect_eq "status" "$STATUS" 0
    run w "$RHEAP" run --no-progress --off --signal USR2 -o w.db -- "$FAMILY" toggle
    # fits FILE WHAT: no line of FILE wider than 80 columns.
    fits() {
        local n
        n=$(awk 'length($0) > 80' "$1" | wc -l)
        [ "$n" -eq 0 ] || { cat "$1" >&2; fail "$2: $n lines wider than 80 columns"; }
    }
    # whole FILE DB QUERY: each function of QUERY's rows on DB stands whole in FILE.
    whole() {
        "$RHEAP" query "$3" "$2" --csv 2>/dev/null |
            python3 -c 'import csv, sys; [print(r["function"]) for r in csv.DictReader(sys.stdin)]' |
            sort -u >functions.txt
        [ -s functions.txt ] || fail "$3 on $2: no function"
        while read -r f; do
            grep -qE "(^| )$(printf '%s' "$f" | sed 's/[][\.*^$+?(){}|]/\\&/g')( |$)" "$1" ||
                { cat "$1" >&2; fail "$3 on $2: function '$f' not whole"; }
        done <functions.txt
    }
    fits r.err "run's summary of the tree"
    fits w.err "run's summary of the window"
    for db in mix.db w.db; do
        "$RHEAP" report "$db" >rep.txt || fail "report $db"
        fits rep.txt "report $db"
        "$RHEAP" report --stacks "$db" >rep.txt || fail "report --stacks $db"
        fits rep.txt "report --stacks $db"
        for f in "$QUERIES"/*.sql; do
            q=$(basename "$f" .sql)
            "$RHEAP" query "$q" "$db" >q.txt 2>q.err || fail "query $q $db"
            fits q.txt "query $q $db"
            fits q.err "query $q $db's notes"
            case $q in
            leaks) [ "$db" = w.db ] || whole q.txt "$db" "$q" ;;
            peak | top-sites | lifetimes) whole q.txt "$db" "$q" ;;
            esac
        done
        for f in collapsed pprof; do
            rm -f e.out
            "$RHEAP" export "$f" "$db" -o e.out 2>e.err || fail "export $f $db"
            fits e.err "export $f $db's notes"
        done
    done
    "$RHEAP" diff w.db mix.db >d.txt 2>d.err || fail "diff"
    fits d.txt "diff"
    fits d.err "diff's notes"
    # Exact figures as a person reads them: leaky's biggest leak leads the tree's leaks.
    "$RHEAP" report mix.db >rep.txt
    # The tree's leaks open with leaky's biggest, one line a site, with the pid (the location
    # whole or without its directories, as the checkout's path length decides).
    pid=$(sql mix.db "SELECT pid FROM processes WHERE exe = '$LEAKY'")
    sed -n '/^Top leaks by site/,/^$/p' rep.txt | sed -n 4p >top.txt
    grep -qE "^ +10 +40\.0 KiB +open_connection +(.*/)?leaky\.c:51 +[0-9]+ +$pid\$" top.txt ||
        { cat rep.txt >&2; fail "the tree's first leak is not open_connection's 40.0 KiB"; }
    # The window's growth: the numbers on the row's lines, the site on a line of its own.
    "$RHEAP" query growth w.db >g.txt 2>/dev/null
    line=$(grep -n 'p\[i\] = malloc(size);' "$FIXTURES/family.c" | cut -d: -f1)
    grep -qE '^ +2 +6420 +1 +[0-9]+ +[0-9,]*6420[0-9,]*$' g.txt && grep -qE "^    blocks +family\\.c:$line\$" g.txt ||
        { cat g.txt >&2; fail "growth of the window at 80 columns"; }
}

# The line naming what suppressions took out is wrapped to the width as the rest of the report
# is: leaky's three leaks (stdio's 4096-byte buffer, 100 x 48 bytes of remember_session, 10 x
# 4096 of open_connection) taken out by the built-in list and two files; the line breaks before
# a file, never inside a rule's name, and --wide keeps it whole.
case_report_suppress_80() {
    export COLUMNS=80
    run r "$RHEAP" run -q -o s.db -- "$LEAKY"
    expect_eq "run status" "$STATUS" 0
    printf 'leak:remember_session\n' >user-sessions-kept-on-purpose.supp
    printf 'leak:open_connection\nleak:no_such_function\n' >connections-pooled-for-reuse.supp
    set -- --suppress user-sessions-kept-on-purpose.supp --suppress connections-pooled-for-reuse.supp
    run rep "$RHEAP" report "$@" s.db
    expect_eq "report status" "$STATUS" 0
    awk 'length($0) > 80 { print NR ": " $0; bad = 1 } END { exit bad }' rep.out >&2 ||
        fail "report with suppressions is wider than 80 columns"
    expect_eq "report's suppressed lines" "$(sed -n '/^  never freed/,/^  processes/p' rep.out)" \
        "  never freed      0 blocks, 0 bytes
  suppressed: 111 blocks, 49856 bytes (default list: stdio buffers;
    user-sessions-kept-on-purpose.supp: remember_session;
    connections-pooled-for-reuse.supp: open_connection)
  processes        1"
    run rep "$RHEAP" report --wide "$@" s.db
    has_line rep.out "  suppressed: 111 blocks, 49856 bytes (default list: stdio buffers; user-sessions-kept-on-purpose.supp: remember_session; connections-pooled-for-reuse.supp: open_connection)"
    # The same words on query's and export's stderr, each line a message's.
    run q "$RHEAP" query leaks "$@" s.db
    expect_eq "query's note" "$(cat q.err)" \
        "rheap: suppressed: 111 blocks, 49856 bytes (default list: stdio buffers;
rheap:   user-sessions-kept-on-purpose.supp: remember_session;
rheap:   connections-pooled-for-reuse.supp: open_connection)"
    run e "$RHEAP" export collapsed "$@" --no-default-suppressions s.db
    expect_eq "export's note" "$(cat e.err)" \
        "rheap: s.db: suppressed: 110 blocks, 45760 bytes
rheap:   (user-sessions-kept-on-purpose.supp: remember_session;
rheap:   connections-pooled-for-reuse.supp: open_connection)"
    # Narrower: a source alone on its line when its first rule cannot follow it there.
    COLUMNS=40 "$RHEAP" report "$@" s.db >rep40.txt || fail "report at 40 columns"
    expect_eq "report's suppressed lines at 40 columns" \
        "$(sed -n '/^  suppressed/,/^  processes/p' rep40.txt)" \
        "  suppressed: 111 blocks, 49856 bytes
    (default list: stdio buffers;
    user-sessions-kept-on-purpose.supp:
    remember_session;
    connections-pooled-for-reuse.supp:
    open_connection)
  processes        1"
}

# What a person reads fits 80 columns: every help text, and `rheap stack` of a program built in
# a directory whose path alone is wider than the line (function names whole, files without
# their directories); --wide prints the paths whole.
case_help_80() {
    for cmd in run attach convert query report export diff stack dump resymbolize serve snapshot \
        ""; do
        # shellcheck disable=SC2086
        "$RHEAP" $cmd --help >h.txt 2>&1 || fail "rheap $cmd --help: status $?"
        [ -s h.txt ] || fail "rheap $cmd --help: no text"
        awk -v c="rheap${cmd:+ $cmd} --help" 'length($0) > 80 {
            printf "%s: line %d has %d columns: %s\n", c, NR, length($0), $0; bad = 1 }
            END { exit bad }' h.txt >&2 || fail "rheap${cmd:+ $cmd} --help is wider than 80 columns"
    done
    dir=$PWD/a-directory-with-a-rather-long-name/and-another-one-below-it/and-a-third-one
    mkdir -p "$dir"
    cp "$FIXTURES/deep.c" "$dir/"
    cc -g -O0 -fno-builtin -o deep "$dir/deep.c" || fail "cannot build deep.c"
    run r "$RHEAP" run -q -o deep.db -- ./deep
    expect_eq "run status" "$STATUS" 0
    id=$(sql deep.db "SELECT bt FROM allocations WHERE size = 4242")
    [ -n "$id" ] || fail "no allocation of 4242 bytes"
    line() { grep -n "$1" "$FIXTURES/deep.c" | cut -d: -f1; }
    l0=$(line 'malloc(n)') l1=$(line 'never_given_back(4242)') l2=$(line 'printf("leaked')
    COLUMNS=80 "$RHEAP" stack "$id" deep.db >s.txt || fail "rheap stack: status $?"
    awk 'length($0) > 80' s.txt | grep -q . && { cat s.txt >&2; fail "rheap stack wider than 80"; }
    head -n 3 s.txt >top.txt
    expect_eq "rheap stack at 80 columns" "$(cat top.txt)" \
        "> #0   allocate_the_buffer_that_is_never_given_back  deep.c:$l0
  #1   prepare_a_connection_with_a_rather_long_name  deep.c:$l1
  #2   main  deep.c:$l2"
    "$RHEAP" stack "$id" deep.db --wide >w.txt || fail "rheap stack --wide: status $?"
    has_line w.txt "  #1   prepare_a_connection_with_a_rather_long_name  $dir/deep.c:$l1"
    run e "$RHEAP" stack "$id" deep.db --bogus
    expect_eq "rheap stack --bogus status" "$STATUS" 1
    has_line e.err "rheap: error: unknown option --bogus (try rheap stack --help)"
}

case_query_list() {
    run l "$RHEAP" query --list
    expect_eq "status" "$STATUS" 0
    has_line l.out "Queries in $QUERIES:"
    n=0
    for f in "$QUERIES"/*.sql; do
        name=$(basename "$f" .sql)
        title=$(head -1 "$f" | sed "s/^-- *//; s/^$name: *//")
        grep -qF -- "$name" l.out || fail "--list misses $name"
        grep -q "^  $name  *$(printf '%s' "$title" | sed 's/[][\.*^$]/\\&/g')\$" l.out ||
            fail "--list: no title line for $name ('$title')"
        while read -r p; do
            grep -q -- "--param $p=" l.out || fail "--list: $name's parameter $p missing"
        done < <(sed -n 's/^-- param: *\([A-Za-z0-9_]*\) *=.*/\1/p' "$f")
        n=$((n + 1))
    done
    expect_eq "queries listed" "$(grep -c '^  [a-z]' l.out)" "$n"
}

# The leaks of examples/leaky.c: 100 x 48 bytes at line 39, 10 x 4096 bytes at line 51.
case_query_leaks() {
    run r "$RHEAP" run -q -o leaky.db -- "$LEAKY"
    expect_eq "run status" "$STATUS" 0
    # Without the built-in suppressions, so that stdio's buffer (leaky prints) is a row, as in
    # the sqlite3 shell below.
    run q "$RHEAP" query leaks leaky.db --csv --no-default-suppressions
    expect_eq "query status" "$STATUS" 0
    has_line q.out "$(printf 'blocks,bytes,function,location,first_ns,last_ns,stack,recording,pid\r')"
    awk -F, 'NR > 1 && NR <= 3 { n = split($4, p, "/"); print $1 "," $2 "," $3 "," p[n] }' q.out >got.txt
    printf '%s\n' "10,40960,open_connection,leaky.c:51" "100,4800,remember_session,leaky.c:39" >want.txt
    diff want.txt got.txt || fail "leak rows differ"
    # The same rows as the sqlite3 shell gives for the file itself.
    sqlite3 -batch -csv leaky.db <"$QUERIES/leaks.sql" | tr -d '\r' >shell.txt
    tail -n +2 q.out | tr -d '\r' >mine.txt
    diff shell.txt mine.txt || fail "rheap query and sqlite3 disagree"
    # Column output: a header, a rule, right-aligned numbers.
    run c "$RHEAP" query leaks leaky.db --wide
    head -1 c.out | grep -Eq '^blocks +bytes  function +location +first_ns +last_ns +stack +recording +pid$' || fail "header: $(head -2 c.out)"
    grep -q '^    10  40.0 KiB  open_connection   .*/leaky\.c:51  ' c.out || fail "column row: $(cat c.out)"
    grep -q '^   100      4800  remember_session  .*/leaky\.c:39  ' c.out || fail "column row: $(cat c.out)"
    # --raw: exact integers in columns too.
    run c "$RHEAP" query leaks leaky.db --raw --wide
    grep -q '^    10  40960  open_connection   .*/leaky\.c:51  ' c.out || fail "raw column row: $(cat c.out)"
    # --stacks: under each row, its call chain from the allocation site out to main.
    run c "$RHEAP" query leaks leaky.db --stacks --wide
    expect_eq "stacks status" "$STATUS" 0
    awk '/open_connection/ && !/#/ { on = 1; next } on && /^ +#/ { print $2; next } { on = 0 }' c.out >chain.txt
    # libc's frame is named __libc_start_main by its symbol table and __libc_start_main_impl by
    # its DWARF, which is there when libc's debug file (libc6-dbg) is installed.
    sed -i 's/^__libc_start_main_impl$/__libc_start_main/' chain.txt
    printf '%s\n' open_connection serve main __libc_start_call_main __libc_start_main _start >want.txt
    diff want.txt chain.txt || fail "call chain of open_connection: $(cat c.out)"
    grep -q '^ *#0 *open_connection  .*/leaky\.c:51  (inlined)$' c.out || fail "inlined frame not marked: $(cat c.out)"
    # rheap stack ID: every frame, the allocation site marked.
    id=$(tr -d '\r' <q.out | awk -F, '$3 == "open_connection" { print $7 }')
    run s "$RHEAP" stack "$id" leaky.db
    expect_eq "stack status" "$STATUS" 0
    # leaky calls malloc itself, so the site is frame 0; serve and open_connection are inlined.
    grep -Eq '^> #0 *open_connection  (.*/)?leaky\.c:51  \(inlined\)$' s.out || fail "stack $id: $(cat s.out)"
    grep -Eq '^  #2 *main  (.*/)?leaky\.c:[0-9]*$' s.out || fail "stack $id has no main: $(cat s.out)"
    run s "$RHEAP" stack 999999 leaky.db
    expect_eq "missing stack status" "$STATUS" 1
    has_line s.err "rheap: error: leaky.db has no stack 999999"
    run j "$RHEAP" query leaks leaky.db --json
    grep -q '^{"blocks": 100, "bytes": 4800, "function": "remember_session", "location": ".*/leaky\.c:39", ' j.out ||
        fail "json row: $(cat j.out)"
}

case_query_params() {
    run r "$RHEAP" run -q -o tree.db -- "$FAMILY" tree
    line=$(grep '^parent=' r.out)
    c=$(field "$line" child)
    # A query of the tests' own: integers bound as numbers, defaults from coalesce.
    export RHEAP_QUERIES=$FIXTURES/queries
    run q "$RHEAP" query by_size tree.db --csv
    expect_eq "default size rows" "$(tr -d '\r' <q.out | tail -n +2)" "$(field "$line" parent),7,7777"
    run q "$RHEAP" query by_size tree.db --csv --param size=2222
    expect_eq "size=2222" "$(tr -d '\r' <q.out | tail -n +2)" "$c,5,11110"
    run q "$RHEAP" query by_size tree.db --csv -p size=2222 -p pid=1
    expect_eq "pid=1 status" "$STATUS" 1
    expect_eq "pid=1" "$(cat q.err)" "rheap: error: --param pid: expected the pid of a process in the database ($(
        sql tree.db "SELECT group_concat(pid, ', ') FROM (SELECT DISTINCT pid FROM processes ORDER BY pid)")); got '1'"
    # getopt_long's forms: an attached value, --param=, options before the names.
    run q "$RHEAP" query --csv -psize=2222 "--param=pid=$c" by_size tree.db
    expect_eq "attached values" "$(tr -d '\r' <q.out | tail -n +2)" "$c,5,11110"
    run q "$RHEAP" query by_size tree.db --csv -p
    expect_eq "-p without value status" "$STATUS" 1
    has_line q.err "rheap: error: -p needs KEY=VALUE (try rheap query --help)"
    run q "$RHEAP" query by_size tree.db --param sise=1
    expect_eq "unknown param status" "$STATUS" 1
    has_line q.err "rheap: error: query by_size has no parameter 'sise'; valid ones: size pid"
    run q "$RHEAP" query by_size tree.db --param size
    expect_eq "param without value" "$STATUS" 1
    unset RHEAP_QUERIES
    # The shipped leaks query, restricted to one process.
    run q "$RHEAP" query leaks tree.db --csv --param "pid=$c"
    expect_eq "leaks of the child" "$(tr -d '\r' <q.out | tail -n +2 | cut -d, -f1,2,9)" "5,11110,$c"
    run q "$RHEAP" query leaks tree.db -p nosuch=1
    expect_eq "unknown param status" "$STATUS" 1
    has_line q.err "rheap: error: query leaks has no parameter 'nosuch'; valid ones: $(
        sed -n 's/^-- param: *\([A-Za-z0-9_]*\) *=.*/\1/p' "$QUERIES/leaks.sql" | tr '\n' ' ' | sed 's/ $//')"
    run q "$RHEAP" query no-such-query tree.db
    expect_eq "unknown query status" "$STATUS" 1
    has_line q.err "rheap: error: no query named 'no-such-query' in $QUERIES (rheap query --list shows them)"
}

case_report() {
    run r "$RHEAP" run -q -o tree.db -- "$FAMILY" tree
    run rep "$RHEAP" report --wide tree.db
    expect_eq "status" "$STATUS" 0
    run e "$RHEAP" report --bogus tree.db
    expect_eq "unknown option status" "$STATUS" 1
    has_line e.err "rheap: error: unknown option --bogus (try rheap report --help)"
    has_line rep.out "  allocations      15"
    has_line rep.out "  frees            5"
    has_line rep.out "  bytes allocated  28886 bytes (28.2 KiB)"
    has_line rep.out "  never freed      10 blocks, 21109 bytes (20.6 KiB)"
    has_line rep.out "  processes        3"
    # Processes by pid, most bytes allocated first; the exec'd pid is one row with 2 images.
    sed -n '/^Processes, most bytes allocated first/,/^$/p' rep.out | awk '$1 ~ /^[0-9]+$/ { print $1, $3, $4 }' >got.txt
    sql tree.db "SELECT a.pid, (SELECT count(*) FROM processes AS p WHERE p.pid = a.pid), count(*)
                 FROM allocations AS a GROUP BY a.pid ORDER BY sum(a.size) DESC, count(*) DESC, a.pid" |
        tr '|' ' ' >want.txt
    diff want.txt got.txt || fail "process ranking: $(cat rep.out)"
    grep -q ' 2$' <(cut -d' ' -f2 got.txt | sort | uniq -c) || fail "no process with two images: $(cat got.txt)"
    has_line rep.out "  threads          3"
    for s in "Peak live heap (rheap query peak)" "Top leaks by site (rheap query leaks)" \
        "Top temporary allocation sites (rheap query temporary)" \
        "Top allocating sites (rheap query top-sites)"; do
        has_line rep.out "$s"
    done
    # Every leak row of the report is a row of rheap query leaks.
    "$RHEAP" query leaks tree.db --csv | tr -d '\r' | tail -n +2 |
        awk -F, '{ printf "%d %d %s %s %d %d %d\n", $1, $2, $3, $4, $7, $8, $9 }' | sort >q.txt
    run rep "$RHEAP" report --raw --wide tree.db
    sed -n '/^Top leaks by site/,/^$/p' rep.out | awk '$1 ~ /^[0-9]+$/ { print $1, $2, $3, $4, $5, $6, $7 }' |
        sort >r.txt
    [ -s r.txt ] || fail "no leak rows in the report"
    diff q.txt r.txt || fail "report and query disagree on leaks"
    # rheap export in getopt_long's forms: -o FILE, -oFILE, --output=FILE, --weight=W, options
    # before FORMAT and DB; the same lines each time, and what the leaks query counts.
    run x "$RHEAP" export collapsed tree.db -o sep.txt --weight allocations
    expect_eq "export -o FILE status" "$STATUS" 0
    run x "$RHEAP" export -oshort.txt --weight=allocations collapsed tree.db
    expect_eq "export -oFILE status" "$STATUS" 0
    run x "$RHEAP" export --output=long.txt collapsed tree.db --weight=allocations
    expect_eq "export --output=FILE status" "$STATUS" 0
    [ -s sep.txt ] || fail "export -o FILE wrote nothing"
    cmp sep.txt short.txt || fail "export -oFILE differs from -o FILE"
    cmp sep.txt long.txt || fail "export --output=FILE differs from -o FILE"
    expect_eq "blocks exported" "$(awk '{ s += $NF } END { print s }' sep.txt)" 15
    run x "$RHEAP" export collapsed tree.db "--output=-" --weight=allocations
    cmp sep.txt x.out || fail "export --output=- is not standard output"
    run x "$RHEAP" export pprof -oheap.pb.gz tree.db
    expect_eq "export pprof -oFILE status" "$STATUS" 0
    gzip -t heap.pb.gz || fail "export pprof -oFILE: not a gzip file"
    run r "$RHEAP" run -q -o leaky.db -- "$LEAKY"
    run rep "$RHEAP" report leaky.db
    # Fitted to 80 columns, the location is whole or its directories dropped, as the
    # checkout's path length decides.
    grep -Eq '^      10  40\.0 KiB  open_connection   (.*/)?leaky\.c:51  ' rep.out || fail "leaky report: $(cat rep.out)"
    grep -Eq '^     100      4800  remember_session  (.*/)?leaky\.c:39  ' rep.out || fail "leaky report: $(cat rep.out)"
    run rep "$RHEAP" report --raw --pid "$(sql leaky.db 'SELECT pid FROM processes')" leaky.db
    grep -Eq '^      10  40960  open_connection   (.*/)?leaky\.c:51  ' rep.out || fail "leaky report --raw: $(cat rep.out)"
    run rep "$RHEAP" report --exe '*leaky' leaky.db
    has_line rep.out "  allocations      $(sql leaky.db 'SELECT count(*) FROM allocations')"
    run rep "$RHEAP" report --exe '*nothing-like-this*' leaky.db
    expect_eq "no process matches" "$STATUS" 1
}

# made_db FILE [VERSION]: an empty database of schema.sql, as rheap convert makes one, with
# meta.schema_version VERSION (default: the one this rheap reads). No recording is involved, so
# these cases also run in the sanitized builds.
made_db() {
    local version=${2:-$("$RHEAP" --version | sed -n 's/.*schema \([0-9]*\)).*/\1/p')}
    rm -f "$1"
    sql "$1" <"$QUERIES/../schema.sql"
    sql "$1" "INSERT INTO meta (key, value) VALUES ('schema_version', $version)"
}

# Every command that reads a database says in one line what is wrong with the path, with
# status 2, and creates nothing.
case_db_open() {
    made_db good.db
    want=$(sql good.db "SELECT value FROM meta WHERE key = 'schema_version'")
    [ -n "$want" ] || fail "no schema version in --version: $("$RHEAP" --version)"
    : >empty.db
    sql other.db "CREATE TABLE t (x)"
    sql nometa.db "CREATE TABLE meta (key TEXT PRIMARY KEY, value)"
    echo "not a database at all, but long enough to be read as one by SQLite's header check" >text.db
    made_db old.db $((want - 1))
    made_db new.db $((want + 1))
    mkdir dir.db
    # db_says DB LINE: each reading command refuses DB with exactly LINE.
    db_says() {
        local cmd
        for cmd in "query leaks" "report" "export collapsed" "stack 1" "diff good.db" "resymbolize"; do
            # shellcheck disable=SC2086
            run e "$RHEAP" $cmd "$1"
            expect_eq "rheap $cmd $1: status" "$STATUS" 2
            expect_eq "rheap $cmd $1" "$(cat e.err)" "rheap: error: $2"
        done
    }
    db_says empty.db "empty.db: empty file, expected a database made by rheap convert"
    db_says other.db "other.db: not a rheap database (no table meta)"
    db_says nometa.db "nometa.db: not a rheap database (no schema_version in table meta)"
    db_says text.db "text.db: not an SQLite database, expected a database made by rheap convert"
    db_says dir.db "dir.db: is a directory, expected a database made by rheap convert"
    db_says old.db "old.db: database schema version $((want - 1)) (an older rheap), this rheap reads version $want; convert the recording again with this rheap (rheap convert RIP... -o DB)"
    db_says new.db "new.db: database schema version $((want + 1)) (a newer rheap), this rheap reads version $want; convert the recording again with this rheap (rheap convert RIP... -o DB)"
    db_says missing.db "missing.db: no such file; make one with rheap run or rheap convert"
    [ ! -e missing.db ] || fail "reading missing.db created it"
    # The database of the schema this rheap reads passes every check.
    run q "$RHEAP" query leaks good.db --csv
    expect_eq "query on a good database" "$STATUS" 0
    expect_eq "its header" "$(tr -d '\r' <q.out)" "blocks,bytes,function,location,first_ns,last_ns,stack,recording,pid"

    # A writer holding the lock: a reader waits for it (busy timeout), up to a few seconds.
    lock_for() { # SECONDS: holds an exclusive lock on good.db that long, in the background
        rm -f locked
        printf 'BEGIN EXCLUSIVE;\n.shell touch locked; sleep %s\nCOMMIT;\n' "$1" | sqlite3 good.db &
        for _ in $(seq 100); do [ -e locked ] && return; sleep 0.05; done
        fail "sqlite3 did not take the lock"
    }
    lock_for 1
    run q "$RHEAP" query leaks good.db --csv
    expect_eq "query while locked for 1 s: status" "$STATUS" 0
    expect_eq "query while locked for 1 s" "$(tr -d '\r' <q.out | head -1)" "blocks,bytes,function,location,first_ns,last_ns,stack,recording,pid"
    wait
    lock_for 8
    run q "$RHEAP" query leaks good.db
    expect_eq "query while locked for 8 s: status" "$STATUS" 2
    expect_eq "query while locked for 8 s" "$(cat q.err)" "rheap: error: good.db: locked by another process for more than 5 s; try again when it is done"
    wait
}

# Output that cannot be written is an error of every command: status 4 and one line.
case_output_errors() {
    [ -w /dev/full ] || fail "no /dev/full to write to"
    made_db good.db
    for cmd in "query --help" "query --list" "query leaks good.db" "query leaks good.db --json" \
        "report good.db" "diff good.db good.db"; do
        STATUS=0
        # shellcheck disable=SC2086
        "$RHEAP" $cmd >/dev/full 2>e.err || STATUS=$?
        expect_eq "rheap $cmd >/dev/full: status" "$STATUS" 4
        expect_eq "rheap $cmd >/dev/full" "$(cat e.err)" "rheap: error: writing standard output: No space left on device"
    done
}

# kept_recording: records examples/leaky with rheap run --keep into full.db; sets REC to the
# directory of the kept recordings.
kept_recording() {
    run r "$RHEAP" run --keep -q -o full.db -- "$LEAKY"
    expect_eq "rheap run --keep status" "$STATUS" 0
    REC=$(sed -n 's/^rheap: recordings kept in //p' r.err)
    [ -d "$REC" ] || fail "no kept recording in: $(cat r.err)"
}

# A file size limit (ulimit -f) that the database outgrows: the conversion fails with status 4
# and a message, instead of dying of SIGXFSZ, and leaves neither the output nor its temporary
# file behind. (A run_ case: the recording is made by rheap run, which the sanitizer builds
# cannot preload.)
case_run_output_limit() {
    kept_recording
    STATUS=0
    (ulimit -f 64; exec "$RHEAP" convert "$REC"/rip-* -o small.db) >c.out 2>c.err || STATUS=$?
    expect_eq "convert under ulimit -f 64: status" "$STATUS" 4
    grep -q '^rheap: error: .*disk I/O error' c.err || fail "no error line: $(cat c.err)"
    ls small.db* 2>/dev/null && fail "left behind: $(ls small.db*)"
    [ "$(sql full.db 'SELECT count(*) FROM allocations')" -gt 0 ] || fail "full.db is empty"
}

# A limit of address space (ulimit -v 60 MB) that a small recording's conversion fits in: the
# writer's queue, which may take 128 MiB of address space, shrinks to fit, and the database is
# the same as without the limit.
case_run_vm_limit() {
    kept_recording
    STATUS=0
    (ulimit -v 60000; exec "$RHEAP" convert -q "$REC"/rip-* -o small.db) >c.out 2>c.err || STATUS=$?
    expect_eq "convert under ulimit -v 60000: status ($(cat c.err))" "$STATUS" 0
    q='SELECT count(*), sum(size), sum(dealloc_after IS NULL) FROM allocations'
    expect_eq "allocations under the limit" "$(sql small.db "$q")" "$(sql full.db "$q")"
}

# Values of each documented parameter are checked against what it takes; the database's own
# pids and marker labels are listed when a value is not one of them.
case_query_values() {
    run r "$RHEAP" run -q -o m.db -- "$FAMILY" marks
    expect_eq "run status" "$STATUS" 0
    pid=$(sql m.db "SELECT pid FROM processes")
    # bad NAME=VALUE QUERY LINE: the query refuses the value with exactly LINE, status 1.
    bad() {
        run q "$RHEAP" query "$2" m.db --param "$1"
        expect_eq "$2 --param $1: status" "$STATUS" 1
        expect_eq "$2 --param $1" "$(cat q.err)" "rheap: error: $3"
        [ ! -s q.out ] || fail "$2 --param $1 printed: $(cat q.out)"
    }
    bad by=size top-sites "--param by: expected one of bytes, blocks; got 'size'"
    bad top=0 top-sites "--param top: expected a whole number from 1 up; got '0'"
    bad buckets=0 timeline "--param buckets: expected a whole number from 1 up; got '0'"
    bad buckets=ten timeline "--param buckets: expected a whole number from 1 up; got 'ten'"
    bad phases=-3 growth "--param phases: expected a whole number from 1 up; got '-3'"
    bad min_phases=1.5 growth "--param min_phases: expected a whole number from 0 up; got '1.5'"
    bad max_ns=0x10 temporary "--param max_ns: expected a time (ns, or with a unit: 250ms, 1.8s, 12us); got '0x10'"
    bad max_ns=1.5 temporary "--param max_ns: expected a time (ns, or with a unit: 250ms, 1.8s, 12us); got '1.5'"
    bad pid=abc leaks "--param pid: expected the pid of a process in the database ($pid); got 'abc'"
    bad pid=$((pid + 1)) sizes "--param pid: expected the pid of a process in the database ($pid); got '$((pid + 1))'"
    bad marker=tick growth "--param marker: expected a marker label (the database's: 'drain', 'fill'); got 'tick'"
    bad a=start diff "--param a: expected a time (ns, or 250ms, 1.8s, ...) or a marker label (the database's: 'drain', 'fill'); got 'start'"
    bad b=1e6 diff "--param b: expected a time (ns, or 250ms, 1.8s, ...) or a marker label (the database's: 'drain', 'fill'); got '1e6'"
    bad skip= leaks "--param skip: expected a pattern; got ''"
    run e "$RHEAP" report --pid $((pid + 1)) m.db
    expect_eq "report --pid of no process: status" "$STATUS" 1
    expect_eq "report --pid of no process" "$(cat e.err)" "rheap: error: --pid: expected the pid of a process in the database ($pid); got '$((pid + 1))'"
    # Good values still give their answers: between the markers, the two 1234-byte blocks.
    run q "$RHEAP" query diff m.db --csv -p a=fill -p b=drain -p "pid=$pid"
    expect_eq "diff fill..drain status" "$STATUS" 0
    tr -d '\r' <q.out | awk -F, 'NR > 1 && $6 != 0 { print $5, $6 }' >got.txt
    expect_eq "diff fill..drain" "$(cat got.txt)" "2 2468"
    run q "$RHEAP" query diff m.db --csv -p a=0 -p b=drain
    expect_eq "diff 0..drain status" "$STATUS" 0
    # A time with a unit is the same moment as its ns: the drain marker's time in us, and
    # max_ns in us.
    t=$(sql m.db "SELECT t FROM markers WHERE label = 'drain'")
    us=$(awk -v t="$t" 'BEGIN { printf "%.3fus", t / 1000 }')
    run q "$RHEAP" query diff m.db --csv -p a=0 -p "b=$us"
    expect_eq "b=$us status" "$STATUS" 0
    expect_eq "b=$us is b=drain" "$(tr -d '\r' <q.out | cut -d, -f1-8,10)" \
        "$("$RHEAP" query diff m.db --csv -p a=0 -p b=drain | tr -d '\r' | cut -d, -f1-8,10)"
    expect_eq "b=$us is b=$t" "$(tr -d '\r' <q.out | awk -F, 'NR == 2 { print $10 }')" "$t"
    expect_eq "max_ns=2.5ms" "$("$RHEAP" query temporary m.db --csv -p max_ns=2.5ms)" \
        "$("$RHEAP" query temporary m.db --csv -p max_ns=2500000)"
    run q "$RHEAP" query top-sites m.db --csv -p by=blocks -p top=1 -p min_size=1
    expect_eq "unknown parameter status" "$STATUS" 1
    run q "$RHEAP" query top-sites m.db --csv -p by=blocks -p top=1
    expect_eq "top-sites by blocks status" "$STATUS" 0
    # One site (family.c's blocks()) made all three blocks.
    expect_eq "top-sites by blocks rows" "$(tr -d '\r' <q.out | awk -F, 'NR > 1 { print $1, $2 }')" "3 5678"
}

# JSON stays valid UTF-8 whatever bytes a thread name or a path holds: each invalid byte is
# \ufffd, control characters are escaped, well-formed characters are kept.
case_query_json() {
    dir=$'src\xff\xfe\xc3\xa9'
    mkdir "$dir"
    cp "$FIXTURES/badnames.c" "$dir/"
    cc -g -O0 -fno-builtin -pthread -o badnames "$dir/badnames.c" || fail "cannot build badnames.c"
    run r "$RHEAP" run -q -o bad.db -- ./badnames
    expect_eq "run status" "$STATUS" 0
    run t "$RHEAP" query threads bad.db --json
    expect_eq "threads status" "$STATUS" 0
    grep -q '"name": "\\ufffd\\ufffd\\u0001", "allocs": 1, "alloc_bytes": 777, ' t.out || fail "thread name: $(cat t.out)"
    run l "$RHEAP" query leaks bad.db --json
    line=$(grep '"bytes": 777,' l.out) || fail "no leak of 777 bytes: $(cat l.out)"
    expect_eq "location" "$(sed 's/.*"location": "\([^"]*\)".*/\1/' <<<"$line")" \
        "src\\ufffd\\ufffd$(printf '\xc3\xa9')/badnames.c:$(grep -n 'malloc(777)' "$FIXTURES/badnames.c" | cut -d: -f1)"
    for f in t.out l.out; do
        iconv -f UTF-8 -t UTF-8 "$f" >/dev/null || fail "$f is not UTF-8"
        python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$f" ||
            fail "$f is not JSON"
    done
}

# A long answer: 50 rows in columns and a last line with the count of the others; --limit N and
# --all; CSV whole unless limited, the rows left out then counted on stderr.
case_query_limit() {
    run r "$RHEAP" run -q -o lim.db -- sh -c "for i in 1 2 3; do \"$FAMILY\" tree || exit 1; done"
    expect_eq "run status" "$STATUS" 0
    q=(query timeline lim.db --param buckets=1000)
    run all "$RHEAP" "${q[@]}" --csv
    expect_eq "csv status" "$STATUS" 0
    n=$(($(wc -l <all.out) - 1))
    [ "$n" -gt 60 ] || fail "only $n timeline rows: too few to cut"
    expect_eq "csv: no count of rows left out" "$(cat all.err)" ""
    run col "$RHEAP" "${q[@]}" --wide --raw
    expect_eq "columns: lines" "$(wc -l <col.out)" 53
    expect_eq "columns: last line" "$(tail -n 1 col.out)" \
        "... $((n - 50)) more rows (--limit N shows N, --all every one)"
    run every "$RHEAP" "${q[@]}" --wide --raw --all
    expect_eq "--all: lines" "$(wc -l <every.out)" $((n + 2))
    grep -q 'more rows' every.out && fail "--all printed a count of rows left out"
    # The same rows, the columns' widths set by the rows shown.
    expect_eq "--all: first 50 rows as the default's" "$(sed -n '3,52p' every.out | awk '{$1 = $1; print}')" \
        "$(sed -n '3,52p' col.out | awk '{$1 = $1; print}')"
    run seven "$RHEAP" "${q[@]}" --csv --limit 7
    expect_eq "--limit 7 --csv" "$(cat seven.out)" "$(head -n 8 all.out)"
    expect_eq "--limit 7 --csv: stderr" "$(cat seven.err)" "rheap: $((n - 7)) more rows left out by --limit"
    run zero "$RHEAP" "${q[@]}" --limit 0
    expect_eq "--limit 0: status" "$STATUS" 1
    expect_eq "--limit 0" "$(cat zero.err)" "rheap: error: --limit: expected a number of rows from 1, got '0'"
    run both "$RHEAP" "${q[@]}" --limit 5 --all
    expect_eq "--limit and --all: status" "$STATUS" 1
}

# The exports of a tree of more than 64 recordings read the converter's totals per stack:
# collapsed output is the same as from the per-recording rows (the table dropped), pprof has
# one sample per stack without a pid, and with --pid that process's samples labelled with it.
case_export_tree() {
    run r "$RHEAP" run -q -o t.db -- sh -c "for i in \$(seq 17); do \"$FAMILY\" tree || exit 1; done"
    expect_eq "run status" "$STATUS" 0
    n=$(sql t.db "SELECT count(*) FROM processes")
    [ "$n" -gt 64 ] || fail "only $n recordings"
    cp t.db rows.db
    sql rows.db "DROP TABLE stack_totals"
    for w in leaked allocated allocations peak temporary; do
        "$RHEAP" export collapsed --weight $w t.db >totals.txt 2>/dev/null || fail "export $w"
        "$RHEAP" export collapsed --weight $w rows.db >rows.txt 2>/dev/null || fail "export $w, rows"
        [ -s rows.txt ] || [ $w = temporary ] || fail "no $w lines"
        cmp -s totals.txt rows.txt || { diff rows.txt totals.txt | head -5 >&2; fail "$w: totals differ"; }
    done
    expect_eq "temporary, every line" "$(awk '{s += $NF} END {print s}' totals.txt)" \
        "$(sql t.db "SELECT sum(temporary_blocks) FROM stack_stats")"
    # The timeline of a tree is every recording together (timeline_totals), without a pid: its
    # allocations and frees are every recording's, and what the processes left live went with
    # them. --param pid=P gives P's own.
    "$RHEAP" query timeline t.db --csv >tl.csv || fail "query timeline"
    expect_eq "tree timeline: allocs, frees, rows without a pid, live at the end" \
        "$(awk -F, '{ sub(/\r$/, "") } NR > 1 { a += $7; f += $9; if ($13 == "") np++; live = $4 "/" $5 } END { print a, f, np + 0, live }' tl.csv)" \
        "$(sql t.db "SELECT sum(allocs), sum(frees) FROM timeline" | tr '|' ' ') $(($(wc -l <tl.csv) - 1)) 0/0"
    pid=$(sql t.db "SELECT pid FROM recording_stats ORDER BY allocs DESC, pid LIMIT 1")
    "$RHEAP" query timeline t.db --csv --param pid="$pid" >one.csv || fail "query timeline --param pid"
    expect_eq "timeline of pid $pid" \
        "$(awk -F, '{ sub(/\r$/, "") } NR > 1 { a += $7; if ($13 != '"$pid"') bad++ } END { print a, bad + 0 }' one.csv)" \
        "$(sql t.db "SELECT sum(allocs) FROM recording_stats WHERE pid = $pid") 0"
    # The page charts the recordings of the largest peaks (the first of equal ones) and carries
    # their slices only: each charted one's allocations add up to its recording's.
    "$RHEAP" report --html -o t.html t.db || fail "report --html"
    sql t.db "SELECT pid, recording, peak_bytes, allocs FROM recording_stats" >peaks.txt
    python3 - t.html peaks.txt >charted.txt <<'PY' || fail "page data: $(cat charted.txt)"
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'id="rheap-data">(.*?)</script>', page, re.S).group(1))
stats = {}
for line in open(sys.argv[2]):
    pid, rec, peak, allocs = map(int, line.split("|"))
    stats[(pid, rec)] = (peak, allocs)
procs = d["procs"]
want = sorted(range(len(procs)), key=lambda i: -procs[i]["peak_bytes"])[:d["chart_max"]]
got = [i for i, p in enumerate(procs) if p["buckets"]["t"]]
assert d["chart_max"] == 12 and sorted(want) == got, (d["chart_max"], sorted(want), got)
for i in want:
    p = procs[i]
    assert p["peak_bytes"] == stats[(p["pid"], p["rec"])][0]
    assert sum(p["buckets"]["allocs"]) == stats[(p["pid"], p["rec"])][1], p["pid"]
    assert 0 < len(p["buckets"]["t"]) <= 400
print(len(got), len(procs) - len(got))
PY
    expect_eq "recordings charted, not charted" "$(cat charted.txt)" "12 $((n - 12))"
    # A tree's page is drawn from a stat per stack over every recording (proc -1), the charted
    # recordings with their own stats besides: each figure against SQL over the tables.
    "$RHEAP" report --html --no-default-suppressions -o raw.html t.db || fail "report --html, raw"
    {
        sql t.db "SELECT count(*), sum(blocks), sum(bytes), sum(leaked_blocks), sum(leaked_bytes),
                         sum(peak_blocks), sum(peak_bytes), sum(stopped_blocks), sum(stopped_bytes),
                         sum(temporary_blocks), sum(temporary_bytes) FROM stack_totals"
        sql t.db "SELECT decade, sum(blocks), sum(bytes) FROM stack_lifetimes GROUP BY decade"
        echo per
        sql t.db "SELECT s.pid, s.recording, sum(s.blocks), sum(s.bytes), sum(s.leaked_bytes),
                         sum(s.peak_bytes), r.allocs,
                         (SELECT coalesce(sum(l.blocks), 0) FROM stack_lifetimes AS l
                          WHERE l.pid = s.pid AND l.recording = s.recording)
                  FROM stack_stats AS s JOIN recording_stats AS r USING (pid, recording)
                  GROUP BY s.pid, s.recording"
    } >tree.txt
    python3 - raw.html tree.txt >tree.out <<'PY' || fail "tree page data: $(cat tree.out)"
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'id="rheap-data">(.*?)</script>', page, re.S).group(1))
lines = open(sys.argv[2]).read().split("\n")
k = lines.index("per")
tot = list(map(int, lines[0].split("|")))
life = {int(a): (int(b), int(c)) for a, b, c in (l.split("|") for l in lines[1:k])}
per = {}
for l in lines[k + 1:]:
    if l:
        v = list(map(int, l.split("|")))
        per[(v[0], v[1])] = v[2:]
assert d["tree"] == 1, d["tree"]
tree = [s for s in d["stats"] if s[0] == -1]
# stats: proc, stack, blocks, bytes, leaked b/B, peak b/B, stopped b/B, temporary b/B, lifetimes
cols = [sum(s[c] for s in tree) for c in range(2, 12)]
want = [tot[1], tot[2], tot[3], tot[4], tot[5], tot[6], tot[7], tot[8], tot[9], tot[10]]
assert cols == want, (cols, want)
assert len([s for s in tree if s[1] >= 0]) <= tot[0]
got = {}
for s in tree:
    l = s[12]
    for i in range(0, len(l), 3):
        b, y = got.get(l[i], (0, 0))
        got[l[i]] = (b + l[i + 1], y + l[i + 2])
assert got == life, (got, life)
procs = d["procs"]
detail = [i for i, p in enumerate(procs) if p.get("detail")]
charted = [i for i, p in enumerate(procs) if p["buckets"]["t"]]
assert detail == charted and len(detail) == 12, (detail, charted)
for i, p in enumerate(procs):
    own = [s for s in d["stats"] if s[0] == i]
    if i not in detail:
        assert not own, p["pid"]
        continue
    w = per[(p["pid"], p["rec"])]
    lb = sum(s[12][j + 1] for s in own for j in range(0, len(s[12]), 3))
    got = [sum(s[2] for s in own), sum(s[3] for s in own), sum(s[5] + s[9] for s in own),
           sum(s[7] for s in own), p["allocs"], lb]
    assert got == w, (p["pid"], got, w)
print(len(tree), len(detail))
PY
    expect_eq "tree page: stats of the tree, recordings with their own" "$(cut -d' ' -f2 tree.out)" 12
    # Without the converter's totals (rows.db: stack_totals dropped, and stack_lifetime_totals
    # now) the same page is added up from the per-recording rows.
    sql rows.db "DROP TABLE stack_lifetime_totals"
    "$RHEAP" report --html --no-default-suppressions -o rows.html rows.db || fail "report --html, rows"
    python3 - raw.html rows.html <<'PY' || fail "the tree page from the rows differs"
import json, re, sys
def data(path):
    page = open(path, encoding="utf-8").read()
    d = json.loads(re.search(r'id="rheap-data">(.*?)</script>', page, re.S).group(1))
    del d["db"]
    return d
a, b = data(sys.argv[1]), data(sys.argv[2])
assert a["tree"] == 1 and a == b, [k for k in a if a[k] != b.get(k)]
PY
    command -v go >/dev/null || skip "go not found (golang-go): the profile is not read back"
    export HOME=$PWD/home GOCACHE=$PWD/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
    mkdir -p "$HOME"
    "$RHEAP" export pprof t.db -o all.pb.gz 2>/dev/null || fail "export pprof"
    go tool pprof -raw all.pb.gz >all.txt 2>&1 || fail "go tool pprof: $(head -3 all.txt)"
    grep -q "^Comment: rheap: one sample per stack, added up over the $n recordings" all.txt ||
        fail "no comment on the samples: $(head -5 all.txt)"
    grep -q 'pid:\[' all.txt && fail "a sample over the tree has a pid"
    # Samples of the same locations (stacks that differ below the site) are one.
    samples() { awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /: / { n++ } END { print n + 0 }' "$1"; }
    blocks() { awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /: / { n += $1 } END { print n + 0 }' "$1"; }
    expect_eq "blocks of the samples over the tree" "$(blocks all.txt)" \
        "$(sql t.db "SELECT sum(blocks) FROM stack_totals")"
    [ "$(samples all.txt)" -le "$(sql t.db "SELECT count(*) FROM stack_totals")" ] ||
        fail "more samples than stacks"
    pid=$(sql t.db "SELECT pid FROM recording_stats ORDER BY allocs DESC, pid LIMIT 1")
    "$RHEAP" export pprof t.db --pid "$pid" -o one.pb.gz 2>/dev/null || fail "export pprof --pid"
    go tool pprof -raw one.pb.gz >one.txt 2>&1 || fail "go tool pprof --pid"
    expect_eq "blocks of pid $pid" "$(blocks one.txt)" \
        "$(sql t.db "SELECT sum(blocks) FROM stack_stats WHERE pid = $pid")"
    expect_eq "samples of pid $pid, each labelled" "$(grep -c "pid:\[$pid\]" one.txt)" "$(samples one.txt)"
}

# A statically linked program cannot be recorded: rheap says why, and the status is the
# program's own.
case_run_static() {
    printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' \
        'int main(int c, char **v) { free(malloc(100)); puts("ran"); return c > 1 ? atoi(v[1]) : 0; }' >st.c
    cc -static -O0 -o static-prog st.c || fail "cannot link a static program (libc.a)"
    run r "$RHEAP" run -o s.db -- ./static-prog
    expect_eq "static, exit 0: status" "$STATUS" 0
    expect_eq "static, exit 0: output" "$(cat r.out)" "ran"
    expect_eq "static, exit 0" "$(cat r.err)" "rheap: warning: ./static-prog: statically linked: its malloc cannot be interposed, nothing was recorded; s.db not written"
    [ ! -e s.db ] || fail "a database was written"
    [ -z "$(ls -d rheap-run-* 2>/dev/null)" ] || fail "recordings directory left behind"
    # Found through PATH, as the program was run.
    PATH=$WORK:$PATH run r "$RHEAP" run -o s.db -- static-prog 7
    expect_eq "static, exit 7: status" "$STATUS" 7
    has_line r.err "rheap: warning: static-prog: statically linked: its malloc cannot be interposed, nothing was recorded; s.db not written"
    # A dynamic program that records nothing still fails.
    run r "$RHEAP" run --off -o s.db -- "$FAMILY" exit 0
    expect_eq "nothing recorded: status" "$STATUS" 2
    expect_eq "nothing recorded" "$(cat r.err)" "rheap: error: no recording was made (recording stayed off); s.db not written"
}

# rheap run hands the program every argument, however many.
case_run_many_args() {
    run r "$RHEAP" run -q -o a.db -- sh -c 'echo "$#" "$1" "${5000}"' sh $(seq 5000)
    expect_eq "status" "$STATUS" 0
    expect_eq "arguments the program got" "$(cat r.out)" "5000 1 5000"
    # The process record keeps 4,095 arguments and says the command line goes on.
    expect_eq "command line recorded" "$(sql a.db "SELECT substr(cmdline, -51) FROM processes")" \
        "4091 [the command line goes on: too long to record]"
}

# A site in a stripped library reads as the first named frame: the exported function that called
# the unnamed internal one, with its module and offset as the location.
case_stripped_site() {
    run r "$RHEAP" run -q -o s.db -- "$STRIPPED"
    expect_eq "run status" "$STATUS" 0
    run q "$RHEAP" query leaks s.db --csv
    tr -d '\r' <q.out | awk -F, '$3 == "stripped_make" { print $1, $2; sub(/:0x[0-9a-f]+$/, "", $4); n = split($4, p, "/"); print p[n] }' >got.txt
    printf '%s\n' "3 2100" "libcli_stripped.so" >want.txt
    diff want.txt got.txt || fail "site of the stripped library: $(cat q.out)"
    # The frame that allocated has no name: it is the site's frame minus one in the stack.
    expect_eq "unnamed frame below the site" "$(sql s.db "SELECT count(*) FROM stacks AS s JOIN backtraces AS b
        ON b.id = s.id AND b.frame_no = s.site_frame - 1 WHERE s.function = 'stripped_make' AND b.sym IS NULL")" 1
}

# Install into a temporary prefix; build against it with pkg-config and with find_package;
# record with the installed rheap, which must use the installed library and queries.
case_install() {
    cmake --install "$BUILD_DIR" --prefix "$WORK/prefix" >install.log || fail "install failed"
    P=$WORK/prefix
    for f in bin/rheap include/rheap.h share/rheap/schema.sql share/rheap/queries/leaks.sql \
        lib/cmake/rheap/rheapConfig.cmake lib/cmake/rheap/rheapTargets.cmake; do
        [ -e "$P/$f" ] || fail "not installed: $f"
    done
    lib=$(ls "$P"/lib*/librheap.so "$P"/lib/*/librheap.so 2>/dev/null | head -1 || true)
    [ -n "$lib" ] || fail "librheap.so not installed: $(cd "$P" && find . | head -50)"
    libdir=$(dirname "$lib")
    [ -e "$libdir/pkgconfig/rheap.pc" ] || fail "rheap.pc not installed"
    expect_eq "queries installed" "$(ls "$P/share/rheap/queries" | sort)" "$(ls "$QUERIES" | grep '\.sql$' | sort)"

    # pkg-config
    flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs rheap) || fail "pkg-config"
    # shellcheck disable=SC2086
    cc -g -O0 -fno-builtin -o app-pc "$FIXTURES/install/app.c" $flags -Wl,-rpath,"$libdir" ||
        fail "build with pkg-config ($flags)"
    run a ./app-pc
    has_line a.out "app: rheap 0.1.0, recording off"

    # find_package(rheap)
    cmake -S "$FIXTURES/install" -B app-build -DCMAKE_PREFIX_PATH="$P" >cmake.log 2>&1 ||
        { cat cmake.log >&2; fail "configure with find_package"; }
    cmake --build app-build >>cmake.log 2>&1 || { cat cmake.log >&2; fail "build with find_package"; }
    run a app-build/app
    has_line a.out "app: rheap 0.1.0, recording off"

    # The installed rheap, from a directory unrelated to the build, with no hints.
    mkdir elsewhere && cd elsewhere
    unset RHEAP_LIBRARY RHEAP_QUERIES
    run r "$P/bin/rheap" run -o app.db -- ../app-pc
    expect_eq "installed run" "$STATUS" 0
    has_line r.out "app: rheap 0.1.0, recording on"
    expect_eq "app blocks" "$(sql app.db "SELECT count(*), count(dealloc_after) FROM allocations WHERE size = 5555")" "6|2"
    expect_eq "marker" "$(sql app.db "SELECT label FROM markers")" "app done"
    expect_eq "library used" "$(sql app.db "SELECT count(*) FROM modules WHERE path LIKE '$P/%librheap.so%'")" 1
    run l "$P/bin/rheap" query --list
    has_line l.out "Queries in $P/share/rheap/queries:"
    run q "$P/bin/rheap" query leaks app.db --csv
    tr -d '\r' <q.out | awk -F, 'NR > 1 { n = split($4, p, "/"); print $1 "," $2 "," $3 "," p[n] }' >got.txt
    has_line got.txt "4,22220,main,app.c:$(grep -n 'malloc(5555)' "$FIXTURES/install/app.c" | cut -d: -f1)"
    run rep "$P/bin/rheap" report app.db
    has_line rep.out "  allocations      $(sql app.db "SELECT count(*) FROM allocations")"
}

"case_$NAME"
