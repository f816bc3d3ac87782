#!/bin/bash
# visual_test.sh CASE: the picture outputs (rheap export, rheap report --html) of a recording of
# tests/queries/truth.c, a program whose allocations are known exactly (its header lists them).
#
#   record     record truth with the real librheap, convert with the real rheap into $DIR/out.db
#   collapsed  rheap export collapsed: every line of every weight, and the sums against SQL
#   pprof      rheap export pprof, read back by go tool pprof (golang-go): exact bytes per site
#   html       rheap report --html, opened by headless Chromium: the DOM after the script ran
#   agree      the model from the summary tables is the one the rows give (model_oracle.c)
#   diff       rheap diff and export collapsed --base on two runs of grow.c, whose leak grows
#   suppress   --suppress FILE and the built-in list on query leaks, report, the page, export
#
# CMake sets the environment: RHEAP, LIB (librheap.so), TRUTH (the truth program), GROW
# (tests/visual/grow.c), SRC (the source tree), DIR (this test group's directory; the html case
# leaves its screenshot there).
set -euo pipefail

CASE=$1
DB=$DIR/out.db

fail() {
    echo "FAIL ($CASE): $*" >&2
    exit 1
}

# expect_eq WHAT GOT WANT
expect_eq() {
    [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

sql() {
    sqlite3 -batch -noheader "$DB" "$@"
}

# The line of truth.c tagged /* @TAG */.
tag_line() {
    grep -n "/\* @$1 \*/" "$SRC/tests/queries/truth.c" | cut -d: -f1
}

case_record() {
    rm -rf "$DIR"
    mkdir -p "$DIR/rec"
    RHEAP_DIR="$DIR/rec" LD_PRELOAD="$LIB" "$TRUTH" >"$DIR/truth.out" || fail "$TRUTH failed"
    grep -q 'truth: done, 25 blocks kept' "$DIR/truth.out" || fail "unexpected output of $TRUTH"
    "$RHEAP" convert "$DIR"/rec/rip-* -o "$DB" -q || fail "rheap convert failed"
}

need_db() {
    [ -f "$DB" ] || fail "$DB missing: the visual.record test makes it"
}

# The frames above FUNCTION in the stack of a block SIZE bytes large, outermost first, joined
# by ';': what every folded stack of main's (or the worker's) allocations starts with. Read
# from the backtraces rows, so the test does not depend on how this libc starts a program.
outer() {
    sql "SELECT group_concat(sym, ';') FROM (
           SELECT b.sym FROM backtraces AS b
           WHERE b.id = (SELECT bt FROM allocations WHERE size = $1 LIMIT 1)
             AND b.frame_no > (SELECT frame_no FROM backtraces
                               WHERE id = b.id AND sym = '$2')
           ORDER BY b.frame_no DESC)"
}

case_collapsed() {
    need_db
    local m t
    m="$(outer 1000 main);main"     # leak_big's blocks are 1000 bytes
    t="$(outer 77 worker);worker"   # the worker's leak is 77 bytes
    [ "$m" != ";main" ] && [ "$t" != ";worker" ] || fail "no stack above main or worker in $DB"

    # --no-default-suppressions everywhere below: these cases check every leak truth.c has,
    # stdio's buffer included (case_suppress checks the suppressions).
    # Expected lines per weight, from what truth.c does (its header): leaked (bytes never
    # freed), peak (bytes live at the peak: the 1 MiB block and both 4096-byte blocks of peak(),
    # and the leaks made before it), allocated (bytes), allocations (blocks) and temporary
    # (blocks freed before their thread's next allocation). main's own 4096 bytes are stdout's
    # buffer; threads' 304 bytes are what pthread_create keeps.
    cat >want-leaked.txt <<EOF
$t 77
$m 4096
$m;growth;grow_leak 320
$m;growth;oneshot 320
$m;leak_big 5000
$m;leak_names 200
$m;leak_zeroed 300
$m;threads 304
EOF
    cat >want-peak.txt <<EOF
$m;leak_big 5000
$m;leak_names 200
$m;leak_zeroed 300
$m;peak 1056768
EOF
    cat >want-allocated.txt <<EOF
$t 1661
$m 4096
$m;diff 3600
$m;grow_buffer 8176
$m;growth;grow_leak 320
$m;growth;oneshot 320
$m;held 512
$m;keeper 320
$m;leak_big 5000
$m;leak_names 200
$m;leak_zeroed 300
$m;peak 1056768
$m;scratch 3200
$m;threads 2352
EOF
    cat >want-allocations.txt <<EOF
$t 9
$m 1
$m;diff 10
$m;grow_buffer 9
$m;growth;grow_leak 8
$m;growth;oneshot 8
$m;held 4
$m;keeper 10
$m;leak_big 5
$m;leak_names 20
$m;leak_zeroed 3
$m;peak 3
$m;scratch 50
$m;threads 5
EOF
    cat >want-temporary.txt <<EOF
$t 2
$m;diff 2
$m;grow_buffer 9
$m;held 1
$m;keeper 1
$m;peak 1
$m;scratch 50
EOF
    # The same weights computed by SQL of their own (peak.sql and temporary.sql for the two
    # that need a rule), each stack's weights must add up to them.
    local peak_sql temp_sql
    peak_sql=$(sqlite3 -batch "$DB" <"$SRC/queries/peak.sql" | head -n 1 | cut -d'|' -f6)
    temp_sql=$(sqlite3 -batch "$DB" <"$SRC/queries/temporary.sql" | awk -F'|' '{ s += $1 } END { print s }')
    declare -A total=(
        [leaked]=$(sql "SELECT sum(size) FROM allocations WHERE dealloc_after IS NULL")
        [peak]=$peak_sql
        [allocated]=$(sql "SELECT sum(size) FROM allocations")
        [allocations]=$(sql "SELECT count(*) FROM allocations")
        [temporary]=$temp_sql
    )
    for w in leaked peak allocated allocations temporary; do
        "$RHEAP" export collapsed "$DB" --weight "$w" --no-default-suppressions -o "got-$w.txt" || fail "export --weight $w failed"
        # Compared as sets of lines: the export's order is byte order of the stack text, which
        # depends on the names the symbolizer gives the outer frames (clone3 or __clone3).
        diff -u <(LC_ALL=C sort "want-$w.txt") <(LC_ALL=C sort "got-$w.txt") ||
            fail "collapsed --weight $w: lines differ (- expected, + got)"
        expect_eq "sum of --weight $w" "$(awk '{ s += $NF } END { print s }' "got-$w.txt")" "${total[$w]}"
    done
    # The default weight is leaked, the default output standard output; --pid of another
    # process leaves nothing.
    "$RHEAP" export collapsed "$DB" --no-default-suppressions >got-default.txt
    diff -u <(LC_ALL=C sort want-leaked.txt) <(LC_ALL=C sort got-default.txt) || fail "the default weight is not leaked"
    local pid
    pid=$(sql "SELECT pid FROM processes")
    "$RHEAP" export collapsed "$DB" --pid "$pid" --no-default-suppressions | LC_ALL=C sort | diff -u <(LC_ALL=C sort want-leaked.txt) - ||
        fail "--pid $pid differs"
    [ -z "$("$RHEAP" export collapsed "$DB" --pid $((pid + 1)))" ] || fail "--pid of another process printed lines"
    # getopt_long's forms: an attached value (-oFILE), --output=FILE and --weight=W, options
    # before FORMAT and DB; all give the same file as the separate forms above.
    "$RHEAP" export -ogot-short.txt --weight=peak collapsed "$DB" || fail "export -oFILE failed"
    cmp got-peak.txt got-short.txt || fail "export -oFILE --weight=peak differs from -o FILE --weight peak"
    "$RHEAP" export --output=got-long.txt collapsed --weight allocated "$DB" || fail "export --output=FILE failed"
    cmp got-allocated.txt got-long.txt || fail "export --output=FILE differs from -o FILE"
    "$RHEAP" export -ogot-end.txt --no-default-suppressions -- collapsed "$DB" || fail "export -oFILE -- FORMAT DB failed"
    cmp got-leaked.txt got-end.txt || fail "export -oFILE -- FORMAT DB differs from the default weight"
    local st=0
    "$RHEAP" export collapsed "$DB" --weight nonsense 2>err.txt || st=$?
    expect_eq "status of an unknown weight" "$st" 1
    expect_eq "unknown weight message" "$(cat err.txt)" \
        "rheap: error: unknown weight 'nonsense' (leaked, peak, allocated, allocations, temporary, live-at-stop)"
    st=0
    "$RHEAP" export collapsed "$DB" -o 2>err.txt || st=$?
    expect_eq "status of -o without a file" "$st" 1
    expect_eq "-o without a file" "$(cat err.txt)" "rheap: error: -o needs a file name (try rheap export --help)"
    st=0
    "$RHEAP" export collapsed "$DB" --pid=x 2>err.txt || st=$?
    expect_eq "status of a bad --pid" "$st" 1
    expect_eq "bad --pid message" "$(cat err.txt)" "rheap: error: --pid wants a process id, not 'x'"
    st=0
    "$RHEAP" export pprof "$DB" --weight temporary -o t.pb.gz 2>err.txt || st=$?
    expect_eq "status of pprof --weight temporary" "$st" 1
    expect_eq "pprof --weight temporary message" "$(cat err.txt)" \
        "rheap: error: a pprof profile has no temporary sample type; use collapsed"
    # --skip: the leak_* wrappers' blocks are charged to their caller, main (leak_big's 5000,
    # leak_zeroed's 300, leak_names' 200 and stdout's 4096), as the leaks query's skip does.
    # leaf FILE: the weight of each stack's innermost frame, summed.
    leaf() { awk '{ n = split($1, f, ";"); w[f[n]] += $2 } END { for (k in w) print k, w[k] }' | sort; }
    "$RHEAP" export collapsed "$DB" --no-default-suppressions --skip 'leak_*' | leaf >skip-export.txt
    "$RHEAP" query leaks "$DB" --no-default-suppressions -p 'skip=leak_*' --csv | tr -d '\r' |
        awk -F, 'NR > 1 { w[$3] += $2 } END { for (k in w) print k, w[k] }' | sort >skip-query.txt
    diff skip-query.txt skip-export.txt || fail "export --skip differs from query leaks -p skip"
    grep -qx 'main 9596' skip-export.txt || fail "main is not charged 9596 bytes: $(cat skip-export.txt)"
    "$RHEAP" report --html -o skip.html "$DB" --skip 'leak_*' || fail "report --html --skip"
    ! grep -q '\["leak_big",' skip.html || fail "the page still has a leak_big frame with --skip"
    "$RHEAP" report --html -o skip.html "$DB" 2>err.txt && fail "report --html replaced skip.html"
    expect_eq "report --html over a file" "$(cat err.txt)" "rheap: error: skip.html exists; use --force to replace it"
    "$RHEAP" report --html -f -o skip.html "$DB" || fail "report --html -f"
    "$RHEAP" export collapsed "$DB" -o skip.html 2>err.txt && fail "export replaced skip.html"
    expect_eq "export over a file" "$(cat err.txt)" "rheap: error: skip.html exists; use --force to replace it"
    grep -q '\["leak_big",' skip.html || fail "the page has no leak_big frame without --skip"
    "$RHEAP" report --no-default-suppressions --skip 'leak_*' "$DB" >rep-skip.txt
    sed -n '/^Top leaks by site/,/^$/p' rep-skip.txt | grep -q '^ *5 *5000  main ' ||
        fail "report --skip: leak_big's blocks not charged to main: $(cat rep-skip.txt)"
}

case_pprof() {
    need_db
    if ! command -v go >/dev/null; then
        echo "SKIP: go not found (Debian package golang-go); go tool pprof cannot read the profile"
        exit 77
    fi
    # go tool pprof keeps state under $HOME; a private one keeps the test from touching the
    # user's.
    export HOME=$PWD/home GOCACHE=$PWD/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
    mkdir -p "$HOME"
    "$RHEAP" export pprof "$DB" --no-default-suppressions -o heap.pb.gz || fail "export pprof failed"
    gzip -t heap.pb.gz || fail "heap.pb.gz is not gzip"
    top() {
        go tool pprof -top -nodecount=1000 -nodefraction=0 -edgefraction=0 "$@" 2>&1
    }
    # flat value and function of each line of -top, for functions that have a flat value
    flat() {
        awk '$NF != "" && $1 ~ /^[0-9]+B?$/ && $1 != "0" { print $1, $NF }' | sort -k2
    }
    top -unit=B -sample_index=inuse_space heap.pb.gz >inuse.txt
    grep -q 'Total samples = 10617B' inuse.txt || { cat inuse.txt; fail "inuse_space total is not 10617B"; }
    flat <inuse.txt >got-inuse.txt
    cat >want-inuse.txt <<EOF
320B grow_leak
5000B leak_big
200B leak_names
300B leak_zeroed
4096B main
320B oneshot
304B threads
77B worker
EOF
    diff -u want-inuse.txt got-inuse.txt || fail "inuse_space per function differs"

    top -sample_index=alloc_objects heap.pb.gz >objects.txt
    grep -qE 'Total samples = 145 *$' objects.txt || { cat objects.txt; fail "alloc_objects total is not 145"; }
    flat <objects.txt | grep -E ' (scratch|leak_names|peak|worker)$' >got-objects.txt
    printf '%s\n' '20 leak_names' '3 peak' '50 scratch' '9 worker' >want-objects.txt
    diff -u want-objects.txt got-objects.txt || fail "alloc_objects per function differs"

    # Lines: leak_big's samples are at its tagged line of truth.c; with the stacks of
    # -traces, the outer frames of the leak are main and the libc start-up frames.
    go tool pprof -top -lines -unit=B -sample_index=inuse_space heap.pb.gz 2>&1 |
        grep -q "5000B .* leak_big .*truth.c:$(tag_line leak_big)\$" ||
        fail "go tool pprof -lines does not put leak_big's 5000 bytes at truth.c:$(tag_line leak_big)"
    go tool pprof -traces -unit=B -sample_index=inuse_space heap.pb.gz >traces.txt 2>&1
    grep -A1 -E '^ +5000B +leak_big$' traces.txt | tail -n 1 | grep -qE '^ +main$' ||
        { cat traces.txt; fail "-traces: leak_big's caller is not main"; }

    # The build id of the program is in its mapping.
    local bid
    bid=$(sql "SELECT build_id FROM modules WHERE path LIKE '%queries_truth' LIMIT 1")
    grep -q "Build ID: $bid" inuse.txt || fail "the profile does not carry the build id $bid"

    # The peak profile: the blocks live at the peak, 1062268 bytes as peak.sql says.
    "$RHEAP" export pprof "$DB" --weight peak -o peak.pb.gz || fail "export pprof --weight peak failed"
    top -unit=B peak.pb.gz >peak.txt
    grep -q 'Total samples = 1062268B' peak.txt || { cat peak.txt; fail "peak total is not 1062268B"; }
    grep -qE '^ +1056768B .* peak$' peak.txt || { cat peak.txt; fail "peak() does not hold 1056768B at the peak"; }
}

case_html() {
    need_db
    local chromium
    chromium=$(command -v chromium || command -v chromium-browser || true)
    if [ -z "$chromium" ]; then
        echo "SKIP: chromium not found (Debian package chromium); the page cannot be checked"
        exit 77
    fi
    "$RHEAP" report --html --no-default-suppressions -o report.html "$DB" || fail "report --html failed"
    local size
    size=$(stat -c %s report.html)
    [ "$size" -lt 200000 ] || fail "the page is $size bytes for a small database"

    # Self-contained: nothing that loads from elsewhere. The SVG namespace is a name, not a
    # location, and is the only URL allowed.
    if grep -nE 'https?://|(src|href) *=|<link|@import|url\(|fetch\(|XMLHttpRequest|WebSocket' report.html |
        grep -v "'http://www.w3.org/2000/svg'"; then
        fail "the page refers to something outside itself"
    fi

    profile=$(mktemp -d)
    local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
                 --disable-background-networking --disable-component-update --disable-sync
                 --user-data-dir="$profile" --window-size=1300,2200 --enable-logging=stderr --v=0)
    timeout 60 "$chromium" "${flags[@]}" --dump-dom "file://$PWD/report.html" >dom.html 2>chrome.err ||
        { rm -rf "$profile"; cat chrome.err >&2; fail "chromium --dump-dom failed"; }
    timeout 60 "$chromium" "${flags[@]}" --screenshot="$DIR/report.png" "file://$PWD/report.html" \
        >/dev/null 2>>chrome.err || true
    trap 'rm -rf "$profile"' EXIT
    cp report.html "$DIR/report.html"
    if grep -E 'CONSOLE.*(Uncaught|Error)' chrome.err; then
        fail "the page's script reported an error"
    fi
    grep -q 'data-ready="1"' dom.html || fail "the page's script did not finish (no data-ready)"

    count() { grep -o "$1" dom.html | wc -l; }
    expect_eq "process charts" "$(count 'class="chart proc"')" "$(sql 'SELECT count(*) FROM processes')"
    expect_eq "markers drawn" "$(count 'class="marker"')" "$(sql 'SELECT count(*) FROM markers')"
    # The peak marker at peak.sql's moment, with its bytes.
    local peak_ns
    peak_ns=$(sqlite3 -batch "$DB" <"$SRC/queries/peak.sql" | head -n 1 | cut -d'|' -f5)
    grep -q "class=\"peak\" data-t=\"$peak_ns\" data-bytes=\"1062268\"" dom.html ||
        fail "no peak marker at $peak_ns ns with 1062268 bytes"
    # The flamegraph (leaked bytes first): the whole, main, and each leaking site.
    for cell in 'all" data-v="10617' 'main" data-v="10540' 'leak_big" data-v="5000' \
                'leak_names" data-v="200' 'leak_zeroed" data-v="300' 'grow_leak" data-v="320' \
                'oneshot" data-v="320' 'worker" data-v="77'; do
        grep -q "class=\"cell[^\"]*\" data-name=\"$cell\"" dom.html || fail "no flamegraph cell $cell"
    done
    # One leak row per leaking stack, largest first.
    expect_eq "leak rows" "$(count 'class="leak"')" 8
    grep -o '<tr class="leak"><td class="n" data-v="[0-9]*"' dom.html | head -n 1 | grep -q 'data-v="5000"' ||
        fail "the first leak row is not leak_big's 5000 bytes"
    grep -q 'data-site="leak_big"' dom.html || fail "no leak_big in the tables"
    # Threads: main and the worker.
    expect_eq "thread rows" "$(count 'class="thread"')" 2
    grep -q '<td>worker</td>' dom.html || fail "the worker thread's name is missing"
    # The view in the address: the peak weight with a search, and a zoom into growth().
    timeout 60 "$chromium" "${flags[@]}" --dump-dom "file://$PWD/report.html#weight=peak&search=leak_" \
        >dom-peak.html 2>>chrome.err || fail "chromium --dump-dom (peak view) failed"
    grep -q 'data-name="all" data-v="1062268"' dom-peak.html || fail "peak view: the whole is not 1062268"
    grep -q 'data-name="peak" data-v="1056768"' dom-peak.html || fail "peak view: no peak() cell of 1056768"
    grep -q 'id="match" class="muted" data-v="5500"' dom-peak.html ||
        fail "peak view: the search leak_ does not match 5000 + 200 + 300 bytes"
    # leak_names and leak_zeroed are narrower than a pixel at this width: not drawn.
    expect_eq "peak view: highlighted cells" "$(grep -o 'class="cell hit" data-name="leak_big"' dom-peak.html | wc -l)" 1
    timeout 60 "$chromium" "${flags[@]}" --dump-dom "file://$PWD/report.html#zoom=$(outer 1000 main);main;growth" \
        >dom-zoom.html 2>>chrome.err || fail "chromium --dump-dom (zoomed) failed"
    grep -q 'data-focus="640"' dom-zoom.html || fail "zoomed on growth: its width is not 640 bytes"
    grep -q 'class="cell" data-name="grow_leak" data-v="320" data-depth="6"' dom-zoom.html ||
        fail "zoomed on growth: grow_leak is not its child"
    # Totals: allocations and bytes never freed.
    grep -q "data-k=\"processes\" data-v=\"$(sql 'SELECT count(DISTINCT pid) FROM processes')\"" dom.html ||
        fail "the processes card does not count pids"
    grep -q 'data-k="allocations" data-v="145"' dom.html || fail "the allocations card is not 145"
    grep -q 'data-k="never freed" data-v="10617"' dom.html || fail "the never-freed card is not 10617"
}

