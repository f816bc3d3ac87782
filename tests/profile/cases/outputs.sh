# Every output of a profile-mode database carries the weighed estimates and says so: the canned
# queries, both exports (pprof read back by go tool pprof when it is installed), the report,
# the HTML page and rheap diff. A trace of the same program says nothing of estimates. The
# tolerance is estimates.sh's: 10% of the program's own counts.
record trace 8192 trace.db
record profile 8192 profile.db

# rheap query: top-sites and growth read the weighed summaries. The program records itself
# between rheap_enable and rheap_disable, a window: what it kept is live when recording stopped,
# not leaked, so leaks has no row and growth counts it.
"$RHEAP" query top-sites profile.db --csv >top.csv 2>top.err || fail "rheap query top-sites: $(cat top.err)"
has_lines top.err "rheap: profile mode: blocks and bytes are estimates from allocations sampled
rheap:   about once every 8192 bytes"
"$RHEAP" query leaks profile.db --csv >leaks.csv 2>/dev/null || fail "rheap query leaks"
expect_eq "leaks rows of a window" "$(($(wc -l <leaks.csv)))" 1
"$RHEAP" query growth profile.db --csv >growth.csv 2>/dev/null || fail "rheap query growth"
# csv_col FILE SITE COLUMN: the value of COLUMN in the row of SITE, summed over its rows.
csv_col() {
    awk -F, -v site="$2" -v col="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
                                      $0 ~ "," site "," { s += $c } END { printf "%d\n", s }' "$1"
}
for site in $SITE_NAMES; do
    within "top-sites $site bytes" "$(csv_col top.csv $site bytes)" "$(truth bytes $site)" 10
    within "top-sites $site blocks" "$(csv_col top.csv $site blocks)" "$(truth calls $site)" 10
done
within "growth medium_half_kept bytes" "$(csv_col growth.csv medium_half_kept leaked_bytes)" "$(truth leaked_bytes medium_half_kept)" 10
within "growth aligned_pages blocks" "$(csv_col growth.csv aligned_pages leaked_blocks)" "$(truth leaked_blocks aligned_pages)" 10
"$RHEAP" query top-sites trace.db --csv >/dev/null 2>trace-top.err
[ ! -s trace-top.err ] || fail "rheap query on a trace said: $(cat trace-top.err)"

# rheap export collapsed: one line per stack, its weight the estimate.
"$RHEAP" export collapsed --weight allocated profile.db >folded.txt 2>folded.err || fail "export collapsed"
grep -q 'profile mode: the weights are estimates' folded.err || fail "export collapsed gave no note: $(cat folded.err)"
for site in $SITE_NAMES; do
    got=$(awk -v site="$site" '{ n = split($1, f, ";"); if (f[n] == site) s += $2 } END { printf "%d\n", s }' folded.txt)
    within "collapsed $site" "$got" "$(truth bytes $site)" 10
done

# rheap export pprof: values are estimates, period the interval, as in Go's heap profiles.
"$RHEAP" export pprof -o profile.pb.gz profile.db || fail "export pprof"
if command -v go >/dev/null; then
    go tool pprof -raw profile.pb.gz >raw.txt 2>/dev/null || fail "go tool pprof cannot read the export"
    grep -qx 'Period: 8192' raw.txt || fail "pprof period: $(grep Period raw.txt)"
    grep -q '^Comment: rheap: profile mode: values are estimates' raw.txt || fail "pprof has no comment on estimates"
    go tool pprof -sample_index=alloc_space -unit=byte -top profile.pb.gz >top.txt 2>/dev/null
    for site in $SITE_NAMES; do
        got=$(awk -v site="$site" '$6 == site { sub("B", "", $1); print $1 }' top.txt)
        within "pprof alloc_space $site" "${got:-0}" "$(truth bytes $site)" 10
    done
fi

# rheap report: the mode, and every estimated figure and section marked.
"$RHEAP" report profile.db >report.txt || fail "rheap report"
grep -q '^  mode             profile: about one allocation sampled every 8192 bytes;' report.txt ||
    fail "report does not name the mode"
grep -q "^  allocations      $(field "$(grep '^total ' sites.out)" calls)$" report.txt ||
    fail "report: allocations are not the exact count"
grep -q '^  frees            [0-9]* (estimated)$' report.txt || fail "report: frees not marked as estimated"
grep -q '^Top allocating sites, estimated (rheap query top-sites)$' report.txt || fail "report: sites not marked"
"$RHEAP" report trace.db >trace-report.txt || fail "rheap report on the trace"
! grep -q 'estimated' trace-report.txt || fail "the trace's report speaks of estimates"

# The HTML page carries the interval and shows the note.
"$RHEAP" report --html -o page.html profile.db || fail "report --html"
grep -q '"sample_interval":8192' page.html || fail "the page has no sampling interval"
grep -q 'id="sampled"' page.html || fail "the page has no place for the note"
if command -v chromium >/dev/null; then
    timeout 60 chromium --headless --no-sandbox --dump-dom "file://$WORK/page.html" 2>/dev/null >dom.html || true
    grep -q '<p id="sampled" class="muted">Profile mode: allocations were sampled about once every 8.00 KiB' dom.html ||
        fail "the drawn page shows no note on estimates"
fi

# rheap diff names the side recorded in profile mode.
"$RHEAP" diff trace.db profile.db >diff.txt 2>diff.err || fail "rheap diff: $(cat diff.err)"
has_lines diff.err "rheap: profile.db was recorded in profile mode: its figures are estimates from
rheap:   allocations sampled about once every 8192 bytes"
# Both recordings are windows (rheap_enable .. rheap_disable): what they kept is no leak.
has_lines diff.err "rheap: trace.db: $(q trace.db "SELECT sum(leaked_bytes) FROM recording_stats") bytes still live when a window's recording stopped are
rheap:   not leaks, nor in the leaked columns"
grep -q small_temporary diff.txt || fail "rheap diff shows no site"

# rheap run --profile records the whole program in profile mode; --sample-interval needs it and
# is checked by librheap's own parser before anything runs.
"$RHEAP" run -q --profile --sample-interval 4096 -o run.db -- "$EXAMPLES/leaky" >/dev/null 2>run.err ||
    fail "rheap run --profile: $(cat run.err)"
expect_eq "rheap run --profile mode" "$(q run.db "SELECT DISTINCT mode || ' ' || sample_interval FROM processes")" "profile 4096"
expect_eq "rheap run --profile: sampled rows have stacks" "$(q run.db "SELECT count(*) FROM allocations WHERE bt IS NULL")" 0
STATUS=0
"$RHEAP" run -q --sample-interval 4096 -o no.db -- "$EXAMPLES/leaky" >/dev/null 2>no.err || STATUS=$?
expect_eq "--sample-interval without --profile" "$STATUS $(cat no.err)" "1 rheap: error: --sample-interval needs --profile"
STATUS=0
"$RHEAP" run -q --profile --sample-interval 0 -o no.db -- "$EXAMPLES/leaky" >/dev/null 2>no.err || STATUS=$?
expect_eq "--sample-interval 0" "$STATUS $(cat no.err)" \
    "1 rheap: error: --sample-interval 0: expected a number of bytes from 1 to 999999999"
[ ! -e no.db ] || fail "a refused rheap run wrote a database"
