"""page_test.py CASE: the views of `rheap report --html` used in a real browser (browser.py), on
the recording of tests/queries/truth.c that visual.record makes (every allocation of it known:
its header lists them), each figure checked against truth.c or against SQL over the rows.

    inverted   the bottom-up flamegraph: its top row is the allocation sites, with exact widths
    callers    a click on a frame: the caller/callee table of growth(), then of main()
    weights    the temporary and allocations weights: exact per site and in all
    lifetime   the lifetime filter at each threshold against SQL; held()'s 4 blocks of 20 ms
    sort       a click on a table's header sorts all its rows, a second click turns them round
    at         #at=MARKER and #at=TIME: the flamegraph, the sites' column and the card are the heap
               SQL over the rows finds live then (a time between moments snaps to the one before)
    click      a click on the memory chart picks the nearest cut: the flamegraph is its heap;
               the stacked chart's sites are the largest at the cuts, each with its largest
    drag       a drag across the chart picks the range's highest marker or cut

The environment (CMake sets it): RHEAP, SRC (the source tree), DIR (visual.record's directory,
which holds out.db; screenshots are left there as page-CASE.png).
"""
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser, skip_unless_available  # noqa: E402

CASE = sys.argv[1] if len(sys.argv) > 1 else ""
DIR = os.environ.get("DIR", "")
DB = os.path.join(DIR, "out.db")
SRC = os.environ.get("SRC", "")
TRUTH = os.path.join(SRC, "tests/queries/truth.c")


def fail(msg):
    sys.stderr.write("FAIL (page %s): %s\n" % (CASE, msg))
    sys.exit(1)


def expect_eq(what, got, want):
    if got != want:
        fail("%s: got %r, expected %r" % (what, got, want))


def sql(q, *args):
    with sqlite3.connect("file:%s?mode=ro" % DB, uri=True) as c:
        return c.execute(q, args).fetchall()


def line_of(text):
    """The line number of the first line of truth.c that is exactly `text` once stripped."""
    with open(TRUTH) as f:
        for i, line in enumerate(f, 1):
            if line.strip() == text:
                return i
    fail("no line %r in truth.c" % text)


def make_page():
    """The page of out.db with every leak (no suppressions), as page-CASE.html here."""
    if not os.path.isfile(DB):
        fail("%s missing: the visual.record test makes it" % DB)
    out = "page-%s.html" % CASE
    subprocess.run([os.environ["RHEAP"], "report", "--html", "-f", "--no-default-suppressions",
                    "-o", out, DB], check=True)
    return out


# ---- What the drawn page holds ----

def cells(b, depth=None):
    """The flamegraph's cells as (name, value, depth, width in px as laid out: a cell narrower
    than its padding is drawn wider, so its style's width, the share it was given)."""
    return [tuple(x) for x in b.js("""
        return [...document.querySelectorAll('#fg .cell')].map(c =>
            [c.dataset.name, +c.dataset.v, +c.dataset.depth, parseFloat(c.style.width)]);""")
            if depth is None or x[2] == depth]


def cell_value(b, name, depth=None):
    vals = [c[1] for c in cells(b, depth) if c[0] == name]
    if len(vals) != 1:
        fail("expected one flamegraph cell %s%s, found %d" %
             (name, "" if depth is None else " at depth %d" % depth, len(vals)))
    return vals[0]


def rows(b, table):
    """The rows of a table of the page (by its data-table id) as lists of cells: data-v for a
    number, the text for the others."""
    return b.js("""
        const t = document.querySelector('[data-table="' + arguments[0] + '"] tbody');
        if (!t) return null;
        return [...t.rows].map(r => [...r.cells].map(c =>
            c.dataset.v !== undefined ? +c.dataset.v : c.textContent.trim()));""", table)


def col(b, table, name):
    """The index of a table's column by its header text."""
    heads = b.js("""return [...document.querySelectorAll('[data-table="' + arguments[0] + '"] th')]
                    .map(th => th.textContent.trim());""", table)
    if name not in heads:
        fail("table %s has no column %r (%s)" % (table, name, heads))
    return heads.index(name)


