# riptally itself: it fails (status 2, one message naming the file) on a damaged recording, so
# a reader error can never pass for a clean check.
traced run "$PROGS/deep"
expect_status run 0
dir=$(recordings)
tally check "$dir" >/dev/null
file=$(find "$dir" -name 't*.rip' | head -n 1)
size=$(stat -c %s "$file")
head -c $((size - 6)) "$file" >cut && mv cut "$file"
STATUS=0
"$RIPTALLY" check "$dir" >out.txt 2>err.txt || STATUS=$?
expect_eq "riptally status on a truncated file" "$STATUS" 2
grep -q "^riptally: $file: offset [0-9]*: " err.txt || fail "message: $(cat err.txt)"
NO_LZ4_CHECK=1
