#!/bin/bash
# serve_test.sh CASE: the host collector (rheap serve) and rheap snapshot, driven by real
# clients: go tool pprof (golang-go) fetching over HTTP, curl, headless Chromium. The programs
# recorded are tests/serve/holder.c, which holds COUNT blocks of SIZE bytes allocated at one line
# (hold_blocks), their table (COUNT*8 bytes) and stdio's 4096-byte buffer for its "ready" line
# until its stop file appears, allocating and freeing 24 bytes every 10 ms meanwhile.
#
#   snapshot   rheap snapshot PID / --all, as a profile (go tool pprof) and as a database
#   pprof      go tool pprof http://.../debug/pprof/heap?pid=P: exact bytes of a 50 MiB holder;
#              without pid, two processes told apart by their pid label; ?seconds=N
#   metrics    curl /metrics, parsed as Prometheus text, exact values
#   index      the page / in headless Chromium: its DOM, and a screenshot left in $DIR
#   lifecycle  processes that start, exec and die while the collector runs
#   profile    a profile-mode holder: within the estimate's standard error, and equal to the
#              conversion of the same recording
#   robust     malformed, huge, slow and too many requests; the collector answers on
#   dumps      --dump-dir: dumps when the heap passes the threshold and at new high marks,
#              at most --dump-keep kept
#   cgroup     --dump-threshold 50%: a holder in a memory cgroup limited to 64 MiB is dumped once
#              its heap passes 32 MiB
#   threads    16 threads passing every block to another thread to free, followed while they
#              run: the live heap at the end is exactly the converter's never-freed blocks
#   budget     --process-memory: a process whose live heap takes more of the collector's memory
#              is no longer followed (state dropped, its tables freed); a small one still is
#   perms      a collector run by another user follows that user's recordings only
#   library    the collector library through its public header (collect_api.c): the holder's
#              heap exactly, a damaged file said through the caller's log and never on stderr
#   flat       a profile-mode program allocating without end at a tiny interval: the
#              collector's memory for it stays flat while it reads every new sample
#   race       rheap snapshot -o in a loop while the collector compacts the recording: every
#              conversion succeeds with the holder's exact bytes
#   second     a second rheap serve on the same directory refuses to start, naming the first
#   compact    a week compressed into seconds: a 50 MiB holder churning at a tiny interval,
#              its recording rolled into small segments that the collector compacts into
#              checkpoints; the directory's disk use and the collector's VmHWM stay flat, the
#              profile and a fresh snapshot show the holder, the compacted recording converts
#
# CMake sets RHEAP, RHEAP_LIB, HOLDER, COLLECT_API, SRC and DIR (where the index case leaves its screenshot).
set -euo pipefail

NAME=$1
KIND=serve
source "$(dirname "$0")/../harness.sh"
# A command that fails outside a check ends the case: say which.
trap 'echo "FAIL ($NAME): line $LINENO: $BASH_COMMAND failed" >&2' ERR

export PPROF_TMPDIR=$WORK/pprof HOME=$WORK TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
HOLD_LINE=$(grep -n 'blocks\[i\] = malloc' "$SRC/tests/serve/holder.c" | cut -d: -f1)
MIB=1048576

# stop_at_exit PID: the program PID (a child of this shell) is ended when the case ends, by its
# pid: its stop file would go with the work directory before it looked.
stop_at_exit() {
    CLEANUP+=("kill $1 2>/dev/null; wait $1 2>/dev/null")
}

# start_holder NAME COUNT SIZE [VAR=VALUE...]: holder NAME recording into $REC until
# $WORK/NAME.stop exists; sets HPID once it is ready.
start_holder() {
    local name=$1 count=$2 size=$3
    shift 3
    env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$@" "$HOLDER" "$count" "$size" \
        "$WORK/$name.stop" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null &
    stop_at_exit $!
    local i
    for i in $(seq 200); do
        if grep -q '^ready' "$WORK/$name.out" 2>/dev/null; then
            HPID=$(awk '/^ready/ {print $2}' "$WORK/$name.out")
            return
        fi
        sleep 0.05
    done
    fail "holder $name did not start: $(cat "$WORK/$name.err")"
}

# start_serve [OPTIONS...]: rheap serve on a free port over $REC; sets PORT and URL.
start_serve() {
    # Made here: the background job's redirection may come after the first look below.
    : >"$WORK/serve.err"
    "$RHEAP" serve --listen 127.0.0.1:0 "$@" "$REC" 2>"$WORK/serve.err" &
    SPID=$!
    CLEANUP+=("kill $SPID 2>/dev/null; wait $SPID 2>/dev/null")
    local i
    for i in $(seq 100); do
        PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$WORK/serve.err")
        [ -n "$PORT" ] && break
        sleep 0.05
    done
    [ -n "$PORT" ] || fail "rheap serve did not start: $(cat "$WORK/serve.err")"
    URL=http://127.0.0.1:$PORT
}

# metric NAME PID [EXTRA-LABEL-MATCH]: the value of series NAME of the newest recording of PID.
metric() {
    curl -sf "$URL/metrics" | awk -v n="$1" -v p="pid=\"$2\"" -v x="${3:-}" '
        index($0, n "{") == 1 && index($0, p) && (x == "" || index($0, x)) { v = $NF }
        END { print v }'
}

# wait_for WHAT COMMAND...: runs COMMAND until it succeeds, for up to 10 s.
wait_for() {
    local what=$1 i
    shift
    for i in $(seq 100); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    fail "timed out waiting for $what"
}

metric_is() {
    [ "$(metric "$1" "$2" "${4:-}")" = "$3" ]
}

# inuse FILE-OR-URL [PPROF-OPTIONS...]: inuse_space of hold_blocks' line, in bytes, and the total.
inuse_line() {
    local src=$1
    shift
    go tool pprof -top -lines -unit=byte -nodefraction=0 -sample_index=inuse_space "$@" "$src" \
        2>"$WORK/pprof.err" >"$WORK/pprof.out" || fail "go tool pprof failed: $(cat "$WORK/pprof.err")"
    awk -v l="holder.c:$HOLD_LINE" '$0 ~ ("hold_blocks .*" l "$") { sub(/B$/, "", $1); print $1 }' \
        "$WORK/pprof.out"
}

