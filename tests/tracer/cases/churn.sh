# 4 threads churn a shared pool: cross-thread frees and address reuse all the time. Exact
# per-thread counts, and every free pairs with a live allocation in time order.
traced run "$PROGS/churn"
expect_status run 0
no_rheap_messages run
dir=$(recordings)
expected run "expect thread " | sed 's/^/thread /' >want.txt
tally --between begin end summary "$dir" | grep '^thread ' >got.txt
same_sorted "per-thread counts" want.txt got.txt
clean_check "$dir"
