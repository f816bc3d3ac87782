# A bad value in the environment gives exactly one "rheap:" line on stderr; the default is used
# and recording works.
for setting in RHEAP_DEPTH=abc RHEAP_DEPTH=0 RHEAP_DEPTH=5000 RHEAP_SAMPLE_RATE=1.5 \
               RHEAP_SAMPLE_RATE=-1 RHEAP_SAMPLE_RATE=half RHEAP_BUFFER_KB=lots \
               RHEAP_SIGNAL=NOTASIGNAL RHEAP_ENABLE=maybe RHEAP_MODE=sampled \
               RHEAP_MODE=PROFILE RHEAP_SAMPLE_INTERVAL=0 RHEAP_SAMPLE_INTERVAL=1e6 \
               RHEAP_SAMPLE_SEED=-1; do
    rm -rf "${REC:?}"/*
    traced run "$setting" "$PROGS/deep"
    expect_status run 0
    [ "$(wc -l <run.err)" -eq 1 ] && grep -q '^rheap:' run.err ||
        { cat run.err >&2; fail "$setting: expected exactly one 'rheap:' line on stderr"; }
    expect_recordings 1
    expected run "expect " >want.txt
    tally --between begin end summary "$(recordings)" >summary.txt
    grep '^thread ' summary.txt >got.txt
    same_lines "$setting: counts" want.txt got.txt
    has_line summary.txt "config depth=64 sample_ppm=1000000 buffer_kb=64 max_threads=4096 signal=0"
    clean_check "$(recordings)"
done