need() {
    command -v "$1" >/dev/null || skip "$1 is not installed (scripts/setup.sh installs it)"
}

case_snapshot() {
    need go
    start_holder a 50 $MIB
    local a=$HPID
    start_holder b 3 $MIB
    local b=$HPID
    "$RHEAP" snapshot "$a" "$REC" -o a.pb.gz || fail "rheap snapshot $a failed"
    expect_eq "hold_blocks of $a" "$(inuse_line a.pb.gz)" $((50 * MIB))
    grep -q "of $((50 * MIB + 400 + 4096))B total" "$WORK/pprof.out" ||
        fail "total of $a: $(grep total "$WORK/pprof.out")"
    # --all: both, told apart by their pid label; RHEAP_DIR as the default directory.
    RHEAP_DIR=$REC "$RHEAP" snapshot --all -o all.pb.gz || fail "rheap snapshot --all failed"
    expect_eq "hold_blocks of both" "$(inuse_line all.pb.gz)" $((53 * MIB))
    expect_eq "hold_blocks of $b alone" "$(inuse_line all.pb.gz -tagfocus=pid=$b)" $((3 * MIB))
    # Standard output when it is not a terminal.
    "$RHEAP" snapshot "$b" "$REC" >b.pb.gz || fail "snapshot to stdout failed"
    expect_eq "hold_blocks of $b on stdout" "$(inuse_line b.pb.gz)" $((3 * MIB))
    # A database: the recordings converted as far as they are written (status 3: the
    # recording has no end yet, which a warning says).
    local st=0
    "$RHEAP" snapshot "$b" "$REC" -o b.db 2>db.err || st=$?
    [ $st = 0 ] || [ $st = 3 ] || fail "snapshot -o b.db: status $st: $(cat db.err)"
    expect_eq "never-freed bytes in b.db" \
        "$(sqlite3 b.db "SELECT sum(size) FROM allocations WHERE dealloc_after IS NULL")" \
        $((3 * MIB + 24 + 4096))
    # Refusals.
    st=0; "$RHEAP" snapshot 999999 "$REC" -o none.pb.gz 2>none.err || st=$?
    expect_eq "status for no such process" $st 2
    grep -q "no recording of process 999999" none.err || fail "message: $(cat none.err)"
    st=0; "$RHEAP" snapshot "$b" "$REC" -o b.db 2>exists.err || st=$?
    expect_eq "status for an existing output" $st 1
    st=0; "$RHEAP" snapshot --all "$REC" -o all.db 2>/dev/null || st=$?
    expect_eq "status for --all into a database" $st 1
}

case_pprof() {
    need go
    start_holder a 50 $MIB
    local a=$HPID
    start_holder b 3 $MIB
    local b=$HPID
    start_serve
    wait_for "both processes in /metrics" metric_is rheap_live_blocks "$b" 5
    expect_eq "heap?pid=$a over HTTP" "$(inuse_line "$URL/debug/pprof/heap?pid=$a")" $((50 * MIB))
    grep -q "of $((50 * MIB + 400 + 4096))B total" "$WORK/pprof.out" ||
        fail "total of $a: $(grep total "$WORK/pprof.out")"
    grep -q '^Type: inuse_space' "$WORK/pprof.out" || fail "heap's default is not inuse_space"
    # Every process, labelled with its pid.
    expect_eq "heap of every process" "$(inuse_line "$URL/debug/pprof/heap")" $((53 * MIB))
    expect_eq "pid $b's share" "$(inuse_line "$URL/debug/pprof/heap" -tagfocus=pid=$b)" $((3 * MIB))
    go tool pprof -tags "$URL/debug/pprof/heap" 2>/dev/null | grep -q "exe: Total" ||
        fail "no exe label"
    # allocs: alloc_space by default; the holder's blocks were all allocated.
    go tool pprof -top -lines -unit=byte -nodefraction=0 "$URL/debug/pprof/allocs?pid=$a" \
        >allocs.out 2>/dev/null || fail "allocs fetch failed"
    grep -q '^Type: alloc_space' allocs.out || fail "allocs' default: $(grep Type allocs.out)"
    grep -q "^ *$((50 * MIB))B .*hold_blocks .*holder.c:$HOLD_LINE\$" allocs.out ||
        fail "allocs of hold_blocks: $(grep hold_blocks allocs.out)"
    # ?seconds=2: the change over two seconds. The holders' blocks were there before: no change
    # of inuse at their line; churn allocates 24 bytes about every 10 ms, each freed at once.
    go tool pprof -raw "$URL/debug/pprof/allocs?pid=$a&seconds=2" >delta.out 2>delta.err ||
        fail "delta fetch failed: $(cat delta.err)"
    grep -q '^Duration: 2\.' delta.out || fail "delta duration: $(grep Duration delta.out)"
    local line
    line=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9-]+ +[0-9-]+:/ {print; exit}' delta.out)
    read -r n bytes inb inbytes _ <<<"$line"
    [ "$n" -ge 20 ] && [ "$bytes" = $((n * 24)) ] && [ "$inb" = 0 ] && [ "${inbytes%:}" = 0 ] ||
        fail "delta sample: '$line'"
    [ "$(grep -c '^ *[0-9-]\+ \+[0-9-]\+ \+[0-9-]\+ \+[0-9-]\+:' delta.out)" = 1 ] ||
        fail "delta has more than the churn's sample: $(cat delta.out)"
}

