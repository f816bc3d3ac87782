# Lost-event counts no process can make (2^63, 2^64 - 1), crafted with the real writer: the sums
# never wrap (2^63 + 5 is no 5, 2^64 - 1 is no -1); they stay at 2^63 - 1, stored exactly, with a
# warning that says so. Ordinary counts still add up exactly.
NO_LZ4_CHECK=1
"$PROGS/lost_gen" "$REC" || fail "lost_gen"
STATUS=0
"$RHEAP" convert "$REC"/rip-* -o lost.db >convert.out 2>&1 || STATUS=$?
expect_status convert 3
max=9223372036854775807
expect_eq "threads" "$(sql lost.db "SELECT pid, tid, lost_events FROM threads ORDER BY pid, tid" | tr '\n' ' ')" \
    "77|1|$max 77|2|5 78|1|$max 79|1|3000 "
expect_eq "processes" "$(sql lost.db "SELECT pid, lost_events, typeof(lost_events) FROM processes ORDER BY pid" | tr '\n' ' ')" \
    "77|$max|integer 78|$max|integer 79|3000|integer "
expect_eq "meta" "$(sql lost.db "SELECT value FROM meta WHERE key = 'lost_events'")" "$max"
for pid in 77 78; do
    grep -q "rip-$pid: the recording of process $pid claims $max or more lost events, more than any process can make" convert.out ||
        { cat convert.out >&2; fail "no warning for rip-$pid"; }
done
grep -q "rip-79: 3000 events of process 79 were not recorded" convert.out ||
    { cat convert.out >&2; fail "no warning for rip-79"; }
