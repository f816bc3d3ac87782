# realloc from NULL, growth, shrink, realloc(p, 0) as a free, same-size realloc, reallocarray
# and failing calls: the exact event list between the markers.
traced run "$PROGS/realloc_chain"
expect_status run 0
expect_recordings 1
expected run "expect-list " >want.txt
tally --between begin end list "$(recordings)" >got.txt
same_lines "events" want.txt got.txt
clean_check "$(recordings)"
