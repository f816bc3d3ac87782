# The unwinder's self-check on real programs nobody here wrote: every backtrace taken by the
# cached rules agrees with libunwind's (RHEAP_CHECK_UNWIND=1), in every process they start.
# check_program NAME [VAR=VALUE...] COMMAND ARGS...
check_program() {
    local name=$1
    shift
    traced run RHEAP_CHECK_UNWIND=1 "$@"
    expect_status run 0
    grep -q '^rheap: unwind check: ' run.err || { cat run.err >&2; fail "$name: no unwind check line"; }
    if grep '^rheap: unwind check: ' run.err | grep -v ' 0 mismatches$' >&2; then
        fail "$name: backtraces differ from libunwind's"
    fi
    grep '^rheap: unwind check: ' run.err | sed "s|^|$name: |"
}
ran=0
if [ -x "${SQLITE3:-}" ]; then
    check_program sqlite3 "$SQLITE3" :memory: "create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000) insert into t select x, hex(randomblob(20)) from c; create index i on t(b); select count(*), max(length(b)) from t;"
    ran=1
fi
if [ -x "${PYTHON3:-}" ]; then
    check_program python3 PYTHONMALLOC=malloc "$PYTHON3" -c 'import json; d = {str(i): [i] * (i % 7) for i in range(20000)}; print(len(json.dumps(d)))'
    ran=1
fi
if [ -x "${PERL:-}" ]; then
    check_program perl "$PERL" -e 'my %h; $h{$_} = [$_] for 1 .. 20000; print scalar(keys %h), "\n"'
    ran=1
fi
if [ -x "${CC:-}" ]; then
    printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' > hello.c
    check_program gcc "$CC" -O2 -g hello.c -o hello
    ran=1
fi
[ "$ran" = 1 ] || skip "none of sqlite3, python3, perl, gcc found"
