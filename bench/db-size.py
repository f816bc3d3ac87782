#!/usr/bin/env python3
"""db-size.py: two builds of `rheap convert` side by side on the same recordings: the database's
bytes per allocation (file size / rows of `allocations`, and the allocation rows alone from
SQLite's dbstat) and the conversion's wall and CPU time, medians over alternating runs.

    bench/db-size.py --before B/cli/rheap --after A/cli/rheap [--runs N] NAME=RECORDING_DIR...

Each RECORDING_DIR is a rip-<pid> directory (or several, separated by commas, converted into
one database). Prints a Markdown table; nothing is checked.
"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import tempfile
import time


def convert(rheap, dirs, out):
    """Runs one conversion; returns (wall s, user + sys s)."""
    t0 = time.perf_counter()
    before = os.times()
    subprocess.run([rheap, "convert", "-q", "-f", *dirs, "-o", out], check=True)
    after = os.times()
    wall = time.perf_counter() - t0
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def rows_bytes(db):
    con = sqlite3.connect(db)
    n, = con.execute("SELECT count(*) FROM allocations").fetchone()
    events, = con.execute("SELECT value FROM meta WHERE key = 'events'").fetchone()
    names = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'allocation%'")]
    table = 0
    for name in names:
        b, = con.execute("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?", (name,)).fetchone()
        table += b
    con.close()
    return n, events, table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("recordings", nargs="+", metavar="NAME=DIR[,DIR...]")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rheap-dbsize.")
    print("| recording | allocations | events | bytes/allocation before | after | "
          "allocation rows before | after | convert before | after | CPU before | after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for spec in args.recordings:
        name, dirs = spec.split("=", 1)
        dirs = dirs.split(",")
        walls = {"before": [], "after": []}
        cpus = {"before": [], "after": []}
        for _ in range(args.runs):
            for side in ("before", "after"):
                out = os.path.join(tmp, f"{side}.db")
                w, c = convert(getattr(args, side), dirs, out)
                walls[side].append(w)
                cpus[side].append(c)
        size = {}
        for side in ("before", "after"):
            out = os.path.join(tmp, f"{side}.db")
            n, events, table = rows_bytes(out)
            size[side] = (os.path.getsize(out) / n, table / n)
        mb, ma = statistics.median(walls["before"]), statistics.median(walls["after"])
        print(f"| {name} | {n:,} | {events:,} | {size['before'][0]:.1f} | {size['after'][0]:.1f} | "
              f"{size['before'][1]:.1f} | {size['after'][1]:.1f} | "
              f"{mb:.2f} s ({events / mb / 1e6:.2f} M events/s) | "
              f"{ma:.2f} s ({events / ma / 1e6:.2f} M events/s) | "
              f"{statistics.median(cpus['before']):.2f} s | {statistics.median(cpus['after']):.2f} s |")
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
