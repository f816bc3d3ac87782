# The quick-start example: same output traced and untraced, and exactly its two leaks (100 x 48
# and 10 x 4096 bytes, allocated by the program itself) are live at the end.
plain plain "$EXAMPLES/leaky"
expect_status plain 0
traced run "$EXAMPLES/leaky"
expect_status run 0
no_rheap_messages run
cmp -s plain.out run.out || fail "output differs when traced"
expect_recordings 1
clean_check "$(recordings)"
tally --live check "$(recordings)" | grep '^live .* in=exe ' >got.txt
printf '%s\n' "live call=malloc size=48 in=exe count=100" \
              "live call=malloc size=4096 in=exe count=10" >want.txt
same_lines "blocks the program leaked" want.txt got.txt
