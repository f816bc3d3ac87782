# A program that closes every descriptor and opens its own file: the recorder never writes into
# the program's file (it may stop recording, saying so on stderr).
traced run "$PROGS/close_fds"
expect_status run 0
has_line run.out "data intact"
[ "$(grep -c '^rheap:' run.err)" -le 1 ] || { cat run.err >&2; fail "more than one rheap message"; }
