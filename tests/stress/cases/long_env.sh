# A 10000-character RHEAP_DIR, and other oversized values: exactly one "rheap:" line each, no
# crash, and the program's output unchanged.
plain plain "$PROGS/stress_xthreads" 2 500
expect_status plain 0
long=$(printf 'd%.0s' $(seq 10000))
for setting in "RHEAP_DIR=$WORK/$long" "RHEAP_DEPTH=$long" "RHEAP_SIGNAL=$long" \
               "RHEAP_BUFFER_KB=$long" "RHEAP_SAMPLE_RATE=0.$long" "RHEAP_MAX_THREADS=9$long"; do
    rm -rf "${REC:?}"/* rip-*
    STATUS=0
    env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$setting" "$PROGS/stress_xthreads" 2 500 \
        >run.out 2>run.err </dev/null || STATUS=$?
    expect_status run 0
    one_rheap_message run
    expect_eq "${setting:0:20}...: output" "$(grep '^done ' run.out)" "$(grep '^done ' plain.out)"
    [ "$(awk '{ print length }' run.err)" -le 1024 ] || fail "${setting:0:20}...: the message is over 1 KiB: $(awk '{ print length }' run.err) bytes long"
done
