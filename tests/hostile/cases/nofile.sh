# A program at its descriptor limit (ulimit -n 16), one descriptor left free, opening and
# closing a file 200,000 times while 4 threads allocate: none of its opens may fail traced,
# as none does untraced. The recorder keeps one descriptor per file from the file's creation
# on and never opens it again for a write.
nofile() {
    STATUS=0
    (ulimit -n 16; exec env ${1:+LD_PRELOAD="$PRELOAD"} RHEAP_DIR="$REC" "$PROGS/nofile" 4 300000 200000) \
        >"$2.out" 2>"$2.err" </dev/null || STATUS=$?
}
nofile "" plain
expect_status plain 0
expect_eq "untraced" "$(cat plain.out)" "failed 0"
for i in 1 2; do
    rm -rf "${REC:?}"/*
    nofile traced run
    expect_status run 0
    expect_eq "traced, run $i" "$(cat run.out)" "failed 0"
    no_rheap_messages run
    d=$(recordings)
    "$RHEAP" convert "$d" -o "run$i.db" >convert.out 2>&1 || { cat convert.out >&2; fail "convert"; }
    expect_eq "allocations recorded" \
        "$(sql "run$i.db" "SELECT count(*) FROM allocations WHERE size BETWEEN 1 AND 300 AND dealloc_after IS NOT NULL AND alloc_thread <> pid")" \
        "$(( 4 * 300000 ))"
done
