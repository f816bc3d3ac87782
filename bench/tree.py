#!/usr/bin/env python3
"""tree.py: a build-sized process tree under `rheap run`, and how fast its answers come.

    bench/tree.py --rheap BUILD/cli/rheap [--tree build|gcc] [--runs N] [--no-heaptrack]
                  [--no-answers] [--nice N]
    bench/tree.py --rheap BUILD/cli/rheap --db TREE.db [--runs N]

The tree is made from a copy of this checkout (`git archive HEAD`) in a scratch directory:

  build  `cmake -S SRC -B OUT -G Ninja && cmake --build OUT -j2`: the whole project, some
         2,600 processes (cmake's configuration checks, ninja, gcc, cc1, as, ld, ar);
  gcc    gcc -O1 -c over every C file of the checkout, one after another: some 600 processes.

Per run, one after the other so that a noisy moment falls on all of them: the tree untraced;
the tree under `rheap run` (its wall time, and the tail: from the tree's end, a line the
shell writes to stderr, to the first line of rheap run's summary, and to rheap run's exit;
`--nice N` is passed on to it, to compare the tree's priorities);
the tree under heaptrack when installed (heaptrack preloads itself into the first process
only and removes itself from the environment of the programs it starts, so it records the
shell and none of the compilers: its time is given to show that, not as a comparison).
Then on the last run's database: every canned query (`rheap query NAME`), `rheap report`,
`rheap report --html`, `rheap export collapsed` and `rheap export pprof`, each --runs times
(not with --no-answers).

With --db, only the answers, on a database of a tree recorded before (so that one recording of
a tree serves several builds of rheap: record it once with `rheap run --keep`, convert it again
with each).

While `rheap run` runs, the CPU seconds of each of its threads (the conversion's workers and the
database writer; utime + stime of /proc/PID/task/TID/stat, read every 0.2 s) are read, at the
tree's end and at the last reading before rheap run's exit, and printed per run.

Medians of --runs runs; wall seconds, and the CPU seconds (user + system) of the answers, which
a machine shared with other work inflates less. A benchmark, not a test: it prints a Markdown
table and asserts nothing.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "tree.py: tree ended"


def log(msg):
    print(f"tree: {msg}", file=sys.stderr, flush=True)


def tree_script(kind, src, out):
    """The shell script of the tree."""
    if kind == "build":
        return (f"cmake -S '{src}' -B '{out}' -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null"
                f" && cmake --build '{out}' -j2 >/dev/null")
    incs = " ".join(f"-I'{src}/{d}'" for d in (
        "libtrace/include", "rip-format/include", "converter", "converter/include",
        "analysis/include", "collector/include", "inject/include", "cli", out))
    return (f"find '{src}' -name '*.c' | sort | while read -r f; do "
            f"gcc -O1 -w -c {incs} \"$f\" -o '{out}/obj.o' 2>/dev/null; done; true")


def timed(argv, env=None):
    """Runs argv; returns (wall s, cpu s of it and its children)."""
    before = os.times()
    t0 = time.monotonic()
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    after = os.times()
    if p.returncode not in (0, 3):
        sys.exit(f"tree: {' '.join(argv)} exited {p.returncode}:\n{p.stderr.decode()[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu


TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """{tid: (name, CPU s)} of pid's threads: utime + stime of /proc/PID/task/TID/stat."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                st = f.read()
        except OSError:
            continue
        name = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        out[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / TICK)
    return out


