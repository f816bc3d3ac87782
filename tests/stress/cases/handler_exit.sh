# exit(0) from a signal handler on a thread busy allocating (most likely inside the tracer):
# every completed call is recorded and the process file ends with `off how=exit`.
. "$CASES/handlers.inc"
handler_case exit 200
tally summary "$(recordings)" | grep -qx 'off how=exit' || fail "no off record"
