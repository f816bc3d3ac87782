# `rheap run` follows programs started with an environment of their own (execle, execve,
# fexecve, execveat, posix_spawn with an empty list, posix_spawnp): each child's 9 blocks are in
# the database under its pid. A child given an LD_PRELOAD without librheap is left untraced on
# purpose, and one stderr line names it.
STATUS=0
"$RHEAP" run -o db.sqlite -- "$PROGS/env_exec" "$PROGS/exec_child" >run.out 2>run.err || STATUS=$?
expect_status run 0
grep -c '^exec_child ' run.out | grep -qx 7 || fail "expected 7 children: $(cat run.out)"
[ "$(grep -c '^rheap: .*: started with an LD_PRELOAD without librheap: not recorded$' run.err)" -eq 1 ] ||
    fail "expected one line about the child left out: $(cat run.err)"
grep "^rheap: $PROGS/exec_child: started with an LD_PRELOAD" run.err >/dev/null ||
    fail "the line does not name the program: $(cat run.err)"
NO_RIP_EXPECTED=1
for way in execle execve fexecve execveat posix_spawn posix_spawnp optout; do
    pid=$(field "$(grep "^way=$way " run.out)" pid)
    [ -n "$pid" ] || fail "no pid for $way"
    want="9|9|8991"
    [ "$way" = optout ] && want="0|0|"
    expect_eq "$way: blocks of 999 bytes in pid $pid" \
        "$(sql "SELECT count(*), count(dealloc_after), sum(size) FROM allocations
                WHERE pid = $pid AND size = 999")" "$want"
done
