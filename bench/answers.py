#!/usr/bin/env python3
"""answers.py: how fast rheap answers, against heaptrack_print, on real programs.

    bench/answers.py --rheap BUILD/cli/rheap --lib BUILD/libtrace/librheap.so [--quick] [--runs N]

1. The python3 workload of bench.py (PYTHONMALLOC=malloc, every object through malloc) is
   recorded once by rheap and once by heaptrack. Timed: `rheap convert` of the recording,
   `rheap report` on the result, and `heaptrack_print` on heaptrack's file (which prints its
   leaks, peak consumers, temporaries and top sites). Then the same run under `rheap run`:
   the time from the program's end to the printed summary, and to `rheap run`'s exit.
2. A process tree, four such python3 runs, the sqlite3 and the perl workloads under one
   `rheap run`, makes a large database; every canned query and `rheap report` is timed on it.

Medians of --runs runs; the converter's peak memory from GNU time; database bytes per
allocation. A benchmark, not a test: it prints a Markdown table and asserts nothing.
"""
import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the workloads)


def log(msg):
    print(f"answers: {msg}", file=sys.stderr, flush=True)


def run(argv, env=None, stdin=None, cwd=None, out=subprocess.DEVNULL):
    """Runs argv; returns (seconds, peak RSS in KiB)."""
    e = dict(os.environ)
    e.update(env or {})
    with open(stdin or os.devnull) as fin, tempfile.NamedTemporaryFile() as tf:
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name] + argv, env=e, stdin=fin,
                           stdout=out, stderr=subprocess.PIPE, cwd=cwd)
        t = time.monotonic() - t0
        if p.returncode not in (0, 3):
            sys.exit(f"answers: {' '.join(argv)} exited {p.returncode}:\n{p.stderr.decode()[-2000:]}")
        rss = int(open(tf.name).read().split()[-1] or 0)
    return t, rss


def run_to_summary(rheap, db, argv, env):
    """`rheap run` of argv through a shell that writes a mark to stderr when argv has ended;
    returns (seconds from the mark to the first line of rheap run's summary, seconds from the
    mark to rheap run's exit, seconds from the start of rheap run to the mark). The mark's line
    and the summary's arrive on one pipe, each read the moment it is written."""
    mark = "answers: program ended"
    script = " ".join(argv) + f" >/dev/null; echo '{mark}' >&2"
    t_start = time.monotonic()
    p = subprocess.Popen([rheap, "run", "-f", "-o", db, "--", "sh", "-c", script],
                         env=dict(os.environ, **env), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, bufsize=1)
    t_end = t_summary = None
    for line in p.stderr:
        now = time.monotonic()
        if line.startswith(mark):
            t_end = now
        elif t_end is not None and t_summary is None and line.startswith("rheap: ") \
                and " allocations, " in line:
            t_summary = now
    p.wait()
    t_exit = time.monotonic()
    if p.returncode != 0 or t_end is None or t_summary is None:
        sys.exit(f"answers: rheap run of {script} exited {p.returncode} without its summary")
    return t_summary - t_end, t_exit - t_end, t_end - t_start


