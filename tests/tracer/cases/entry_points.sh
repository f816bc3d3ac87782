# Every wrapped entry point once: call kind, size and alignment exactly; free(NULL) and failed
# allocations leave no record.
traced run "$PROGS/entry_points"
expect_status run 0
expect_recordings 1
expected run "expect-list " >want.txt
tally --between begin end list "$(recordings)" >got.txt
same_lines "events" want.txt got.txt
clean_check "$(recordings)"
