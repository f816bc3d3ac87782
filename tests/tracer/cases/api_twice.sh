# The linked control API: results and errors, two recordings rip-<pid>/ and rip-<pid>-2/ with
# exactly the allocations made while on, and the stack depth limit of the second.
STATUS=0
"$PROGS/api_twice" >run.out 2>run.err || STATUS=$?
expect_status run 0
no_rheap_messages run
line=$(grep '^dirs ' run.out)
pid=$(field "$(grep '^first expect thread' run.out)" tid)
expect_eq "directories" "$line" "dirs rip-$pid rip-$pid-2"
# The API's default output directory is the current one.
REC=$WORK
expect_recordings 2
first=$WORK/rip-$pid second=$WORK/rip-$pid-2

expected run "first expect " >want.txt
tally summary "$first" >first.txt
grep '^thread ' first.txt >got.txt
same_lines "first recording" want.txt got.txt
has_line first.txt "on how=api"
has_line first.txt "off how=api"
grep -q "^config depth=64 " first.txt || fail "config: $(grep ^config first.txt)"
grep -q "^thread-info .* marks=1 " first.txt || fail "marker: $(grep ^thread-info first.txt)"

expected run "second expect " >want.txt
tally summary "$second" >second.txt
grep '^thread ' second.txt >got.txt
same_lines "second recording" want.txt got.txt
grep -q "^config depth=5 " second.txt || fail "config: $(grep ^config second.txt)"
grep -q "^thread-info .* maxdepth=5 " second.txt || fail "depth: $(grep ^thread-info second.txt)"
clean_check "$first" "$second"
