# A fatal SIGSEGV (a store through a null pointer, default action) while the workers are alive:
# every event is in the recording, with no `off` record; it converts with exact counts.
. "$CASES/exits.inc"
exit_case segv 139 died
