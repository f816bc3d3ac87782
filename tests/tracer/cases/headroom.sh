# A program that runs untraced with 4 KiB of stack left below its allocation call runs traced
# too, with complete backtraces: on the main thread, whose stack grew past what the recorder
# had seen (it reads the new bounds, in memory of its own), and as a thread's first call (the
# thread's registration).
for where in main thread; do
    plain plain "$PROGS/headroom" "$where" 4096
    expect_status plain 0
    rm -rf "${REC:?}"/*
    traced run "$PROGS/headroom" "$where" 4096
    expect_status run 0
    no_rheap_messages run
    to_db "$(recordings)"
    caller=main
    [ "$where" = thread ] && caller=thread_main
    sql "SELECT group_concat(sym, ' ') FROM (SELECT b.sym FROM allocations AS a
         JOIN backtraces AS b ON b.id = a.bt AND b.frame_no < 3 WHERE a.size = 3333
         ORDER BY a.id, b.frame_no) GROUP BY 1 = 1" >got.txt
    frames="allocate descend $caller"
    echo "$frames $frames $frames" >want.txt
    same_lines "$where: backtraces of the 3 allocations" want.txt got.txt
done
