# The raw exit_group system call (how Go programs end): no atexit handler or destructor runs,
# yet every event of every thread is in the recording; no `off` record.
. "$CASES/exits.inc"
exit_case exit_group 0 died
