# A thread on a 16 KiB stack allocates, also from a signal handler: no crash, every allocation
# recorded. Also with the deepest backtraces (RHEAP_DEPTH=1024) and with every walk checked
# against libunwind (RHEAP_CHECK_UNWIND=1), whose buffers must not live on that stack either.
for settings in "X=1" "RHEAP_DEPTH=1024" "RHEAP_DEPTH=1024 RHEAP_CHECK_UNWIND=1"; do
    rm -rf "${REC:?}"/*
    # shellcheck disable=SC2086
    traced run $settings "$PROGS/small_stack"
    expect_status run 0
    has_line run.out "done"
    grep -q 'mismatches' run.err && ! grep -q ' 0 mismatches' run.err && fail "$settings: $(cat run.err)"
    dir=$(recordings)
    tally list "$dir" >list.txt
    expect_eq "$settings: malloc 3001" "$(grep -c '^alloc call=malloc size=3001 in=exe$' list.txt)" 1
    expect_eq "$settings: malloc 3002" "$(grep -c '^alloc call=malloc size=3002 ' list.txt)" 1
    expect_eq "$settings: calloc 3003" "$(grep -c '^alloc call=calloc size=3003 in=exe$' list.txt)" 1
    for size in 3001 3002 3003; do
        expect_eq "$settings: frees of $size" "$(grep -c "^free of=[a-z]*:$size$" list.txt)" 1
    done
    clean_check "$dir"
done