# The model the pictures are drawn from, as ra_model_load reads it from the summary tables the
# converter writes, must be what a plain pass over the rows of `allocations` gives
# (tests/visual/model_oracle.c); and the oracle must see a summary that is off by one.
case_agree() {
    need_db
    [ "$(sql "SELECT count(*) FROM sqlite_schema WHERE name = 'stack_stats'")" = 1 ] ||
        fail "$DB has no summary tables"
    "$ORACLE" "$DB" >oracle.out || fail "summaries and rows differ"
    expect_eq "the oracle's verdict" "$(cat oracle.out)" \
        "$DB: 1 recordings, 21 stacks, 2 threads, 11 size classes: summaries and rows agree"
    cp "$DB" off.db
    local bt st=0
    bt=$(sqlite3 -batch -noheader off.db "SELECT bt FROM stack_stats WHERE bt IS NOT NULL ORDER BY bt LIMIT 1")
    sqlite3 off.db "UPDATE stack_stats SET leaked_blocks = leaked_blocks + 1 WHERE bt = $bt"
    "$ORACLE" off.db >/dev/null 2>oracle.err || st=$?
    expect_eq "the oracle's status on a changed summary" "$st" 1
    grep -q "^off.db: pid [0-9]* recording 1 stack $bt blocks never freed: summaries [0-9]*, rows [0-9]*$" oracle.err ||
        fail "the oracle did not name the changed stack: $(cat oracle.err)"
    [ "$(wc -l <oracle.err)" = 1 ] || fail "the oracle saw more than the change: $(cat oracle.err)"
    # The page's options in getopt_long's forms (-oFILE, --output=FILE, the database first)
    # give the same page; pprof's -oFILE and --output=FILE the same profile.
    "$RHEAP" report --html -o sum.html "$DB" || fail "report --html -o FILE failed"
    "$RHEAP" export pprof "$DB" --weight peak -o sum-peak.pb.gz || fail "export pprof failed"
    "$RHEAP" export pprof "$DB" --weight leaked -o sum-leaked.pb.gz || fail "export pprof failed"
    "$RHEAP" report --html -osum-short.html "$DB" || fail "report --html -oFILE failed"
    "$RHEAP" report "$DB" --html --output=sum-long.html || fail "report DB --html --output=FILE failed"
    cmp sum.html sum-short.html || fail "report --html -oFILE differs from -o FILE"
    cmp sum.html sum-long.html || fail "report --html --output=FILE differs from -o FILE"
    "$RHEAP" export -osum-short.pb.gz --weight=peak pprof "$DB" || fail "export pprof -oFILE failed"
    "$RHEAP" export pprof --output=sum-long.pb.gz "$DB" --weight=leaked || fail "export pprof --output=FILE failed"
    cmp <(gzip -dc sum-peak.pb.gz) <(gzip -dc sum-short.pb.gz) || fail "export pprof -oFILE differs from -o FILE"
    cmp <(gzip -dc sum-leaked.pb.gz) <(gzip -dc sum-long.pb.gz) || fail "export pprof --output=FILE differs"
    st=0
    "$RHEAP" report --html "$DB" 2>err.txt || st=$?
    expect_eq "status of report --html without -o" "$st" 1
    expect_eq "report --html without -o" "$(cat err.txt)" \
        "rheap: error: --html needs -o FILE (rheap report --html -o FILE DB)"
    st=0
    "$RHEAP" report --html -o x.html "$DB" --bogus 2>err.txt || st=$?
    expect_eq "status of report --html --bogus" "$st" 1
    expect_eq "report --html --bogus" "$(cat err.txt)" "rheap: error: unknown option --bogus (try rheap report --help)"
    # The page's timeline reaches the peak exactly, in one of its slices.
    local peak
    peak=$(sql "SELECT peak_bytes FROM recording_stats")
    grep -o '"max":\[[0-9,]*\]' sum.html | tr -c '0-9\n' '\n' | sort -n | tail -n 1 | grep -qx "$peak" ||
        fail "sum.html: the timeline's largest slice is not the peak, $peak bytes"
}

