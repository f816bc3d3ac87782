"""page_views.py PAGE [LOADS]: how long the page of `rheap report --html` takes to draw, and each
of its views to answer, in headless Chromium (tests/visual/browser.py).

Per load (LOADS, default 3, each a fresh browser): the time from the start of loading to drawn
(the body's data-drawn-ms, set by report.js), then each action below timed inside the page from
the event to the end of the work it starts (the page redraws synchronously; a forced layout
after it counts the browser's part). Prints the median of the loads for each, and the page's
size. Nothing is kept: the figures belong to the machine.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "visual"))
from browser import Browser, skip_unless_available  # noqa: E402

# (label, JavaScript that finds the element to click, or a <select> and the value to choose);
# an action without a label is done, not timed (it sets up the next).
ACTIONS = [
    ("weight: allocated", "document.querySelector(\"#weight button[data-w='allocated']\")", None),
    ("weight: allocations", "document.querySelector(\"#weight button[data-w='allocations']\")", None),
    ("weight: temporary", "document.querySelector(\"#weight button[data-w='temporary']\")", None),
    ("bottom-up", "document.querySelector(\"#view button[data-view='bottom-up']\")", None),
    (None, "document.querySelector(\"#weight button[data-w='allocated']\")", None),
    ("lifetime >= 1 ms (weight allocated)", "document.getElementById('life')", "4"),
    ("top-down", "document.querySelector(\"#view button[data-view='top-down']\")", None),
    ("click the widest frame below the top (callers and callees)",
     "[...document.querySelectorAll('#fg .cell[data-depth=\"1\"]')].sort((a, b) => b.dataset.v - a.dataset.v)[0]",
     None),
    ("sort the sites by temporary bytes",
     "[...document.querySelectorAll('[data-table=\"sites\"] th')].find(t => t.textContent === 'temporary')",
     None),
    ("sort the leaks by blocks",
     "[...document.querySelectorAll('[data-table=\"leaks\"] th')].find(t => t.textContent === 'blocks')",
     None),
]

TIME_JS = """
const el = (%s);
if (!el) return -1;
const t0 = performance.now();
if (arguments[0] !== null) {
  el.value = arguments[0];
  el.dispatchEvent(new Event('change'));
} else {
  el.click();
}
void document.body.offsetHeight;
return performance.now() - t0;
"""


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: page_views.py PAGE [LOADS]\n")
        return 2
    skip_unless_available()
    page = sys.argv[1]
    loads = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    drawn, times = [], {}
    for _ in range(loads):
        with Browser(width=1300, height=1200, timeout=120) as b:
            b.open(page)
            drawn.append(int(b.js("return +document.body.dataset.drawnMs")))
            for label, find, value in ACTIONS:
                ms = b.js(TIME_JS % find, value)
                if ms < 0:
                    sys.stderr.write("page_views: nothing to click for %s\n" % find)
                    return 1
                if label:
                    times.setdefault(label, [0.0] * loads)[len(drawn) - 1] = ms
            errs = b.errors()
            if errs:
                sys.stderr.write("page_views: the page's script reported errors: %s\n" % errs)
                return 1
    print("page: %d bytes" % os.path.getsize(page))
    print("%-60s %7d ms" % ("drawn after loading starts", statistics.median(drawn)))
    for label, v in times.items():
        print("%-60s %7.1f ms" % (label, statistics.median(v)))
    print("(median of %d loads in headless Chromium)" % loads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