def click_weight(b, w):
    b.click("#weight button[data-w='%s']" % w)
    b.wait("return document.querySelector(\"#weight button[data-w='%s']\").classList.contains('on')" % w,
           "the weight button %s" % w)


def no_errors(b):
    errs = b.errors()
    if errs:
        fail("the page's script reported errors: %s" % errs)


# ---- The cases ----

def case_inverted(b, page):
    b.open(page)
    b.click("#view button[data-view='bottom-up']")
    b.wait("return location.hash.includes('view=bottom-up')", "view=bottom-up in the address")
    total = sql("SELECT sum(size) FROM allocations WHERE dealloc_after IS NULL")[0][0]
    expect_eq("all, never freed", cell_value(b, "all", 0), total)
    # The top row is the allocation sites of the leaks (truth.c's header; main's is stdout's
    # buffer, the thread's is what pthread_create keeps for it), each as wide as its bytes.
    top = sorted((c[0], c[1]) for c in cells(b, 1))
    expect_eq("bottom-up top row", top, sorted([
        ("leak_big", 5000), ("main", 4096), ("grow_leak", 320), ("oneshot", 320),
        ("threads", 304), ("leak_zeroed", 300), ("leak_names", 200), ("worker", 77)]))
    # (The style keeps a width to a thousandth of a pixel.)
    width = b.js("return document.getElementById('fg').clientWidth")
    for name, v, d, w in cells(b, 1):
        if abs(w - width * v / total) > 0.001:
            fail("cell %s is %.3f px wide, expected %.3f (%d of %d bytes of %d px)" %
                 (name, w, width * v / total, v, total, width))
    # Below each site its caller: grow_leak and oneshot are called by growth, growth by main.
    sites = b.js("""
        const out = {};
        for (const c of document.querySelectorAll('#fg .cell[data-depth="2"]')) {
          const x = c.getBoundingClientRect().left;
          const above = [...document.querySelectorAll('#fg .cell[data-depth="1"]')]
            .find(p => Math.abs(p.getBoundingClientRect().left - x) < 0.01);
          if (above) out[above.dataset.name + '>' + c.dataset.name] = +c.dataset.v;
        }
        return out;""")
    for edge, v in (("grow_leak>growth", 320), ("oneshot>growth", 320), ("leak_big>main", 5000)):
        expect_eq("bottom-up " + edge, sites.get(edge), v)
    b.screenshot(os.path.join(DIR, "page-inverted.png"))
    # The address keeps the view: opened from it, the page is bottom-up again.
    b.open(page, "view=bottom-up&weight=allocated")
    expect_eq("bottom-up from the address: peak's site", cell_value(b, "peak", 1), 1056768)
    expect_eq("bottom-up from the address: the button", b.js(
        "return document.querySelector(\"#view button[data-view='bottom-up']\").classList.contains('on')"), True)


