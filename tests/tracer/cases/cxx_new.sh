# C++ new, new[], nothrow new, aligned new and every delete reach the recorder with exact sizes.
traced run "$PROGS/cxx_new"
expect_status run 0
expect_recordings 1
expected run "expect-list " >want.txt
tally --between begin end list "$(recordings)" >got.txt
same_lines "events" want.txt got.txt
clean_check "$(recordings)"