def median_of(n, fn):
    ts, rss = [], []
    for _ in range(n):
        t, r = fn()
        ts.append(t)
        rss.append(r)
    return statistics.median(ts), max(rss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rheap", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="keep the scratch directory here")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rheap = os.path.abspath(args.rheap)
    lib = os.path.abspath(args.lib)
    py_rounds = 10 if args.quick else 35
    pywork = os.path.join(root, "bench", "workloads", "pywork.py")
    pyenv = {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"}
    tmp = args.keep or tempfile.mkdtemp(prefix="rheap-answers.")
    os.makedirs(tmp, exist_ok=True)
    rows = []

    # 1. One python3 run: rheap convert + report against heaptrack_print.
    log("recording python3 with rheap")
    rec = os.path.join(tmp, "py-rec")
    shutil.rmtree(rec, ignore_errors=True)
    os.makedirs(rec)
    # env, not our environment, preloads the library: GNU time itself is not recorded.
    run(["env", f"RHEAP_DIR={rec}", f"LD_PRELOAD={lib}", "/usr/bin/python3", pywork, str(py_rounds)],
        env=pyenv)
    rip = [os.path.join(rec, d) for d in os.listdir(rec)][0]
    pydb = os.path.join(tmp, "py.db")
    conv_t, conv_rss = median_of(args.runs, lambda: run([rheap, "convert", "-f", "-q", rip, "-o", pydb]))
    con = sqlite3.connect(pydb)
    nalloc, = con.execute("SELECT count(*) FROM allocations").fetchone()
    nevents, = con.execute("SELECT value FROM meta WHERE key = 'events'").fetchone()
    con.close()
    rep_t, _ = median_of(args.runs, lambda: run([rheap, "report", pydb]))
    rows.append(("python3: `rheap convert`", conv_t, f"{nevents / conv_t / 1e6:.2f} M events/s, "
                 f"{conv_rss / 1024:.0f} MiB peak RSS"))
    rows.append(("python3: `rheap report`", rep_t, ""))
    rows.append(("python3: convert + report", conv_t + rep_t, ""))
    rows.append(("python3: database", None,
                 f"{os.path.getsize(pydb) / nalloc:.1f} bytes per allocation ({nalloc} allocations)"))
    ht = shutil.which("heaptrack")
    if ht and shutil.which("heaptrack_print"):
        log("recording python3 with heaptrack")
        hdir = os.path.join(tmp, "ht")
        shutil.rmtree(hdir, ignore_errors=True)
        os.makedirs(hdir)
        run([ht, "-o", os.path.join(hdir, "py"), "/usr/bin/python3", pywork, str(py_rounds)],
            env=pyenv, cwd=hdir)
        hfile = [os.path.join(hdir, f) for f in os.listdir(hdir) if f.startswith("py")][0]
        hp_t, _ = median_of(args.runs, lambda: run(["heaptrack_print", hfile]))
        rows.append(("python3: `heaptrack_print` (yardstick)", hp_t, ""))
    log("python3 under rheap run: from the program's end to the summary")
    ends = [run_to_summary(rheap, os.path.join(tmp, "run.db"),
                           ["/usr/bin/python3", pywork, str(py_rounds)], pyenv)
            for _ in range(args.runs)]
    rows.append(("python3: `rheap run`, program's end to the printed summary",
                 statistics.median(e[0] for e in ends), ""))
    rows.append(("python3: `rheap run`, program's end to its exit (database written)",
                 statistics.median(e[1] for e in ends), ""))
    # rheap run converts while the program runs, beside it: what that costs the program.
    alone = [run(["env", f"RHEAP_DIR={rec}", f"LD_PRELOAD={lib}", "sh", "-c",
                  f"/usr/bin/python3 {pywork} {py_rounds} >/dev/null"], env=pyenv)[0]
             for _ in range(args.runs)]
    rows.append(("python3: recorded (LD_PRELOAD, nothing converting beside it), start to end",
                 statistics.median(alone), ""))
    rows.append(("python3: `rheap run`, start to the program's end", statistics.median(e[2] for e in ends),
                 "the conversion runs beside the program"))

    # 2. A process tree under one rheap run, then every query on the big database.
    log("recording the process tree with rheap run")
    sql_path = os.path.join(tmp, "workload.sql")
    with open(sql_path, "w") as f:
        f.write(bench.sqlite_script(50000 if args.quick else 200000))
    perl_keys = 40000 if args.quick else 150000
    script = os.path.join(tmp, "tree.sh")
    with open(script, "w") as f:
        for _ in range(4):
            f.write(f"/usr/bin/python3 {pywork} {py_rounds} >/dev/null\n")
        f.write(f"sqlite3 < {sql_path} >/dev/null\n")
        f.write(f"perl -e '{bench.PERL_SCRIPT}' {perl_keys} >/dev/null\n")
    bigdb = os.path.join(tmp, "big.db")
    t0 = time.monotonic()
    subprocess.run([rheap, "run", "-f", "-o", bigdb, "--", "sh", script], env=dict(os.environ, **pyenv),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log(f"rheap run took {time.monotonic() - t0:.1f} s")
    con = sqlite3.connect(bigdb)
    big_alloc, = con.execute("SELECT count(*) FROM allocations").fetchone()
    con.close()
    rows.append(("tree: database", None, f"{big_alloc} allocations, "
                 f"{os.path.getsize(bigdb) / big_alloc:.1f} bytes per allocation"))
    names = sorted(f[:-4] for f in os.listdir(os.path.join(root, "queries")) if f.endswith(".sql"))
    for q in names:
        t, _ = median_of(args.runs, lambda: run([rheap, "query", q, bigdb]))
        rows.append((f"tree: `rheap query {q}`", t, ""))
    t, _ = median_of(args.runs, lambda: run([rheap, "report", bigdb]))
    rows.append(("tree: `rheap report`", t, ""))

    print("| what | median s | notes |")
    print("|---|---:|---|")
    for name, t, note in rows:
        print(f"| {name} | {'' if t is None else f'{t:.2f}'} | {note} |")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