# Two runs of grow.c, 10 and then 25 cache entries: the growth per site is known exactly.
case_diff() {
    for n in 10 25; do
        mkdir -p "rec-$n"
        RHEAP_DIR="rec-$n" LD_PRELOAD="$LIB" "$GROW" "$n" || fail "$GROW $n failed"
        "$RHEAP" convert -q rec-"$n"/rip-* -o "run-$n.db" || fail "rheap convert of run $n failed"
    done
    local src=$SRC/tests/visual/grow.c
    line() { grep -n "/\* @$1 \*/" "$src" | cut -d: -f1; }
    # Locations are the file as compiled; the test names it by the source tree's path. CSV lines
    # end in CRLF (RFC 4180).
    here() { tr -d '\r' | sed "s#,[^,]*/tests/visual/grow.c:#,$src:#"; }
    "$RHEAP" diff run-10.db run-25.db --csv >got.csv || fail "rheap diff failed"
    # fixed() leaks the same 2000 bytes in both runs: not listed.
    {
        echo "leaked_base,leaked_new,leaked_change,allocated_base,allocated_new,allocated_change,peak_base,peak_new,peak_change,function,location"
        echo "480,1200,720,480,1200,720,480,1200,720,cache_entry,$src:$(line cache_entry)"
        echo "0,0,0,1000,2500,1500,1000,2500,1500,scratch,$src:$(line scratch)"
    } >want.csv
    here <got.csv | diff -u want.csv - || fail "rheap diff: rows differ"
    # Options before the databases, as getopt_long allows, give the same rows.
    "$RHEAP" diff --csv run-10.db run-25.db | cmp got.csv - || fail "rheap diff --csv BASE NEW differs"
    # The same program with two lines added at the top of its file, rebuilt elsewhere: every
    # site moved two lines down, and is still one row (function and module match, the line
    # only breaks ties), at NEW's location.
    local cc=${CC:-cc}
    if command -v "$cc" >/dev/null; then
        mkdir -p moved
        { printf '/* two lines */\n\n'; cat "$src"; } >moved/grow.c
        "$cc" -O0 -g -fno-builtin moved/grow.c -o moved/visual_grow || fail "building moved/grow.c"
        mkdir -p rec-moved
        RHEAP_DIR=rec-moved LD_PRELOAD="$LIB" moved/visual_grow 25 || fail "moved/visual_grow failed"
        "$RHEAP" convert -q rec-moved/rip-* -o moved.db || fail "rheap convert of the moved run"
        "$RHEAP" diff run-10.db moved.db --csv | tr -d '\r' | sed 's#,[^,]*moved/grow.c:#,moved:#' >got-moved.csv
        {
            echo "leaked_base,leaked_new,leaked_change,allocated_base,allocated_new,allocated_change,peak_base,peak_new,peak_change,function,location"
            echo "480,1200,720,480,1200,720,480,1200,720,cache_entry,moved:$(($(line cache_entry) + 2))"
            echo "0,0,0,1000,2500,1500,1000,2500,1500,scratch,moved:$(($(line scratch) + 2))"
        } >want-moved.csv
        diff -u want-moved.csv got-moved.csv || fail "rheap diff split the moved sites"
    fi
    local st=0
    "$RHEAP" diff run-10.db 2>err.txt || st=$?
    expect_eq "status of diff with one database" "$st" 1
    expect_eq "diff with one database" "$(cat err.txt)" \
        "rheap: error: two databases needed (rheap diff BASE.db NEW.db)"
    st=0
    "$RHEAP" diff run-10.db run-25.db --csv=yes 2>err.txt || st=$?
    expect_eq "status of diff --csv=yes" "$st" 1
    expect_eq "diff --csv=yes" "$(cat err.txt)" "rheap: error: --csv takes no value (try rheap diff --help)"
    "$RHEAP" diff run-10.db run-25.db --blocks --csv | tail -n +2 >got-blocks.csv
    echo "10,25,15,10,25,15,10,25,15,cache_entry,$src:$(line cache_entry)" >want-blocks.csv
    here <got-blocks.csv | diff -u want-blocks.csv - || fail "rheap diff --blocks: rows differ"
    # In columns a change carries its sign (KiB and MiB from 10 KiB up, as every table).
    "$RHEAP" diff --wide run-10.db run-25.db >got-cols.txt
    grep -qE '^ *480 +1200 +\+720 +480 +1200 +\+720 +480 +1200 +\+720 +cache_entry ' got-cols.txt ||
        { cat got-cols.txt; fail "rheap diff: no signed change in columns"; }
    # The same as folded stacks with both weights. new_block, inlined into fixed, is a frame
    # of its own and the site.
    local m
    m=$("$RHEAP" export collapsed run-25.db --weight leaked | sed -n 's/;fixed;new_block 2000$//p')
    [ -n "$m" ] || fail "no folded stack ...;fixed;new_block 2000 in run-25.db"
    "$RHEAP" export collapsed run-25.db --base run-10.db --weight leaked >got-folded.txt
    printf '%s\n' "$m;cache_entry 480 1200" "$m;fixed;new_block 2000 2000" >want-folded.txt
    diff -u want-folded.txt got-folded.txt || fail "collapsed --base: lines differ"
    # In pprof, the inlined function is a line of the same location, shown as inlined.
    if command -v go >/dev/null; then
        export HOME=$PWD/home GOCACHE=$PWD/gocache GOTOOLCHAIN=local
        mkdir -p "$HOME"
        "$RHEAP" export pprof run-25.db -o run-25.pb.gz
        go tool pprof -traces -unit=B run-25.pb.gz 2>&1 | grep -A1 -E '^ +1000B +new_block \(inline\)$' |
            tail -n 1 | grep -qE '^ +fixed$' || fail "pprof: new_block is not shown inlined into fixed"
        go tool pprof -raw run-25.pb.gz 2>&1 >raw.txt
        grep -qE "new_block .*grow.c:$(line new_block) s=0\$" raw.txt &&
            grep -A1 -E "new_block .*grow.c:$(line new_block) s=0\$" raw.txt | grep -qE "^ +fixed .*grow.c:$(line fixed) s=0\$" ||
            { cat raw.txt; fail "pprof: the location of new_block does not hold fixed's line too"; }
        # export pprof --base: per stack run-25 minus run-10. cache_entry grew by 720 bytes (15
        # blocks of 48) never freed and allocated, scratch by 1500 bytes allocated; fixed is
        # the same in both and has no sample. Exactly what go tool pprof -diff_base makes of
        # the two runs' own exports.
        "$RHEAP" export pprof run-25.db --base run-10.db -o diff.pb.gz || fail "export pprof --base failed"
        "$RHEAP" export pprof run-10.db -o run-10.pb.gz
        flat() { awk '$1 ~ /^-?[0-9]+B?$/ && $1 != "0" { print $1, $NF }' | sort -k2; }
        local idx unit
        for idx in inuse_space alloc_space inuse_objects alloc_objects; do
            unit=-unit=B
            [ "${idx%_objects}" = "$idx" ] || unit=-unit=minimum
            go tool pprof -top $unit -nodefraction=0 -sample_index=$idx diff.pb.gz 2>&1 | flat >"got-$idx.txt"
            go tool pprof -top $unit -nodefraction=0 -sample_index=$idx -diff_base=run-10.pb.gz run-25.pb.gz 2>&1 |
                flat >"pprof-$idx.txt"
            diff -u "pprof-$idx.txt" "got-$idx.txt" || fail "export pprof --base, $idx: not what -diff_base shows"
        done
        printf '%s\n' "720B cache_entry" >want.txt
        diff -u want.txt got-inuse_space.txt || fail "export pprof --base: inuse_space per function"
        printf '%s\n' "720B cache_entry" "1500B scratch" >want.txt
        diff -u want.txt got-alloc_space.txt || fail "export pprof --base: alloc_space per function"
        # scratch is one block in each run, only larger.
        printf '%s\n' "15 cache_entry" >want.txt
        diff -u want.txt got-alloc_objects.txt || fail "export pprof --base: alloc_objects per function"
        # The other way round, the values are negative.
        "$RHEAP" export pprof run-10.db --base run-25.db -o back.pb.gz
        go tool pprof -top -unit=B -sample_index=alloc_space back.pb.gz 2>&1 | flat >got.txt
        printf '%s\n' "-720B cache_entry" "-1500B scratch" >want.txt
        diff -u want.txt got.txt || fail "export pprof --base, the other way: alloc_space per function"
        if go tool pprof -raw diff.pb.gz 2>&1 | grep -q ' fixed '; then
            fail "fixed, the same in both, has a sample"
        fi
    fi
}

