# Children made without fork handlers (the fork system call, clone() without CLONE_VM) hold a
# copy of the parent's recorders. Whether the child allocates a few blocks (noticed at _exit) or
# enough to fill its buffer (noticed at the write), it is not recorded and says so in one line,
# and the parent's recording converts and holds exactly the parent's allocations.
for how in sysfork clone; do
    for n in 3 20000; do
        rm -rf "${REC:?}"/*
        traced run "$PROGS/raw_fork" "$how" "$n"
        expect_status run 0
        line=$(grep '^parent pid=' run.out) || fail "$how $n: no parent line"
        ppid=$(field "$line" pid)
        cpid=$(field "$line" child)
        one_rheap_message run
        has_line run.err "rheap: process $cpid was made without fork handlers (a raw clone or fork system call): it is not recorded"
        expect_recordings 1
        parent=$REC/rip-$ppid
        expected run "begin expect " >want.txt
        tally --between begin end summary "$parent" | grep '^thread ' >got.txt
        same_lines "$how $n: parent before the child" want.txt got.txt
        expected run "begin2 expect " >want.txt
        tally --between begin2 end2 summary "$parent" | grep '^thread ' >got.txt
        same_lines "$how $n: parent after the child" want.txt got.txt
        clean_check "$parent"
        to_db "$parent"
        expect_eq "$how $n: parent's blocks in the database" \
            "$(sql "SELECT size, count(*), count(dealloc_after), count(DISTINCT pid) FROM allocations
                    WHERE size IN (77, 1111, 2222) GROUP BY size ORDER BY size" | tr '\n' ' ')" \
            "1111|100|100|1 2222|50|50|1 "
    done
done
