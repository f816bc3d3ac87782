# N threads x M allocations, with frees of blocks another thread allocated: each thread file
# holds exactly its own thread's calls, and the last thread name is the one set at the end.
traced run "$PROGS/threads" 4 2000
expect_status run 0
no_rheap_messages run
expect_recordings 1
dir=$(recordings)

tally --between begin end summary "$dir" >summary.txt
expected run "expect thread " | sed 's/^/thread /' >want.txt
grep '^thread ' summary.txt >got.txt
same_sorted "per-thread counts between the markers" want.txt got.txt

expected run "expect name " >want_names.txt
grep '^thread-info ' summary.txt | sed -E 's/^thread-info (tid=[0-9]+) .* (name=[^ ]+) .*/\1 \2/' |
    grep -v "^tid=$(basename "$dir" | cut -d- -f2) " >got_names.txt
same_sorted "thread names" want_names.txt got_names.txt

tally summary "$dir" >all.txt
has_line all.txt "on how=env"
has_line all.txt "off how=exit"
[ "$(grep -c '^thread ' all.txt)" -eq 5 ] || fail "expected 5 thread files, got: $(grep '^thread ' all.txt)"
clean_check "$dir"
