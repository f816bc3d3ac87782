# Allocations made inside a dlopen'ed library are attributed to it; dlclose (which frees under
# the loader lock) neither deadlocks nor loses events.
traced run "$PROGS/dlopen_prog" "$DSO"
expect_status run 0
expect_recordings 1
expected run "expect-list " >want.txt
tally --between begin end list "$(recordings)" >got.txt
same_lines "events" want.txt got.txt
clean_check "$(recordings)"
