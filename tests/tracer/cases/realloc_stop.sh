# Recording stops while a realloc has freed its old block but is not recorded yet, and another
# thread has been given the old address: the recording must not show that address allocated
# twice (stopping waits for the realloc's record).
traced run RHEAP_ENABLE=1 MALLOC_ARENA_MAX=1 "$PROGS/realloc_stop"
expect_status run 0
no_rheap_messages run
grep -qx 'reused 1' run.out || skip "malloc did not hand out the old address here: $(cat run.out)"
has_line run.out "disabled 0"
tally check "$(recordings)" >check.txt
cat check.txt
[ "$(field "$(grep '^check ' check.txt)" double_live)" = 0 ] || fail "address allocated twice: $(cat check.txt)"
