# A C++ library loaded with RTLD_LOCAL by a C program (as ar and ld load the LLVM gold plugin):
# its operator new and delete, whose library librheap cannot see, are served and recorded with
# exact sizes, and the program runs to its end.
traced run "$PROGS/dlopen_cxx" "$DSO_CXX"
expect_status run 0
expect_recordings 1
expected run "expect-list " >want.txt
tally --between begin end list "$(recordings)" >got.txt
same_lines "events" want.txt got.txt
clean_check "$(recordings)"
