#!/bin/sh
# raw-paths.sh: the answers that read every row of `allocations` instead of the summary tables,
# timed on two databases of the same recording made by two builds (before and after a change
# of how the rows are stored), alternating run by run. Prints one Markdown row per answer: the
# median wall time of each, in seconds.
#
#   bench/raw-paths.sh BEFORE_RHEAP BEFORE_DB AFTER_RHEAP AFTER_DB [RUNS]
#
# The databases should be large (bench/answers.py's process tree: `rheap convert` of its
# recordings). Each rheap reads its own database; the sqlite3 shell runs the ad-hoc SQL.
set -eu
if [ $# -lt 4 ]; then
    echo "usage: $0 BEFORE_RHEAP BEFORE_DB AFTER_RHEAP AFTER_DB [RUNS]" >&2
    exit 1
fi
before_rheap=$1 before_db=$2 after_rheap=$3 after_db=$4 runs=${5:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# seconds CMD...: the wall time of one run, output thrown away.
seconds() {
    /usr/bin/time -f %e -o "$scratch/t" "$@" >/dev/null 2>&1 || {
        echo "failed: $*" >&2
        exit 1
    }
    cat "$scratch/t"
}

median() {
    sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# row NAME ARGS...: ARGS with RHEAP and DB in place of the build's rheap and its database.
row() {
    name=$1
    shift
    : >"$scratch/b"
    : >"$scratch/a"
    i=0
    while [ "$i" -lt "$runs" ]; do
        for side in b a; do
            if [ "$side" = b ]; then r=$before_rheap d=$before_db; else r=$after_rheap d=$after_db; fi
            set -- "$@"
            cmd=""
            for arg in "$@"; do
                case $arg in
                RHEAP) arg=$r ;;
                DB) arg=$d ;;
                esac
                cmd="$cmd '$arg'"
            done
            eval "seconds $cmd" >>"$scratch/$side"
        done
        i=$((i + 1))
    done
    printf '| %s | %s | %s |\n' "$name" "$(median <"$scratch/b")" "$(median <"$scratch/a")"
}

echo "| answer | before s | after s |"
echo "|---|---:|---:|"
row "rheap query leaks (summaries, for scale)" RHEAP query leaks DB
row "rheap query temporary -p max_ns=1000" RHEAP query temporary DB -p max_ns=1000
row "rheap query diff -p a=100000000 -p b=400000000" RHEAP query diff DB -p a=100000000 -p b=400000000
row "rheap query top-sites -p skip='Py*'" RHEAP query top-sites DB -p 'skip=Py*'
row "rheap export collapsed --weight temporary" RHEAP export collapsed DB --weight temporary
row "rheap export collapsed --weight peak" RHEAP export collapsed DB --weight peak
row "rheap export pprof" RHEAP export pprof DB -o "$scratch/p.pb.gz"
row "rheap report" RHEAP report DB
row "rheap report --html" RHEAP report --html -o "$scratch/r.html" DB
row "sqlite3: blocks and bytes per process" sqlite3 DB \
    "SELECT pid, recording, count(*), sum(size) FROM allocations GROUP BY pid, recording"
row "sqlite3: blocks freed within 1 us" sqlite3 DB \
    "SELECT count(*) FROM allocations WHERE dealloc_after - alloc_after < 1000"
row "sqlite3: frees by another thread" sqlite3 DB \
    "SELECT count(*) FROM allocations WHERE dealloc_thread <> alloc_thread"
row "sqlite3: reallocs view" sqlite3 DB "SELECT count(*), sum(new_size - old_size) FROM reallocs"
row "sqlite3: one block by id" sqlite3 DB "SELECT * FROM allocations WHERE id = 12345678"
row "sqlite3: every column of every row" sqlite3 DB \
    "SELECT total(id), total(alloc_after), total(dealloc_after), total(bt), total(size), total(addr), total(alloc_thread), total(dealloc_thread), total(pid), total(call), total(align), total(realloc_of), total(recording) FROM allocations"
