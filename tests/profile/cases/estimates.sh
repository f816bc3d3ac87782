# The same program recorded in trace mode and in profile mode (one sample per 8 KiB on average,
# a fixed seed). The trace holds exactly what sites.c says it did. The profile holds a few
# percent of the allocations, its exact totals equal the program's, and every site's estimated
# blocks and bytes (allocated and never freed) are within 10% of the truth. Why 10%: each
# site gets 1500 samples or more here, so one standard error is at most 2.6% of its total;
# 10% is about four of them (and the seed is fixed, so the run is repeatable).
record trace 8192 trace.db
cp sites.out trace-sites.out
record profile 8192 profile.db
[ "$(grep -v '^recording ' trace-sites.out)" = "$(grep -v '^recording ' sites.out)" ] || fail "the program did not make the same calls twice"

expect_eq "trace mode" "$(q trace.db "SELECT mode || ' ' || coalesce(sample_interval, '-') FROM processes")" "trace -"
expect_eq "profile mode" "$(q profile.db "SELECT mode || ' ' || sample_interval FROM processes")" "profile 8192"

total=$(grep '^total ' sites.out)
for db in trace.db profile.db; do
    expect_eq "$db: exact allocations" "$(q $db "SELECT allocs FROM recording_stats")" "$(field "$total" calls)"
    expect_eq "$db: exact bytes" "$(q $db "SELECT alloc_bytes FROM recording_stats")" "$(field "$total" bytes)"
    expect_eq "$db: thread totals" "$(q $db "SELECT sum(allocs) || ' ' || sum(alloc_bytes) FROM thread_stats")" \
        "$(field "$total" calls) $(field "$total" bytes)"
done
expect_eq "trace rows" "$(q trace.db "SELECT count(*) FROM allocations")" "$(field "$total" calls)"
rows=$(q profile.db "SELECT count(*) FROM allocations")
[ "$rows" -gt 5000 ] && [ "$rows" -lt $(($(field "$total" calls) / 20)) ] ||
    fail "profile rows: $rows of $(field "$total" calls) allocations, expected a sample of a few percent"
expect_eq "profile: every sampled row has a backtrace" "$(q profile.db "SELECT count(*) FROM allocations WHERE bt IS NULL")" 0

for site in $SITE_NAMES; do
    expect_eq "trace $site blocks" "$(site_sql trace.db $site blocks)" "$(truth calls $site)"
    expect_eq "trace $site bytes" "$(site_sql trace.db $site bytes)" "$(truth bytes $site)"
    expect_eq "trace $site leaked blocks" "$(site_sql trace.db $site leaked_blocks)" "$(truth leaked_blocks $site)"
    expect_eq "trace $site leaked bytes" "$(site_sql trace.db $site leaked_bytes)" "$(truth leaked_bytes $site)"
    within "profile $site blocks" "$(site_sql profile.db $site blocks)" "$(truth calls $site)" 10
    within "profile $site bytes" "$(site_sql profile.db $site bytes)" "$(truth bytes $site)" 10
    if [ "$(truth leaked_blocks $site)" -gt 0 ]; then
        within "profile $site leaked blocks" "$(site_sql profile.db $site leaked_blocks)" "$(truth leaked_blocks $site)" 10
        within "profile $site leaked bytes" "$(site_sql profile.db $site leaked_bytes)" "$(truth leaked_bytes $site)" 10
    else
        expect_eq "profile $site leaked" "$(site_sql profile.db $site leaked_blocks)" 0
    fi
done

# The summaries are the rows weighed as schema.sql tells ad-hoc SQL to: the estimate of bytes
# from the allocations table agrees with stack_stats to the byte (rounding aside).
by_rows=$(q profile.db "SELECT CAST(round(sum(a.size / (1.0 - exp(-a.size * 1.0 / p.sample_interval)))) AS INTEGER)
                        FROM allocations AS a JOIN processes AS p USING (pid, recording)")
within "weighed rows against stack_stats" "$by_rows" "$(q profile.db "SELECT sum(bytes) FROM stack_stats")" 0.001
