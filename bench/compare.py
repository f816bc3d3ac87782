#!/usr/bin/python3
"""Two builds of rheap side by side on bench.py's workloads, alternating run by run, and the
allocations each one's database holds against heaptrack's count.

    bench/compare.py --before-lib LIB --before-rheap RHEAP --after-lib LIB --after-rheap RHEAP
                     --churn CHURN --root ROOT [--quick] [--runs N] [--only NAME ...]

Each round runs, back to back, the program untraced, recorded by one build and converted by
that build's converter, then recorded and converted by the other (which build goes first
alternates from round to round), so a busy moment on the machine falls on both. Per build it
gives the median recording wall and CPU time (ratios to untraced), the bytes per event, the
conversion's wall time and peak RSS, and the tracer's memory. Then each workload is recorded
once under heaptrack, and `heaptrack_print`'s "calls to allocation functions" is set beside the
allocation rows of each build's database. Nothing is asserted; a Markdown report goes to stdout.
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the workloads and the timing helper)

MIB = 1024 * 1024


def record_and_convert(wl, lib, rheap, tmp):
    """One recording of wl by lib converted by rheap. Returns a dict of figures."""
    rec = os.path.join(tmp, "rec")
    shutil.rmtree(rec, ignore_errors=True)
    os.makedirs(rec)
    env = dict(os.environ, **wl.env)
    t, rss, _, cpu = bench.timed(["env", f"LD_PRELOAD={lib}", f"RHEAP_DIR={rec}"] + wl.argv,
                                 stdin=wl.stdin, env=env)
    rips = sorted(glob.glob(os.path.join(rec, "rip-*")))
    if not rips:
        raise RuntimeError(f"{wl.name}: no recording was written by {lib}")
    nbytes = bench.dir_bytes(rec)
    db = os.path.join(tmp, "out.db")
    if os.path.exists(db):
        os.remove(db)
    ct, crss, _, ccpu = bench.timed([rheap, "convert"] + rips + ["-o", db], ok=(0, 3))
    events, allocs = bench.db_events(db)
    os.remove(db)
    shutil.rmtree(rec)
    return {"t": t, "cpu": cpu, "rss": rss, "bytes": nbytes, "events": events,
            "allocs": allocs, "conv_t": ct, "conv_cpu": ccpu, "conv_rss": crss}


def heaptrack_allocs(wl, tmp):
    """Allocation calls as heaptrack_print counts them in one heaptrack recording of wl."""
    ht = os.path.join(tmp, "ht")
    shutil.rmtree(ht, ignore_errors=True)
    os.makedirs(ht)
    env = dict(os.environ, **wl.env)
    bench.timed(["heaptrack", "-o", os.path.join(ht, "ht")] + wl.argv, stdin=wl.stdin, env=env)
    files = glob.glob(os.path.join(ht, "ht*"))
    out = subprocess.run(["heaptrack_print", "-p", "0", "-a", "0", "-T", "0", files[0]],
                         capture_output=True, text=True).stdout
    shutil.rmtree(ht)
    m = re.search(r"calls to allocation functions:\s*(\d+)", out)
    return int(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before-lib", required=True)
    ap.add_argument("--before-rheap", required=True)
    ap.add_argument("--after-lib", required=True)
    ap.add_argument("--after-rheap", required=True)
    ap.add_argument("--churn", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", nargs="*", help="workload names to run (default: all)")
    ap.add_argument("--no-heaptrack", action="store_true")
    args = ap.parse_args()
    args.pywork = os.path.join(args.root, "bench", "workloads", "pywork.py")
    builds = {"before": (args.before_lib, args.before_rheap),
              "after": (args.after_lib, args.after_rheap)}

    tmp = tempfile.mkdtemp(prefix="rheap-compare.")
    bench.TMP = tmp
    load_start = bench.loadavg()
    rows = []
    try:
        for wl in bench.make_workloads(args, tmp):
            if args.only and wl.name not in args.only:
                continue
            base = {"t": [], "cpu": [], "rss": []}
            got = {k: [] for k in builds}
            for r in range(args.runs):
                bench.log(f"{wl.name}: round {r + 1}/{args.runs}")
                t, rss, _, cpu = bench.timed(wl.argv, stdin=wl.stdin,
                                             env=dict(os.environ, **wl.env))
                base["t"].append(t)
                base["cpu"].append(cpu)
                base["rss"].append(rss)
                order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
                for k in order:
                    got[k].append(record_and_convert(wl, *builds[k], tmp))
            ht = None if args.no_heaptrack else heaptrack_allocs(wl, tmp)
            rows.append((wl, base, got, ht))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def m(xs):
        return statistics.median(xs)

    out = [f"Load average (1 min) at start and end: {load_start} / {bench.loadavg()}; "
           f"median of {args.runs} rounds, before and after alternating.", ""]
    out.append("| workload | untraced s | slowdown before | slowdown after | after/before "
               "| CPU slowdown before | CPU slowdown after | after/before CPU "
               "| B/event before | B/event after | convert Mev/s before | convert Mev/s after "
               "| convert MiB before | convert MiB after | tracer MiB before | tracer MiB after |")
    out.append("|---" + "|--:" * 15 + "|")
    for wl, base, got, ht in rows:
        bt, bc, br = m(base["t"]), m(base["cpu"]), m(base["rss"])
        f = {}
        for k, runs in got.items():
            f[k] = {
                "slow": m([x["t"] for x in runs]) / bt,
                "cslow": m([x["cpu"] for x in runs]) / bc,
                "bpe": m([x["bytes"] / x["events"] for x in runs]),
                "rate": m([x["events"] / x["conv_t"] for x in runs]) / 1e6,
                "crss": m([x["conv_rss"] for x in runs]) / 1024,
                "mem": (m([x["rss"] for x in runs]) - br) / 1024,
            }
        b, a = f["before"], f["after"]
        out.append(f"| {wl.name} | {bt:.3f} | {b['slow']:.2f}x | {a['slow']:.2f}x "
                   f"| {a['slow'] / b['slow']:.3f} | {b['cslow']:.2f}x | {a['cslow']:.2f}x "
                   f"| {a['cslow'] / b['cslow']:.3f} | {b['bpe']:.2f} | {a['bpe']:.2f} "
                   f"| {b['rate']:.2f} | {a['rate']:.2f} | {b['crss']:.1f} | {a['crss']:.1f} "
                   f"| {b['mem']:.1f} | {a['mem']:.1f} |")
    out.append("")
    out.append("| workload | allocations, before | allocations, after | heaptrack_print "
               "calls to allocation functions | after - heaptrack |")
    out.append("|---|--:|--:|--:|--:|")
    for wl, base, got, ht in rows:
        ba = sorted(set(x["allocs"] for x in got["before"]))
        aa = sorted(set(x["allocs"] for x in got["after"]))
        diff = "n/a" if ht is None else ", ".join(f"{v - ht:+,}" for v in aa)
        out.append(f"| {wl.name} | {', '.join(f'{v:,}' for v in ba)} "
                   f"| {', '.join(f'{v:,}' for v in aa)} "
                   f"| {'n/a' if ht is None else f'{ht:,}'} | {diff} |")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
