# An address-space limit (ulimit -v) under which the recorder cannot map its buffers but the
# program's small allocations still succeed: exactly one "rheap:" line, same output. The limit
# is searched for: the smallest one (in 1 MiB steps above the program's own need) at which the
# untraced program runs; then the traced program must run too, whether or not the recorder fit.
lo=
for kb in $(seq 4096 1024 65536); do
    STATUS=0
    (ulimit -v "$kb"; exec "$PROGS/stress_small") >plain.out 2>plain.err </dev/null || STATUS=$?
    if [ "$STATUS" = 0 ]; then lo=$kb; break; fi
done
[ -n "$lo" ] || skip "the program does not run under 64 MiB of address space"
failed_at= message=
for kb in $(seq "$lo" 1024 $((lo + 65536))); do
    STATUS=0
    (ulimit -v "$kb"; exec env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$PROGS/stress_small") \
        >run.out 2>run.err </dev/null || STATUS=$?
    # The loader itself may fail to map librheap at the smallest limits: that is not ours.
    grep -q 'error while loading shared libraries' run.err && { rm -rf "${REC:?}"/*; continue; }
    expect_status run 0
    cmp -s plain.out run.out || fail "ulimit -v $kb: output differs"
    if [ -s run.err ]; then
        one_rheap_message run
        failed_at=$kb message=$(cat run.err)
    else
        echo "figure: the recorder fits in ulimit -v $kb (the program alone: $lo)"
        break
    fi
    rm -rf "${REC:?}"/*
done
[ -n "$failed_at" ] || fail "never saw the recorder run out of address space"
echo "figure: the recorder stopped cleanly at ulimit -v $failed_at: $message"
