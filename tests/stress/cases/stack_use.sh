# The tracer's own stack use per event, measured by painting the stack (stackuse): a malloc and a
# free at a return address seen before, a malloc at a new return address (the CFI decoder runs)
# and a thread's first event (registration, its file, the first module snapshot) must each take
# less than 1 KiB more stack traced than untraced, and more than nothing: a figure of 0 would be
# a measurement that misses the tracer's frames under something deeper in both runs. The bound
# is the optimized recorder's: in a Debug build (-O0, RHEAP_BUILD_TYPE from CMake) frames are
# about twice as large, and the figures are printed, not bounded.
plain plain "$PROGS/stress_stackuse"
expect_status plain 0
traced run "$PROGS/stress_stackuse"
expect_status run 0
no_rheap_messages run
u=$(grep '^stack ' plain.out) t=$(grep '^stack ' run.out)
for key in malloc free new_site_malloc first_malloc; do
    extra=$(( $(field "$t" "$key") - $(field "$u" "$key") ))
    [ "$extra" -gt 0 ] || fail "$key: the measurement misses the tracer ($t; untraced $u)"
    [ "$extra" -lt 1024 ] || [ "${RHEAP_BUILD_TYPE:-}" = Debug ] ||
        fail "$key: the tracer adds $extra bytes of stack ($t; untraced $u)"
    echo "figure: $key: the tracer adds $extra bytes of stack"
done