def case_callers(b, page):
    b.open(page)
    b.click("#fg .cell[data-name='growth']")
    b.wait("return document.getElementById('fn-summary') && "
           "document.getElementById('fn-summary').dataset.name === 'growth'", "growth's callers")
    s = b.js("return {...document.getElementById('fn-summary').dataset}")
    # growth leaks 8 x 40 bytes through grow_leak and 8 x 40 through oneshot, none itself.
    expect_eq("growth's total", (int(s["v"]), int(s["blocks"])), (640, 16))
    expect_eq("growth's self", (int(s["self"]), int(s["selfBlocks"])), (0, 0))
    tb, bl, sb, sbl, fn, site = (col(b, "callers", h) for h in
                                 ("total bytes", "total blocks", "self bytes", "self blocks", "function", "call site"))
    got = [(r[fn], r[tb], r[bl], r[sb], r[sbl], r[site]) for r in rows(b, "callers")]
    expect_eq("growth's callers", got, [("main", 640, 16, 0, 0, "truth.c:%d" % line_of("growth();"))])
    got = [(r[fn], r[tb], r[bl], r[sb], r[sbl], r[site]) for r in rows(b, "callees")]
    expect_eq("growth's callees", got, [
        ("grow_leak", 320, 8, 320, 8, "truth.c:%d" % line_of("grow_leak();")),
        ("oneshot", 320, 8, 320, 8, "truth.c:%d" % line_of("oneshot();"))])
    b.screenshot(os.path.join(DIR, "page-callers.png"))
    # By allocations the same calls, counted in blocks; the function stays selected.
    click_weight(b, "allocations")
    got = [(r[fn], r[tb], r[bl]) for r in rows(b, "callees")]
    expect_eq("growth's callees by allocations", got, [("grow_leak", 320, 8), ("oneshot", 320, 8)])
    # A click on a caller's name moves to it: main holds every leak of the program but the
    # worker thread's 77 bytes, and allocated stdout's 4096 bytes itself.
    click_weight(b, "leaked")
    b.click("[data-table='callers'] a.fn")
    b.wait("return document.getElementById('fn-summary').dataset.name === 'main'", "main's callers")
    s = b.js("return {...document.getElementById('fn-summary').dataset}")
    leaked = sql("SELECT sum(size) FROM allocations WHERE dealloc_after IS NULL")[0][0]
    expect_eq("main's total", int(s["v"]), leaked - 77)
    expect_eq("main's self", (int(s["self"]), int(s["selfBlocks"])), (4096, 1))
    callees = {r[fn]: (r[tb], r[sb]) for r in rows(b, "callees")}
    for name, v in (("leak_big", 5000), ("leak_names", 200), ("leak_zeroed", 300), ("growth", 640),
                    ("threads", 304)):
        expect_eq("main's callee " + name, callees.get(name), (v, v if name != "growth" else 0))
    expect_eq("main's callees add up to its total less its self",
              sum(v[0] for v in callees.values()), leaked - 77 - 4096)
    expect_eq("the function in the address", "fn=main" in b.js("return location.hash"), True)


def case_weights(b, page):
    b.open(page)
    # Temporary: blocks freed before their thread allocated again, in bytes (truth.c's header:
    # all 50 of scratch's 64 bytes, keeper's last 32, peak's last 4096, held's last 128, every
    # block of grow_buffer's realloc chain, 16 to 4096 bytes).
    click_weight(b, "temporary")
    for name, v in (("scratch", 3200), ("keeper", 32), ("peak", 4096), ("held", 128), ("grow_buffer", 8176)):
        expect_eq("temporary bytes of " + name, cell_value(b, name), v)
    want = sql("""SELECT sum(size) FROM (
                    SELECT size, dealloc_after IS NOT NULL AND dealloc_after <= coalesce(lead(alloc_after)
                        OVER (PARTITION BY pid, recording, alloc_thread ORDER BY alloc_after, id), dealloc_after) AS temp
                    FROM allocations) WHERE temp""")[0][0]
    expect_eq("temporary bytes in all (the rule over the rows)", cell_value(b, "all"), want)
    expect_eq("the address keeps the weight", "weight=temporary" in b.js("return location.hash"), True)
    b.screenshot(os.path.join(DIR, "page-temporary.png"))
    # Allocations: blocks, whatever their size.
    click_weight(b, "allocations")
    expect_eq("allocations in all", cell_value(b, "all"), sql("SELECT count(*) FROM allocations")[0][0])
    for name, v in (("leak_names", 20), ("scratch", 50), ("keeper", 10), ("leak_big", 5), ("peak", 3)):
        expect_eq("allocations of " + name, cell_value(b, name), v)
    info = b.text("#fg-info")
    if not info.startswith("145 allocations made"):
        fail("the allocations weight's line reads %r" % info)
    b.open(page, "weight=temporary")
    expect_eq("temporary from the address", cell_value(b, "scratch"), 3200)


