#!/usr/bin/python3
"""Measures rheap against running untraced and against heaptrack, and prints a Markdown report.

Called by run.sh once everything is built; standard library only. Each workload is run
--runs times; within one round the variants run back to back (untraced, recorded by rheap,
converted, recorded by heaptrack) so that a noisy moment on the machine hits all of them
rather than one. Every figure in the report is a median over the rounds. Nothing is checked
against the targets: they are printed next to the figures for the reader to compare.
"""
import argparse
import datetime
import glob
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1024 * 1024


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Workloads


class Workload:
    """One program to measure: its argv, optional stdin file, extra environment, and how many
    threads allocate (the tracer's memory budget depends on it)."""

    def __init__(self, name, argv, threads=1, stdin=None, env=None, churn=False):
        self.name = name
        self.argv = argv
        self.threads = threads
        self.stdin = stdin
        self.env = env or {}
        self.churn = churn


# Hash and string churn in perl: grow, append to and delete from a hash, then sort, join and
# split. The argument is the number of keys touched.
PERL_SCRIPT = (
    'my $n = shift; my %h; '
    'for my $i (1 .. $n) { my $k = "key" . ($i * 7919 % $n); $h{$k} .= sprintf("%x;", $i); '
    'delete $h{"key" . ($i * 31 % $n)} if $i % 3 == 0 } '
    'my @w = sort { length($h{$a}) <=> length($h{$b}) || $a cmp $b } keys %h; '
    'my $s = join ",", map { uc } @w[0 .. 999]; '
    'my @parts = split /;/, join "", values %h; '
    'print scalar(@w), " ", length($s), " ", scalar(@parts), "\\n";'
)


def sqlite_script(rows):
    """An in-memory database session: a table filled in one transaction with formatted names
    and random blobs, two indexes, and grouping and join queries over it."""
    return f"""\
CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload BLOB);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
INSERT INTO item(id, name, grp, payload)
SELECT i, printf('item-%08d-%s', (i * 7919) % {rows}, hex(randomblob(4))), i % 997,
       randomblob(16 + i % 48)
FROM n;
COMMIT;
CREATE INDEX item_name ON item(name);
CREATE INDEX item_grp ON item(grp, name);
SELECT grp, count(*), sum(length(payload)), max(name) FROM item GROUP BY grp ORDER BY 2 DESC LIMIT 5;
SELECT substr(name, 1, 8) AS p, count(*), length(group_concat(id, ',')) FROM item
GROUP BY p ORDER BY 2 DESC LIMIT 5;
SELECT count(*) FROM item AS a JOIN item AS b ON b.id = a.id + 1 WHERE a.grp = b.grp - 1;
"""


def make_workloads(args, tmp):
    quick = args.quick
    churn_ops = 1000000 if quick else 4000000
    sql_rows = 50000 if quick else 200000
    py_rounds = 10 if quick else 35
    perl_keys = 40000 if quick else 150000
    pl_rounds = 30 if quick else 100

    sql_path = os.path.join(tmp, "workload.sql")
    with open(sql_path, "w") as f:
        f.write(sqlite_script(sql_rows))

    w = []
    for threads in (1, 2):
        for depth in (0, 32):
            w.append(Workload(f"churn {threads}t depth {depth}",
                              [args.churn, str(churn_ops), str(threads), str(depth)],
                              threads=threads, churn=True))
    w.append(Workload("sqlite3", [shutil.which("sqlite3") or "sqlite3"], stdin=sql_path))
    # PYTHONMALLOC=malloc sends every object allocation to malloc, as when hunting heap
    # problems in Python; with the default small-object arenas only a few thousand calls
    # would reach the allocator. A fixed hash seed keeps the event count the same every run.
    w.append(Workload("python3", ["/usr/bin/python3", args.pywork, str(py_rounds)],
                      env={"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"}))
    # Perl picks a random hash seed per run, which moves both its time and its allocation count;
    # a fixed one keeps runs comparable.
    w.append(Workload("perl", [shutil.which("perl") or "perl", "-e", PERL_SCRIPT,
                               str(perl_keys)], env={"PERL_HASH_SEED": "0"}))
    # Perl as a script of its own: about 4 million allocations per second untraced, every
    # scalar body, string and hash array from malloc (see RESULTS.md, "Why perl costs more").
    plwork = os.path.join(args.root, "bench", "workloads", "plwork.pl")
    w.append(Workload("perl script", [shutil.which("perl") or "perl", plwork, str(pl_rounds)],
                      env={"PERL_HASH_SEED": "0"}))
    return w


