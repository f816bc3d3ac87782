# 8 threads x 20000 allocations, nearly every block freed by another thread while all run:
# exact per-thread counts between the markers, the same output as untraced, and every free
# pairs with a live allocation in time order.
threads=8 ops=$((20000 * SCALE))
plain plain "$PROGS/stress_xthreads" "$threads" "$ops"
expect_status plain 0
traced run "$PROGS/stress_xthreads" "$threads" "$ops"
expect_status run 0
no_rheap_messages run
expect_eq "program summary" "$(grep '^done ' run.out)" "$(grep '^done ' plain.out)"
expect_recordings 1
dir=$(recordings)
grep '^expect thread ' run.out | sed 's/^expect //' >want.txt
tally --between begin end summary "$dir" | grep '^thread ' >got.txt
same_sorted "per-thread counts" want.txt got.txt
expect_eq "threads recorded" "$(wc -l <got.txt)" "$threads"
clean_check "$dir"
