# _exit(0) from main while the workers are alive with buffered events: exact counts.
. "$CASES/exits.inc"
exit_case _exit 0 exact