case_metrics() {
    need curl
    start_holder a 50 $MIB
    local a=$HPID
    start_serve
    wait_for "the holder in /metrics" metric_is rheap_live_blocks "$a" 52
    curl -sf -D headers "$URL/metrics" >metrics.txt || fail "curl /metrics failed"
    grep -qi '^content-type: text/plain; version=0.0.4' headers || fail "content type: $(cat headers)"
    # Prometheus text format: every line a comment (HELP/TYPE) or NAME{LABELS} VALUE, every
    # series with its HELP and TYPE before it.
    awk '
        /^# HELP [a-z_]+ / { help[$3] = 1; next }
        /^# TYPE [a-z_]+ (gauge|counter)$/ { type[$3] = 1; next }
        {
            if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9]+(\.[0-9]+)?$/) {
                print "bad line: " $0; bad = 1
            }
            name = $0; sub(/[{ ].*/, "", name)
            if (!help[name] || !type[name]) { print "no HELP/TYPE: " name; bad = 1 }
        }
        END { exit bad }' metrics.txt || fail "not Prometheus text"
    local exe
    exe=$(readlink -f "$HOLDER")
    grep -qF "rheap_live_bytes{pid=\"$a\",recording=\"1\",exe=\"$exe\",mode=\"trace\"} $((50 * MIB + 400 + 4096))" metrics.txt ||
        fail "live bytes: $(grep '^rheap_live_bytes{' metrics.txt)"
    expect_eq "live blocks" "$(metric rheap_live_blocks "$a")" 52
    expect_eq "recording state" "$(metric rheap_recording_state "$a" 'state="recording"')" 1
    expect_eq "processes" "$(awk '/^rheap_collector_processes / {print $2}' metrics.txt)" 1
    # Allocated: the blocks, the table, stdio's buffer and churn's 24-byte blocks.
    # Both from the same answer: churn goes on between two.
    local n bytes
    n=$(awk -v p="pid=\"$a\"" 'index($0, "rheap_allocations_total{") == 1 && index($0, p) { print $NF }' metrics.txt)
    bytes=$(awk -v p="pid=\"$a\"" 'index($0, "rheap_allocated_bytes_total{") == 1 && index($0, p) { print $NF }' metrics.txt)
    expect_eq "bytes allocated for $n calls" "$bytes" $((50 * MIB + 400 + 4096 + (n - 52) * 24))
    # The rate: churn's 2400 bytes a second or less (it sleeps 10 ms between calls).
    sleep 2.5
    local rate
    rate=$(metric rheap_allocation_rate_bytes "$a")
    awk -v r="$rate" 'BEGIN { exit !(r > 100 && r <= 2400) }' || fail "rate $rate"
}

case_index() {
    need chromium
    start_holder a 50 $MIB
    local a=$HPID
    start_serve
    wait_for "the holder in /metrics" metric_is rheap_live_blocks "$a" 52
    local flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/chrome")
    timeout 60 chromium "${flags[@]}" --dump-dom "$URL/" >dom.html 2>chrome.err ||
        fail "chromium failed: $(tail -3 chrome.err)"
    grep -q "<tr data-pid=\"$a\" data-live-bytes=\"$((50 * MIB + 400 + 4096))\">" dom.html ||
        fail "no row for $a: $(grep data-pid dom.html)"
    grep -q '50.0 MiB' dom.html || fail "the live heap is not shown as 50.0 MiB"
    grep -q "href=\"/debug/pprof/heap?pid=$a\"" dom.html || fail "no heap link"
    grep -q '1 recording followed' dom.html || fail "count: $(grep count dom.html)"
    mkdir -p "$DIR"
    rm -f "$DIR/index.png"
    timeout 60 chromium "${flags[@]}" --window-size=1200,400 --screenshot="$DIR/index.png" \
        "$URL/" >/dev/null 2>&1 || fail "screenshot failed"
    [ -s "$DIR/index.png" ] || fail "no screenshot"
    # The report of the running process, made on demand: rheap report --html's page, whose
    # script ran (the totals card shows the blocks never freed so far).
    grep -q "href=\"/report?pid=$a\"" dom.html || fail "no report link"
    timeout 60 chromium "${flags[@]}" --dump-dom "$URL/report?pid=$a" >report.html 2>chrome.err ||
        fail "chromium failed on the report: $(tail -3 chrome.err)"
    grep -q 'hold_blocks' report.html || fail "the report has no hold_blocks: $(head -c 600 report.html)"
    grep -q '50.0 MiB' report.html || fail "the report does not show 50.0 MiB"
    expect_eq "report of an unknown pid" \
        "$(curl -s -o /dev/null -w '%{http_code}' "$URL/report?pid=999999")" 404
    [ -z "$(ls "$TMPDIR" 2>/dev/null | grep rheap-report)" ] || fail "a report directory was left"
}

case_lifecycle() {
    need curl
    # A recording of a process that ended before the collector started is left alone.
    touch "$WORK/old.stop"
    env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$HOLDER" 1 $MIB "$WORK/old.stop" >old.out </dev/null ||
        fail "holder old failed"
    local old
    old=$(awk '/^ready/ {print $2}' old.out)
    [ -d "$REC/rip-$old" ] || fail "no recording of the old process"
    start_serve
    # A process that execs: recording 1 holds 5 MiB, then the new image (recording 2) 7 MiB.
    env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$HOLDER" 5 $MIB "$WORK/x1.stop" exec "$HOLDER" \
        7 $MIB "$WORK/x2.stop" >x.out 2>x.err </dev/null &
    local x=$!
    stop_at_exit $x
    wait_for "recording 1 of $x" metric_is rheap_live_blocks "$x" 7 'recording="1"'
    expect_eq "state of recording 1" "$(metric rheap_recording_state "$x" 'state="recording"')" 1
    touch x1.stop
    wait_for "recording 2 of $x" metric_is rheap_live_blocks "$x" 9 'recording="2"'
    # The old image's recording is seen to end at the same look or the next one.
    wait_for "recording 1 ended" \
        bash -c "curl -sf $URL/metrics | grep -q 'rheap_recording_state{pid=\"$x\",recording=\"1\".*state=\"ended\"} 1'"
    expect_eq "live bytes of the new image" "$(metric rheap_live_bytes "$x" 'recording="2"')" \
        $((7 * MIB + 56 + 4096))
    # The heap of pid x is its newest recording's.
    if command -v go >/dev/null; then
        expect_eq "heap?pid=$x after exec" "$(inuse_line "$URL/debug/pprof/heap?pid=$x")" $((7 * MIB))
    fi
    # A process that starts while the collector runs, and one that dies.
    start_holder late 2 $MIB
    local late=$HPID
    wait_for "the late process" metric_is rheap_live_blocks "$late" 4
    touch x2.stop
    wait $x || true
    wait_for "recording 2 ended" \
        bash -c "curl -sf $URL/metrics | grep -q 'rheap_recording_state{pid=\"$x\",recording=\"2\".*state=\"ended\"} 1'"
    kill -9 "$late"
    wait_for "the killed process ended" \
        bash -c "curl -sf $URL/metrics | grep -q 'rheap_recording_state{pid=\"$late\".*state=\"ended\"} 1'"
    # Its heap at death stays served while it is listed.
    expect_eq "live bytes of the killed process" "$(metric rheap_live_bytes "$late")" \
        $((2 * MIB + 16 + 4096))
    # A recording directory removed is forgotten.
    rm -rf "$REC/rip-$late"
    wait_for "the removed recording forgotten" \
        bash -c "! curl -sf $URL/metrics | grep -q 'pid=\"$late\"'"
    ! curl -sf "$URL/metrics" | grep -q "pid=\"$old\"" || fail "the old recording is listed"
    kill -0 "$SPID" || fail "the collector died"
}