# Leak suppressions (LeakSanitizer's leak:PATTERN files and the built-in list) on the leaks
# query, the text report, the page and the exports, with truth.c's leaks: leak_big 5 x 1000,
# leak_names 20 x 10, leak_zeroed 3 x 100, grow_leak and oneshot 8 x 40 each, the thread's
# 304-byte TLS block (allocated by ld.so for pthread_create), the worker's 77 and stdio's
# 4096-byte buffer for main's printf: 47 blocks, 10617 bytes.
case_suppress() {
    need_db
    # leaks query rows as "blocks bytes function", and the note it prints on stderr.
    rows() { "$RHEAP" query leaks "$DB" --csv "$@" 2>note.txt | tr -d '\r' | tail -n +2 | cut -d, -f1-3 | tr , ' '; }
    # The built-in list takes stdio's buffer (main's printf, truth.c @stdout_buffer) and says so.
    rows >got.txt
    printf '%s\n' "5 5000 leak_big" "8 320 grow_leak" "8 320 oneshot" "1 304 threads" \
        "3 300 leak_zeroed" "20 200 leak_names" "1 77 worker" >want-default.txt
    diff -u want-default.txt got.txt || fail "leaks with the default list"
    expect_eq "query note" "$(cat note.txt)" "rheap: suppressed: 1 blocks, 4096 bytes (default list: stdio buffers)"
    # The buffer is allocated at main's printf, under glibc's _IO_file_doallocate.
    expect_eq "stdio stack" "$(sql "SELECT count(*) FROM backtraces AS b JOIN backtraces AS m ON m.id = b.id
        WHERE b.sym LIKE '%_IO_file_doallocate' AND m.sym = 'main' AND m.line = $(tag_line stdout_buffer)")" 1
    # --no-default-suppressions brings it back, and nothing is said.
    rows --no-default-suppressions >got.txt
    { echo "5 5000 leak_big"; echo "1 4096 main"; tail -n +2 want-default.txt; } >want-all.txt
    diff -u want-all.txt got.txt || fail "leaks without the default list"
    [ ! -s note.txt ] || fail "a note without suppressions: $(cat note.txt)"
    # The same rows as the query file in the sqlite3 shell, which knows no suppressions.
    sqlite3 -batch -csv "$DB" <"$SRC/queries/leaks.sql" | cut -d, -f1-3 | tr , ' ' | diff -u want-all.txt - ||
        fail "leaks.sql in sqlite3 differs"

    # By function (with a comment and a blank line), by source file (anchored at the end; the
    # same pattern anchored at the start matches no absolute path), by module (ld.so allocated
    # the thread's block) and with a wildcard.
    printf '# truth.c leaks on purpose\n\nleak:leak_big\n' >func.supp
    printf 'leak:truth.c$\nleak:^truth.c\n' >file.supp
    printf 'leak:ld-linux-x86-64.so\n' >module.supp
    printf 'leak:leak_*d\n' >wild.supp
    rows --suppress func.supp >got.txt
    tail -n +2 want-default.txt | diff -u - got.txt || fail "suppressed by function"
    expect_eq "function note" "$(cat note.txt)" \
        "rheap: suppressed: 6 blocks, 9096 bytes (default list: stdio buffers;
rheap:   func.supp: leak_big)"
    rows --suppress file.supp >got.txt
    [ ! -s got.txt ] || fail "suppressed by file: rows left: $(cat got.txt)"
    expect_eq "file note" "$(cat note.txt)" \
        "rheap: suppressed: 47 blocks, 10617 bytes (default list: stdio buffers;
