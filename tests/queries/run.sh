#!/bin/sh
# run.sh: test driver for the canned queries in queries/.
#
#   run.sh record LIB RHEAP TRUTH DIR     record TRUTH with LIB preloaded, convert to DIR/out.db
#   run.sh record-exec LIB RHEAP REEXEC DIR
#                                         record REEXEC (which execs itself once) with LIB
#                                         preloaded, convert both recordings to DIR/reexec.db
#   run.sh check SQLITE3 ROOT DIR FILE    run one expected file (below) against DIR/out.db
#   run.sh lint ROOT                      every query: the shared site block is the same, and
#                                         the parameters it uses are exactly those it declares
#
# An expected file starts with header lines, then the exact rows:
#
#   # query: leaks                        runs ROOT/queries/leaks.sql, unchanged
#   # program: reexec                     against DIR/reexec.db, tags from reexec.c (default:
#                                         DIR/out.db, tags from truth.c)
#   # param: skip leak_*                  prepended as `.parameter set :skip leak_*`
#   # param-sql: a SELECT t FROM ...      the same, with the value the SQL returns
#   # awk: { print $1, $3 }               reshapes the rows before comparing (fields split on |)
#
# Before comparing, a location .../truth.c:N becomes truth.c:N, the recorded pid at the end of
# a row becomes PID, and in the expected rows each @tag becomes truth.c:N, N being the line of
# truth.c that carries the comment /* @tag */ (reexec.c instead of truth.c for `program:
# reexec`). Rows are compared exactly, in order.
set -eu

die() {
    echo "run.sh: $*" >&2
    exit 1
}

record() {
    lib=$1 rheap=$2 truth=$3 dir=$4
    # Only this fixture's files: record_exec runs at the same time in the same directory.
    rm -rf "$dir/rec" "$dir/out.db" "$dir/truth.out" "$dir/convert.err"
    mkdir -p "$dir/rec"
    RHEAP_DIR="$dir/rec" LD_PRELOAD="$lib" "$truth" >"$dir/truth.out" ||
        die "$truth failed"
    grep -q 'truth: done, 25 blocks kept' "$dir/truth.out" || die "unexpected output of $truth"
    set -- "$dir"/rec/rip-*
    [ $# -eq 1 ] || die "expected one recording in $dir/rec, found $#"
    "$rheap" convert "$1" -o "$dir/out.db" 2>"$dir/convert.err" ||
        { cat "$dir/convert.err" >&2; die "rheap convert failed"; }
}

# REEXEC runs as two images under one pid: rip-<pid>/ and rip-<pid>-2/ are both converted.
record_exec() {
    lib=$1 rheap=$2 reexec=$3 dir=$4
    rm -rf "$dir/reexec-rec" "$dir/reexec.db"
    mkdir -p "$dir/reexec-rec"
    RHEAP_DIR="$dir/reexec-rec" LD_PRELOAD="$lib" "$reexec" || die "$reexec failed"
    set -- "$dir"/reexec-rec/rip-*
    [ $# -eq 2 ] && [ -d "$1-2" ] || die "expected rip-<pid> and rip-<pid>-2 in $dir/reexec-rec, found: $*"
    "$rheap" convert "$@" -o "$dir/reexec.db" 2>"$dir/reexec-convert.err" ||
        { cat "$dir/reexec-convert.err" >&2; die "rheap convert failed"; }
}

check() {
    sqlite=$1 root=$2 dir=$3 file=$4
    program=$(sed -n 's/^# program: *//p' "$file")
    case ${program:-truth} in
    truth) db=$dir/out.db fixture=queries.record ;;
    reexec) db=$dir/reexec.db fixture=queries.record_exec ;;
    *) die "$file: unknown program '$program'" ;;
    esac
    [ -f "$db" ] || die "$db missing: the $fixture test makes it"
    name=$(basename "$file" .txt)
    work=$dir/$name
    rm -rf "$work"
    mkdir -p "$work"
    query=$(sed -n 's/^# query: *//p' "$file")
    [ -n "$query" ] && [ -f "$root/queries/$query.sql" ] || die "$file: no such query '$query'"
    prog=$(sed -n 's/^# awk: *//p' "$file")
    [ -n "$prog" ] || prog='{ print }'

    : >"$work/script.sql"
    sed -n 's/^# param: *//p' "$file" | while read -r key value; do
        printf '.parameter set :%s %s\n' "$key" "$value" >>"$work/script.sql"
    done
    sed -n 's/^# param-sql: *//p' "$file" | while read -r key sql; do
        value=$("$sqlite" -batch "$db" "$sql") || die "$file: param-sql for $key failed"
        printf '.parameter set :%s %s\n' "$key" "$value" >>"$work/script.sql"
    done
    cat "$root/queries/$query.sql" >>"$work/script.sql"

    pid=$("$sqlite" -batch "$db" 'SELECT DISTINCT pid FROM processes')
    "$sqlite" -batch -bail -separator '|' "$db" <"$work/script.sql" >"$work/raw.txt" 2>"$work/err.txt" ||
        { cat "$work/err.txt" >&2; die "$query.sql failed"; }
    [ -s "$work/err.txt" ] && { cat "$work/err.txt" >&2; die "$query.sql wrote to stderr"; }
    src=${program:-truth}.c
    sed -e "s#[^|]*/$src:#$src:#g" -e "s/|$pid\$/|PID/" "$work/raw.txt" |
        awk -F'|' -v OFS='|' "$prog" >"$work/got.txt"

    tags=$root/tests/queries/$src
    grep -n '/\* @[a-z_0-9]* \*/' "$tags" |
        sed "s#^\\([0-9]*\\):.*/\\* @\\([a-z_0-9]*\\) \\*/.*#s/@\\2@/$src:\\1/g#" >"$work/tags.sed"
    grep -v '^#' "$file" | sed -f "$work/tags.sed" >"$work/want.txt"

    if ! diff -u "$work/want.txt" "$work/got.txt"; then
        echo "run.sh: $name: rows differ (- expected, + got); raw output in $work/raw.txt" >&2
        exit 1
    fi
    echo "$name: $(wc -l <"$work/got.txt") rows as expected"
}

