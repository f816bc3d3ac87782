#!/bin/bash
# attach_test.sh CASE: one test of rheap attach, in a fresh temporary directory. CMake sets the
# environment: RHEAP (the rheap binary), SERVICE (tests/attach/service.c built), FORKER
# (forker.c built), LOADER and PLUGIN (loader.c and plugin.c built), PYTHON3, CC.
# RHEAP_TEST_KEEP=1 keeps a failed test's directory.
set -euo pipefail

NAME=$1
KIND=attach
. "$(dirname "$0")/../testdir.sh"
chmod 755 "$WORK"
# Every process a case starts in the background, killed at the end whatever happened.
PIDS=()
CLEANUP+=('for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done')

# service_ready FILE: the service counting into FILE has made its first iteration in both threads.
service_ready() {
    [ -s "$1" ] && [ "$("$SERVICE" read "$1" | cut -d' ' -f6)" = 2 ]
}

# allocated_since FILE BEFORE N: the service's first thread has made N allocations since its
# counter read BEFORE.
allocated_since() {
    [ "$("$SERVICE" read "$1" | cut -d' ' -f1)" -ge "$(($2 + $3))" ]
}

# start_service FILE: the service in the background, counting into FILE; SVC is its pid. Returns
# once both threads have made their first iteration.
start_service() {
    "$SERVICE" run "$1" >"$1.out" 2>&1 &
    SVC=$!
    PIDS+=("$SVC")
    wait_for "the service did not start" service_ready "$1"
}

# stop_service FILE: stops it and checks that it ended well: every block it held intact.
stop_service() {
    "$SERVICE" stop "$1"
    local st=0
    wait "$SVC" || st=$?
    expect_eq "service status ($(cat "$1.out"))" "$st" 0
    expect_eq "damaged blocks" "$("$SERVICE" read "$1" | cut -d' ' -f5)" 0
}

# check_thread DB TID A0 A1 F0 F1: the thread's recorded calls in DB, against its counters before
# the attach (A0 allocations, F0 frees done) and after it (A1, F1). Prints the thread's frees of
# blocks allocated before the window.
check_thread() {
    local db=$1 tid=$2 a0=$3 a1=$4 f0=$5 f1=$6
    # The iteration of each block, from its size (i % 65536 + 1) and the counter before: the
    # window is far shorter than 65536 iterations.
    local it="$a0 + (((size - 1 - $a0 % 65536) % 65536) + 65536) % 65536"
    local got
    got=$(sql "$db" "WITH r AS (SELECT $it AS it, dealloc_after AS d FROM allocations
                                WHERE alloc_thread = $tid)
                     SELECT count(*), count(DISTINCT it), min(it), max(it),
                            sum(d IS NULL), sum(d IS NULL AND it <= (SELECT max(it) FROM r) - 8)
                     FROM r")
    IFS='|' read -r n distinct lo hi live old_live <<<"$got"
    [ "$n" -gt 50 ] || fail "thread $tid: only $n allocations recorded"
    expect_eq "thread $tid: distinct iterations" "$distinct" "$n"
    expect_eq "thread $tid: iterations without a gap ($lo..$hi)" "$((hi - lo + 1))" "$n"
    [ "$lo" -ge "$a0" ] || fail "thread $tid: iteration $lo recorded, but $a0 were done before the attach"
    [ "$hi" -lt "$a1" ] || fail "thread $tid: iteration $hi recorded, but only $a1 were done after the detach"
    # The ring holds the last 8 blocks: those of the window's last iterations are live at its
    # end (7 when the window closed between a free and the next allocation), no older one.
    [ "$live" -ge 7 ] && [ "$live" -le 8 ] || fail "thread $tid: $live blocks live at the end"
    expect_eq "thread $tid: older blocks live at the end" "$old_live" 0
    local events paired frees
    events=$(sql "$db" "SELECT events FROM threads WHERE tid = $tid")
    paired=$(sql "$db" "SELECT count(*) FROM allocations WHERE dealloc_thread = $tid")
    frees=$((events - n))
    [ "$frees" -le "$((f1 - f0))" ] || fail "thread $tid: $frees frees recorded, $((f1 - f0)) made"
    # The frees of blocks from before the window: 8, or 7 when the window opened between a
    # free and the allocation after it.
    local older=$((frees - paired))
    [ "$older" -ge 7 ] && [ "$older" -le 8 ] || fail "thread $tid: $older frees of older blocks"
    echo "$older"
}