rheap:   file.supp: truth.c\$)"
    rows --suppress module.supp --no-default-suppressions >got.txt
    grep -v threads want-all.txt | diff -u - got.txt || fail "suppressed by module"
    expect_eq "module note" "$(cat note.txt)" \
        "rheap: suppressed: 1 blocks, 304 bytes (module.supp: ld-linux-x86-64.so)"
    # Each distinct frame is matched once (unique_frames) and a stack takes its frames' from its
    # row of stack_frames; while the converter has not written the distinct frames yet (rheap
    # run reads its database as it converts) backtraces is read instead, with the same answers.
    cp "$DB" partial.db
    sqlite3 -batch partial.db "DELETE FROM unique_frames"
    "$RHEAP" query leaks partial.db --csv --suppress func.supp 2>partial-note.txt | tr -d '\r' |
        tail -n +2 | cut -d, -f1-3 | tr , ' ' >got.txt
    tail -n +2 want-default.txt | diff -u - got.txt || fail "suppressed from backtraces"
    "$RHEAP" query leaks "$DB" --csv --suppress func.supp 2>note.txt >/dev/null
    diff -u note.txt partial-note.txt || fail "suppressed from backtraces: the note"
    rows --suppress wild.supp --suppress func.supp --no-default-suppressions >got.txt
    grep -v -e leak_zeroed -e leak_big want-all.txt | diff -u - got.txt || fail "suppressed with a wildcard"
    expect_eq "two files' note" "$(cat note.txt)" \
        "rheap: suppressed: 8 blocks, 5300 bytes (wild.supp: leak_*d;