def case_lifetime(b, page):
    b.open(page, "weight=allocated")
    # At each threshold: the blocks freed at least 10^(k+2) ns after their allocation, and the
    # blocks never freed; bytes for allocated, blocks for allocations.
    thresholds = [0, 1000, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9, 10**10]
    for w in ("allocated", "allocations"):
        click_weight(b, w)
        for k, ns in enumerate(thresholds):
            b.select("#life", k)
            want = sql("""SELECT count(*), sum(size) FROM allocations
                          WHERE dealloc_after IS NULL OR dealloc_after - alloc_after >= ?""", ns)[0]
            want = want[0] if w == "allocations" else want[1]
            expect_eq("%s, lifetime at least %d ns" % (w, ns), cell_value(b, "all"), want)
    # held() keeps its 4 blocks of 128 bytes across a sleep of 20 ms: all of them lived 10 ms.
    b.select("#life", 5)
    expect_eq("held's blocks living 10 ms or more", cell_value(b, "held"), 4)
    click_weight(b, "allocated")
    expect_eq("held's bytes living 10 ms or more", cell_value(b, "held"), 512)
    expect_eq("scratch's blocks live under 10 ms", [c for c in cells(b) if c[0] == "scratch"], [])
    expect_eq("the address keeps the filter", "life=10ms" in b.js("return location.hash"), True)
    b.screenshot(os.path.join(DIR, "page-lifetime.png"))
    # The filter does not apply to the weights it cannot be exact for: leaked is unchanged.
    click_weight(b, "leaked")
    expect_eq("the filter is off for leaked", b.js("return document.getElementById('life').disabled"), True)
    expect_eq("leaked with the filter set", cell_value(b, "all"),
              sql("SELECT sum(size) FROM allocations WHERE dealloc_after IS NULL")[0][0])
    b.open(page, "weight=allocations&life=10ms")
    expect_eq("lifetime from the address", cell_value(b, "held"), 4)


def case_sort(b, page):
    b.open(page)
    leaks = rows(b, "leaks")
    by, bl, site = (col(b, "leaks", h) for h in ("bytes", "blocks", "site (open for the stack)"))
    expect_eq("leak rows", len(leaks), 8)
    expect_eq("leaks largest first before a click", [r[by] for r in leaks], sorted((r[by] for r in leaks), reverse=True))
    b.click("[data-table='leaks'] th[data-col='%d']" % bl)
    got = rows(b, "leaks")
    expect_eq("leaks by blocks, most first", [r[bl] for r in got], [20, 8, 8, 5, 3, 1, 1, 1])
    if not got[0][site].startswith("leak_names"):
        fail("the first leak by blocks is %r, not leak_names's 20 blocks" % got[0][site])
    b.click("[data-table='leaks'] th[data-col='%d']" % bl)
    expect_eq("leaks by blocks, fewest first", [r[bl] for r in rows(b, "leaks")], [1, 1, 1, 3, 5, 8, 8, 20])
    expect_eq("the header's mark", b.attr("[data-table='leaks'] th[data-col='%d']" % bl, "data-sort"), "asc")
    # Sites by temporary bytes: grow_buffer's realloc chain first; text columns sort A to Z.
    t = col(b, "sites", "temporary")
    b.click("[data-table='sites'] th[data-col='%d']" % t)
    got = rows(b, "sites")
    vals = [r[t] for r in got]
    expect_eq("sites by temporary bytes", vals, sorted(vals, reverse=True))
    s = col(b, "sites", "site")
    if not got[0][s].startswith("grow_buffer") or vals[0] != 8160:
        fail("the first site by temporary bytes is %r with %d, not grow_buffer's reallocs with 8160" % (got[0][s], vals[0]))
    b.click("[data-table='sites'] th[data-col='%d']" % s)
    names = [r[s] for r in rows(b, "sites")]
    expect_eq("sites by name", names, sorted(names, key=lambda x: (x.lower(), x)))
    # Threads by allocations: main's thread allocated 136 blocks, the worker 9.
    a = col(b, "threads", "allocs")
    b.click("[data-table='threads'] th[data-col='%d']" % a)
    expect_eq("threads by allocations", [r[a] for r in rows(b, "threads")], [136, 9])
    b.click("[data-table='threads'] th[data-col='%d']" % a)
    expect_eq("threads by allocations, fewest first", [r[a] for r in rows(b, "threads")], [9, 136])
    # The sort stays when the table is drawn again for another weight.
    click_weight(b, "peak")
    expect_eq("leaks keep their order", [r[bl] for r in rows(b, "leaks")], [1, 1, 1, 3, 5, 8, 8, 20])
    b.screenshot(os.path.join(DIR, "page-sort.png"))