case_window() {
    start_service c
    read -r a0_0 a0_1 f0_0 f0_1 _ _ < <("$SERVICE" read c)
    # The window's length with a unit, as every time parameter takes it.
    run a "$RHEAP" attach --duration 500ms -o w.db "$SVC"
    read -r a1_0 a1_1 f1_0 f1_1 _ _ < <("$SERVICE" read c)
    expect_eq "attach status ($(cat a.err))" "$STATUS" 0
    ! grep -q warning a.err || fail "warnings: $(cat a.err)"
    stop_service c
    local other
    other=$(sql w.db "SELECT tid FROM threads WHERE tid != $SVC")
    expect_eq "threads recorded" "$(sql w.db "SELECT count(*) FROM threads")" 2
    o0=$(check_thread w.db "$SVC" "$a0_0" "$a1_0" "$f0_0" "$f1_0")
    o1=$(check_thread w.db "$other" "$a0_1" "$a1_1" "$f0_1" "$f1_1")
    expect_eq "frees of older blocks, counted" "$(sql w.db "SELECT unmatched_frees FROM processes")" "$((o0 + o1))"
    expect_eq "window" "$(sql w.db "SELECT on_how, off_how IS NOT NULL AND off_t > on_t, off_how FROM windows")" "attach|1|detach"
    # Resident memory, sampled from the attached recorder's events (every 10 ms at most) inside
    # the window, its parts adding up.
    expect_eq "resident memory samples in the window (>= 5|outside|parts)" "$(sql w.db "SELECT
        count(*) >= 5, sum(r.t < w.on_t OR r.t > w.off_t), sum(r.bytes != r.anon + r.file)
        FROM rss AS r, windows AS w")" "1|0|0"
    live=$(sql w.db "SELECT count(*) FROM allocations WHERE dealloc_after IS NULL")
    grep -q "^rheap: live at stop: .* in $live blocks$" a.err ||
        fail "no live-at-end line for $live blocks: $(cat a.err)"
    grep -q "^rheap: attached to $SVC: [0-9]* allocator slots in [0-9]* modules redirected$" a.err ||
        fail "no attached line: $(cat a.err)"
    # Sizes and the place of the call: service.c's one malloc.
    expect_eq "allocation site" "$(sql w.db "SELECT DISTINCT b.sym || ':' || (b.file LIKE '%service.c')
        FROM allocations a JOIN backtraces b ON b.id = a.bt AND b.frame_no = 0")" "worker:1"
}

# has_segment DIR: a thread file past the first, t<tid>-s<n>.rip, lies below DIR.
has_segment() {
    find "$1" -name 't[0-9]*-s[0-9]*.rip' | grep -q .
}

# --segment-kb reaches the attached librheap: a profile-mode window sampling nearly every call
# (--sample-interval 64) with segments of 1 KiB rolls a thread's file at each block it writes
# (none at the default 4 MiB), and the segments convert as the service's two threads. The
# window lasts until the first segment is there (a block takes a second or more per thread on
# an idle machine, longer on a busy one), then Ctrl-C ends it.
case_segments() {
    start_service c
    mkdir recs
    "$RHEAP" attach --profile --sample-interval 64 --segment-kb 1 --keep --dir recs -o s.db \
        "$SVC" >a.out 2>a.err &
    local att=$!
    PIDS+=("$att")
    wait_for "a segment in the window" has_segment recs
    kill -INT "$att"
    local st=0
    wait "$att" || st=$?
    expect_eq "attach status ($(cat a.err))" "$st" 0
    stop_service c
    local kept segs firsts
    kept=$(sed -n 's/^rheap: recording kept in //p' a.err)
    [ -d "$kept" ] || fail "no kept recording: $(cat a.err)"
    segs=$(ls "$kept"/rip-*/ | grep -c '^t[0-9]*-s[0-9]*\.rip$' || true)
    firsts=$(ls "$kept"/rip-*/ | grep -c '^t[0-9]*\.rip$' || true)
    echo "$firsts first files, $segs segments"
    expect_eq "first files" "$firsts" 2
    [ "$segs" -ge 1 ] || fail "no segment: $(ls "$kept"/rip-*/)"
    expect_eq "threads recorded" "$(sql s.db "SELECT count(*) FROM threads")" 2
    # Without the option, the default 4 MiB: one file per thread.
    start_service d
    run b "$RHEAP" attach --profile --sample-interval 64 --keep --duration 1s -o d.db "$SVC"
    expect_eq "attach status ($(cat b.err))" "$STATUS" 0
    stop_service d
    kept=$(sed -n 's/^rheap: recording kept in //p' b.err)
    expect_eq "segments at the default size" \
        "$(ls "$kept"/rip-*/ | grep -c '^t[0-9]*-s[0-9]*\.rip$' || true)" 0
}

