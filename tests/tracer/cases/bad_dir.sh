# RHEAP_DIR that cannot be used (missing, or a file): the program runs as without the
# recorder, and the recorder says so in exactly one "rheap:" line.
NO_RIP_EXPECTED=1
plain plain "$PROGS/threads" 2 500
expect_status plain 0
touch "$WORK/a-file"
for dir in "$WORK/missing/dir" "$WORK/a-file"; do
    STATUS=0
    env LD_PRELOAD="$RHEAP_LIB" RHEAP_DIR="$dir" "$PROGS/threads" 2 500 >run.out 2>run.err ||
        STATUS=$?
    expect_status run 0
    [ "$(wc -l <run.out)" -eq "$(wc -l <plain.out)" ] || fail "RHEAP_DIR=$dir: output differs"
    [ "$(wc -l <run.err)" -eq 1 ] && grep -q '^rheap:' run.err ||
        { cat run.err >&2; fail "RHEAP_DIR=$dir: expected exactly one 'rheap:' line on stderr"; }
done
