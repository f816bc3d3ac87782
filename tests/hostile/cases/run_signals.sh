# `rheap run` leaves the program the signal dispositions it would have untraced: a signal
# ignored when rheap starts (`trap ''`, nohup, a background job of a script) stays ignored in the
# program, and rheap does not forward it; one not ignored is forwarded as before.

# in_shell SETUP COMMAND ARGS...: COMMAND from a bash that first runs SETUP.
in_shell() {
    local setup=$1
    shift
    bash -c "$setup"' "$@"' sh "$@"
}

for setup in "trap '' HUP INT QUIT TERM; exec" "trap '' HUP; exec" "exec" "nohup"; do
    in_shell "$setup" "$PROGS/signals" show >plain.out 2>/dev/null </dev/null
    rm -f run.db
    in_shell "$setup" "$RHEAP" run -q -o run.db -- "$PROGS/signals" show >run.out 2>run.err \
        </dev/null || { cat run.err >&2; fail "rheap run after '$setup'"; }
    same_lines "dispositions after '$setup'" plain.out run.out
    [ "$(sql run.db 'SELECT count(*) FROM allocations')" -ge 8 ] || fail "not recorded"
done
# A background job of a script: its INT and QUIT are ignored.
bash -c '"$@" & wait' sh "$PROGS/signals" show >plain.out </dev/null
grep -qx 'INT ignored' plain.out || fail "the shell did not ignore INT in a background job"
rm -f run.db
bash -c '"$@" & wait' sh "$RHEAP" run -q -o run.db -- "$PROGS/signals" show >run.out 2>run.err \
    </dev/null || { cat run.err >&2; fail "rheap run in the background"; }
same_lines "dispositions of a background job" plain.out run.out

# hup_to_rheap SETUP WANT: a SIGHUP sent to rheap run (its pid) reaches the program WANT times.
hup_to_rheap() {
    rm -f pid stop hups hup.db
    # Not through in_shell: a function in the background is a subshell of its own, whose pid
    # would get the signal. bash -c execs rheap, so $! is rheap's pid.
    bash -c "$1"' "$@"' sh "$RHEAP" run -q -o hup.db -- "$PROGS/signals" serve "$WORK" \
        >hup.out 2>hup.err </dev/null &
    local rpid=$!
    for _ in $(seq 6000); do [ -s pid ] && break; sleep 0.01; done
    [ -s pid ] || fail "the program did not start"
    kill -HUP "$rpid"
    if [ "$2" -gt 0 ]; then
        # Forwarded: stopped once the program has counted it, however long that takes.
        for _ in $(seq 6000); do [ "$(cat hups 2>/dev/null)" = "$2" ] && break; sleep 0.01; done
    else
        # Ignored by rheap, so dropped when sent; a forwarded one would arrive well within this.
        sleep 0.2
    fi
    touch stop
    local status=0
    wait "$rpid" || status=$?
    expect_eq "rheap run's status after a HUP ('$1')" "$status" 0
    expect_eq "HUPs the program received ('$1')" "$(grep '^hups' hup.out)" "hups $2"
}
hup_to_rheap "trap '' HUP; exec" 0
hup_to_rheap "exec" 1
