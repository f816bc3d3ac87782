# Signal handlers that allocate, every 7th jumping out of the call it interrupted (7,000
# signals from a 100 us timer, 1,000 jumps, most landing inside the recorder): every pair the
# handlers completed is in the database, paired, and the worker's calls lie between those it
# completed and those it started; the recording goes on to the end (no message) in one file per
# thread: a jump does not open a new file.
NO_LZ4_CHECK=1
STATUS=0
env LD_PRELOAD="$PRELOAD $BUMP" RHEAP_DIR="$REC" "$PROGS/sigjump" 7000 >run.out 2>run.err </dev/null ||
    STATUS=$?
expect_status run 0
no_rheap_messages run
read -r _ tid done started handler jumps <run.out
tid=${tid#tid=} done=${done#done=} started=${started#started=} handler=${handler#handler=}
[ "${jumps#jumps=}" -ge 1000 ] || fail "only $jumps"
expect_recordings 1
expect_eq "thread files opened again after a jump" "$(find "$REC" -name 't*-*.rip' | wc -l)" 0
STATUS=0
"$RHEAP" convert "$(recordings)" -o run.db >convert.out 2>&1 || STATUS=$?
[ "$STATUS" = 0 ] || [ "$STATUS" = 3 ] || { cat convert.out >&2; fail "convert"; }
# Under a heavy load, a storm of handlers while one event is written may overflow the side area
# (1,024 events): those are counted as lost, each one, and nothing else may be missing.
lost=$(sql run.db "SELECT lost_events FROM processes")
expect_eq "the handlers' events (333 bytes) recorded, and lost" \
    "$(sql run.db "SELECT count(*) + count(dealloc_after) + $lost FROM allocations WHERE size = 333")" \
    "$((2 * handler))"
worker=$(sql run.db "SELECT count(*) + count(dealloc_after) FROM allocations WHERE size = 64 AND alloc_thread = $tid")
[ "$worker" -ge "$done" ] && [ "$worker" -le "$started" ] ||
    fail "the worker completed $done calls (started $started); the database has $worker"
[ "$(sql run.db "SELECT unmatched_frees FROM processes")" -le "$lost" ] ||
    fail "frees without their allocation: $(sql run.db "SELECT unmatched_frees FROM processes")"
echo "figure: $handler handler pairs; lost $lost; worker $done..$started, recorded $worker"
