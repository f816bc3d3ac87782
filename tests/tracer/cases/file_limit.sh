# A file size limit (RLIMIT_FSIZE) the recording exceeds: the program must not be killed by
# SIGXFSZ nor change its output; the recorder stops and says so once. The files may end early
# (a partial write), so they are not checked here.
NO_LZ4_CHECK=1
plain plain "$PROGS/churn"
expect_status plain 0
STATUS=0
(ulimit -f 8; exec env LD_PRELOAD="$RHEAP_LIB" RHEAP_DIR="$REC" "$PROGS/churn") \
    >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
[ "$(grep -c . run.out)" -eq "$(grep -c . plain.out)" ] || fail "output differs"
[ "$(wc -l <run.err)" -eq 1 ] && grep -q '^rheap:' run.err ||
    { cat run.err >&2; fail "expected exactly one 'rheap:' line on stderr"; }
