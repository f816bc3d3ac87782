# exit(0) called by a worker while the others are blocked and a fourth thread allocates: the
# blocked workers' buffered events are written (exact counts), off how=exit.
. "$CASES/exits.inc"
exit_case exit 0 exact