# ---------------------------------------------------------------------------------------------
# Running things


def timed(argv, stdin=None, env=None, cwd=None, ok=(0,)):
    """Runs argv under /usr/bin/time for its peak RSS and CPU time. Returns (wall seconds,
    peak RSS in KiB, stderr text, CPU seconds); raises on an exit status not in ok."""
    rss_file = os.path.join(TMP, "rss.txt")
    full = ["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file] + argv
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        p = subprocess.run(full, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env=env, cwd=cwd)
        wall = time.perf_counter() - t0
    finally:
        if stdin:
            fin.close()
    err = p.stderr.decode(errors="replace")
    if p.returncode not in ok:
        raise RuntimeError(f"{' '.join(argv[:4])} ... exited with {p.returncode}:\n{err[-2000:]}")
    # A non-zero exit adds a line of its own before the figures; they are on the last line.
    with open(rss_file) as f:
        fields = f.read().strip().splitlines()[-1].split()
    return wall, int(fields[0]), err, float(fields[1]) + float(fields[2])


def dir_bytes(path):
    """Bytes the recording takes on disk: each file's size, or less when it has holes (a
    staging area whose space was given back): its allocated blocks then."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            st = os.stat(os.path.join(root, name))
            total += min(st.st_size, st.st_blocks * 512)
    return total


def db_events(db):
    """Allocation and free events in a converted database: every allocation row, and every
    row whose block was freed (a realloc counts as one of each, as heaptrack counts it)."""
    out = subprocess.run(["sqlite3", db,
                          "SELECT count(*) + count(dealloc_after), count(*) FROM allocations;"],
                         capture_output=True, text=True, check=True).stdout.strip()
    events, allocs = out.split("|")
    return int(events), int(allocs)


def heaptrack_events(stderr_text, data_file):
    """heaptrack's own event count: the allocations it reports plus the frees (allocations
    minus those it reports leaked). Read from the statistics heaptrack prints at exit; if
    they are missing, from heaptrack_print's count of allocation calls, doubled."""
    a = re.search(r"^\s*allocations:\s*(\d+)", stderr_text, re.M)
    leaked = re.search(r"^\s*leaked allocations:\s*(\d+)", stderr_text, re.M)
    if a:
        allocs = int(a.group(1))
        return 2 * allocs - (int(leaked.group(1)) if leaked else 0), allocs
    out = subprocess.run(["heaptrack_print", "-p", "0", "-a", "0", "-T", "0", data_file],
                         capture_output=True, text=True).stdout
    m = re.search(r"calls to allocation functions:\s*(\d+)", out)
    if not m:
        return None, None
    return 2 * int(m.group(1)), int(m.group(1))


