# The recording directory on a 4 MiB tmpfs that the recording fills (the four threads' staging
# areas take 1.3 MiB of it): recording stops with
# exactly one "rheap:" line on stderr, the program goes on and prints what it prints untraced,
# and what was written still converts (status 0 or 3).
[ "$(id -u)" = 0 ] || skip "mounting a small tmpfs needs root"
mkdir small
mount -t tmpfs -o size=4m tmpfs small 2>/dev/null || skip "mount -t tmpfs is not permitted here"
CLEANUP+=("umount '$WORK/small'")
plain plain "$PROGS/stress_xthreads" 4 300000
expect_status plain 0
STATUS=0
env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$WORK/small" "$PROGS/stress_xthreads" 4 300000 \
    >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
one_rheap_message run
expect_eq "program output" "$(grep '^done ' run.out)" "$(grep '^done ' plain.out)"
# The disk is full when the recorder fails, not necessarily after: a recording that stops gives
# back its staging areas' space.
grep -q 'No space left on device' run.err || fail "the test did not fill the disk: $(cat run.err)"
dir=$(find small -mindepth 1 -maxdepth 1 -name 'rip-*')
[ -n "$dir" ] || fail "no recording directory"
CONVERT_WARN_OK=1 convert out.db "$dir"