# The lines of the shared block of a query file: the "site" CTE.
site_block() {
    awk '/^WITH site/ { on = 1 } on { print } on && /^    JOIN frame_sites AS s ON/ { exit }' "$1"
}

lint() {
    root=$1
    ref=
    status=0
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/rheap-lint.XXXXXX")
    for f in "$root"/queries/*.sql; do
        q=$(basename "$f")
        if grep -q '^WITH site' "$f"; then
            site_block "$f" >"$tmp/$q"
            if [ -z "$ref" ]; then
                ref=$q
            elif ! cmp -s "$tmp/$ref" "$tmp/$q"; then
                echo "$q: the site block differs from $ref:" >&2
                diff "$tmp/$ref" "$tmp/$q" >&2 || true
                status=1
            fi
        fi
        # A parameter is a colon and a name, not preceded by a name character or a colon (std::).
        used=$(grep -v '^ *--' "$f" | grep -o '[^:[:alnum:]_]:[a-z_][a-z_0-9]*' | cut -c3- | sort -u)
        declared=$(sed -n 's/^-- param: \([a-z_][a-z_0-9]*\) = .*/\1/p' "$f" | sort -u)
        if [ "$used" != "$declared" ]; then
            echo "$q: parameters used ($(echo $used)) differ from those declared ($(echo $declared))" >&2
            status=1
        fi
        grep -q '^-- Columns: ' "$f" || { echo "$q: no Columns line in the header" >&2; status=1; }
    done
    rm -rf "$tmp"
    [ -n "$ref" ] || { echo "no query has the shared block" >&2; status=1; }
    [ $status -eq 0 ] && echo "lint: $(ls "$root"/queries/*.sql | wc -l) queries consistent"
    return $status
}

[ $# -ge 1 ] || die "usage: run.sh record|record-exec|check|lint ..."
mode=$1
shift
case $mode in
record) [ $# -eq 4 ] || die "usage: run.sh record LIB RHEAP TRUTH DIR"; record "$@" ;;
record-exec) [ $# -eq 4 ] || die "usage: run.sh record-exec LIB RHEAP REEXEC DIR"; record_exec "$@" ;;
check) [ $# -eq 4 ] || die "usage: run.sh check SQLITE3 ROOT DIR FILE"; check "$@" ;;
lint) [ $# -eq 1 ] || die "usage: run.sh lint ROOT"; lint "$@" ;;
*) die "unknown mode $mode" ;;
esac