def measure(wl, args, have_heaptrack):
    """Runs one workload args.runs times in every variant; returns lists of samples."""
    s = {k: [] for k in ("base_t", "base_rss", "rh_t", "rh_rss", "rh_bytes", "rh_events",
                         "rh_allocs", "conv_t", "ht_t", "ht_rss", "ht_bytes", "ht_events",
                         "ht_allocs", "base_cpu", "rh_cpu", "ht_cpu", "run_t", "run_cpu")}
    base_env = dict(os.environ, **wl.env)
    for r in range(args.runs):
        log(f"{wl.name}: round {r + 1}/{args.runs}")
        t, rss, _, cpu = timed(wl.argv, stdin=wl.stdin, env=base_env)
        s["base_t"].append(t)
        s["base_cpu"].append(cpu)
        s["base_rss"].append(rss)

        # env sets the preload only for the program, so /usr/bin/time itself is not traced.
        rec = os.path.join(TMP, "rec")
        shutil.rmtree(rec, ignore_errors=True)
        os.makedirs(rec)
        t, rss, _, cpu = timed(["env", f"LD_PRELOAD={args.lib}", f"RHEAP_DIR={rec}"] + wl.argv,
                               stdin=wl.stdin, env=base_env)
        s["rh_t"].append(t)
        s["rh_cpu"].append(cpu)
        s["rh_rss"].append(rss)
        rips = sorted(glob.glob(os.path.join(rec, "rip-*")))
        if not rips:
            raise RuntimeError(f"{wl.name}: no recording was written")
        s["rh_bytes"].append(dir_bytes(rec))

        db = os.path.join(TMP, "out.db")
        if os.path.exists(db):
            os.remove(db)
        t, _, _, _ = timed([args.rheap, "convert"] + rips + ["-o", db], ok=(0, 3))
        s["conv_t"].append(t)
        ev, allocs = db_events(db)
        s["rh_events"].append(ev)
        s["rh_allocs"].append(allocs)
        os.remove(db)
        shutil.rmtree(rec)

        if have_heaptrack:
            ht_dir = os.path.join(TMP, "ht")
            shutil.rmtree(ht_dir, ignore_errors=True)
            os.makedirs(ht_dir)
            t, rss, err, cpu = timed(["heaptrack", "-o", os.path.join(ht_dir, "ht")] + wl.argv,
                                     stdin=wl.stdin, env=base_env)
            s["ht_t"].append(t)
            s["ht_cpu"].append(cpu)
            s["ht_rss"].append(rss)
            files = glob.glob(os.path.join(ht_dir, "ht*"))
            s["ht_bytes"].append(sum(os.path.getsize(f) for f in files))
            ev, allocs = heaptrack_events(err, files[0] if files else "")
            if ev:
                s["ht_events"].append(ev)
                s["ht_allocs"].append(allocs)
            shutil.rmtree(ht_dir)

        if args.rheap_run:
            # What a user types: the recording converted while the program runs, the database
            # finished after its end. Whole command, as heaptrack's includes its interpreter.
            run_db = os.path.join(TMP, "run.db")
            t, _, _, cpu = timed([args.rheap, "run", "-q", "-f", "-o", run_db, "--"] + wl.argv,
                                 stdin=wl.stdin, env=dict(base_env, RHEAP_LIBRARY=args.lib))
            s["run_t"].append(t)
            s["run_cpu"].append(cpu)
            os.remove(run_db)
    return s


def leaks_database(args):
    """Records churn with 5M steps in each of 2 threads (about 10M allocations), converts it,
    and times queries/leaks.sql on the result."""
    log("leaks query: recording churn 5000000 x 2 threads")
    rec = os.path.join(TMP, "big")
    shutil.rmtree(rec, ignore_errors=True)
    os.makedirs(rec)
    rec_t, _, _, _ = timed(["env", f"LD_PRELOAD={args.lib}", f"RHEAP_DIR={rec}",
                         args.churn, "5000000", "2", "8"])
    rips = sorted(glob.glob(os.path.join(rec, "rip-*")))
    rip_bytes = dir_bytes(rec)
    db = os.path.join(TMP, "big.db")
    log("leaks query: converting")
    conv_t, _, _, _ = timed([args.rheap, "convert"] + rips + ["-o", db], ok=(0, 3))
    shutil.rmtree(rec)
    events, allocs = db_events(db)
    times = []
    for r in range(args.runs):
        log(f"leaks query: round {r + 1}/{args.runs}")
        t, _, _, _ = timed(["sqlite3", db], stdin=args.leaks_sql)
        times.append(t)
    res = {"allocs": allocs, "events": events, "rip_bytes": rip_bytes, "rec_t": rec_t,
           "conv_t": conv_t, "db_bytes": os.path.getsize(db), "query_t": statistics.median(times),
           "query_all": times}
    os.remove(db)
    return res


