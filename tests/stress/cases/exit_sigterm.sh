# A service that made its allocations and then sits idle, stopped by kill -TERM (default action):
# every event is in the recording, though no buffer ever filled; no `off` record.
. "$CASES/exits.inc"
IDLE_SIGNAL=TERM exit_case idle 143 died
