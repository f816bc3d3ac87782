# Good environment values are taken silently: the stack depth limit cuts every backtrace, and
# the signal can be named USR2, SIGUSR2 or 12.
traced run RHEAP_DEPTH=3 "$PROGS/deep"
expect_status run 0
[ -s run.err ] && { cat run.err >&2; fail "stderr not empty"; }
tally --between begin end summary "$(recordings)" >summary.txt
expected run "expect " >want.txt
grep '^thread ' summary.txt >got.txt
same_lines "counts at depth 3" want.txt got.txt
grep -q '^config depth=3 ' summary.txt || fail "config: $(grep ^config summary.txt)"
grep -q '^thread-info .* maxdepth=3 ' summary.txt || fail "depth: $(grep ^thread-info summary.txt)"

rm -rf "${REC:?}"/*
traced run RHEAP_DEPTH=1024 "$PROGS/deep"
expect_status run 0
tally --between begin end summary "$(recordings)" >summary.txt
depth=$(field "$(grep '^thread-info ' summary.txt)" maxdepth)
# main, 21 calls of down() and the C start-up frames.
[ "$depth" -ge 23 ] || fail "backtraces at depth 1024 have only $depth frames"

for sig in USR2 SIGUSR2 12; do
    rm -rf "${REC:?}"/*
    traced run RHEAP_SIGNAL=$sig "$PROGS/deep"
    expect_status run 0
    [ -s run.err ] && { cat run.err >&2; fail "RHEAP_SIGNAL=$sig: stderr not empty"; }
    tally summary "$(recordings)" >summary.txt
    grep -q '^config .* signal=12$' summary.txt || fail "RHEAP_SIGNAL=$sig: $(grep ^config summary.txt)"
done
clean_check "$(recordings)"
