# Frees during thread teardown (pthread key destructors, C++ thread_local destructors, after
# pthread_exit) are recorded in the thread's own file.
traced run "$PROGS/thread_exit"
expect_status run 0
no_rheap_messages run
dir=$(recordings)
tally list "$dir" >list.txt
for size in 7001 7002 7003; do
    expect_eq "allocations of $size bytes" "$(grep -c "^alloc call=malloc size=$size " list.txt)" 3
    # "of=" is only resolved when the free is in the same file as the allocation.
    expect_eq "frees of $size-byte blocks" "$(grep -c "^free of=malloc:$size$" list.txt)" 3
done
tally --live check "$dir" >live.txt
if grep -E ' size=700[123] ' live.txt; then
    fail "blocks freed at thread exit are still live in the recording"
fi
clean_check "$dir"