# ---- The page at a moment (moment.js) ----

def live_at(t):
    """Bytes live at t ns after the recording started: allocated at or before t, not freed by
    then (the rule of markers and checkpoint cuts alike)."""
    return sql("""SELECT coalesce(sum(size), 0) FROM allocations WHERE alloc_after <= ?1
                  AND (dealloc_after IS NULL OR dealloc_after > ?1)""", t)[0][0]


def live_sites_at(t):
    """Per allocation site (its location, truth.c:LINE, the plumbing skipped as in `stacks`),
    the bytes live at t, sites with none left out."""
    return {os.path.basename(loc): v for loc, v in sql(
        """SELECT s.location, sum(a.size) FROM allocations AS a JOIN stacks AS s ON s.id = a.bt
           WHERE a.alloc_after <= ?1 AND (a.dealloc_after IS NULL OR a.dealloc_after > ?1)
           GROUP BY s.location""", t)}


def moment_times():
    """The times of the page's moments: every marker and checkpoint cut, ascending."""
    return sorted(t for (t,) in sql("SELECT t FROM checkpoints WHERE ck > 0 UNION SELECT t FROM markers"))


def expect_moment(b, what, t):
    """The flamegraph, the sites table's moment column and the card show the heap at t."""
    want = live_at(t)
    if want == 0:
        fail("%s: nothing live at %d, a test that could not fail" % (what, t))
    expect_eq(what + ": the flamegraph's all", cell_value(b, "all", 0), want)
    expect_eq(what + ": the card", int(b.attr(".card[data-k='moment']", "data-v")), want)
    m, loc = col(b, "sites", "at peak"), col(b, "sites", "location")
    got = {r[loc]: r[m] for r in rows(b, "sites") if r[m]}
    expect_eq(what + ": the sites' bytes at the moment", got, live_sites_at(t))


def chart_x(b, t):
    """The x, in pixels from the left of the first memory chart, of time t."""
    return b.js("""const svg = document.querySelector('#charts .proc svg'), vb = svg.viewBox.baseVal;
                   const r = svg.getBoundingClientRect(), end = D.procs[0].end + 1;
                   return (70 + (vb.width - 70 - 14) * arguments[0] / end) * r.width / vb.width;""", t)


def case_at(b, page):
    marker = dict((l, t) for t, l in sql("SELECT t, label FROM markers WHERE label IN ('A', 'B')"))
    for label in ("A", "B"):
        b.open(page, "at=" + label)
        expect_eq("the weight at a moment", b.js("return state.weight"), "peak")
        note = b.text("#moment-note")
        if 'marker "%s"' % label not in note or "nearest" in note:
            fail("the note at marker %s says %r" % (label, note))
        expect_moment(b, "at marker " + label, marker[label])
    b.screenshot(os.path.join(DIR, "page-at.png"))
    # A time between two cuts: the page shows the latest cut before it, and says so.
    cuts = [t for (t,) in sql("SELECT t FROM checkpoints WHERE ck > 0 ORDER BY ck")]
    moments = sorted(cuts + [t for (t,) in sql("SELECT t FROM markers")])
    before = max(t for t in moments if t < cuts[-1])
    asked = (before + cuts[-1]) // 2
    b.open(page, "at=%dns" % asked)
    note = b.text("#moment-note")
    if "nearest before" not in note or "--at %dns is exact" % asked not in note:
        fail("the note for a time between moments says %r" % note)
    expect_moment(b, "at %d ns (snapped to %d)" % (asked, before), before)
    expect_eq("the address keeps the moment", "at=%dns" % asked in b.js("return location.hash"), True)
    # The weight picked by the address stays; another weight ignores the moment.
    b.open(page, "at=A&weight=allocated")
    expect_eq("allocated at a moment", cell_value(b, "all", 0), sql("SELECT sum(size) FROM allocations")[0][0])


