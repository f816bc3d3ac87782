# RHEAP_SAMPLE_RATE=0: every allocation is recorded, none with a backtrace, bytes exact.
# RHEAP_SAMPLE_RATE=0.5: still every allocation, some with a backtrace and some without.
traced run RHEAP_SAMPLE_RATE=0 "$PROGS/threads" 4 2000
expect_status run 0
no_rheap_messages run
dir=$(recordings)
tally --between begin end summary "$dir" >summary.txt
expected run "expect thread " | sed 's/^/thread /' >want.txt
grep '^thread ' summary.txt >got.txt
same_sorted "per-thread counts without backtraces" want.txt got.txt
grep -q '^config .* sample_ppm=0 ' summary.txt || fail "config: $(grep ^config summary.txt)"
while read -r line; do
    allocs=$(field "$(grep "^thread tid=$(field "$line" tid) " summary.txt)" allocs)
    expect_eq "backtraces of $line" "$(field "$line" stacks)" 0
    expect_eq "allocations without backtrace of $line" "$(field "$line" nostack)" "$allocs"
done < <(grep '^thread-info ' summary.txt)
clean_check "$dir"
rm -rf "$dir"

traced run RHEAP_SAMPLE_RATE=0.5 "$PROGS/threads" 4 2000
expect_status run 0
dir=$(recordings)
tally --between begin end summary "$dir" >summary.txt
expected run "expect thread " | sed 's/^/thread /' >want.txt
grep '^thread ' summary.txt >got.txt
same_sorted "per-thread counts with half the backtraces" want.txt got.txt
grep -q '^config .* sample_ppm=500000 ' summary.txt || fail "config: $(grep ^config summary.txt)"
# 2000+ allocations per worker: both kinds occur unless sampling is broken.
while read -r line; do
    [ "$(field "$line" stacks)" -gt 0 ] && [ "$(field "$line" nostack)" -gt 0 ] ||
        fail "sampling at 0.5 gave $line"
done < <(grep '^thread-info ' summary.txt)
clean_check "$dir"
