# The unwinder's cached chain (libtrace/src/unwind.c): a walk that meets the previous walk's
# frames takes the rest of them after checking their slots. On stacks that change in every way
# that must make it step again (another caller deep down at the same depth, recursion of
# varying depth, a longjmp out of a deep stack, a signal handler), every backtrace agrees with
# libunwind (RHEAP_CHECK_UNWIND=1) and holds exactly the functions the program went through;
# with frame pointers (CFAs and saved rbp read through rbp) and without.
for prog in unwind_chain unwind_chain_nofp; do
    rm -rf "${REC:?}"/*
    traced "$prog" RHEAP_CHECK_UNWIND=1 RHEAP_DEPTH=64 "$PROGS/$prog"
    expect_status "$prog" 0
    line=$(grep -E '^rheap: unwind check: [0-9]+ by rules' "$prog.err") || { cat "$prog.err" >&2; fail "no unwind check line"; }
    read -r rules fallback mismatches < <(sed -E 's/^rheap: unwind check: ([0-9]+) by rules, ([0-9]+) by libunwind, ([0-9]+) mismatches$/\1 \2 \3/' <<<"$line")
    expect_eq "$prog: mismatches" "$mismatches" 0
    expect_eq "$prog: walks given to libunwind (the handler's allocation)" "$fallback" 1
    # The program's own allocations: 6 + 9 + 4 + 3 outside the handler.
    [ "$rules" -ge 22 ] || fail "$prog: only $rules walks by the rules"
    to_db "$(recordings)"
    : >"$prog.want"
    : >"$prog.got"
    while read -r kind size frames; do
        echo "$size $frames" >>"$prog.want"
        limit=1000
        [ "$kind" = want2 ] && limit=2
        got=$(sql "SELECT group_concat(sym, ' ') FROM (SELECT b.sym FROM allocations AS a
                   JOIN backtraces AS b ON b.id = a.bt AND b.frame_no < $limit
                   WHERE a.size = $size ORDER BY a.id, b.frame_no)")
        # Up to main: what lies beyond it is the C library's start-up code.
        echo "$size ${got%% main *}$([ "$kind" = want ] && echo " main")" >>"$prog.got"
    done < <(grep -E '^want2? ' "$prog.out")
    same_lines "$prog: backtraces" "$prog.want" "$prog.got"
done
