# The toggle signal in a service that blocks every signal in every thread: the signal reaches
# the recorder's own thread, and the 1,000 pairs made after it are recorded. A program that
# installs its own handler for the toggle signal keeps it (its handler runs, as untraced), and
# the recorder says in one line that toggling is off.
traced run RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 "$PROGS/toggle_service" blocked "$REC"
expect_status run 0
expect_eq "output" "$(cat run.out)" "done"
no_rheap_messages run
expect_recordings 1
rm -f run.db
"$RHEAP" convert "$(recordings)" -o run.db >convert.out 2>&1 || { cat convert.out >&2; fail "convert"; }
expect_eq "pairs recorded after the toggle" \
    "$(sql run.db "SELECT count(*) FROM allocations WHERE size = 4444 AND dealloc_after IS NOT NULL")" 1000
expect_eq "how the window opened" "$(sql run.db "SELECT on_how FROM windows")" "signal"

rm -rf "${REC:?}"/*
plain plain "$PROGS/toggle_service" handler "$REC"
expect_status plain 0
traced run RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 "$PROGS/toggle_service" handler "$REC"
expect_status run 0
same_lines "output" plain.out run.out
one_rheap_message run
grep -qxF "rheap: the program installed its own handler for signal 12, the toggle signal: toggling is off in this process; choose another signal (RHEAP_SIGNAL)" run.err ||
    { cat run.err >&2; fail "the line does not say that toggling is off"; }
NO_LZ4_CHECK=1
