# The unwinder's self-check (RHEAP_CHECK_UNWIND=1 takes every backtrace again with libunwind and
# compares): on frames of every kind, the cached rules agree with libunwind on every frame,
# and exactly the allocations made off the rules' ground (signal handlers, an alternate signal
# stack, a coroutine) are handed to libunwind.
traced run RHEAP_CHECK_UNWIND=1 "$PROGS/unwind_cases" "$DSO"
expect_status run 0
slow=$(expected run "expect slow ")
expect_eq "slow allocations the program made" "$slow" 8
line=$(grep -E '^rheap: unwind check: [0-9]+ by rules' run.err) || { cat run.err >&2; fail "no unwind check line"; }
read -r rules fallback mismatches < <(sed -E 's/^rheap: unwind check: ([0-9]+) by rules, ([0-9]+) by libunwind, ([0-9]+) mismatches$/\1 \2 \3/' <<<"$line")
expect_eq "mismatches" "$mismatches" 0
expect_eq "walks given to libunwind" "$fallback" "$slow"
# The program's own allocations alone are 10 + 3 + 3 + 1 + 3 x (50 + 3) + 2 x (5 + 1) = 188.
[ "$rules" -ge 188 ] || fail "only $rules walks by the rules"
