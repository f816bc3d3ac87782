# Symbolic links planted by another user (nobody) for root to convert: a recording directory
# whose files link to root's 0600 recording, a thread file linked to /etc/shadow, a link to
# root's recording directory. None is followed: each is refused (exit 2) with a line naming the
# link, nothing is written, and no byte of the target is quoted. A link of root's own to its
# recording is followed.
[ "$(id -u)" = 0 ] || skip "needs root, to plant files as another user (nobody)"
command -v setpriv >/dev/null || skip "no setpriv"
NO_LZ4_CHECK=1
traced run "$PROGS/signals" show
expect_status run 0
real=$(recordings)
chmod o+x "$WORK"
mkdir shared
chmod 1777 shared
as_nobody() {
    setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
# refused WHAT DIR LINE: rheap convert DIR exits 2, with LINE, writes nothing, quotes nothing.
refused() {
    STATUS=0
    "$RHEAP" convert "$2" -o out.db >convert.out 2>&1 || STATUS=$?
    expect_status convert 2
    grep -qF -- "$3" convert.out || { cat convert.out >&2; fail "$1: no line '$3'"; }
    [ ! -e out.db ] || fail "$1: a database was written"
    ! grep -q 'root:\|72 6f 6f 74' convert.out || { cat convert.out >&2; fail "$1: the target is quoted"; }
}

as_nobody mkdir shared/rip-4242
for f in "$real"/*.rip; do
    as_nobody ln -s "$f" "shared/rip-4242/$(basename "$f")"
done
refused "links to root's recording" shared/rip-4242 \
    "shared/rip-4242: process.rip is a symbolic link, expected a regular file (links are not followed)"

as_nobody mkdir shared/rip-4343
cp "$real/process.rip" shared/rip-4343/process.rip
chown 65534:65534 shared/rip-4343/process.rip
as_nobody ln -s /etc/shadow shared/rip-4343/t1.rip
refused "a thread file linked to /etc/shadow" shared/rip-4343 \
    "shared/rip-4343/t1.rip: a symbolic link, expected a regular rip file (links are not followed: the tracer never makes one)"

as_nobody ln -s "$real" shared/rip-4444
refused "another user's link to root's recording" shared/rip-4444 \
    "shared/rip-4444: a symbolic link owned by another user; not followed (give the directory it points to)"

ln -s "$real" mine
STATUS=0
"$RHEAP" convert mine -o out.db >convert.out 2>&1 || STATUS=$?
expect_status convert 0
expect_eq "processes through root's own link" "$(sql out.db 'SELECT count(*) FROM processes')" 1
