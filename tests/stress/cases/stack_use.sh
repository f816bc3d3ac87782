# The tracer's own stack use per event, measured by painting the stack (stackuse): a malloc and a
# free at a return address seen before must take less than 1 KiB more stack traced than
# untraced. The first event at a new return address (the CFI decoder runs) and a thread's first
# event (registration, module snapshot) are printed as figures, not bounded here.
plain plain "$PROGS/stress_stackuse"
expect_status plain 0
traced run "$PROGS/stress_stackuse"
expect_status run 0
no_rheap_messages run
u=$(grep '^stack ' plain.out) t=$(grep '^stack ' run.out)
for key in malloc free; do
    extra=$(( $(field "$t" "$key") - $(field "$u" "$key") ))
    [ "$extra" -lt 1024 ] || fail "$key: the tracer adds $extra bytes of stack ($t; untraced $u)"
    echo "figure: $key: the tracer adds $extra bytes of stack per event"
done
for key in new_site_malloc first_malloc; do
    echo "figure: $key: the tracer adds $(( $(field "$t" "$key") - $(field "$u" "$key") )) bytes"
done