# ---------------------------------------------------------------------------------------------
# Report


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(x, spec, suffix=""):
    return "n/a" if x is None else format(x, spec) + suffix


def summarize(wl, s):
    r = {"name": wl.name, "threads": wl.threads}
    r["base_t"] = med(s["base_t"])
    r["rh_t"] = med(s["rh_t"])
    r["ht_t"] = med(s["ht_t"])
    r["rh_slow"] = r["rh_t"] / r["base_t"]
    r["ht_slow"] = r["ht_t"] / r["base_t"] if r["ht_t"] else None
    # CPU time (user + system, all processes) changes less than wall time when other work
    # competes for the cores, so its ratio is a cross-check on a busy machine.
    r["rh_cpu_slow"] = med(s["rh_cpu"]) / med(s["base_cpu"])
    r["ht_cpu_slow"] = med(s["ht_cpu"]) / med(s["base_cpu"]) if s["ht_cpu"] else None
    r["run_t"] = med(s["run_t"])
    r["run_slow"] = r["run_t"] / r["base_t"] if s["run_t"] else None
    r["run_cpu_slow"] = med(s["run_cpu"]) / med(s["base_cpu"]) if s["run_cpu"] else None
    r["events"] = med(s["rh_events"])
    # What a slowdown is made of: how many events the program makes per second of its own CPU
    # time, and what each costs the tracer (CPU time added / events; heaptrack's by its own
    # event count).
    base_cpu = med(s["base_cpu"])
    r["density"] = r["events"] / base_cpu if base_cpu else None
    r["rh_ns"] = (med(s["rh_cpu"]) - base_cpu) / r["events"] * 1e9
    r["ht_ns"] = ((med(s["ht_cpu"]) - base_cpu) / med(s["ht_events"]) * 1e9
                  if s["ht_cpu"] and s["ht_events"] else None)
    r["allocs"] = med(s["rh_allocs"])
    r["rh_bpe"] = med([b / e for b, e in zip(s["rh_bytes"], s["rh_events"]) if e])
    r["ht_bpe"] = med([b / e for b, e in zip(s["ht_bytes"], s["ht_events"]) if e])
    r["ht_allocs"] = med(s["ht_allocs"])
    r["conv_t"] = med(s["conv_t"])
    r["conv_rate"] = med([e / t for e, t in zip(s["rh_events"], s["conv_t"])])
    base_rss = med(s["base_rss"])
    r["rh_mem"] = (med(s["rh_rss"]) - base_rss) * 1024 / MIB
    r["ht_mem"] = (med(s["ht_rss"]) - base_rss) * 1024 / MIB if s["ht_rss"] else None
    r["mem_budget"] = 16 + 2 * wl.threads
    return r


def machine():
    model = cores = "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() == "Model name":
                model = v.strip()
            elif k.strip() == "CPU(s)":
                cores = v.strip()
    except OSError:
        pass
    try:
        with open("/etc/debian_version") as f:
            debian = f.read().strip()
    except OSError:
        debian = "?"
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f"{kb / MIB:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return model, cores, platform.release(), debian, mem


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def version(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True)
        return (p.stdout or p.stderr).strip().splitlines()[0]
    except (OSError, IndexError):
        return "?"


