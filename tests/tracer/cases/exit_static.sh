# exit() from a nested call; an atexit handler, a C++ static destructor and an ELF destructor
# free blocks after that: all those frees are recorded.
traced run "$PROGS/exit_static"
expect_status run 0
no_rheap_messages run
expect_recordings 1
dir=$(recordings)
tally list "$dir" >list.txt
for spec in 6006:6 4004:4 3003:3; do
    size=${spec%:*} count=${spec#*:}
    expect_eq "allocations of $size bytes" \
        "$(grep -c "^alloc call=malloc size=$size in=exe$" list.txt)" "$count"
    expect_eq "frees of $size-byte blocks" "$(grep -c "^free of=malloc:$size$" list.txt)" "$count"
done
tally --live check "$dir" >live.txt
if grep -E ' size=(6006|4004|3003) ' live.txt; then
    fail "blocks freed after exit() are still live in the recording"
fi
clean_check "$dir"
tally summary "$dir" >all.txt
has_line all.txt "off how=exit"
