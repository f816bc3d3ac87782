# A child made by the fork system call allocates while its parent does, and ends with the raw
# exit_group (no exit code of the tracer runs in it). 10 rounds: every parent recording
# converts and holds exactly the parent's 100,000 pairs and none of the child's; one line names
# the child each time, at its first event.
for i in $(seq 10); do
    rm -rf "${REC:?}"/*
    traced run "$PROGS/raw_fork_race" 100000
    expect_status run 0
    read -r _ ppid _ cpid <run.out
    one_rheap_message run
    grep -qxF "rheap: process $cpid was made without fork handlers (a raw clone or fork system call): it is not recorded" run.err ||
        { cat run.err >&2; fail "round $i: no line names the child"; }
    expect_recordings 1
    rm -f run.db
    "$RHEAP" convert "$REC/rip-$ppid" -o run.db >convert.out 2>&1 ||
        { cat convert.out >&2; fail "round $i: the parent's recording does not convert"; }
    expect_eq "round $i: blocks of 1111 and 77 bytes" \
        "$(sql run.db "SELECT sum(size = 1111 AND dealloc_after IS NOT NULL), sum(size = 77) FROM allocations")" \
        "100000|0"
done