case_profile() {
    need go
    # 3200 blocks of 16 KiB sampled about once every 64 KiB: each block is drawn with
    # p = 1 - exp(-1/4) and stands for 1/p blocks. The estimate of the 50 MiB has a standard
    # error of 50 MiB * sqrt((1/p - 1) / 3200); the seed is fixed, so the run repeats.
    start_holder a 3200 16384 RHEAP_MODE=profile RHEAP_SAMPLE_INTERVAL=65536 RHEAP_SAMPLE_SEED=7
    local a=$HPID
    start_serve
    wait_for "the holder in /metrics" bash -c "curl -sf $URL/metrics | grep -q 'rheap_live_bytes{pid=\"$a\".*mode=\"profile\"}'"
    sleep 0.5
    local est
    est=$(inuse_line "$URL/debug/pprof/heap?pid=$a")
    [ -n "$est" ] || fail "no hold_blocks line: $(cat "$WORK/pprof.out")"
    grep -q 'profile mode: values are estimates' "$WORK/pprof.out" || fail "no estimate note"
    awk -v e="$est" -v t=$((50 * MIB)) 'BEGIN {
            p = 1 - exp(-16384 / 65536); se = t * sqrt((1 / p - 1) / 3200)
            d = e - t; if (d < 0) d = -d
            printf "estimate %d of %d: off by %.2f standard errors\n", e, t, d / se
            exit !(d <= 3 * se) }' || fail "estimate $est"
    # The same recording converted: the database's estimate for the line is the profile's.
    "$RHEAP" snapshot "$a" "$REC" -o a.db 2>/dev/null || [ $? = 3 ] || fail "snapshot -o a.db failed"
    local db
    db=$(sqlite3 a.db "SELECT CAST(round(sum(s.leaked_bytes)) AS INTEGER) FROM stack_stats s
                       JOIN stacks k ON k.id = s.bt WHERE k.location = 'holder.c:$HOLD_LINE'
                          OR k.location LIKE '%/holder.c:$HOLD_LINE'")
    awk -v a="$est" -v b="$db" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1 && b > 0) }' ||
        fail "profile $est against the database's $db"
    # Calls allocated: the exact count of the last totals record plus the samples' estimate
    # after it; nothing was flushed yet, so an estimate of the 3202 calls (its standard error
    # about 3.3%) and churn's (each 24-byte sample stands for 2731 calls, so only a lower bound).
    local n
    n=$(metric rheap_allocations_total "$a")
    awk -v n="$n" 'BEGIN { exit !(n >= 3202 * 0.87) }' || fail "allocations_total $n"
}

# send BYTES: sends BYTES (printf format) to the collector, prints the status line it answers.
send() {
    exec 3<>"/dev/tcp/127.0.0.1/$PORT"
    printf "$1" >&3 || true
    timeout 15 head -1 <&3 | tr -d '\r' || true
    exec 3>&-
}

case_robust() {
    need curl
    start_holder a 3 $MIB
    local a=$HPID
    start_serve
    wait_for "the holder" metric_is rheap_live_blocks "$a" 5
    expect_eq "garbage" "$(send 'GARBAGE\r\n\r\n')" "HTTP/1.1 400 Bad Request"
    expect_eq "POST" "$(send 'POST / HTTP/1.1\r\nHost: x\r\n\r\n')" "HTTP/1.1 405 Method Not Allowed"
    expect_eq "a body" "$(send 'GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello')" \
        "HTTP/1.1 413 Content Too Large"
    expect_eq "unknown path" "$(send 'GET /nothing HTTP/1.1\r\n\r\n')" "HTTP/1.1 404 Not Found"
    expect_eq "bad pid" "$(send 'GET /debug/pprof/heap?pid=-1 HTTP/1.1\r\n\r\n')" \
        "HTTP/1.1 400 Bad Request"
    expect_eq "bad seconds" "$(send 'GET /debug/pprof/heap?seconds=100000 HTTP/1.1\r\n\r\n')" \
        "HTTP/1.1 400 Bad Request"
    local huge
    huge=$(head -c 20000 /dev/zero | tr '\0' a)
    expect_eq "a huge request" "$(send "GET /$huge HTTP/1.1\r\n\r\n")" \
        "HTTP/1.1 431 Request Header Fields Too Large"
    expect_eq "binary bytes" "$(send '\x00\x01\x02\xff\r\n\r\n')" "HTTP/1.1 400 Bad Request"
    # Clients that connect and say nothing, more than the collector serves at once: one is
    # refused, the others wait; the collector still answers once they go.
    local i fd idle=()
    for i in $(seq 66); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
        idle+=("$fd")
    done
    sleep 0.5
    local st
    st=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/" || true)
    expect_eq "status with every slot taken" "$st" 503
    for fd in "${idle[@]}"; do eval "exec $fd>&-"; done
    wait_for "answers after the idle clients went" \
        bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $URL/)\" = 200 ]"
    # A slow client gets its 408 and the collector goes on meanwhile.
    exec 4<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'GET / HT' >&4
    expect_eq "live bytes while a client is slow" "$(metric rheap_live_bytes "$a")" $((3 * MIB + 24 + 4096))
    exec 4>&-
    # Damaged files in a followed recording and a recording that is no recording: read past,
    # the holder's heap served as before.
    head -c 5000 /dev/urandom >"$REC/rip-$a/t999999.rip"
    : >"$REC/rip-$a/t999998.rip"
    printf 'RIPT\001\002garbage' >"$REC/rip-$a/t999997.rip"
    mkdir "$REC/rip-$SPID"
    head -c 3000 /dev/urandom >"$REC/rip-$SPID/process.rip"
    sleep 0.6
    expect_eq "live bytes after damaged files" "$(metric rheap_live_bytes "$a")" $((3 * MIB + 24 + 4096))
    expect_eq "processes after damaged files" \
        "$(curl -sf "$URL/metrics" | awk '/^rheap_collector_processes / {print $2}')" 1
    grep "reads no further" "$WORK/serve.err" >unread.txt || true
    grep -q "^rheap: warning: .*/t999999.rip: .*; the collector reads no further in this file$" \
        unread.txt || fail "no warning for the damaged file: $(cat "$WORK/serve.err")"
    grep -q "t999997.rip: offset" unread.txt || fail "no offset for t999997.rip: $(cat unread.txt)"
    ! grep -q "t999998.rip" unread.txt || fail "an empty file (nothing written yet) was reported"
    kill -0 "$SPID" || fail "the collector died"
}