case_cycles() {
    start_service c
    for i in $(seq 20); do
        run a "$RHEAP" attach -q --duration 0.3 -o "c$i.db" "$SVC"
        expect_eq "cycle $i status ($(cat a.err))" "$STATUS" 0
        n=$(sql "c$i.db" "SELECT count(*) FROM allocations")
        [ "$n" -gt 50 ] || fail "cycle $i: $n allocations"
        u=$(sql "c$i.db" "SELECT unmatched_frees FROM processes")
        [ "$u" -ge 14 ] && [ "$u" -le 16 ] || fail "cycle $i: $u frees of older blocks"
        expect_eq "cycle $i window" "$(sql "c$i.db" "SELECT on_how || ' ' || off_how FROM windows")" "attach detach"
    done
    # Loaded once, and inert: the service goes on, every block intact.
    expect_eq "librheap mappings with code" "$(grep -c 'r-xp.*librheap' "/proc/$SVC/maps")" 1
    read -r before _ < <("$SERVICE" read c)
    sleep 0.2
    read -r after _ < <("$SERVICE" read c)
    [ "$after" -gt "$before" ] || fail "the service stopped allocating after the last detach"
    stop_service c
}

case_python3() {
    [ -x "${PYTHON3:-}" ] || { echo "python3 not found: skipped"; return 0; }
    # bytearray(33333) is larger than pymalloc's small objects: it comes from malloc.
    "$PYTHON3" -c '
import os, time
keep, n = [], 0
while not os.path.exists("stop"):
    keep.append(bytearray(33333))
    if len(keep) > 10:
        keep.pop(0)
    n += 1
    time.sleep(0.0002)
print("done", n > 0, len(keep), sum(len(b) for b in keep))
' >py.out 2>py.err &
    PY=$!
    PIDS+=("$PY")
    sleep 0.5
    run a "$RHEAP" attach --duration 0.5 -o p.db "$PY"
    expect_eq "attach status ($(cat a.err))" "$STATUS" 0
    touch stop
    st=0
    wait "$PY" || st=$?
    expect_eq "python3 status ($(cat py.err))" "$st" 0
    expect_eq "python3 output" "$(cat py.out)" "done True 10 333330"
    got=$(sql p.db "SELECT count(*), sum(dealloc_after IS NULL) FROM allocations
                    WHERE size BETWEEN 33333 AND 33400")
    IFS='|' read -r n live <<<"$got"
    [ "$n" -gt 100 ] || fail "$n bytearrays recorded"
    # The list holds 10 (11 between an append and its pop).
    [ "$live" -ge 10 ] && [ "$live" -le 11 ] || fail "$live bytearrays live at the end"
}

# exec_done PID NAME: waits until the background process PID runs the program NAME (a job
# started with & is a copy of the shell until its exec).
exec_done() {
    wait_for "$2 did not start" is_exe "$1" "$2"
}

# is_exe PID NAME: the process runs the program NAME.
is_exe() {
    [ "$(basename "$(readlink "/proc/$1/exe")")" = "$2" ]
}

case_perl_sqlite3() {
    command -v perl >/dev/null && command -v sqlite3 >/dev/null || { echo "perl or sqlite3 missing: skipped"; return 0; }
    # perl keeping its last 10 strings of 5,000 bytes (perl allocates with the system malloc).
    perl -e 'my @a; until (-e "stop") { push @a, "x" x 5000; shift @a if @a > 10;
             select(undef, undef, undef, 0.0002) } print "done ", scalar(@a), "\n"' >pl.out &
    local pl=$!
    PIDS+=("$pl")
    exec_done "$pl" "$(basename "$(readlink -f "$(command -v perl)")")"
    sleep 0.3
    run a "$RHEAP" attach --duration 0.5 -o pl.db "$pl"
    expect_eq "perl: attach status ($(cat a.err))" "$STATUS" 0
    touch stop
    local st=0
    wait "$pl" || st=$?
    expect_eq "perl status" "$st" 0
    expect_eq "perl output" "$(cat pl.out)" "done 10"
    n=$(sql pl.db "SELECT count(*) FROM allocations WHERE size BETWEEN 5000 AND 5100")
    [ "$n" -gt 50 ] || fail "perl: $n strings recorded"
    # sqlite3 reading statements from a pipe, 2,000 inserts over about 2 s.
    mkfifo in
    sqlite3 :memory: <in >sq.out &
    local sq=$!
    PIDS+=("$sq")
    perl -e '$| = 1; print "create table t(x);\n";
             for (1 .. 2000) { print "insert into t values (randomblob(300));\n";
                               select(undef, undef, undef, 0.001) }
             print "select count(*) from t;\n"' >in &
    local feeder=$!
    PIDS+=("$feeder")
    exec_done "$sq" "$(basename "$(readlink -f "$(command -v sqlite3)")")"
    sleep 0.3
    run a "$RHEAP" attach --duration 0.5 -o sq.db "$sq"
    expect_eq "sqlite3: attach status ($(cat a.err))" "$STATUS" 0
    wait "$feeder"
    st=0
    wait "$sq" || st=$?
    expect_eq "sqlite3 status" "$st" 0
    expect_eq "sqlite3 output" "$(cat sq.out)" 2000
    n=$(sql sq.db "SELECT count(*) FROM allocations")
    [ "$n" -gt 50 ] || fail "sqlite3: $n allocations recorded"
}

