#!/usr/bin/env python3
"""attach.py: what rheap attach costs the process it records.

    bench/attach.py --rheap build/cli/rheap --load build/bench/attach_load [--runs 5] [--cycles 100]

A churning service (attach_load: 2 threads, 1024 live blocks each, a malloc and a free per
step, 8 frames deep) runs untraced; the script reads its step counters from outside and
prints, as medians over --runs attaches of 3 s each:
  - the time from starting `rheap attach` to the first recorded event (the database's first
    allocation, against the clock the script read before starting the command), and to the
    commit (from rheap attach --timings);
  - the longest time any thread of the service was held: the one thread that ran dlopen and
    librheap's prepare, and every thread during the commit and the release;
  - the service's speed while attached, against its speed untraced before and after, and
    against the same service run for 3 s under `rheap run`;
then --cycles attaches of 0.1 s in a row and the speed afterwards. Figures only: nothing is
asserted (Python 3 standard library, sqlite3 module).
"""
import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

STEPS_WORDS = 64


def read_steps(path):
    with open(path, "rb") as f:
        data = f.read(8 * STEPS_WORDS)
    return sum(int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8))


def rate(path, seconds):
    a, t0 = read_steps(path), time.monotonic()
    time.sleep(seconds)
    b, t1 = read_steps(path), time.monotonic()
    return (b - a) / (t1 - t0)


def sample_during(path, proc, samples):
    while proc.poll() is None:
        samples.append((time.monotonic_ns(), read_steps(path)))
        time.sleep(0.05)


def rate_between(samples, lo, hi):
    inside = [s for s in samples if lo <= s[0] <= hi]
    if len(inside) < 2:
        return float("nan")
    (t0, a), (t1, b) = inside[0], inside[-1]
    return (b - a) / ((t1 - t0) / 1e9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rheap", required=True)
    ap.add_argument("--load", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cycles", type=int, default=100)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rheap-attach-bench-")
    counters = os.path.join(tmp, "counters")
    load = subprocess.Popen([args.load, counters, "2", "0"], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    before = rate(counters, 2.0)
    rows = []
    for run in range(args.runs):
        db = os.path.join(tmp, f"a{run}.db")
        samples = []
        started = time.monotonic_ns()
        p = subprocess.Popen([args.rheap, "attach", "--timings", "-q", "--duration", "3", "-o", db,
                              str(load.pid)], stderr=subprocess.PIPE, text=True)
        import threading
        th = threading.Thread(target=sample_during, args=(counters, p, samples))
        th.start()
        _, err = p.communicate()
        th.join()
        m = re.search(r"timings: (.*)", err)
        if p.returncode != 0 or not m:
            subprocess.run([args.load, "stop", counters])
            load.wait()
            sys.exit(f"rheap attach failed: {err}")
        t = dict(kv.split("=") for kv in m.group(1).split())
        con = sqlite3.connect(db)
        start_ns, first = con.execute(
            "SELECT p.start_ns, min(a.alloc_after) FROM processes p, allocations a").fetchone()
        con.close()
        committed, released = int(t["committed_ns"]), int(t["released_ns"])
        rows.append({
            "first_event_ms": (start_ns + first - started) / 1e6,
            "commit_ms": (committed - started) / 1e6,
            "borrowed_ms": int(t["borrowed_us"]) / 1e3,
            "commit_pause_ms": int(t["commit_pause_us"]) / 1e3,
            "release_pause_ms": int(t["release_pause_us"]) / 1e3,
            "attached": rate_between(samples, committed + 500_000_000, released - 500_000_000),
        })
        time.sleep(0.5)
    after = rate(counters, 2.0)
    cyc_ok = 0
    for i in range(args.cycles):
        db = os.path.join(tmp, "c.db")
        r = subprocess.run([args.rheap, "attach", "-q", "-f", "--duration", "0.1", "-o", db,
                            str(load.pid)], stderr=subprocess.PIPE, text=True)
        cyc_ok += r.returncode == 0
    after_cycles = rate(counters, 2.0)
    subprocess.run([args.load, "stop", counters])
    load.wait()
    out = subprocess.run([args.rheap, "run", "-q", "-o", os.path.join(tmp, "run.db"), "--",
                          args.load, os.path.join(tmp, "counters-run"), "2", "3"],
                         capture_output=True, text=True)
    m = re.search(r"steps_per_second (\d+)", out.stdout)
    under_run = float(m.group(1)) if m else float("nan")
    subprocess.run(["rm", "-rf", tmp])

    med = lambda k: statistics.median(r[k] for r in rows)
    print(f"runs: {args.runs} attaches of 3 s to attach_load (2 threads), medians")
    print(f"first recorded event after starting rheap attach: {med('first_event_ms'):.1f} ms "
          f"(commit at {med('commit_ms'):.1f} ms)")
    longest = statistics.median(max(r['borrowed_ms'], r['commit_pause_ms'], r['release_pause_ms'])
                                for r in rows)
    print(f"longest hold of any thread: {longest:.2f} ms (the thread running dlopen and prepare: "
          f"{med('borrowed_ms'):.2f} ms; every thread at the commit: {med('commit_pause_ms'):.2f} ms, "
          f"at the release: {med('release_pause_ms'):.2f} ms)")
    print(f"steps/s untraced before: {before:,.0f}; attached: {med('attached'):,.0f} "
          f"({before / med('attached'):.2f}x slower); under rheap run: {under_run:,.0f} "
          f"({before / under_run:.2f}x slower); untraced after: {after:,.0f} "
          f"({after / before * 100:.1f}% of before)")
    print(f"{cyc_ok}/{args.cycles} attaches of 0.1 s in a row succeeded; steps/s afterwards: "
          f"{after_cycles:,.0f} ({after_cycles / before * 100:.1f}% of before)")


if __name__ == "__main__":
    main()
