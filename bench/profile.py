#!/usr/bin/python3
"""Profile mode against running untraced, the full trace and heaptrack, and its estimates
against the full trace.

    bench/profile.py --lib LIBRHEAP --rheap RHEAP --churn CHURN --root ROOT [--quick]
                     [--runs N] [--write]

The workloads are bench.py's. Each round runs, back to back, the program untraced, recorded in
profile mode (RHEAP_MODE=profile, the default 512 KiB interval), recorded in full (trace mode)
and under heaptrack when it is installed; every figure is a median over the rounds. Then each
workload is recorded once more in both modes and converted, and the 10 allocation sites with the
most bytes in the trace are looked up in the profile: the report gives the largest relative
difference of their estimated bytes and how many are within 10%. Nothing is asserted.
--write puts the report into bench/RESULTS.md between its profile-mode markers.
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the workloads and the timing helper)

BEGIN = "<!-- profile.py: begin -->"
END = "<!-- profile.py: end -->"
MIB = 1024 * 1024


def record(wl, args, mode, rec, interval=524288):
    """Runs wl recorded in mode into rec; returns (wall, peak RSS KiB, CPU s)."""
    shutil.rmtree(rec, ignore_errors=True)
    os.makedirs(rec)
    env = dict(os.environ, **wl.env)
    argv = ["env", f"LD_PRELOAD={args.lib}", f"RHEAP_DIR={rec}", f"RHEAP_MODE={mode}",
            f"RHEAP_SAMPLE_INTERVAL={interval}", "RHEAP_SAMPLE_SEED=1"] + wl.argv
    t, rss, _, cpu = bench.timed(argv, stdin=wl.stdin, env=env)
    return t, rss, cpu


def sites(db):
    """Bytes per allocation site (function and location), from the summary tables."""
    out = subprocess.run(
        ["sqlite3", "-separator", "\t", db,
         "SELECT k.function || ' ' || k.location, sum(s.bytes) FROM stack_stats AS s "
         "JOIN stacks AS k ON k.id = s.bt GROUP BY 1"],
        capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        key, _, v = line.rpartition("\t")
        res[key] = int(v)
    return res


def convert(args, rec, db):
    if os.path.exists(db):
        os.remove(db)
    rips = sorted(glob.glob(os.path.join(rec, "rip-*")))
    bench.timed([args.rheap, "convert", "-q"] + rips + ["-o", db], ok=(0, 3))


def scalar(db, sql):
    out = subprocess.run(["sqlite3", db, sql], capture_output=True, text=True, check=True)
    return int(out.stdout.strip() or 0)


def accuracy(wl, args):
    """The top sites of the trace (the 10 with the most bytes, leaving out those with less than
    1% of all bytes: a few hundred bytes cannot be estimated from one sample per 512 KiB) against
    the profile's estimates of them, at the default interval and at 64 KiB."""
    rec = os.path.join(bench.TMP, "acc")
    dbs = {k: os.path.join(bench.TMP, k + ".db") for k in ("trace", "512k", "64k")}
    for key, mode, interval in (("trace", "trace", 524288), ("512k", "profile", 524288),
                                ("64k", "profile", 65536)):
        record(wl, args, mode, rec, interval)
        convert(args, rec, dbs[key])
        shutil.rmtree(rec)
    exact = sites(dbs["trace"])
    total = sum(exact.values())
    top = [k for k in sorted(exact, key=exact.get, reverse=True)[:10] if exact[k] >= total / 100]
    res = {"allocs": scalar(dbs["trace"], "SELECT sum(allocs) FROM recording_stats"), "n": len(top)}
    for key in ("512k", "64k"):
        est = sites(dbs[key])
        errs = [abs(est.get(k, 0) - exact[k]) / exact[k] for k in top]
        res["max_err_" + key] = max(errs)
        res["within_" + key] = sum(e <= 0.10 for e in errs)
        res["sampled_" + key] = scalar(dbs[key], "SELECT count(*) FROM allocations")
    for db in dbs.values():
        os.remove(db)
    return res


