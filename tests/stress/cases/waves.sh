# 2000 short-lived threads in 20 waves of 100, each allocating 4 blocks and freeing 3 (main
# frees the 4th after the join): every thread has its own complete file, and the sums over the
# threads equal the program's.
waves=$((20 * SCALE))
traced run "$PROGS/stress_waves" "$waves" 100 4
expect_status run 0
no_rheap_messages run
expect_recordings 1
dir=$(recordings)
want=$(sed -n 's/^expect total //p' run.out)
[ -n "$want" ] || fail "no ground truth in the output"
expect_eq "threads" "$(field "$want" threads)" "$((waves * 100))"
tally --between begin end summary "$dir" >between.txt
expect_eq "sums over the threads" "$(sum_threads between.txt)" "$want"
tally summary "$dir" >all.txt
grep -q '^total .* lost=0$' all.txt || fail "events lost: $(grep '^total ' all.txt)"
clean_check "$dir"
