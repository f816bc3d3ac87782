# A toggle signal that arrives while the service makes no allocator call: the recorder's toggle
# thread ends the window at once, so the recording is complete (100 allocations, 40 frees, `off
# how=signal`) while the program is still running, idle.
env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" RHEAP_SIGNAL=USR2 "$PROGS/idle_service" >run.out 2>run.err &
pid=$!
CLEANUP+=("kill -TERM $pid 2>/dev/null")
for _ in $(seq 100); do grep -q '^ready$' run.out && break; sleep 0.05; done
grep -q '^ready$' run.out || fail "the program did not start"
kill -USR2 "$pid"
ok=
for _ in $(seq 100); do
    if "$RIPTALLY" summary "$REC/rip-$pid" >s.txt 2>/dev/null && grep -qx 'off how=signal' s.txt; then
        ok=1
        break
    fi
    sleep 0.05
done
[ -n "$ok" ] || fail "no 'off how=signal' 5 s after the signal: $(cat s.txt 2>/dev/null)"
kill -0 "$pid" 2>/dev/null || fail "the program is no longer running"
expect_eq "events while idle" "$(field "$(grep '^total ' s.txt)" allocs) $(field "$(grep '^total ' s.txt)" frees)" "100 40"
kill -TERM "$pid"
wait "$pid" || fail "the program exited with status $?"
no_rheap_messages run
