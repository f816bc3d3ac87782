# RHEAP_DIR on a read-only file system (root ignores directory permissions, a read-only mount
# does not): no recording, exactly one "rheap:" line, the program's output unchanged.
[ "$(id -u)" = 0 ] || skip "mounting a read-only tmpfs needs root"
mkdir ro
mount -t tmpfs -o ro,size=1m tmpfs ro 2>/dev/null || skip "mount -t tmpfs is not permitted here"
CLEANUP+=("umount '$WORK/ro'")
plain plain "$PROGS/stress_xthreads" 4 2000
expect_status plain 0
STATUS=0
env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$WORK/ro" "$PROGS/stress_xthreads" 4 2000 \
    >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
one_rheap_message run
expect_eq "program output" "$(grep '^done ' run.out)" "$(grep '^done ' plain.out)"
expect_eq "files written" "$(find ro -mindepth 1 | wc -l)" 0
