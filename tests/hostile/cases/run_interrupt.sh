# Ctrl-C (SIGINT to rheap run) and SIGTERM during `rheap run`'s conversion, after the program has
# exited: rheap ends with the signal (status 128+N, as its default action would give), says so
# in one line, and leaves nothing behind: no database, no temporary database, no recordings.
NO_LZ4_CHECK=1
for sig in INT TERM; do
    rm -rf runs done
    mkdir runs
    # With job control on: a script's background job otherwise starts with SIGINT ignored,
    # which rheap run then (rightly) keeps ignoring.
    set -m
    "$RHEAP" run -q -o runs/out.db -- "$PROGS/burst" 1000000 done >run.out 2>run.err </dev/null &
    rpid=$!
    set +m
    for _ in $(seq 1000); do [ -e done ] && break; sleep 0.01; done
    [ -e done ] || fail "the program did not finish"
    sleep 0.3
    kill -"$sig" "$rpid"
    STATUS=0
    wait "$rpid" || STATUS=$?
    expect_status run "$((128 + $(kill -l "$sig")))"
    one_rheap_message run
    grep -q 'during the conversion: runs/out.db not written, the recordings and the temporary database removed' run.err ||
        { cat run.err >&2; fail "the line does not say what was removed"; }
    expect_eq "left in the output's directory after SIG$sig" "$(ls -A runs)" ""
done
