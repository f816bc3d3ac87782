#!/usr/bin/env python3
"""allocators.py: what recording costs on a replacing allocator, and what librheap costs loaded
but not recording.

    bench/allocators.py BUILD [--runs N] [--n N] [--rounds N]

BUILD is a build directory (libtrace/librheap.so in it). The C++ workload
bench/workloads/cxxmap.cpp is compiled with g++ -O2: on glibc's malloc, linked with -ljemalloc,
and linked with jemalloc statically (libjemalloc_pic.a, whose entry points librheap patches; left
out when the archive is missing). Each variant runs untraced, with librheap preloaded and recording off
(RHEAP_ENABLE=0: every call goes through the wrappers' pass path), and recorded; the runs
alternate, and each figure is the median of N runs of CPU time (user + system, of the program
and its children; the wall time is printed too, but on a shared machine it measures the
neighbours). Printed: the medians and the ratios recorded/untraced on each allocator, recorded
on jemalloc (shared and static) against recorded on glibc, and unhooked/untraced. Nothing is asserted."""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    lib = os.path.join(os.path.abspath(a.build), "libtrace", "librheap.so")
    if not os.path.exists(lib):
        sys.exit(f"allocators.py: no {lib}")
    work = tempfile.mkdtemp(prefix="rheap-bench-alloc-")
    try:
        src = os.path.join(HERE, "workloads", "cxxmap.cpp")
        progs = {}
        variants = [("glibc", []), ("jemalloc", ["-ljemalloc"])]
        pic = "/usr/lib/x86_64-linux-gnu/libjemalloc_pic.a"
        if os.path.exists(pic):
            variants.append(("static", [pic, "-lpthread", "-ldl"]))
        for name, extra in variants:
            exe = os.path.join(work, "cxxmap_" + name)
            subprocess.run(["g++", "-O2", "-g", "-o", exe, src] + extra, check=True)
            progs[name] = exe
        base = dict(os.environ)
        modes = {
            "untraced": base,
            "unhooked": dict(base, LD_PRELOAD=lib, RHEAP_ENABLE="0"),
            "recorded": dict(base, LD_PRELOAD=lib, RHEAP_DIR=work),
        }
        res = {(p, m): [] for p in progs for m in modes}
        for _ in range(a.runs):
            for p, exe in progs.items():
                for m, env in modes.items():
                    res[(p, m)].append(run([exe, str(a.n), str(a.rounds)], env))
                    for d in os.listdir(work):
                        if d.startswith("rip-"):
                            shutil.rmtree(os.path.join(work, d))
        med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
               for k, v in res.items()}
        allocs = 2 * a.n * a.rounds
        print(f"cxxmap {a.n} x {a.rounds} (about {allocs} allocations), medians of {a.runs} runs")
        print(f"{'variant':<22}{'cpu s':>9}{'wall s':>9}")
        for (p, m), (c, w) in med.items():
            print(f"{p + ' ' + m:<22}{c:9.3f}{w:9.3f}")
        r = lambda x, y: med[x][0] / med[y][0] if med[y][0] else float("nan")
        print(f"recorded/untraced, glibc:      {r(('glibc', 'recorded'), ('glibc', 'untraced')):.2f}x")
        print(f"recorded/untraced, jemalloc:   {r(('jemalloc', 'recorded'), ('jemalloc', 'untraced')):.2f}x")
        print(f"recorded jemalloc/glibc:       {r(('jemalloc', 'recorded'), ('glibc', 'recorded')):.2f}x")
        if "static" in progs:
            print(f"recorded/untraced, static:     {r(('static', 'recorded'), ('static', 'untraced')):.2f}x")
            print(f"recorded static/glibc:         {r(('static', 'recorded'), ('glibc', 'recorded')):.2f}x")
        print(f"unhooked/untraced, glibc:      {r(('glibc', 'unhooked'), ('glibc', 'untraced')):.2f}x")
        print(f"unhooked/untraced, jemalloc:   {r(('jemalloc', 'unhooked'), ('jemalloc', 'untraced')):.2f}x")
        if "static" in progs:
            print(f"unhooked/untraced, static:     {r(('static', 'unhooked'), ('static', 'untraced')):.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