def measure(wl, args, have_heaptrack):
    s = {k: [] for k in ("base_t", "base_cpu", "base_rss", "prof_t", "prof_cpu", "prof_rss",
                         "trace_t", "ht_t")}
    env = dict(os.environ, **wl.env)
    rec = os.path.join(bench.TMP, "rec")
    for r in range(args.runs):
        bench.log(f"{wl.name}: round {r + 1}/{args.runs}")
        t, rss, _, cpu = bench.timed(wl.argv, stdin=wl.stdin, env=env)
        s["base_t"].append(t)
        s["base_cpu"].append(cpu)
        s["base_rss"].append(rss)
        t, rss, cpu = record(wl, args, "profile", rec)
        s["prof_t"].append(t)
        s["prof_cpu"].append(cpu)
        s["prof_rss"].append(rss)
        t, _, _ = record(wl, args, "trace", rec)
        s["trace_t"].append(t)
        shutil.rmtree(rec)
        if have_heaptrack:
            ht = os.path.join(bench.TMP, "ht")
            shutil.rmtree(ht, ignore_errors=True)
            os.makedirs(ht)
            t, _, _, _ = bench.timed(["heaptrack", "-o", os.path.join(ht, "ht")] + wl.argv,
                                     stdin=wl.stdin, env=env)
            s["ht_t"].append(t)
            shutil.rmtree(ht)
    med = bench.med
    row = {"name": wl.name, "base_t": med(s["base_t"]),
           "prof": med(s["prof_t"]) / med(s["base_t"]),
           "prof_cpu": med(s["prof_cpu"]) / med(s["base_cpu"]),
           "trace": med(s["trace_t"]) / med(s["base_t"]),
           "ht": med(s["ht_t"]) / med(s["base_t"]) if s["ht_t"] else None,
           "mem": (med(s["prof_rss"]) - med(s["base_rss"])) * 1024 / MIB,
           "target": 1.3 if wl.churn else 1.05}
    row.update(accuracy(wl, args))
    return row


def report(args, rows, have_heaptrack):
    f = bench.fmt
    out = [BEGIN, "## Profile mode (bench/profile.py)", "",
           f"`bench/profile.py{' --quick' if args.quick else ''} --runs {args.runs}` on "
           f"{bench.machine()}; load average {args.load_start} at the start, {bench.loadavg()} "
           "at the end. Slowdowns are median wall time recorded / median untraced over the "
           "rounds (CPU: user + system). Profile mode samples about once every 512 KiB "
           "(RHEAP_SAMPLE_SEED=1). Accuracy: the top sites of a full trace of the same workload "
           "(the 10 with the most bytes, each with at least 1% of them), against the estimates "
           "of a profile at the default interval and at 64 KiB: the largest relative error and "
           "how many are within 10%; samples = allocation rows of the profile.", "",
           "| workload | allocations | untraced | profile | profile CPU | target | trace | "
           "heaptrack | profile mem | samples 512K / 64K | max error 512K / 64K | "
           "within 10% 512K / 64K |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['name']} | {r['allocs']:,} | {f(r['base_t'], '.3f', ' s')} | "
                   f"{f(r['prof'], '.2f', 'x')} | {f(r['prof_cpu'], '.2f', 'x')} | "
                   f"<= {r['target']}x | {f(r['trace'], '.2f', 'x')} | "
                   f"{f(r['ht'], '.2f', 'x') if have_heaptrack else 'n/a'} | "
                   f"{f(r['mem'], '+.1f', ' MiB')} | "
                   f"{r['sampled_512k']:,} / {r['sampled_64k']:,} | "
                   f"{f(100 * r['max_err_512k'], '.1f', '%')} / "
                   f"{f(100 * r['max_err_64k'], '.1f', '%')} | "
                   f"{r['within_512k']}/{r['n']} / {r['within_64k']}/{r['n']} |")
    out += ["", END, ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--rheap", required=True)
    ap.add_argument("--churn", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    if args.runs is None:
        args.runs = 3 if args.quick else 5
    args.pywork = os.path.join(args.root, "bench", "workloads", "pywork.py")
    have_heaptrack = shutil.which("heaptrack") is not None
    args.load_start = bench.loadavg()
    bench.TMP = tempfile.mkdtemp(prefix="rheap-profile-bench.")
    try:
        rows = [measure(wl, args, have_heaptrack) for wl in bench.make_workloads(args, bench.TMP)]
    finally:
        shutil.rmtree(bench.TMP, ignore_errors=True)
    text = report(args, rows, have_heaptrack)
    sys.stdout.write(text)
    if args.write:
        path = os.path.join(args.root, "bench", "RESULTS.md")
        with open(path) as fh:
            old = fh.read()
        if BEGIN in old and END in old:
            old = old[:old.index(BEGIN)] + old[old.index(END) + len(END) + 1:]
        with open(path, "w") as fh:
            fh.write(old.rstrip("\n") + "\n\n" + text)
        bench.log(f"wrote {path}")


if __name__ == "__main__":
    main()
