# The live-service example: started with recording off, toggled on, off and on again with
# SIGUSR2, stopped with SIGTERM: two consistent recordings, on/off by signal, off at exit.

# allocs_recorded DIR: the recording DIR, as written so far, has an allocation.
allocs_recorded() {
    local n
    n=$(field "$("$RIPTALLY" summary "$1" 2>/dev/null | grep '^total ')" allocs)
    [ "${n:-0}" -gt 0 ]
}

# off_recorded DIR: the recording DIR has its off record.
off_recorded() {
    "$RIPTALLY" summary "$1" 2>/dev/null | grep -q '^off '
}

env LD_PRELOAD="$RHEAP_LIB" RHEAP_DIR="$REC" RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 \
    "$EXAMPLES/service" 4 30 >run.out 2>run.err </dev/null &
pid=$!
CLEANUP+=("kill -KILL $pid 2>/dev/null")
# Each toggle waits for the one before to have been acted on (a signal sent while the same one
# is still pending would be lost in it), and each window for an allocation recorded in it: the
# recordings are read as they are written.
wait_for "service did not start" grep -q "service pid $pid ready" run.out
expect_recordings 0
kill -USR2 "$pid"
wait_for "no allocation recorded after the first USR2" allocs_recorded "$REC/rip-$pid"
kill -USR2 "$pid"
wait_for "the second USR2 did not turn recording off" off_recorded "$REC/rip-$pid"
kill -USR2 "$pid"
wait_for "no allocation recorded after the third USR2" allocs_recorded "$REC/rip-$pid-2"
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
