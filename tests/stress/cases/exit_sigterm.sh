# A service that made its allocations and then sits idle, stopped by kill -TERM (default action):
# every event is in the recording, though no buffer ever filled; no `off` record. While it is
# still running, its live recording already holds every event, exactly (the staging areas are
# visible to a reader at once).
. "$CASES/exits.inc"
while_idle() {
    local dir
    dir=$(recordings)
    tally --between begin end summary "$dir" | grep '^thread ' | sort >live.txt || true
    grep '^expect thread ' "$1.out" | sed 's/^expect //' | sort >live-want.txt
    same_sorted "per-thread counts of the live recording" live-want.txt live.txt
    echo "figure: the live recording holds all $(wc -l <live.txt) workers' events"
}
IDLE_SIGNAL=TERM exit_case idle 143 died
