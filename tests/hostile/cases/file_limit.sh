# A file size limit must never kill the program (SIGXFSZ) nor let the recorder write where the
# program did not: a limit lowered after the recording started (1 KiB), a limit of 0 from the
# start (`ulimit -f 0`, which is no "unlimited"), and a program whose descriptor 2 is its data file
# by the time the recorder stops.

# limited LOG LIMIT ARGS...: the program under `ulimit -f LIMIT`, its stdout and stderr through
# pipes (a file would be limited too); TRACED=1 preloads librheap. Sets STATUS.
limited() {
    local log=$1 limit=$2
    shift 2
    local pre=
    [ -z "${TRACED:-}" ] || pre=$PRELOAD
    { (ulimit -f "$limit"; exec env LD_PRELOAD="$pre" RHEAP_DIR="$REC" "$PROGS/file_limit" "$@" \
        2>&3 </dev/null) | cat >"$log.out"; echo "${PIPESTATUS[0]}" >"$log.status"; } 3>&1 |
        cat >"$log.err"
    STATUS=$(cat "$log.status")
}

for limit in unlimited 0; do
    mode=lower
    [ "$limit" = 0 ] && mode=churn
    limited plain "$limit" "$mode"
    expect_status plain 0
    expect_eq "plain output" "$(cat plain.out)" "pairs 200000"
    TRACED=1 limited run "$limit" "$mode"
    expect_status run 0
    expect_eq "traced output ($mode, ulimit -f $limit)" "$(cat run.out)" "pairs 200000"
    one_rheap_message run
    grep -q 'File too large' run.err || { cat run.err >&2; fail "the line does not say why"; }
done

# The program's data file at descriptor 2: the recorder's line goes nowhere.
rm -rf "$REC"/*
plain plain "$PROGS/file_limit" data
expect_status plain 0
cp data.txt plain-data.txt
rm data.txt
traced run "$PROGS/file_limit" data
expect_status run 0
expect_eq "traced output" "$(cat run.out)" "pairs 200000"
cmp -s plain-data.txt data.txt || { cat data.txt >&2; fail "data.txt differs from the untraced run"; }
expect_eq "data.txt" "$(cat data.txt)" "program data"
no_rheap_messages run
NO_LZ4_CHECK=1
