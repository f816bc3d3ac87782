# More threads than RHEAP_MAX_THREADS, all alive at once: 6 workers (each waits after its first
# call until all have made theirs) and the main thread, with max_threads 4. The threads given a
# file have exact counts; the events of the others are counted as lost, exactly, and the count
# reaches the database (meta and processes: lost_events) and a warning of rheap convert, which
# exits 3.
STATUS=0
env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" RHEAP_MAX_THREADS=4 "$PROGS/stress_killchurn" 6 counts.bin \
    20000 >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
one_rheap_message run
grep -q 'more than 4 threads' run.err || fail "no thread-limit message: $(cat run.err)"
expect_recordings 1
dir=$(recordings)
tally summary "$dir" >sum.txt
lost_want=0 files=0
while read -r tid started done; do
    line=$(grep "^thread tid=$tid " sum.txt || true)
    if [ -n "$line" ]; then
        files=$((files + 1))
        expect_eq "thread $tid: recorded events" \
            "$(( $(field "$line" allocs) + $(field "$line" frees) ))" "$done"
    else
        lost_want=$((lost_want + done))
    fi
done < <(od -An -t d8 -w24 -v counts.bin)
expect_eq "workers with a thread file" "$files" 3
expect_eq "lost in the recording" "$(field "$(grep '^total ' sum.txt)" lost)" "$lost_want"
STATUS=0
"$RHEAP_CLI" convert -o out.db "$dir" >convert.out 2>convert.err || STATUS=$?
expect_status convert 3
grep -q "warning: .*: $lost_want events of process .* were not recorded" convert.err ||
    fail "no lost-events warning: $(cat convert.err)"
expect_eq "meta lost_events" "$(sql out.db "SELECT value FROM meta WHERE key = 'lost_events'")" "$lost_want"
expect_eq "processes lost_events" "$(sql out.db "SELECT sum(lost_events) FROM processes")" "$lost_want"
echo "figure: $lost_want events of 3 threads beyond max_threads counted as lost"
