# No disable, return from main: everything is flushed at exit (off how=exit), leaks included.
traced run "$PROGS/exit_return"
expect_status run 0
expect_recordings 1
dir=$(recordings)
expected run "expect " >want.txt
tally --between begin end summary "$dir" | grep '^thread ' >got.txt
same_lines "counts" want.txt got.txt
tally summary "$dir" >all.txt
has_line all.txt "off how=exit"
clean_check "$dir"
tally --live check "$dir" >live.txt
has_line live.txt "live call=malloc size=4242 in=exe count=5"
