# abort() from main while the workers are alive, their events unwritten: every event is in the
# recording (the staging areas outlive the process), with no `off` record; it converts.
. "$CASES/exits.inc"
exit_case abort 134 died
