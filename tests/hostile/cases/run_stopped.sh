# A recording the recorder stopped because it could not go on (here a thread file that the
# program's file size limit does not allow): `rheap run` and `rheap convert` say how it ended,
# with a warning naming the error, and the program's status and output are its own.
NO_LZ4_CHECK=1
STATUS=0
"$RHEAP" run -o run.db --keep -- "$PROGS/stopped" >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
expect_eq "program output" "$(cat run.out)" "freed"
grep -qxF "rheap: cannot write a thread file: File too large; recording stopped, the program goes on" run.err ||
    { cat run.err >&2; fail "no line from the recorder"; }
pid=$(sql run.db "SELECT pid FROM processes")
grep -q "^rheap: warning: .*/rip-$pid: the recording was stopped by an error (cannot write a thread file); process $pid went on unrecorded, so blocks live at that moment may have been freed later$" run.err ||
    { cat run.err >&2; fail "rheap run does not say how the recording ended"; }
expect_eq "the window's end" "$(sql run.db "SELECT off_how FROM windows")" "error: cannot write a thread file"
expect_eq "the block freed after the stop" \
    "$(sql run.db "SELECT count(*) FROM allocations WHERE size = 4321 AND dealloc_after IS NULL")" 1
STATUS=0
"$RHEAP" convert rheap-run-*/rip-"$pid" -o convert.db >convert.out 2>&1 || STATUS=$?
expect_status convert 3
grep -q "rip-$pid: the recording was stopped by an error (cannot write a thread file)" convert.out ||
    { cat convert.out >&2; fail "rheap convert does not say how the recording ended"; }