class CpuSampler(threading.Thread):
    """Reads the CPU of each of rheap run's threads every 0.2 s while it runs: the last
    reading of each thread, and the readings at the tree's end (mark())."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.last, self.at_end, self.stop = pid, {}, None, threading.Event()

    def run(self):
        while not self.stop.is_set():
            now = thread_cpu(self.pid)
            for tid, v in now.items():
                self.last[tid] = v
            self.stop.wait(0.2)

    def mark(self):
        self.at_end = dict(thread_cpu(self.pid))

    def table(self):
        """[(name, CPU s at the tree's end, CPU s in all)] of the threads that used 0.05 s or
        more, the main thread (which waits) left out."""
        rows = []
        for tid, (name, cpu) in sorted(self.last.items()):
            if tid == self.pid or cpu < 0.05:
                continue
            end = (self.at_end or {}).get(tid, (name, 0.0))[1]
            rows.append((name, end, cpu))
        return rows


def run_traced(rheap, db, script, recdir, nice):
    """rheap run of the tree: (tree wall s, tail to the summary s, tail to the exit s, processes,
    the conversion's CPU per thread)."""
    wrapped = f"{script}; echo '{MARK}' >&2"
    t0 = time.monotonic()
    niceness = [] if nice is None else ["--nice", str(nice)]
    p = subprocess.Popen([rheap, "run", "-f", "--dir", recdir, "-o", db] + niceness +
                         ["--", "sh", "-c", wrapped],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1)
    sampler = CpuSampler(p.pid)
    sampler.start()
    t_end = t_summary = None
    procs = None
    for line in p.stderr:
        now = time.monotonic()
        if line.startswith(MARK):
            t_end = now
            sampler.mark()
        elif t_end is not None and t_summary is None and line.startswith("rheap: ") \
                and " allocations, " in line:
            t_summary = now
            m = re.match(r"rheap: (\d+) processes", line)
            procs = int(m.group(1)) if m else None
    p.wait()
    t_exit = time.monotonic()
    sampler.stop.set()
    sampler.join()
    if p.returncode != 0 or t_end is None or t_summary is None:
        sys.exit(f"tree: rheap run exited {p.returncode} without its summary")
    return t_end - t0, t_summary - t_end, t_exit - t_end, procs, sampler.table()


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rheap", required=True)
    ap.add_argument("--tree", choices=("build", "gcc"), default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-heaptrack", action="store_true")
    ap.add_argument("--no-answers", action="store_true")
    ap.add_argument("--nice", type=int, help="rheap run's --nice (default: its own default)")
    ap.add_argument("--db", help="time the answers on this database only, no tree is run")
    a = ap.parse_args()
    rheap = os.path.abspath(a.rheap)
    scratch = tempfile.mkdtemp(prefix="rheap-tree-")
    try:
        src = os.path.join(scratch, "src")
        os.mkdir(src)
        archive = subprocess.run(["git", "-C", ROOT, "archive", "HEAD"], check=True,
                                 stdout=subprocess.PIPE).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
        out = os.path.join(scratch, "out")
        db = os.path.abspath(a.db) if a.db else os.path.join(scratch, "tree.db")
        heaptrack = None if a.no_heaptrack else shutil.which("heaptrack")
        rows = {k: [] for k in ("untraced", "traced", "tail", "exit", "heaptrack", "cpu")}
        load = []
        procs = None
        for r in range(0 if a.db else a.runs):
            for what in ("untraced", "traced", "heaptrack"):
                shutil.rmtree(out, ignore_errors=True)
                os.mkdir(out)
                script = tree_script(a.tree, src, out)
                if what == "untraced":
                    log(f"run {r + 1}: untraced")
                    rows["untraced"].append(timed(["sh", "-c", script])[0])
                elif what == "traced":
                    log(f"run {r + 1}: rheap run")
                    t, tail, ex, procs, cpu = run_traced(rheap, db, script, scratch, a.nice)
                    rows["cpu"].append(cpu)
                    load.append(os.getloadavg()[0])
                    rows["traced"].append(t)
                    rows["tail"].append(tail)
                    rows["exit"].append(ex)
                elif heaptrack:
                    log(f"run {r + 1}: heaptrack")
                    rows["heaptrack"].append(timed([heaptrack, "-o", os.path.join(scratch, "ht"),
                                                    "sh", "-c", script])[0])
                    for f in os.listdir(scratch):
                        if f.startswith("ht"):
                            os.remove(os.path.join(scratch, f))
        answers = [(f"`rheap query {q}`", [rheap, "query", q, db]) for q in sorted(
            f[:-4] for f in os.listdir(os.path.join(ROOT, "queries")) if f.endswith(".sql"))]
        answers += [("`rheap report`", [rheap, "report", db]),
                    ("`rheap report --html`", [rheap, "report", "--html", "-f", "-o",
                                               os.path.join(scratch, "t.html"), db]),
                    ("`rheap export collapsed`", [rheap, "export", "collapsed", "-f", "-o",
                                                  os.path.join(scratch, "t.txt"), db]),
                    ("`rheap export pprof`", [rheap, "export", "pprof", "-f", "-o",
                                              os.path.join(scratch, "t.pb.gz"), db])]
        timings = []
        for name, argv in [] if a.no_answers else answers:
            log(f"timing {name}")
            ts = [timed(argv) for _ in range(a.runs)]
            timings.append((name, med([t[0] for t in ts]), med([t[1] for t in ts])))
        counts = subprocess.run(
            ["sqlite3", "-readonly", db,
             "SELECT (SELECT count(*) FROM processes), (SELECT sum(allocs) FROM recording_stats),"
             " (SELECT count(*) FROM stacks), (SELECT count(*) FROM stack_stats)"],
            check=True, stdout=subprocess.PIPE, text=True).stdout.strip().split("|")
        of = f" ({procs} processes)" if procs is not None else ""
        print(f"Tree `{a.db or a.tree}`: {counts[0]} recordings{of}, {int(counts[1]):,} "
              f"allocations, {int(counts[2]):,} stacks, {int(counts[3]):,} stack_stats rows; "
              f"medians of {a.runs} runs, load {os.getloadavg()[0]:.1f} at the end.\n")
        print("| figure | wall s | CPU s |")
        print("|---|---|---|")
        for name, w, c in timings if a.db else []:
            print(f"| {name} | {w:.2f} | {c:.2f} |")
        if a.db:
            return
        print(f"| tree untraced | {med(rows['untraced']):.1f} | |")
        print(f"| tree under `rheap run` | {med(rows['traced']):.1f} | |")
        print(f"| tail: tree's end to the summary | {med(rows['tail']):.2f} | |")
        print(f"| tail: tree's end to rheap run's exit | {med(rows['exit']):.2f} | |")
        for r, cpu in enumerate(rows["cpu"]):
            for name, end, total in cpu:
                print(f"| run {r + 1}: CPU of `{name}`, at the tree's end / in all | | "
                      f"{end:.2f} / {total:.2f} |")
        if load:
            print(f"| load (1 min) after each traced run | "
                  f"{' '.join(f'{x:.1f}' for x in load)} | |")
        if heaptrack:
            print(f"| tree under heaptrack (first process only) | {med(rows['heaptrack']):.1f} | |")
        else:
            print("| heaptrack | not run | |")
        for name, w, c in timings:
            print(f"| {name} | {w:.2f} | {c:.2f} |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
