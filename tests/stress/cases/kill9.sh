# kill -9 at random moments, 10 times (RHEAP_STRESS_SCALE multiplies): 4 threads churn and log
# their progress to a side file; after each kill the recording converts (status 0 or 3), every
# thread recorded no more events than it made, and at most one buffer of records per thread is
# missing: a 64 KiB block holds at most 65264 / 3 = 21754 records (a free is at least 3 bytes).
# Prints one "figure:" line per kill for docs/RELIABILITY.md.
kills=$((10 * SCALE)) nthreads=4 max_missing=21754
total_made=0 total_recorded=0
for i in $(seq "$kills"); do
    rm -rf "${REC:?}"/* side.txt run.out run.err
    env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$PROGS/stress_killchurn" "$nthreads" side.txt \
        >run.out 2>run.err </dev/null &
    pid=$!
    CLEANUP+=("kill -KILL $pid 2>/dev/null")
    for _ in $(seq 400); do grep -q ready run.out && break; sleep 0.05; done
    grep -q ready run.out ||
        fail "kill $i: the program did not start: $(ps -o stat=,wchan= -p "$pid") $(head -c 300 run.err)"
    delay=$(printf '0.%03d' $((RANDOM % 150 + 10)))
    sleep "$delay"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    no_rheap_messages run
    expect_recordings 1
    dir=$(recordings)
    CONVERT_WARN_OK=1 convert "out$i.db" "$dir"
    # Counted in the database: a kill during a write leaves a last block cut short, which
    # riptally rejects and the converter skips with a warning.
    sql "out$i.db" "SELECT t, sum(n) FROM (
        SELECT alloc_thread AS t, count(*) AS n FROM allocations GROUP BY 1 UNION ALL
        SELECT dealloc_thread, count(*) FROM allocations WHERE dealloc_thread IS NOT NULL GROUP BY 1)
        GROUP BY t" | tr '|' ' ' >counts.txt
    for key in unmatched_frees reused_live lost_events; do
        expect_eq "kill $i: $key" "$(sql "out$i.db" "SELECT value FROM meta WHERE key = '$key'")" 0
    done
    truncated=$(sql "out$i.db" "SELECT value FROM meta WHERE key = 'truncated_files'")
    made=0 recorded=0 lost_max=0
    while read -r tid; do
        ops=$(field "$(grep " tid=$tid " side.txt | tail -n 1)" ops)
        rec=$(awk -v t="$tid" '$1 == t { print $2 }' counts.txt)
        rec=${rec:-0}
        [ "$rec" -le $((ops + 999)) ] || fail "kill $i: thread $tid recorded $rec events, made at most $((ops + 999))"
        missing=$((ops - rec))
        [ "$missing" -le "$max_missing" ] || fail "kill $i: thread $tid is missing $missing events"
        [ "$missing" -gt "$lost_max" ] && lost_max=$missing
        made=$((made + ops)) recorded=$((recorded + rec))
    done < <(sed -n 's/^progress tid=\([0-9]*\) .*/\1/p' side.txt | sort -u)
    echo "figure: kill $i after ${delay}s: made>=$made recorded=$recorded lost<=$((made + nthreads * 999 - recorded)) worst-thread-lost>=$lost_max truncated_files=$truncated"
    total_made=$((total_made + made)) total_recorded=$((total_recorded + recorded))
done
echo "figure: $kills kills: made>=$total_made recorded=$total_recorded"