def case_click(b, page):
    b.open(page)
    # The cut farthest from any other moment: a click at its x picks it, whatever the run's times.
    ms = moment_times()
    cuts = [t for (t,) in sql("SELECT t FROM checkpoints WHERE ck > 0")]
    gap = lambda c: min(abs(t - c) for t in ms if t != c)
    t = max(cuts, key=gap)
    if chart_x(b, t + gap(t)) - chart_x(b, t) < 3:
        fail("every cut lies within 3 pixels of another moment: a click could pick either")
    b.click_at("#charts .proc svg", chart_x(b, t), 100)
    b.wait("return location.hash.includes('at=%d')" % t, "at=%d in the address" % t)
    expect_moment(b, "a click at the cut at %d ns" % t, t)
    if "cut" not in b.text("#moment-note"):
        fail("the note after a click says %r" % b.text("#moment-note"))
    # The stacked chart of the top sites: each layer's largest is its site's most bytes live at
    # a cut, by SQL; the sites are the 8 largest so, largest first.
    want = {}
    for (t,) in sql("SELECT t FROM checkpoints WHERE ck > 0"):
        for loc, v in live_sites_at(t).items():
            want[loc] = max(want.get(loc, 0), v)
    got = b.js("""return [...document.querySelectorAll('.stacked .layer')].map(l =>
                  [l.dataset.site, +l.dataset.max]);""")
    got = [(name.split(" ")[-1], v) for name, v in got if name != "other"]
    expect_eq("the top sites drawn", len(got), min(8, len(want)))
    for loc, v in got:
        expect_eq("the largest of %s at a cut" % loc, v, want.get(loc))
    expect_eq("the top sites' largest, largest first", [v for _, v in got],
              sorted(want.values(), reverse=True)[:len(got)])
    b.screenshot(os.path.join(DIR, "page-click.png"))


def case_drag(b, page):
    b.open(page)
    # From the middle of the widest gap between moments to the end: the moments after it are
    # in the range, the others well out of it, whatever the run's times.
    ms = moment_times()
    i = max(range(len(ms) - 1), key=lambda k: ms[k + 1] - ms[k])
    a, z = (ms[i] + ms[i + 1]) // 2, b.js("return D.procs[0].end")
    inside = ms[i + 1:]
    if len(inside) < 3:
        fail("only %d moments from %d to %d" % (len(inside), a, z))
    best = max(inside, key=lambda t: (live_at(t), -t))
    b.drag("#charts .proc svg", (chart_x(b, a), 100), (chart_x(b, z), 100))
    b.wait("return location.hash.includes('from=') && location.hash.includes('to=')", "from= and to= in the address")
    expect_moment(b, "the highest moment of the range", best)
    if "highest" not in b.text("#moment-note"):
        fail("the note after a drag says %r" % b.text("#moment-note"))
    # Back to each process's own peak.
    b.click("#moment-clear")
    b.wait("return !location.hash.includes('from=')", "the moment gone from the address")
    expect_eq("no moment card", b.find_all(".card[data-k='moment']"), [])
    b.screenshot(os.path.join(DIR, "page-drag.png"))


CASES = {"inverted": case_inverted, "callers": case_callers, "weights": case_weights,
         "lifetime": case_lifetime, "sort": case_sort,
         "at": case_at, "click": case_click, "drag": case_drag}

if __name__ == "__main__":
    if CASE not in CASES:
        sys.stderr.write("usage: page_test.py %s\n" % " | ".join(CASES))
        sys.exit(2)
    skip_unless_available()
    page = make_page()
    with Browser(width=1300, height=1600) as br:
        CASES[CASE](br, page)
        no_errors(br)
    print("page %s: ok" % CASE)