def report(args, rows, big, have_heaptrack):
    out = []
    model, cores, kernel, debian, mem = machine()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    perl_v = re.search(r"v\d+\.\d+\.\d+", version(["perl", "-v"]) + " "
                       + subprocess.run(["perl", "-v"], capture_output=True,
                                        text=True).stdout)
    out.append("# rheap benchmark results\n")
    out.append(f"- Command: `{args.command}`")
    out.append(f"- Date: {now}")
    out.append(f"- Machine: {model}, {cores} CPUs, {mem} RAM, kernel {kernel}, "
               f"Debian {debian}")
    out.append(f"- Versions: {version([args.rheap, '--version'])}; "
               f"heaptrack {version(['heaptrack', '--version']).split()[-1] if have_heaptrack else 'absent'}; "
               f"sqlite3 {version(['sqlite3', '--version']).split()[0]}; "
               f"{version(['/usr/bin/python3', '--version'])}; "
               f"perl {perl_v.group(0) if perl_v else '?'}")
    out.append(f"- Mode: {'quick' if args.quick else 'full'}, median of {args.runs} runs "
               f"per figure; wall times in seconds")
    out.append(f"- Load average (1 min) at start and end: {args.load_start} / {loadavg()}; "
               f"the cores may be shared with other work")
    out.append("")

    out.append("## Time\n")
    out.append("| workload | untraced s | rheap s | rheap slowdown | rheap CPU slowdown "
               "| heaptrack s | heaptrack slowdown | heaptrack CPU slowdown |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        out.append(f"| {r['name']} | {r['base_t']:.3f} | {r['rh_t']:.3f} | {r['rh_slow']:.2f}x "
                   f"| {r['rh_cpu_slow']:.2f}x | {fmt(r['ht_t'], '.3f')} "
                   f"| {fmt(r['ht_slow'], '.2f', 'x')} | {fmt(r['ht_cpu_slow'], '.2f', 'x')} |")
    out.append("")
    if args.rheap_run:
        out.append("`rheap run -o OUT.db -- PROGRAM`, the whole command (recording, conversion "
                   "while the program runs, the database finished after its end):\n")
        out.append("| workload | rheap run s | slowdown | CPU slowdown |")
        out.append("|---|--:|--:|--:|")
        for r in rows:
            out.append(f"| {r['name']} | {r['run_t']:.3f} | {r['run_slow']:.2f}x "
                       f"| {r['run_cpu_slow']:.2f}x |")
        out.append("")
    out.append("## Size, conversion, memory\n")
    out.append("| workload | events | rheap B/event | heaptrack B/event | convert s "
               "| convert Mevents/s | rheap mem MiB | heaptrack mem MiB |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        out.append(f"| {r['name']} | {r['events']:,.0f} | {r['rh_bpe']:.2f} "
                   f"| {fmt(r['ht_bpe'], '.2f')} | {r['conv_t']:.3f} "
                   f"| {r['conv_rate'] / 1e6:.2f} | {r['rh_mem']:.1f} | {fmt(r['ht_mem'], '.1f')} |")
    out.append("")

    out.append("## Cost per event\n")
    out.append("| workload | events | M events per untraced CPU s | rheap CPU ns/event "
               "| heaptrack CPU ns/event |")
    out.append("|---|--:|--:|--:|--:|")
    for r in rows:
        out.append(f"| {r['name']} | {r['events']:,.0f} "
                   f"| {fmt(r['density'] / 1e6 if r['density'] else None, '.2f')} "
                   f"| {r['rh_ns']:.0f} | {fmt(r['ht_ns'], '.0f')} |")
    out.append("")

    def row(name):
        return next((r for r in rows if r["name"] == name), None)

    out.append("## Against the targets\n")
    out.append("| figure | target | rheap | heaptrack here | heaptrack typical | within target |")
    out.append("|---|---|--:|--:|--:|---|")

    def yn(b):
        return "yes" if b else "no"

    for depth in (0, 32):
        one = row(f"churn 1t depth {depth}")
        two = row(f"churn 2t depth {depth}")
        if not one or not two:
            continue
        out.append(f"| slowdown, churn 1 thread, depth {depth} | <= 2.5x "
                   f"| {one['rh_slow']:.2f}x (CPU {one['rh_cpu_slow']:.2f}x) "
                   f"| {fmt(one['ht_slow'], '.2f', 'x')} | ~7.3x | {yn(one['rh_slow'] <= 2.5)} |")
        out.append(f"| slowdown, churn 2 threads, depth {depth} | <= 2.5x and <= 1 thread "
                   f"| {two['rh_slow']:.2f}x (CPU {two['rh_cpu_slow']:.2f}x) "
                   f"| {fmt(two['ht_slow'], '.2f', 'x')} | ~8.5x "
                   f"| {yn(two['rh_slow'] <= 2.5 and two['rh_slow'] <= one['rh_slow'])} |")
    worst_bpe = max(rows, key=lambda r: r["rh_bpe"])
    ht_bpe = [r["ht_bpe"] for r in rows if r["ht_bpe"] is not None]
    out.append(f"| bytes per event, worst workload ({worst_bpe['name']}) | <= 2.5 "
               f"| {worst_bpe['rh_bpe']:.2f} | {fmt(worst_bpe['ht_bpe'], '.2f')} | ~2.5 (zstd) "
               f"| {yn(worst_bpe['rh_bpe'] <= 2.5)} |")
    out.append(f"| bytes per event, range over workloads | <= 2.5 "
               f"| {min(r['rh_bpe'] for r in rows):.2f} - {worst_bpe['rh_bpe']:.2f} "
               f"| {(f'{min(ht_bpe):.2f} - {max(ht_bpe):.2f}') if ht_bpe else 'n/a'} | ~2.5 (zstd) "
               f"| {yn(worst_bpe['rh_bpe'] <= 2.5)} |")
    slow_conv = min(rows, key=lambda r: r["conv_rate"])
    out.append(f"| conversion, slowest workload ({slow_conv['name']}) | >= 3M events/s "
               f"| {slow_conv['conv_rate'] / 1e6:.2f}M/s | - | - "
               f"| {yn(slow_conv['conv_rate'] >= 3e6)} |")
    if big:
        rate = big["events"] / big["conv_t"]
        out.append(f"| conversion, 10M-allocation recording | >= 3M events/s "
                   f"| {rate / 1e6:.2f}M/s | - | - | {yn(rate >= 3e6)} |")
    worst_mem = max(rows, key=lambda r: r["rh_mem"] - r["mem_budget"])
    out.append(f"| tracer memory, worst against its budget ({worst_mem['name']}) "
               f"| <= 16 MiB + 2 MiB/thread = {worst_mem['mem_budget']} MiB "
               f"| {worst_mem['rh_mem']:.1f} MiB | {fmt(worst_mem['ht_mem'], '.1f', ' MiB')} | - "
               f"| {yn(worst_mem['rh_mem'] <= worst_mem['mem_budget'])} |")
    if big:
        out.append(f"| leaks query, {big['allocs'] / 1e6:.1f}M allocations | < 1 s "
                   f"| {big['query_t']:.3f} s | - | - | {yn(big['query_t'] < 1)} |")
    else:
        out.append("| leaks query, 10M allocations | < 1 s | not run (--quick) | - | - | - |")
    out.append("")

    if big:
        out.append("## Leaks query database\n")
        out.append(f"churn 5000000 2 8 recorded in {big['rec_t']:.2f} s: "
                   f"{big['rip_bytes'] / MIB:.1f} MiB of recording "
                   f"({big['rip_bytes'] / big['events']:.2f} B/event), "
                   f"converted in {big['conv_t']:.2f} s into {big['db_bytes'] / MIB:.0f} MiB "
                   f"({big['allocs']:,} allocations, {big['events']:,} events, "
                   f"{big['events'] / big['conv_t'] / 1e6:.2f}M events/s). "
                   f"`sqlite3 out.db < queries/leaks.sql`: "
                   + ", ".join(f"{t:.3f}" for t in big["query_all"])
                   + f" s (median {big['query_t']:.3f} s).")
        out.append("")

    out.append("## Reading the figures\n")
    out.append("- slowdown: median traced wall time / median untraced wall time, whole process "
               "(start-up, exit and, for heaptrack, its interpreter finishing the file). "
               "CPU slowdown: the same with user + system CPU time of all the processes, "
               "which moves less when other work competes for the cores.")
    out.append("- events: allocations + frees, counted in the converted database "
               "(a realloc is one of each). heaptrack B/event divides its .zst file by its own "
               "count: allocations it reports, times two, minus those it reports leaked.")
    out.append("- rheap B/event: size of the whole rip-<pid>/ directory / events.")
    out.append("- cost per event: CPU time added by the tracer / events (10 ms resolution); "
               "the CPU slowdown is 1 + events per untraced CPU second x that cost, so a "
               "program that calls the allocator more often per second pays more at the same "
               "cost per call. heaptrack's includes its interpreter's CPU time.")
    out.append("- convert: wall time of `rheap convert` (merge, pairing, symbolization, "
               "SQLite writing) on that recording; Mevents/s = events / that time.")
    out.append("- mem: peak RSS traced minus peak RSS untraced (/usr/bin/time %M); for heaptrack "
               "the larger of the program and its interpreter process.")
    out.append("- When the load average is above the number of CPUs, other work shared the "
               "cores: wall-time ratios then move by tens of percent between runs (the 2-thread "
               "rows most), and the CPU ratios are the steadier reading.")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--rheap", required=True)
    ap.add_argument("--churn", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--command", default="bench/run.sh")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help="only these workloads (names as in the report); no leaks query")
    ap.add_argument("--rheap-run", action="store_true",
                    help="also time `rheap run` on each workload, whole command")
    args = ap.parse_args()
    if args.only and args.write:
        sys.exit("bench: --write saves a whole report; it cannot be used with --only")
    if args.runs is None:
        args.runs = 3 if args.quick else 5
    args.pywork = os.path.join(args.root, "bench", "workloads", "pywork.py")
    args.leaks_sql = os.path.join(args.root, "queries", "leaks.sql")
    for p in (args.lib, args.rheap, args.churn, args.pywork, args.leaks_sql):
        if not os.path.exists(p):
            sys.exit(f"bench: missing {p}")
    have_heaptrack = shutil.which("heaptrack") is not None
    if not have_heaptrack:
        log("heaptrack not found: its columns will read n/a")

    args.load_start = loadavg()
    global TMP
    TMP = tempfile.mkdtemp(prefix="rheap-bench.")
    try:
        rows = []
        workloads = make_workloads(args, TMP)
        unknown = set(args.only or []) - {wl.name for wl in workloads}
        if unknown:
            sys.exit(f"bench: no workload named {', '.join(sorted(unknown))} "
                     f"(there are: {', '.join(wl.name for wl in workloads)})")
        for wl in workloads:
            if args.only and wl.name not in args.only:
                continue
            rows.append(summarize(wl, measure(wl, args, have_heaptrack)))
        big = None if args.quick or args.only else leaks_database(args)
        text = report(args, rows, big, have_heaptrack)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.stdout.write(text)
    if args.write:
        path = os.path.join(args.root, "bench", "RESULTS.md")
        # profile.py's section (between its markers) stays.
        kept = ""
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
            begin, end = "<!-- profile.py: begin -->", "<!-- profile.py: end -->"
            if begin in old and end in old:
                kept = "\n" + old[old.index(begin):old.index(end) + len(end)] + "\n"
        with open(path, "w") as f:
            f.write(text + kept)
        log(f"wrote {path}")


TMP = None

if __name__ == "__main__":
    main()
