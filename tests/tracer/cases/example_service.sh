# The live-service example: started with recording off, toggled on, off and on again with
# SIGUSR2, stopped with SIGTERM: two consistent recordings, on/off by signal, off at exit.
env LD_PRELOAD="$RHEAP_LIB" RHEAP_DIR="$REC" RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 \
    "$EXAMPLES/service" 4 30 >run.out 2>run.err </dev/null &
pid=$!
for _ in $(seq 100); do
    grep -q ready run.out && break
    sleep 0.1
done
grep -q "service pid $pid ready" run.out || { kill -KILL "$pid"; fail "service did not start"; }
expect_recordings 0
kill -USR2 "$pid"; sleep 0.3
kill -USR2 "$pid"; sleep 0.2
kill -USR2 "$pid"; sleep 0.3
kill -TERM "$pid"
STATUS=0
wait "$pid" || STATUS=$?
expect_status run 0
no_rheap_messages run
grep -q '^served [0-9]* requests$' run.out || fail "service did not finish: $(cat run.out)"
expect_recordings 2
first=$REC/rip-$pid second=$REC/rip-$pid-2
tally summary "$first" >first.txt
has_line first.txt "on how=signal"
has_line first.txt "off how=signal"
tally summary "$second" >second.txt
has_line second.txt "on how=signal"
has_line second.txt "off how=exit"
for f in first.txt second.txt; do
    allocs=$(field "$(grep '^total ' $f)" allocs)
    [ "$allocs" -gt 0 ] || fail "$f: no allocation recorded while on"
done
clean_check "$first" "$second"
