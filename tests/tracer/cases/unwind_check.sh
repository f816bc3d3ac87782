# The unwinder's self-check (RHEAP_CHECK_UNWIND=1 takes every backtrace again with libunwind and
# compares): on frames of every kind, the cached rules agree with libunwind on every frame,
# and exactly the allocations made off the rules' ground (signal handlers, an alternate signal
# stack, a coroutine) are handed to libunwind.

# check_run LOG: runs the program and checks its unwind line.
check_run() {
    expect_status "$1" 0
    local slow line rules fallback mismatches
    slow=$(expected "$1" "expect slow ")
    expect_eq "slow allocations the program made" "$slow" 8
    line=$(grep -E '^rheap: unwind check: [0-9]+ by rules' "$1.err") ||
        { cat "$1.err" >&2; fail "no unwind check line"; }
    read -r rules fallback mismatches < <(sed -E 's/^rheap: unwind check: ([0-9]+) by rules, ([0-9]+) by libunwind, ([0-9]+) mismatches$/\1 \2 \3/' <<<"$line")
    expect_eq "mismatches" "$mismatches" 0
    expect_eq "walks given to libunwind" "$fallback" "$slow"
    # The program's own allocations alone: 10 + 3 + 3 + 1 + 2 + 3 x (50 + 3) + 2 x (5 + 1) = 190.
    [ "$rules" -ge 190 ] || fail "only $rules walks by the rules"
}
traced run RHEAP_CHECK_UNWIND=1 "$PROGS/unwind_cases" "$DSO"
check_run run
# With no stack size limit (where the hard limit allows it), the main thread's stack bounds
# come from its mapping alone.
if (ulimit -s unlimited) 2>/dev/null; then
    (
        ulimit -s unlimited
        traced unlimited RHEAP_CHECK_UNWIND=1 "$PROGS/unwind_cases" "$DSO"
        echo "$STATUS" >unlimited.status
    )
    STATUS=$(cat unlimited.status)
    check_run unlimited
fi
