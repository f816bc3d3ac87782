# The clock orders events across threads: a time read just after seeing another thread's store
# is never earlier than the time that thread read before the store (10 M reads on two CPUs).
# With a plain RDTSC about 1 read in 4000 went back, by up to 8 us.
NO_RIP_EXPECTED=1
plain run "$PROGS/clock_order" 5000000
[ "$STATUS" -ne 77 ] || skip "$(cat run.out)"
expect_status run 0
grep '^clock ' run.out
has_line run.out "reads 10000000 backwards 0 worst 0 ns"