case_dumps() {
    need go
    mkdir dumps
    start_serve --dump-dir dumps --dump-threshold 8M --dump-keep 3
    # 40 blocks of 1 MiB, one every 60 ms: the heap passes 8 MiB, then sets high marks.
    start_holder a 40 $MIB HOLDER_STEP_MS=60
    local a=$HPID
    wait_for "the holder's whole heap" metric_is rheap_live_blocks "$a" 42
    sleep 0.5
    grep -c "process $a: live heap .*: wrote dumps/rheap-heap-" "$WORK/serve.err" >count || true
    local made
    made=$(cat count)
    # How many high marks the collector sees depends on how often it is scheduled: a loaded
    # machine sees fewer steps of the holder. More dumps than are kept is what proves trimming.
    [ "$made" -ge 4 ] || fail "only $made dumps: $(cat "$WORK/serve.err")"
    local files=(dumps/rheap-heap-*-pid"$a".pb.gz)
    expect_eq "dumps kept" "${#files[@]}" 3
    [ -z "$(ls dumps | grep -v '^rheap-heap-.*\.pb\.gz$')" ] || fail "stray files: $(ls dumps)"
    # Each kept dump holds whole MiB at the line, above the threshold, each at least 1/16 above
    # the one before.
    local prev=0 f v
    for f in "${files[@]}"; do
        v=$(inuse_line "$f")
        [ $((v % MIB)) = 0 ] && [ "$v" -ge $((8 * MIB)) ] || fail "$f: $v"
        [ "$prev" = 0 ] || [ $((v * 16)) -ge $((prev * 17 - 16 * 4200)) ] || fail "$f: $v after $prev"
        prev=$v
    done
}

case_flat() {
    need curl
    # 3000 calls of 24 bytes every 10 ms, each byte a sample point with probability 1/64: about
    # 100 000 samples a second, each with its free, as a long run at the default interval
    # would record in hours.
    start_holder a 4 $MIB RHEAP_MODE=profile RHEAP_SAMPLE_INTERVAL=64 RHEAP_SAMPLE_SEED=3 \
        HOLDER_CHURN=3000
    local a=$HPID
    start_serve
    wait_for "the holder" bash -c "curl -sf $URL/metrics | grep -q 'rheap_collector_memory_bytes{pid=\"$a\"'"
    sleep 2
    local m1 n1 d1 m2 n2 d2
    m1=$(metric rheap_collector_memory_bytes "$a")
    n1=$(metric rheap_allocations_total "$a")
    d1=$(du -sk "$REC" | cut -f1)
    sleep 4
    m2=$(metric rheap_collector_memory_bytes "$a")
    n2=$(metric rheap_allocations_total "$a")
    d2=$(du -sk "$REC" | cut -f1)
    echo "collector memory $m1 -> $m2 bytes; allocations $n1 -> $n2; recording $d1 -> $d2 KiB"
    awk -v a="$n1" -v b="$n2" 'BEGIN { exit !(b - a > 200000) }' ||
        fail "the collector did not follow the allocations: $n1 -> $n2"
    expect_eq "collector memory for the process after 4 more seconds" "$m2" "$m1"
    # The live heap stays the holder's blocks: the churn's samples are freed.
    local live
    live=$(metric rheap_live_bytes "$a")
    awk -v l="$live" -v t=$((4 * MIB)) 'BEGIN { exit !(l > t * 0.5 && l < t * 1.5) }' ||
        fail "live bytes $live"
}

# hwm_kib PID: the most resident memory the process has held (VmHWM), in KiB.
hwm_kib() {
    awk '/^VmHWM/ { print $2 }' "/proc/$1/status"
}

