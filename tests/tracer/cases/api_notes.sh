# The recorder names its directory when it is not the one a user would predict, and when a
# program's rheap_enable cannot apply its settings: a planted rip-<pid> makes it write
# rip-<pid>-2, with one stderr line naming both; with RHEAP_ENABLE=1, rheap_enable with an output
# directory fails with EALREADY, with one stderr line naming the directory in use.
STATUS=0
"$PROGS/api_notes" planted >run.out 2>run.err || STATUS=$?
expect_status run 0
pid=$(field "$(cat run.out)" pid)
has_line run.out "pid=$pid dir=rip-$pid-2"
one_rheap_message run
has_line run.err "rheap: recording into $WORK/rip-$pid-2 ($WORK/rip-$pid was made by another)"
[ -f "$WORK/rip-$pid-2/process.rip" ] || fail "no recording in rip-$pid-2"

traced env RHEAP_ENABLE=1 "$PROGS/api_notes" env
expect_status env 0
pid=$(field "$(cat env.out)" pid)
has_line env.out "pid=$pid enable=-1 ealready=1 dir=$REC/rip-$pid"
one_rheap_message env
has_line env.err "rheap: rheap_enable: already recording into $REC/rip-$pid (not started by rheap_enable); this call's settings are not applied"
[ ! -e elsewhere ] || fail "a directory 'elsewhere' was made"
