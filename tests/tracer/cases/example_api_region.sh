# The API example: only the region between rheap_enable and rheap_disable is recorded.
STATUS=0
"$EXAMPLES/api_region" "$REC" >run.out 2>run.err || STATUS=$?
expect_status run 0
expect_recordings 1
dir=$(recordings)
has_line run.out "recorded into $dir"
tally summary "$dir" >summary.txt
has_line summary.txt "total allocs=200 frees=150 bytes=12800 lost=0"
grep -q '^thread .* calls=malloc:200$' summary.txt || fail "calls: $(grep '^thread ' summary.txt)"
grep -q '^thread-info .* marks=2 ' summary.txt || fail "markers: $(grep ^thread-info summary.txt)"
has_line summary.txt "on how=api"
has_line summary.txt "off how=api"
clean_check "$dir"
# Started by rheap_enable, the recording samples resident memory from its first event on.
n=$("$RHEAP" dump "$dir"/t*.rip | grep -c '^rss t=' || true)
[ "$n" -ge 1 ] || fail "no sample of resident memory in a recording started by rheap_enable"
check=$(tally check "$dir")
expect_eq "live blocks at the end of the region" "$(field "$check" live)" 50
expect_eq "live bytes at the end of the region" "$(field "$check" live_bytes)" 3200
# An output_dir that does not exist yet is made with its missing parents, as mkdir -p does.
STATUS=0
"$EXAMPLES/api_region" "$WORK/new/deeper" >new.out 2>new.err || STATUS=$?
expect_status new 0
[ -d "$WORK/new/deeper" ] || fail "rheap_enable did not make $WORK/new/deeper"
has_line new.out "recorded into $(find "$WORK/new/deeper" -mindepth 1 -maxdepth 1 -name 'rip-*')"