rheap:   func.supp: leak_big)"
    # A line that is not leak:PATTERN, and a file that is not there: usage and input errors.
    printf 'race:leak_big\n' >bad.supp
    local st=0
    "$RHEAP" query leaks "$DB" --suppress bad.supp 2>err.txt >/dev/null || st=$?
    expect_eq "bad line status" "$st" 1
    expect_eq "bad line" "$(cat err.txt)" \
        "rheap: error: --suppress bad.supp: line 1: expected leak:PATTERN, got 'race:leak_big'"
    st=0
    "$RHEAP" query leaks "$DB" --suppress nosuch.supp 2>err.txt >/dev/null || st=$?
    expect_eq "missing file status" "$st" 2
    st=0
    "$RHEAP" query top-sites "$DB" --suppress func.supp 2>err.txt >/dev/null || st=$?
    expect_eq "suppress on another query" "$st" 1

    # The text report: the never-freed total without what was suppressed, and a line naming it.
    "$RHEAP" report --raw "$DB" >rep.txt
    grep -qx '  never freed      46 blocks, 6521 bytes (6.4 KiB)' rep.txt || { cat rep.txt; fail "report total"; }
    grep -qx '  suppressed: 1 blocks, 4096 bytes (default list: stdio buffers)' rep.txt ||
        { cat rep.txt; fail "report suppressed line"; }
    sed -n '/^Top leaks by site/,/^$/p' rep.txt | awk '$1 ~ /^[0-9]+$/ { print $1, $2, $3 }' >got.txt
    diff -u want-default.txt got.txt || fail "report leak rows"
    "$RHEAP" report --raw --suppress func.supp "$DB" >rep.txt
    grep -qx '  never freed      41 blocks, 1521 bytes (1.5 KiB)' rep.txt || { cat rep.txt; fail "report total with func.supp"; }
    expect_eq "report suppressed lines with func.supp" "$(grep -A1 '^  suppressed:' rep.txt)" \
        "  suppressed: 6 blocks, 9096 bytes (default list: stdio buffers;
    func.supp: leak_big)"
    "$RHEAP" report --raw --no-default-suppressions "$DB" >rep.txt
    grep -qx '  never freed      47 blocks, 10617 bytes (10.4 KiB)' rep.txt || { cat rep.txt; fail "report total without the list"; }
    ! grep -q 'suppressed' rep.txt || fail "report names suppressions that are off"

    # export collapsed: leaked lines without the suppressed stacks; the other weights keep them.
    # (wide enough for the database's path: the note on one line)
    COLUMNS=1000 "$RHEAP" export collapsed "$DB" --suppress func.supp 2>note.txt >leaked.txt
    expect_eq "leaked sum with func.supp" "$(awk '{ s += $NF } END { print s }' leaked.txt)" 1521
    ! grep -qE ';(leak_big|_IO_file_doallocate) ' leaked.txt || fail "a suppressed stack was exported"
    expect_eq "export note" "$(cat note.txt)" \
        "rheap: $DB: suppressed: 6 blocks, 9096 bytes (default list: stdio buffers; func.supp: leak_big)"
    expect_eq "allocated sum with func.supp" \
        "$("$RHEAP" export collapsed "$DB" --suppress func.supp --weight allocated 2>/dev/null | awk '{ s += $NF } END { print s }')" \
        "$(sql "SELECT sum(size) FROM allocations")"
    expect_eq "leaked sum with the list" "$("$RHEAP" export collapsed "$DB" 2>/dev/null | awk '{ s += $NF } END { print s }')" 6521

    # pprof: inuse (never freed) without them.
    if command -v go >/dev/null; then
        export HOME=$PWD/home GOCACHE=$PWD/gocache GOTOOLCHAIN=local
        mkdir -p "$HOME"
        "$RHEAP" export pprof "$DB" --suppress func.supp -o s.pb.gz 2>/dev/null || fail "export pprof --suppress failed"
        go tool pprof -top -unit=B -sample_index=inuse_space s.pb.gz >s.txt 2>&1
        grep -q 'Total samples = 1521B' s.txt || { cat s.txt; fail "pprof inuse_space with func.supp is not 1521B"; }
        ! grep -qE ' (leak_big|main)$' <(awk '$1 != "0" && $1 ~ /B$/' s.txt) || { cat s.txt; fail "pprof keeps a suppressed leak"; }
    fi

    # libstdc++'s emergency exception pool, allocated from its static initializer in any C++
    # program, is on the default list; the program's own leak stays.
    mkdir -p pool-rec
    RHEAP_DIR=pool-rec LD_PRELOAD="$LIB" "$POOL" || fail "$POOL failed"
    "$RHEAP" convert -q pool-rec/rip-* -o pool.db || fail "rheap convert of $POOL failed"
    local pool_bytes
    # (main's own stacks have a libstdc++ frame too: operator new[].)
    pool_bytes=$(sqlite3 -batch pool.db "SELECT sum(leaked_bytes) FROM stack_stats WHERE bt IN (
        SELECT id FROM backtraces WHERE module LIKE '%libstdc++.so%')
        AND bt NOT IN (SELECT id FROM backtraces WHERE sym = 'main')")
    [ "${pool_bytes:-0}" -gt 0 ] || fail "no never-freed block allocated in libstdc++"
    "$RHEAP" query leaks pool.db --csv 2>note.txt | tr -d '\r' | tail -n +2 | cut -d, -f1-3 >got.txt
    expect_eq "C++ program's leaks" "$(cat got.txt)" "3,300,main"
    # Without libstdc++'s debug information the pool's allocating frame has no name, and the
    # entry that takes it needs its two patterns in two different frames: libstdc++ in the
    # first, ld.so's _dl_init further out.
    if [ "$(sqlite3 -batch pool.db "SELECT count(*) FROM backtraces WHERE frame_no = 0
            AND module LIKE '%libstdc++.so%' AND sym IS NULL")" != 0 ]; then
        expect_eq "pool stack's frames" "$(sqlite3 -batch pool.db "SELECT count(*) FROM backtraces AS a
            JOIN backtraces AS b ON b.id = a.id AND b.frame_no > a.frame_no
            WHERE a.frame_no = 0 AND a.module LIKE '%libstdc++.so%' AND a.sym IS NULL
              AND b.sym = '_dl_init' AND b.module NOT LIKE '%libstdc++.so%'")" 1
    fi
    expect_eq "pool note" "$(cat note.txt)" \
        "rheap: suppressed: 1 blocks, $pool_bytes bytes
