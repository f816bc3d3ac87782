# errno is preserved across every wrapper, and failures keep their ENOMEM.
traced run "$PROGS/errno_prog"
expect_status run 0
has_line run.out "errno preserved"
expected run "expect " >want.txt
tally --between begin end summary "$(recordings)" | grep '^thread ' >got.txt
same_lines "counts" want.txt got.txt
clean_check "$(recordings)"
