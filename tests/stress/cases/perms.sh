# Recording directories are created 0700 and files 0600, whatever the umask says.
traced run "$PROGS/stress_xthreads" 2 500
expect_status run 0
expect_recordings 1
dir=$(recordings)
expect_eq "directory mode" "$(stat -c %a "$dir")" 700
STATUS=0
(umask 0; exec env LD_PRELOAD="$PRELOAD" RHEAP_DIR="$REC" "$PROGS/stress_xthreads" 2 500) \
    >run2.out 2>run2.err </dev/null || STATUS=$?
expect_status run2 0
expect_recordings 2
nfiles=0
for d in $(recordings); do
    expect_eq "mode of $(basename "$d")" "$(stat -c %a "$d")" 700
    for f in "$d"/*; do
        expect_eq "mode of $(basename "$d")/$(basename "$f")" "$(stat -c %a "$f")" 600
        nfiles=$((nfiles + 1))
    done
done
[ "$nfiles" -ge 6 ] || fail "only $nfiles files checked"
