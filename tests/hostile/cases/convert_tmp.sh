# rheap convert into a shared sticky directory where another user planted the name its
# temporary database had before (OUT.tmp-<pid>, predictable): the planted file is left alone
# (neither followed, removed nor written), the database is the converter's own, and no
# temporary file is left.
[ "$(id -u)" = 0 ] || skip "needs root, to plant files as another user (nobody)"
command -v setpriv >/dev/null || skip "no setpriv"
traced run "$PROGS/signals" show
expect_status run 0
d=$(recordings)
chmod o+x "$WORK"
mkdir shared
chmod 1777 shared
# bash execs rheap, so its $$ is the converter's pid; nobody plants the name first.
STATUS=0
bash -c 'setpriv --reuid=65534 --regid=65534 --clear-groups \
             sh -c "echo planted >shared/out.db.tmp-$$ && chmod 666 shared/out.db.tmp-$$" &&
         echo $$ >pid && exec "$@"' sh "$RHEAP" convert "$d" -o shared/out.db \
    >convert.out 2>&1 || STATUS=$?
expect_status convert 0
pid=$(cat pid)
[ -f shared/out.db ] && [ ! -L shared/out.db ] || fail "shared/out.db is not a regular file"
expect_eq "owner of the database" "$(stat -c %u shared/out.db)" 0
expect_eq "the planted file" "$(cat "shared/out.db.tmp-$pid")" "planted"
expect_eq "owner of the planted file" "$(stat -c %u "shared/out.db.tmp-$pid")" 65534
expect_eq "files in the shared directory" "$(ls shared | sort | tr '\n' ' ')" \
    "out.db out.db.tmp-$pid "
expect_eq "processes in the database" "$(sql shared/out.db 'SELECT count(*) FROM processes')" 1
