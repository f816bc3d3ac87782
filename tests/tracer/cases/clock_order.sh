# The clock orders events across threads: a time read just after seeing another thread's store
# is never earlier than the time that thread read before the store (10 M reads on two CPUs).
# With a plain RDTSC about 1 read in 4000 went back, by up to 8 us. And once switched to the
# TSC it stays within 1 us of CLOCK_MONOTONIC (a badly measured ratio ran 300-400 ppm slow:
# 15 us off at 50 ms, 100 us at 300 ms).
NO_RIP_EXPECTED=1
plain run "$PROGS/clock_order" 5000000
[ "$STATUS" -ne 77 ] || skip "$(cat run.out)"
expect_status run 0
grep -E '^(clock|offset) ' run.out
read -r off50 off300 < <(sed -n 's/^offset at 50 ms \(-\{0,1\}[0-9]*\) ns, at 300 ms \(-\{0,1\}[0-9]*\) ns$/\1 \2/p' run.out)
[ -n "$off50" ] || fail "no offset line: $(cat run.out)"
[ "${off50#-}" -lt 1000 ] && [ "${off300#-}" -lt 1000 ] ||
    fail "the clock is $off50 ns off CLOCK_MONOTONIC at 50 ms, $off300 ns at 300 ms (expected under 1000)"
has_line run.out "reads 10000000 backwards 0 worst 0 ns"