case_dlopen() {
    "$LOADER" "$PLUGIN" "$WORK" >l.out &
    local ld=$!
    PIDS+=("$ld")
    exec_done "$ld" "$(basename "$LOADER")"
    # The window opens, then the library is loaded and allocates 1,000 times, then the window
    # closes while the program allocates nothing: each step waits for the one before.
    "$RHEAP" attach --duration 100 -o l.db "$ld" 2>a.err &
    local at=$!
    PIDS+=("$at")
    wait_for "the attach" grep -q "^rheap: attached to $ld:" a.err
    touch go
    wait_for "the library's allocations" test -e loaded
    kill -TERM "$at"
    local st=0
    wait "$at" || st=$?
    expect_eq "attach status ($(cat a.err))" "$st" 0
    touch stop
    st=0
    wait "$ld" || st=$?
    expect_eq "loader status" "$st" 0
    expect_eq "loader output" "$(cat l.out)" ok
    got=$(sql l.db "SELECT count(*), count(dealloc_after) FROM allocations WHERE size = 7777")
    IFS='|' read -r n freed <<<"$got"
    # The recorder finds the new library within 10 ms of its load (5 ms of iterations on an
    # idle machine): what it misses is at most the first half, and from then on nothing.
    [ "$n" -ge 500 ] && [ "$n" -le 1000 ] || fail "$n of the library's 1000 blocks recorded"
    expect_eq "the library's blocks freed" "$freed" "$n"
    # Its blocks come from its own function, and after the first of them every iteration's
    # pair of 100 bytes (made before the library's in each iteration) has its 7,777-byte pair
    # beside it: one fewer.
    expect_eq "site" "$(sql l.db "SELECT DISTINCT b.sym FROM allocations a JOIN backtraces b
        ON b.id = a.bt AND b.frame_no = 0 WHERE a.size = 7777")" plugin_alloc
    after=$(sql l.db "SELECT count(*) FROM allocations WHERE size = 100
                      AND alloc_after > (SELECT min(alloc_after) FROM allocations WHERE size = 7777)")
    expect_eq "pairs of 100 bytes after the library's first" "$after" "$((n - 1))"
}

case_killed() {
    start_service c
    "$RHEAP" attach --duration 30 -o k.db "$SVC" 2>k.err &
    local at=$!
    # Killed in the window, not during one of its calls in the process (docs/RELIABILITY.md).
    for _ in $(seq 500); do
        grep -q "^rheap: attached to $SVC:" k.err && break
        sleep 0.01
    done
    sleep 0.3
    kill -9 "$at"
    wait "$at" 2>/dev/null || true
    # librheap sees the heartbeat stop, puts the slots back and ends the recording itself.
    local dir
    dir=$(echo "$WORK"/rheap-attach-*/rip-"$SVC")
    for _ in $(seq 100); do
        "$RHEAP" dump "$dir/process.rip" 2>/dev/null | grep -q '^off ' && break
        sleep 0.1
    done
    "$RHEAP" dump "$dir/process.rip" | grep -q '^off t=[0-9]* how=error: rheap attach stopped answering$' ||
        fail "no off record: $("$RHEAP" dump "$dir/process.rip")"
    has_line c.out "rheap: rheap attach stopped answering: recording ended, allocator restored"
    # Recorded until then, and attachable again.
    run c2 "$RHEAP" convert -q "$dir" -o k.db
    [ "$(sql k.db "SELECT count(*) FROM allocations")" -gt 50 ] || fail "little recorded before the kill"
    run a "$RHEAP" attach -q --duration 0.3 -o again.db "$SVC"
    expect_eq "attach again ($(cat a.err))" "$STATUS" 0
    stop_service c
}

# A pid no process has.
free_pid() {
    local p=4194000
    while [ -e "/proc/$p" ]; do p=$((p - 1)); done
    echo "$p"
}

case_refusals() {
    local p
    p=$(free_pid)
    run a "$RHEAP" attach "$p"
    expect_eq "no process: status" "$STATUS" 1
    has_line a.err "rheap: error: cannot attach to $p: no such process"

    # Statically linked.
    printf '#include <unistd.h>\nint main(void) { sleep(60); return 0; }\n' >static.c
    if "$CC" -static -o static static.c 2>/dev/null; then
        ./static &
        PIDS+=("$!")
        exec_done "$!" static
        run a "$RHEAP" attach --duration 0.1 "$!"
        expect_eq "static: status" "$STATUS" 1
        has_line a.err "rheap: error: cannot attach to $!: it is statically linked, so its malloc cannot be redirected; start it under rheap run instead"
    else
        echo "no static libc: the static case is skipped"
    fi

    # Another allocator preloaded (here one that passes everything to glibc's own entry points,
    # as a real one would not).
    cat >other.c <<'SRC'
#include <stddef.h>
void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
void __libc_free(void *);
void *malloc(size_t n) { return __libc_malloc(n); }
void free(void *p) { __libc_free(p); }
void *calloc(size_t n, size_t s) { return __libc_calloc(n, s); }
void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
SRC
    "$CC" -shared -fPIC -o "$WORK/libother.so" other.c
    LD_PRELOAD="$WORK/libother.so" sleep 60 &
    PIDS+=("$!")
    exec_done "$!" sleep
    run a "$RHEAP" attach --duration 0.1 "$!"
    expect_eq "other allocator: status" "$STATUS" 1
    has_line a.err "rheap: error: cannot attach to $!: it allocates with an allocator rheap attach cannot hook: its malloc comes from $WORK/libother.so"

    # Already recording: under rheap run.
    "$RHEAP" run -q -o run.db -- "$SERVICE" run r >/dev/null 2>&1 &
    PIDS+=("$!")
    local runner=$!
    wait_for "the service under rheap run" service_ready r
    svc=$(pgrep -P "$runner")
    # --duration everywhere: a refusal that did not come would not hang the test.
    run a "$RHEAP" attach --duration 0.1 "$svc"
    expect_eq "recording: status" "$STATUS" 1
    grep -q "^rheap: error: cannot attach to $svc: it is already recording (into .*/rip-$svc)$" a.err ||
        fail "already recording: $(cat a.err)"
    "$SERVICE" stop r

    # Preloaded with recording off: the toggle signal is the way.
    local lib
    lib=$(dirname "$RHEAP")/../libtrace/librheap.so
    LD_PRELOAD=$lib RHEAP_ENABLE=0 "$SERVICE" run q >/dev/null 2>&1 &
    PIDS+=("$!")
    local q=$!
    wait_for "the preloaded service" service_ready q
    run a "$RHEAP" attach --duration 0.1 "$q"
    expect_eq "preloaded: status" "$STATUS" 1
    has_line a.err "rheap: error: cannot attach to $q: librheap is already preloaded in this process: turn recording on with its toggle signal (RHEAP_SIGNAL) or rheap_enable() instead"
    "$SERVICE" stop q

    # Attached by another rheap attach: refused, and the first goes on unharmed. The first
    # window stays open until the second was refused and the service has made 100 more
    # allocations in it, and is then ended with SIGTERM.
    start_service c
    "$RHEAP" attach --duration 100 -o first.db "$SVC" 2>first.err &
    local first=$!
    PIDS+=("$first")
    wait_for "the first attach" grep -q "^rheap: attached to $SVC:" first.err
    run a "$RHEAP" attach --duration 0.1 "$SVC"
    expect_eq "attached twice: status" "$STATUS" 1
    has_line a.err "rheap: error: cannot attach to $SVC: another rheap attach is attached to this process"
    local made
    made=$("$SERVICE" read c | cut -d' ' -f1)
    wait_for "the service's allocations" allocated_since c "$made" 100
    kill -TERM "$first"
    wait "$first" || fail "the first attach failed: $(cat first.err)"
    [ "$(sql first.db "SELECT count(*) FROM allocations")" -gt 50 ] || fail "the first attach recorded little"
    stop_service c

    if command -v setpriv >/dev/null && setpriv --reuid 65534 --regid 65534 --clear-groups "$RHEAP" --version >/dev/null 2>&1; then
        # Another user's process, as a user without privileges.
        sleep 60 &
        PIDS+=("$!")
        exec_done "$!" sleep
        run a setpriv --reuid 65534 --regid 65534 --clear-groups "$RHEAP" attach --duration 0.1 -o "$WORK/u.db" "$!"
        expect_eq "other user: status" "$STATUS" 1
        has_line a.err "rheap: error: cannot attach to $!: it belongs to another user (uid 0); run rheap attach as that user, or as root"
        # root without CAP_SYS_PTRACE (a container's default), against another user's process.
        setpriv --reuid 65534 --regid 65534 --clear-groups sleep 60 &
        PIDS+=("$!")
        exec_done "$!" sleep
        run a setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace "$RHEAP" attach --duration 0.1 "$!"
        expect_eq "no CAP_SYS_PTRACE: status" "$STATUS" 1
        has_line a.err "rheap: error: cannot attach to $!: ptrace not permitted; run rheap attach as the process's user or as root (in a container: add CAP_SYS_PTRACE)"
    else
        echo "setpriv cannot run rheap as another user here: the permission cases are skipped"
    fi
}

case_exit_during() {
    start_service c
    "$RHEAP" attach --duration 10 -o e.db "$SVC" >a.out 2>a.err &
    local at=$!
    sleep 0.5
    stop_service c
    local st=0
    wait "$at" || st=$?
    expect_eq "attach status ($(cat a.err))" "$st" 0
    has_line a.err "rheap: process $SVC ended during the window"
    expect_eq "window" "$(sql e.db "SELECT on_how || ' ' || off_how FROM windows")" "attach exit"
    # The service freed its last blocks before it ended: nothing is live, and it says so as a
    # process that ended does.
    expect_eq "never freed" "$(sql e.db "SELECT count(*) FROM allocations WHERE dealloc_after IS NULL")" 0
    has_line a.err "rheap: never freed: 0 bytes in 0 blocks"
}

case_fork() {
    "$FORKER" >f.out &
    local fk=$!
    PIDS+=("$fk")
    exec_done "$fk" "$(basename "$FORKER")"
    sleep 0.2
    run a "$RHEAP" attach --keep --duration 0.5 -o f.db "$fk"
    expect_eq "attach status ($(cat a.err))" "$STATUS" 0
    local st=0
    wait "$fk" || st=$?
    expect_eq "forker status" "$st" 0
    expect_eq "forker output" "$(cat f.out)" "ok"
    # Only the attached process recorded: its children made no recording of their own.
    kept=$(sed -n 's/^rheap: recording kept in //p' a.err)
    expect_eq "recordings" "$(cd "$kept" && echo rip-*)" "rip-$fk"
    expect_eq "windows" "$(sql f.db "SELECT pid || ' ' || on_how || ' ' || off_how FROM windows")" "$fk attach detach"
    # The parent's pairs, each freed where it was allocated; the children's 32-byte blocks are
    # not there.
    expect_eq "children's blocks" "$(sql f.db "SELECT count(*) FROM allocations WHERE size = 32")" 0
    n=$(sql f.db "SELECT count(*) FROM allocations WHERE size BETWEEN 64 AND 163 AND dealloc_after IS NOT NULL")
    [ "$n" -gt 100 ] || fail "$n of the parent's pairs recorded"
}

case_mount_ns() {
    # A process in a mount namespace of its own, with a /tmp of its own: neither this test's
    # directory nor the output's is visible to it, so the recording is made in its /tmp and read
    # through /proc/PID/root.
    if ! unshare -m true 2>/dev/null; then
        echo "unshare -m not permitted here: skipped"
        return 0
    fi
    # The namespace mounts a /tmp of its own, which hides a build tree under /tmp: neither the
    # service nor librheap would be there to run or to load.
    case "$(readlink -f "$SERVICE")" in
        /tmp/*) echo "the build tree is under /tmp, which the namespace hides: skipped"; return 0 ;;
    esac
    unshare -m sh -c "mount -t tmpfs rheap-test /tmp && exec \"$SERVICE\" run /tmp/c" >ns.out 2>&1 &
    local ns=$!
    PIDS+=("$ns")
    exec_done "$ns" "$(basename "$SERVICE")"
    for _ in $(seq 500); do
        [ -s "/proc/$ns/root/tmp/c" ] && [ "$("$SERVICE" read "/proc/$ns/root/tmp/c" | cut -d' ' -f6)" = 2 ] && break
        sleep 0.01
    done
    [ "$(readlink "/proc/$ns/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] || fail "no mount namespace of its own"
    run a "$RHEAP" attach --keep --duration 0.5 -o "$WORK/ns.db" "$ns"
    expect_eq "attach status ($(cat a.err))" "$STATUS" 0
    kept=$(sed -n 's/^rheap: recording kept in //p' a.err)
    case "$kept" in "/proc/$ns/root/tmp/rheap-attach-"*) ;; *) fail "recording kept in '$kept'" ;; esac
    n=$(sql ns.db "SELECT count(*) FROM allocations")
    [ "$n" -gt 50 ] || fail "$n allocations"
    expect_eq "window" "$(sql ns.db "SELECT on_how || ' ' || off_how FROM windows")" "attach detach"
    "$SERVICE" stop "/proc/$ns/root/tmp/c"
    local st=0
    wait "$ns" || st=$?
    expect_eq "service status ($(cat ns.out))" "$st" 0
}

# Where ptrace is not permitted (a container without CAP_SYS_PTRACE, kernel.yama.ptrace_scope),
# nothing can be attached to: said, and the case is skipped. The refusals case runs anyway.
if [ "$NAME" != refusals ]; then
    sleep 30 &
    PIDS+=("$!")
    exec_done "$!" sleep
    run probe "$RHEAP" attach -q --duration 0.01 -o probe.db "$!"
    if grep -q "ptrace not permitted\|ptrace is disabled" probe.err; then
        echo "skipped: $(cat probe.err)"
        exit 0
    fi
fi

"case_$NAME"
