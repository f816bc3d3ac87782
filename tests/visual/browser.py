"""browser.py: the real browser for the page's tests, headless Chromium driven through
chromedriver (Debian's chromium and chromium-driver, with python3-selenium). Nothing is
downloaded: the browser and its driver are the installed packages.

    from browser import Browser, skip_unless_available
    skip_unless_available()              # exit 77 (ctest's skip) naming what is missing
    with Browser(width=1300, height=2000) as b:
        b.open("out/report.html", "weight=peak")   # file URL with a #fragment; waits for the page
        b.click("#fg .cell[data-name='main']")     # the middle of the first matching element
        b.click_at("#charts svg", 120, 80)         # a point, from the element's top-left corner
        b.drag("#charts svg", (100, 80), (300, 80))
        cells = b.js("return [...document.querySelectorAll('.cell')].length")
        b.screenshot("out/view.png")
        assert not b.errors()                      # no script error on the console

A page is ready when its <body> has data-ready="1" (report.js sets it once drawn); open() and
the clicks wait for that, so a test reads what was drawn, not what is being drawn.
"""
import os
import shutil
import sys
import tempfile

CHROMIUM_NAMES = ("chromium", "chromium-browser")
DRIVER_NAMES = ("chromedriver",)


def _which(names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def missing():
    """What is missing to drive a browser (a sentence naming the Debian package), or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "python3-selenium is not installed (the Debian package, for %s)" % sys.executable
    if not _which(CHROMIUM_NAMES):
        return "chromium is not installed (Debian package chromium)"
    if not _which(DRIVER_NAMES):
        return "chromedriver is not installed (Debian package chromium-driver)"
    return None


def skip_unless_available():
    """Exits with 77, the status ctest reports as skipped, when no browser can be driven."""
    why = missing()
    if why:
        print("SKIP: " + why)
        sys.exit(77)


class Browser:
    """One headless Chromium with its own empty profile, closed (and its profile removed) on
    leaving the with-block. Every wait is bounded by `timeout` seconds."""

    def __init__(self, width=1300, height=2000, timeout=30):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="rheap-browser-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = _which(CHROMIUM_NAMES)
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--no-first-run", "--disable-background-networking", "--disable-sync",
                  "--disable-component-update", "--disable-default-apps", "--disable-extensions",
                  "--hide-scrollbars", "--force-device-scale-factor=1",
                  "--user-data-dir=" + self._profile,
                  "--window-size=%d,%d" % (width, height)):
            opts.add_argument(a)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=_which(DRIVER_NAMES), log_path=os.devnull)
        try:
            self.d = webdriver.Chrome(service=service, options=opts)
        except Exception:
            shutil.rmtree(self._profile, ignore_errors=True)
            raise
        self.d.set_page_load_timeout(timeout)
        self.d.set_script_timeout(timeout)
        self._log = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        if self.d:
            try:
                self.d.quit()
            finally:
                self.d = None
                shutil.rmtree(self._profile, ignore_errors=True)

    # ---- Pages ----

    def open(self, path, fragment=None, ready=True):
        """Opens a local file (made absolute) with an optional #fragment (without the '#'),
        waiting for the page's data-ready when ready is true. A page already open at the same
        file is loaded again, so the fragment is read as on a fresh visit."""
        url = "file://" + os.path.abspath(path)
        if fragment:
            url += "#" + fragment
        self.d.get("about:blank")
        self.d.get(url)
        if ready:
            self.wait_ready()
        return self

    def wait_ready(self):
        self.wait("return document.body && document.body.dataset.ready === '1'",
                  "the page's data-ready")

    def wait(self, script, what="a condition"):
        """Waits until the JavaScript expression `script` (a function body returning a value)
        is truthy; raises AssertionError naming `what` after the timeout."""
        from selenium.webdriver.support.ui import WebDriverWait
        try:
            WebDriverWait(self.d, self.timeout, poll_frequency=0.05).until(
                lambda d: d.execute_script(script))
        except Exception:
            raise AssertionError("timed out after %ss waiting for %s; console: %s"
                                 % (self.timeout, what, self.errors())) from None

    def js(self, script, *args):
        """Runs `script` as a function body in the page (arguments as arguments[0], ...) and
        returns its result."""
        return self.d.execute_script(script, *args)

    def dom(self):
        """The document as it is now, as HTML."""
        return self.d.execute_script("return document.documentElement.outerHTML")

    def find(self, selector):
        """The first element matching a CSS selector; AssertionError when there is none."""
        from selenium.webdriver.common.by import By
        els = self.d.find_elements(By.CSS_SELECTOR, selector)
        if not els:
            raise AssertionError("no element matches %r" % selector)
        return els[0]

    def find_all(self, selector):
        from selenium.webdriver.common.by import By
        return self.d.find_elements(By.CSS_SELECTOR, selector)

    def text(self, selector):
        return self.find(selector).text

    def attr(self, selector, name):
        return self.find(selector).get_attribute(name)

    # ---- Input ----

    def _el(self, target):
        return self.find(target) if isinstance(target, str) else target

    def click(self, target):
        """Clicks the middle of an element (a selector or an element), scrolled into view."""
        el = self._el(target)
        self.js("arguments[0].scrollIntoView({block: 'center'})", el)
        from selenium.webdriver.common.action_chains import ActionChains
        ActionChains(self.d).move_to_element(el).click().perform()
        return self

    def _offset(self, el, x, y):
        # ActionChains measures offsets from the element's middle; tests think in the
        # element's own coordinates, from its top-left corner.
        r = el.rect
        return int(round(x - r["width"] / 2)), int(round(y - r["height"] / 2))

    def click_at(self, target, x, y):
        """Clicks at (x, y) pixels from the element's top-left corner."""
        from selenium.webdriver.common.action_chains import ActionChains
        el = self._el(target)
        self.js("arguments[0].scrollIntoView({block: 'center'})", el)
        dx, dy = self._offset(el, x, y)
        ActionChains(self.d).move_to_element_with_offset(el, dx, dy).click().perform()
        return self

    def drag(self, target, start, end, steps=8):
        """Presses the mouse at start (x, y) from the element's top-left corner, moves to end
        in a few steps (so mousemove handlers see the way) and releases it there."""
        from selenium.webdriver.common.action_chains import ActionChains
        el = self._el(target)
        self.js("arguments[0].scrollIntoView({block: 'center'})", el)
        x0, y0 = self._offset(el, *start)
        x1, y1 = self._offset(el, *end)
        a = ActionChains(self.d).move_to_element_with_offset(el, x0, y0).click_and_hold()
        px, py = x0, y0
        for i in range(1, steps + 1):
            nx = x0 + (x1 - x0) * i // steps
            ny = y0 + (y1 - y0) * i // steps
            a = a.move_by_offset(nx - px, ny - py)
            px, py = nx, ny
        a.release().perform()
        return self

    def select(self, target, value):
        """Chooses the option with that value in a <select>, as a user would."""
        from selenium.webdriver.support.ui import Select
        Select(self._el(target)).select_by_value(str(value))
        return self

    # ---- Looking ----

    def screenshot(self, path, full=True):
        """Saves a PNG of the page; full: the whole document's height, not just the window."""
        if full:
            h = self.js("return Math.ceil(document.documentElement.scrollHeight)")
            w = self.js("return Math.ceil(document.documentElement.scrollWidth)")
            self.d.set_window_size(max(w, 800), min(max(h, 600), 16000))
        self.d.save_screenshot(path)
        return path

    def errors(self):
        """The console's errors since the browser started (messages of level SEVERE)."""
        try:
            self._log += self.d.get_log("browser")
        except Exception:
            pass
        return [e["message"] for e in self._log if e.get("level") == "SEVERE"]


if __name__ == "__main__":
    # browser.py check: says what is missing (status 77) or nothing (status 0).
    # browser.py dom FILE [FRAGMENT]: prints the drawn page's HTML.
    # browser.py screenshot FILE PNG [FRAGMENT]: saves the drawn page's picture.
    if len(sys.argv) >= 2 and sys.argv[1] == "check":
        skip_unless_available()
        sys.exit(0)
    if len(sys.argv) >= 3 and sys.argv[1] in ("dom", "screenshot"):
        skip_unless_available()
        with Browser() as br:
            frag = sys.argv[4] if sys.argv[1] == "screenshot" and len(sys.argv) > 4 else \
                sys.argv[3] if sys.argv[1] == "dom" and len(sys.argv) > 3 else None
            br.open(sys.argv[2], frag)
            if sys.argv[1] == "dom":
                sys.stdout.write(br.dom())
            else:
                br.screenshot(sys.argv[3])
            errs = br.errors()
            if errs:
                sys.stderr.write("\n".join(errs) + "\n")
                sys.exit(1)
        sys.exit(0)
    sys.stderr.write("usage: browser.py check | dom FILE [FRAGMENT] | screenshot FILE PNG [FRAGMENT]\n")
    sys.exit(2)
