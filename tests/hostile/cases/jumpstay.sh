# Threads left inside an event by a signal handler's jump, which never allocate again (4 workers,
# each parked after its 50th signal's jump): the program's exit does not wait for them beyond a
# second, says so in at most one line (a worker whose jump landed outside the recorder leaves
# nothing to wait for), and the recording converts with every worker's calls in it.
NO_LZ4_CHECK=1
STATUS=0
timeout 30 env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$PROGS/jumpstay" >run.out 2>run.err \
    </dev/null || STATUS=$?
[ "$STATUS" != 124 ] || fail "the program did not exit within 30 s"
expect_status run 0
grep -q '^jumpstay: 4 workers parked$' run.out || fail "unexpected output: $(cat run.out)"
if [ -s run.err ]; then
    one_rheap_message run
    grep -q 'inside an event for a second' run.err || fail "unexpected message: $(cat run.err)"
fi
expect_recordings 1
STATUS=0
"$RHEAP" convert "$(recordings)" -o run.db >convert.out 2>&1 || STATUS=$?
[ "$STATUS" = 0 ] || [ "$STATUS" = 3 ] || { cat convert.out >&2; fail "convert"; }
expect_eq "threads with calls of 64 bytes" \
    "$(sql run.db "SELECT count(DISTINCT alloc_thread) FROM allocations WHERE size = 64")" 4
echo "figure: $(grep -c . run.err) message lines: $(cat run.err)"
