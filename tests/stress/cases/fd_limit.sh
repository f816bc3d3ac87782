# A descriptor limit the recorder runs into (ulimit -n 6: the process file fits, the four
# worker threads' files do not): exactly one "rheap:" line, the program's output unchanged, and
# what was recorded converts.
plain plain "$PROGS/stress_xthreads" 4 2000
expect_status plain 0
STATUS=0
(ulimit -n 6; exec env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$PROGS/stress_xthreads" 4 2000) \
    >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
one_rheap_message run
expect_eq "program output" "$(grep '^done ' run.out)" "$(grep '^done ' plain.out)"
for d in $(recordings); do
    CONVERT_WARN_OK=1 convert "out-$(basename "$d").db" "$d"
done
