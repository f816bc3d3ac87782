# A tight descriptor limit (ulimit -n 6, some of it taken by descriptors the test inherits).
# The recorder keeps one descriptor per file, made when the file is made. Whether one is free
# then depends on what else is open, so either everything is recorded and nothing said, or the
# recorder stops with exactly one "rheap:" line naming the limit. Either way the program's output
# is unchanged and what was recorded converts.
plain plain "$PROGS/stress_xthreads" 4 2000
expect_status plain 0
STATUS=0
(ulimit -n 6; exec env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$PROGS/stress_xthreads" 4 2000) \
    >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
expect_eq "program output" "$(grep '^done ' run.out)" "$(grep '^done ' plain.out)"
if [ -s run.err ]; then
    one_rheap_message run
    grep -q 'Too many open files' run.err || fail "message: $(cat run.err)"
fi
for d in $(recordings); do
    CONVERT_WARN_OK=1 convert "out-$(basename "$d").db" "$d"
done
