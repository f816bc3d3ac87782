# kill -9 at random moments, 20 times (RHEAP_STRESS_SCALE multiplies): 4 threads churn, each
# keeping its counts of allocator calls started and completed in a file mapped shared (the
# program's ground truth survives the kill as the recording does). After each kill every thread's
# recorded events (riptally) equal its completed calls, plus at most the one call in flight when
# the kill landed (started = completed + 1); every 5th recording is also converted and the same
# exact counts are checked in the database, with no unmatched free, no address live twice, no
# lost event and no file cut short but an empty one. Prints one "figure:" line per kill.
kills=$((20 * SCALE)) nthreads=4
total_done=0 total_recorded=0 in_flight=0
for i in $(seq "$kills"); do
    rm -rf "${REC:?}"/* counts.bin run.out run.err
    env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$PROGS/stress_killchurn" "$nthreads" counts.bin \
        >run.out 2>run.err </dev/null &
    pid=$!
    CLEANUP+=("kill -KILL $pid 2>/dev/null")
    for _ in $(seq 400); do grep -q ready run.out 2>/dev/null && break; sleep 0.02; done
    grep -q ready run.out ||
        fail "kill $i: the program did not start: $(ps -o stat=,wchan= -p "$pid") $(head -c 300 run.err)"
    delay=$(printf '0.%03d' $((RANDOM % 100 + 5)))
    sleep "$delay"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    no_rheap_messages run
    expect_recordings 1
    dir=$(recordings)
    tally summary "$dir" >sum.txt
    db=
    if [ $((i % 5)) = 0 ]; then
        db=out$i.db
        CONVERT_WARN_OK=1 convert "$db" "$dir" # status 3: the recording has no end (killed)
        sql "$db" "SELECT t, sum(n) FROM (
            SELECT alloc_thread AS t, count(*) AS n FROM allocations GROUP BY 1 UNION ALL
            SELECT dealloc_thread, count(*) FROM allocations WHERE dealloc_thread IS NOT NULL GROUP BY 1)
            GROUP BY t" | tr '|' ' ' >dbcounts.txt
        for key in unmatched_frees reused_live lost_events; do
            expect_eq "kill $i: $key" "$(sql "$db" "SELECT value FROM meta WHERE key = '$key'")" 0
        done
        # A kill between a thread file's creation and its first write leaves it empty: the one
        # kind of file the converter may count as cut short (it holds no event).
        expect_eq "kill $i: truncated_files" "$(sql "$db" "SELECT value FROM meta WHERE key = 'truncated_files'")" \
            "$(find "$dir" -name 't*.rip' -size 0 | wc -l)"
    fi
    made=0 recorded=0
    while read -r tid started done; do
        line=$(grep "^thread tid=$tid " sum.txt || true)
        rec=$(( $(field "$line" allocs || echo 0) + $(field "$line" frees || echo 0) ))
        [ "$rec" = "$done" ] || { [ "$rec" = "$started" ] && [ "$started" = $((done + 1)) ]; } ||
            fail "kill $i: thread $tid completed $done calls (started $started), the recording has $rec"
        [ "$rec" = "$done" ] || in_flight=$((in_flight + 1))
        if [ -n "$db" ]; then
            dbrec=$(awk -v t="$tid" '$1 == t { print $2 }' dbcounts.txt)
            expect_eq "kill $i: thread $tid events in the database" "${dbrec:-0}" "$rec"
        fi
        made=$((made + done)) recorded=$((recorded + rec))
    done < <(od -An -t d8 -w24 -v counts.bin)
    echo "figure: kill $i after ${delay}s: completed=$made recorded=$recorded${db:+ (converted)}"
    total_done=$((total_done + made)) total_recorded=$((total_recorded + recorded))
done
echo "figure: $kills kills: completed=$total_done recorded=$total_recorded, calls in flight recorded: $in_flight"