case_compact() {
    need go
    # 3200 blocks of 16 KiB held (every one sampled at an interval of 64 bytes: each stands for
    # exactly itself), and 3000 calls of 24 bytes every 10 ms, about 100 000 samples a second
    # with their frees, each thread file rolled every 64 KiB of blocks: at the default interval
    # and segment size, a service allocating 1 GB/s writes as much in hours.
    # A thread starts, churns and ends every 10 ms too: the files of threads that are gone are
    # compacted with the closed segments.
    start_holder a 3200 16384 RHEAP_MODE=profile RHEAP_SAMPLE_INTERVAL=64 RHEAP_SAMPLE_SEED=5 \
        RHEAP_SEGMENT_KB=64 HOLDER_CHURN=3000 HOLDER_THREADS=1
    local a=$HPID dir
    dir=$(ls -d "$REC"/rip-$a)
    start_serve --disk-budget 256K
    wait_for "the holder" bash -c "curl -sf $URL/metrics | grep -q 'rheap_live_bytes{pid=\"$a\"'"
    # Sampled every second until the holder's main thread has written 40 segments (2.5 MiB or
    # more), 36 s at most: the directory's disk use and the collector's VmHWM, which after its first seconds
    # (symbolizer, first checkpoint) must not grow with time. Bound on disk: the open file's
    # staging area (324 KiB) and segment (64 KiB), the budget of closed segments (256 KiB) and
    # what one scan adds to it, the checkpoint (3200 blocks).
    local i du most=0 hwm5 hwm serials=0 segs=0
    for i in $(seq 36); do
        sleep 1
        # A file the collector deletes while du walks the directory is no error here.
        du=$(du -sk "$dir" 2>/dev/null | cut -f1 || true)
        [ "${du:-0}" -gt "$most" ] && most=$du
        [ "$i" = 8 ] && hwm5=$(hwm_kib $SPID)
        serials=$(ls "$dir" | sed -n "s/^t$a-s\\([0-9]*\\)\\.rip\$/\\1/p" | sort -n | tail -1)
        segs=$("$RHEAP" dump "$dir/t$a-s$serials.rip" 2>/dev/null | sed -n 's/^# segment \([0-9]*\) .*/\1/p' || true)
        [ "$i" -ge 12 ] && [ "${segs:-0}" -ge 40 ] && break
    done
    hwm=$(hwm_kib $SPID)
    local files
    files=$(ls "$dir" | tr '\n' ' ')
    echo "recording: at most $most KiB on disk over $i s, ${serials:-0} thread files written, $segs segments of the main thread ($files)"
    echo "collector VmHWM: $hwm5 KiB after 8 s, $hwm KiB after $i s"
    # Without compaction the directory would hold every file: 64 KiB each at least, and one
    # file per thread that ended.
    # On a loaded machine the holder may write fewer: 20 segments (1.25 MiB) and 200 files of
    # ended threads (4 KiB or more of disk each) are still well past the bound.
    [ "${segs:-0}" -ge 20 ] && [ "${serials:-0}" -ge 200 ] ||
        fail "only ${segs:-0} segments and ${serials:-0} files written: the holder did not churn enough"
    local left
    left=$(ls "$dir" | grep -c '^t.*\.rip$' || true)
    # A few at any moment: those of threads that ended since the last scans (more behind a
    # slow, sanitized collector), not one per thread ever made.
    [ "$left" -le 64 ] || fail "$left thread files left of $serials: those of ended threads stay"
    [ "$most" -le 1280 ] || fail "the recording took $most KiB of disk, more than the 1280 KiB bound"
    ls "$dir" | grep -q '^checkpoint-[0-9]*\.rip$' || fail "no checkpoint: $files"
    # The metric counts the checkpoints (more may come between the two looks).
    local k m
    k=$(ls "$dir" | sed -n 's/^checkpoint-\([0-9]*\)\.rip$/\1/p')
    m=$(metric rheap_compactions_total "$a")
    [ "$m" -ge "$k" ] || fail "rheap_compactions_total $m, below the checkpoint's number $k"
    [ "$(ls "$dir" | grep -c '^checkpoint-')" = 1 ] || fail "older checkpoints left: $files"
    # A sanitized collector (scripts/test-sanitizers.sh) holds freed memory in quarantine.
    if [ -z "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
        # 2 MiB: what the allocator's free lists settle at under the churn of a file per thread
        # (bench/RESULTS.md: flat from the third minute on); a leak of a kilobyte or two per
        # file read passes it within the run.
        [ "$((hwm - hwm5))" -le 2048 ] || fail "the collector's VmHWM grew from $hwm5 to $hwm KiB"
    fi
    # The holder's 50 MiB, from the collector that compacted, and from a snapshot that reads the
    # checkpoint and the segments after it.
    local est snap
    est=$(inuse_line "$URL/debug/pprof/heap?pid=$a")
    expect_eq "hold_blocks over HTTP" "$est" $((50 * MIB))
    "$RHEAP" snapshot "$a" "$REC" -o snap.pb.gz 2>/dev/null || fail "rheap snapshot failed"
    snap=$(inuse_line snap.pb.gz)
    expect_eq "hold_blocks in a fresh snapshot" "$snap" $((50 * MIB))
    # The compacted recording converts: the holder's blocks never freed, what was compacted said.
    touch "$WORK/a.stop"
    wait_for "the holder's end" bash -c "! kill -0 $a"
    "$RHEAP" convert -q "$dir" -o a.db || fail "rheap convert of the compacted recording failed"
    local db
    db=$(sqlite3 a.db "SELECT CAST(round(sum(s.leaked_bytes)) AS INTEGER) FROM stack_stats s
                       JOIN stacks k ON k.id = s.bt WHERE k.function = 'hold_blocks'
                          AND k.location LIKE '%holder.c:$HOLD_LINE'")
    expect_eq "hold_blocks never freed in the database" "$db" $((50 * MIB))
    expect_eq "warnings" "$(sqlite3 a.db "SELECT value FROM meta WHERE key = 'warnings'")" 0
    [ "$(sqlite3 a.db "SELECT value FROM meta WHERE key = 'compacted_files'")" -ge 4 ] ||
        fail "meta compacted_files: $(sqlite3 a.db "SELECT value FROM meta WHERE key = 'compacted_files'")"
    "$RHEAP" report a.db | grep -q 'compacted .* thread files; events before .* s were compacted' ||
        fail "rheap report does not say the recording was compacted"
}

case_race() {
    # The compact case's holder, smaller (320 blocks of 16 KiB, each sampled and standing for
    # itself), converted again and again by rheap snapshot -o while the collector compacts its
    # recording: every conversion reads a whole, consistent recording (the files it listed stay
    # until it ends), and the compactions go on between the conversions.
    start_holder a 320 16384 RHEAP_MODE=profile RHEAP_SAMPLE_INTERVAL=64 RHEAP_SAMPLE_SEED=5 \
        RHEAP_SEGMENT_KB=64 HOLDER_CHURN=3000 HOLDER_THREADS=1
    local a=$HPID
    start_serve --disk-budget 256K
    wait_for "a first compaction" bash -c "curl -sf $URL/metrics |
        grep -q '^rheap_compactions_total{pid=\"$a\".* [1-9][0-9]*\$'"
    local i st k0 k db runs=0
    k0=$(metric rheap_compactions_total "$a")
    for i in $(seq 40); do
        st=0
        "$RHEAP" snapshot "$a" "$REC" -o race$i.db 2>race.err || st=$?
        # 3: converted, with a warning (a file of a thread still being written).
        [ $st = 0 ] || [ $st = 3 ] || fail "conversion $i: status $st: $(cat race.err)"
        db=$(sqlite3 race$i.db "SELECT CAST(round(sum(s.leaked_bytes)) AS INTEGER)
                                FROM stack_stats s JOIN stacks k ON k.id = s.bt
                                WHERE k.function = 'hold_blocks'
                                  AND k.location LIKE '%holder.c:$HOLD_LINE'")
        expect_eq "hold_blocks live in conversion $i" "$db" $((320 * 16384))
        rm -f race$i.db
        runs=$i
        k=$(metric rheap_compactions_total "$a")
        [ "$i" -ge 6 ] && [ "$((k - k0))" -ge 4 ] && break
        # Room for a scan between two conversions: a compaction waits while one reads.
        sleep 0.2
    done
    echo "$runs conversions, $((k - k0)) compactions meanwhile," \
        "$(metric rheap_compactions_deferred_total "$a") put off while a conversion read"
    [ "$((k - k0))" -ge 4 ] || fail "only $((k - k0)) compactions during $runs conversions"
    # The holder's table (320 * 8 bytes, by calloc, made before its blocks) is in the
    # checkpoint under its call, and a conversion says calloc, not malloc.
    local dir ck
    dir=$REC/rip-$a
    ck=$(ls "$dir" | grep '^checkpoint-[0-9]*\.rip$' | tail -1)
    "$RHEAP" dump "$dir/$ck" 2>/dev/null >ck.txt || true
    grep -q ' call=calloc addr=0x[0-9a-f]* size=2560 ' ck.txt ||
        fail "no calloc of 2560 bytes in $ck: $(grep -c '^alloc' ck.txt) allocations, calls $(grep -o 'call=[a-z_]*' ck.txt | sort | uniq -c | tr '\n' ' ')"
    "$RHEAP" snapshot "$a" "$REC" -o calls.db 2>/dev/null || [ $? = 3 ] || fail "snapshot -o calls.db"
    expect_eq "the table's call after compaction" "$(sqlite3 calls.db "SELECT c.name
        FROM allocations a JOIN calls c ON c.id = a.call
        WHERE a.size = 2560 AND a.dealloc_after IS NULL")" calloc
}

case_second() {
    start_holder a 4 $MIB
    local a=$HPID first st
    start_serve
    first=$SPID
    wait_for "the holder" bash -c "curl -sf $URL/metrics | grep -q 'rheap_live_bytes{pid=\"$a\"'"
    # A second collector on the same directory refuses to start (status 1, a usage error), and
    # names the first; it would compact the same recordings.
    st=0
    timeout 10 "$RHEAP" serve --listen 127.0.0.1:0 "$REC" 2>second.err || st=$?
    expect_eq "the second collector's status ($(cat second.err))" "$st" 1
    grep -qF "rheap: error: $REC is followed by another rheap serve (pid $first, holding" \
        second.err || fail "the refusal does not name pid $first: $(cat second.err)"
    # The first goes on; once it has stopped, a new one starts on the directory.
    [ "$(metric rheap_live_bytes "$a")" -ge $((4 * MIB)) ] || fail "the first collector no longer answers"
    kill -TERM "$first"
    wait "$first" || fail "the first collector's status after SIGTERM: $?"
    start_serve
    wait_for "the holder, in the collector started after" \
        bash -c "curl -sf $URL/metrics | grep -q 'rheap_live_bytes{pid=\"$a\"'"
}

case_cgroup() {
    need go
    [ "$(id -u)" = 0 ] || skip "needs root, to make a memory cgroup"
    local cg file
    if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
        grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
        cg=/sys/fs/cgroup/rheap-test-$$ file=memory.max
    elif [ -d /sys/fs/cgroup/memory ]; then
        cg=/sys/fs/cgroup/memory/rheap-test-$$ file=memory.limit_in_bytes
    else
        skip "no memory cgroup hierarchy"
    fi
    mkdir "$cg" 2>/dev/null || skip "cannot make a cgroup under $(dirname "$cg")"
    CLEANUP+=("rmdir $cg")
    echo $((64 * MIB)) >"$cg/$file" || skip "cannot set $cg/$file"
    mkdir dumps
    start_serve --dump-dir dumps --dump-threshold 50% --dump-keep 100
    # 40 blocks of 1 MiB, one every 40 ms, inside the group; its heap passes 32 MiB.
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
        env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" HOLDER_STEP_MS=40 "$HOLDER" 40 $MIB \
        "$WORK/a.stop" >a.out 2>a.err </dev/null &
    local h=$!
    # Before the cleanup removes the group, the holder must be gone from it.
    CLEANUP=("kill $h 2>/dev/null; wait $h 2>/dev/null" "${CLEANUP[@]}")
    wait_for "the holder's whole heap" grep -q '^ready' a.out
    local a
    a=$(awk '/^ready/ {print $2}' a.out)
    wait_for "the holder in /metrics" metric_is rheap_live_blocks "$a" 42
    sleep 0.5
    local files=(dumps/rheap-heap-*-pid"$a".pb.gz)
    [ -f "${files[0]}" ] || fail "no dump: $(cat "$WORK/serve.err")"
    # The first dump came when the heap passed half the limit: at least 32 MiB of the
    # threshold, not yet the whole 40.
    local v
    v=$(inuse_line "${files[0]}")
    [ "$v" -ge $((32 * MIB - 4096 - 320)) ] && [ "$v" -lt $((40 * MIB)) ] ||
        fail "first dump at $v bytes"
    # A process in no limited group is not dumped: the collector itself runs in the parent.
    start_holder b 40 $MIB
    sleep 0.5
    ! ls dumps | grep -q "pid$HPID" || fail "a process without a limit was dumped"
}

case_threads() {
    need curl
    start_serve
    # Nearly every free is made by a thread other than the allocating one, and addresses are
    # reused across threads at once: the case where reading the threads' files unevenly could
    # pair a free with the wrong block.
    env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$XTHREADS" 16 150000 >xt.out 2>xt.err </dev/null ||
        fail "xthreads failed: $(cat xt.err)"
    local pid
    pid=$(ls "$REC" | sed -n 's/^rip-\([0-9]*\)$/\1/p')
    wait_for "its recording ended" \
        bash -c "curl -sf $URL/metrics | grep -q 'rheap_recording_state{pid=\"$pid\".*state=\"ended\"} 1'"
    "$RHEAP" convert "$REC/rip-$pid" -o xt.db -q || fail "rheap convert failed"
    local blocks bytes
    blocks=$(sqlite3 xt.db "SELECT count(*) FROM allocations WHERE dealloc_after IS NULL")
    bytes=$(sqlite3 xt.db "SELECT sum(size) FROM allocations WHERE dealloc_after IS NULL")
    expect_eq "live blocks at the end" "$(metric rheap_live_blocks "$pid")" "$blocks"
    expect_eq "live bytes at the end" "$(metric rheap_live_bytes "$pid")" "$bytes"
    expect_eq "calls" "$(metric rheap_allocations_total "$pid")" \
        "$(sqlite3 xt.db "SELECT count(*) FROM allocations")"
}

case_budget() {
    need curl
    start_holder small 3 $MIB
    local small=$HPID
    start_holder big 20000 16
    local big=$HPID
    start_serve --process-memory 200K
    wait_for "the big one dropped" \
        bash -c "curl -sf $URL/metrics | grep -q 'rheap_recording_state{pid=\"$big\".*state=\"dropped\"} 1'"
    grep -q "process $big no longer followed: its live heap took .* more than 200.0 KiB a process" \
        "$WORK/serve.err" || fail "no warning: $(cat "$WORK/serve.err")"
    expect_eq "memory held for the dropped one" "$(metric rheap_collector_memory_bytes "$big")" 0
    expect_eq "heap of the dropped one" \
        "$(curl -s -o /dev/null -w '%{http_code}' "$URL/debug/pprof/heap?pid=$big")" 503
    wait_for "the small one" metric_is rheap_live_blocks "$small" 5
    expect_eq "state of the small one" \
        "$(metric rheap_recording_state "$small" 'state="recording"')" 1
    local m
    m=$(metric rheap_collector_memory_bytes "$small")
    [ "$m" -gt 0 ] && [ "$m" -le $((200 * 1024)) ] || fail "memory for the small one: $m"
}

case_perms() {
    need curl
    [ "$(id -u)" = 0 ] || skip "needs root, to run the collector and a program as another user"
    command -v setpriv >/dev/null || skip "setpriv is not installed"
    local as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    "${as_nobody[@]}" test -x "$RHEAP" 2>/dev/null || skip "the build tree is not readable by nobody"
    chmod 755 "$WORK"
    chmod 1777 "$REC"
    # root's recording (its directory is private, as librheap makes them) and nobody's.
    start_holder mine 2 $MIB
    local mine=$HPID
    "${as_nobody[@]}" env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$HOLDER" 3 $MIB \
        "$WORK/theirs.stop" >"$WORK/theirs.out" 2>"$WORK/theirs.err" </dev/null &
    stop_at_exit $!
    wait_for "nobody's holder" grep -q '^ready' "$WORK/theirs.out"
    local theirs
    theirs=$(awk '/^ready/ {print $2}' "$WORK/theirs.out")
    [ "$(stat -c %a "$REC/rip-$mine")" = 700 ] || fail "root's recording is not private"
    "${as_nobody[@]}" "$RHEAP" serve --listen 127.0.0.1:0 "$REC" 2>"$WORK/serve.err" &
    SPID=$!
    CLEANUP+=("kill $SPID 2>/dev/null")
    wait_for "the collector" grep -q 'serving http' "$WORK/serve.err"
    PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$WORK/serve.err")
    URL=http://127.0.0.1:$PORT
    wait_for "nobody's recording" metric_is rheap_live_blocks "$theirs" 5
    sleep 0.5
    curl -sf "$URL/metrics" >metrics.txt
    ! grep -q "pid=\"$mine\"" metrics.txt || fail "root's recording is served to nobody"
    expect_eq "processes nobody sees" "$(awk '/^rheap_collector_processes / {print $2}' metrics.txt)" 1
    expect_eq "heap of root's process, asked by pid" \
        "$(curl -s -o /dev/null -w '%{http_code}' "$URL/debug/pprof/heap?pid=$mine")" 404
    "${as_nobody[@]}" "$RHEAP" snapshot "$mine" "$REC" -o "$WORK/tmp/x.pb.gz" 2>snap.err &&
        fail "snapshot of root's process as nobody succeeded"
    grep -q "no recording of process $mine" snap.err || fail "snapshot: $(cat snap.err)"
}

case_library() {
    start_holder a 3 $MIB
    "$COLLECT_API" "$REC" "$HPID" $((3 * MIB + 24 + 4096)) 5 t999997.rip >api.out 2>api.err ||
        fail "collect_api: $(cat api.out api.err)"
    expect_eq "collect_api's stderr" "$(cat api.err)" ""
}

SPID=
"case_$NAME"
# The collector stops cleanly on SIGTERM: status 0, and nothing on stderr but its lines (a
# sanitized build would print its findings there).
if [ -n "$SPID" ]; then
    kill -TERM "$SPID"
    st=0
    wait "$SPID" || st=$?
    expect_eq "the collector's status after SIGTERM" "$st" 0
    if grep -v '^rheap: ' "$WORK/serve.err" | grep -q .; then
        fail "the collector's stderr: $(cat "$WORK/serve.err")"
    fi
fi