rheap:   (default list: libstdc++ emergency exception pool)"
    "$RHEAP" query leaks pool.db --csv --no-default-suppressions | tr -d '\r' | tail -n +2 | cut -d, -f1,2 >got.txt
    expect_eq "C++ program's leaks with the pool" "$(cat got.txt)" "$(printf '1,%s\n3,300' "$pool_bytes")"

    # The page: the leak table, the leaked flamegraph and the total without them, and the line
    # naming them above the leaks.
    local chromium
    chromium=$(command -v chromium || command -v chromium-browser || true)
    if [ -n "$chromium" ]; then
        "$RHEAP" report --html --suppress func.supp -o report.html "$DB" || fail "report --html --suppress failed"
        profile=$(mktemp -d)
        trap 'rm -rf "$profile"' EXIT
        local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
                     --disable-background-networking --disable-component-update --disable-sync
                     --user-data-dir="$profile" --window-size=1300,2200 --enable-logging=stderr --v=0)
        timeout 60 "$chromium" "${flags[@]}" --dump-dom "file://$PWD/report.html" >dom.html 2>chrome.err ||
            { cat chrome.err >&2; fail "chromium --dump-dom failed"; }
        timeout 60 "$chromium" "${flags[@]}" --screenshot="$DIR/report-suppressed.png" "file://$PWD/report.html" \
            >/dev/null 2>>chrome.err || true
        ! grep -E 'CONSOLE.*(Uncaught|Error)' chrome.err || fail "the page's script reported an error"
        grep -q 'data-ready="1"' dom.html || fail "the page's script did not finish"
        expect_eq "leak rows" "$(grep -o 'class="leak"' dom.html | wc -l)" 6
        grep -q 'data-k="never freed" data-v="1521"' dom.html || fail "the never-freed card is not 1521"
        grep -q 'data-name="all" data-v="1521"' dom.html || fail "the leaked flamegraph is not 1521 bytes"
        ! grep -q 'data-name="leak_big" data-v=' dom.html || fail "leak_big is still in the flamegraph"
        grep -q '<p id="suppressed" class="muted">suppressed: 6 blocks, 9096 bytes (default list: stdio buffers; func.supp: leak_big)' dom.html ||
            fail "the page does not name the suppressed leaks"
    fi
}

case "$CASE" in
record) case_record ;;
collapsed | pprof | html | agree | diff | suppress)
    rm -rf "${DIR:?}/$CASE"
    mkdir -p "$DIR/$CASE"
    cd "$DIR/$CASE"
    "case_$CASE"
    ;;
*) fail "unknown case" ;;
esac
