#!/usr/bin/env python3
"""The served book's playground in a real browser: what a reader does, checked step by step.

Starts `gpubook book --serve` on a free port, opens chapter 3 in headless Chromium (the same
chromedriver session as book_check.py) and:
  1. edits the runnable `scale` listing to write one element past the end, clicks Run, and
     finds the out-of-bounds diagnostic and line 4 highlighted in the editor;
  2. reloads the page and finds the edit kept (localStorage);
  3. clicks Reset, then Run, and finds "ok";
  4. clicks Run in the vector add exercise box, whose editor starts from the stub, and finds
     the run's report (c never written) and the map of what it touched (c's cells red);
  5. clicks Check in the same box and finds the grader's report on the untouched stub
     (`gpubook check`'s, so progress is recorded as on the command line);
  6. takes the barrier out of chapter 4's block reverse, clicks Run, and finds the data race
     with both of its lines marked;
  7. clicks Run in chapter 12's dispatch box (two ranks, peer tables) and finds each rank's
     buffers under `rank 0:` and `rank 1:` and in the map, which stays inside the column at
     400 and 1280 px.

Usage: playground_check.py [--gpubook target/release/gpubook] [--shots DIR]
Exit status 0 when every step passes.
"""

import argparse
import base64
import pathlib
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from book_check import Browser, free_port  # noqa: E402

PAGE = "ch03-spmd/index.html"
EXERCISE = "ch03-vector-add"
# The out-of-bounds write: thread 999 writes y[1000], one past the end (line 4 of the listing).
GOOD_LINE = "y[i] = a * x[i];"
BAD_LINE = "y[i + 1] = a * x[i];"


def wait_for_server(port, proc, limit=600):
    started = time.time()
    while time.time() - started < limit:
        if proc.poll() is not None:
            sys.exit(f"playground: gpubook book --serve stopped (exit {proc.returncode})")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/{PAGE}", timeout=5).read()
            return
        except OSError:
            time.sleep(0.5)
    sys.exit("playground: the server did not answer in time")


class Page:
    def __init__(self, browser):
        self.b = browser

    def js(self, script):
        return self.b.run(script)

    def click(self, css):
        found = self.b.s("POST", "/element", {"using": "css selector", "value": css})
        element = next(iter(found.values()))
        self.b.s("POST", f"/element/{element}/click", {})

    def shot(self, css, path):
        """A screenshot of the window with `css` scrolled into view, for a person to look at."""
        # Centred: mdbook's fixed menu bar would hide the top of an element scrolled to the top.
        self.js(f"document.querySelector(\"{css}\").scrollIntoView({{block: 'center'}}); return true")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.b.cdp("Page.captureScreenshot", {"format": "png"})["data"]))

    def wait(self, script, limit, what):
        """Polls `script` (a JS expression) until it is truthy; returns its value."""
        started = time.time()
        while time.time() - started < limit:
            value = self.js(f"return {script}")
            if value:
                return value
            time.sleep(0.25)
        sys.exit(f"playground: FAIL: {what} (waited {limit} s); status: {self.js(STATUS)!r}")


STATUS = "[...document.querySelectorAll('.gpubook-play-status')].map((s) => s.textContent)"
LISTING = ".gpubook-play[data-play='scale']"


def run_done(page, box=LISTING, what="the run finished"):
    """The status of the Run in `box` once it is no longer running, and the run's output."""
    status = page.wait(
        f"(() => {{ const s = document.querySelector(\"{box} .gpubook-play-status\").textContent;"
        " return s && !s.startsWith('running') ? s : null; })()",
        120,
        what,
    )
    return status, page.js(f"return document.querySelector(\"{box} .gpubook-play-out\").textContent")


def ranks(page, browser, port, shots):
    """Step 7: a launch on two ranks from an exercise box, and its per-rank output and map."""
    ranked = ".gpubook-play[data-play='ch12-dispatch']"
    for width in (1280, 400):
        browser.open(f"http://127.0.0.1:{port}/ch12-moe-all-to-all/index.html", width)
        page.wait(f"document.querySelector(\"{ranked} textarea\")", 30, "chapter 12's dispatch box became an editor")
        page.click(f"{ranked} .gpubook-play-run")
        status, out = run_done(page, ranked, "the two-rank run finished")
        figure = page.js(f"return document.querySelector(\"{ranked} svg.gpubook-touch-map\")?.textContent || ''")
        print(f"playground: Run on two ranks at {width} px: {status!r}")
        if "rank 1: launched" not in out or "\nrank 1:\n" not in out or "rank 0" not in figure or "rank 1" not in figure:
            sys.exit(f"playground: FAIL: expected each rank's launches and buffers; got {status!r}:\n{out}\n{figure}")
        # Nothing of the box wider than the page's column.
        wide = page.js(
            f"const box = document.querySelector(\"{ranked}\"), r = box.getBoundingClientRect();"
            " return [...box.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > r.right + 1"
            " && !e.parentElement?.closest('pre, textarea')).map((e) => e.tagName + '.' + (e.getAttribute('class') || '')).slice(0, 5)"
        )
        if wide:
            sys.exit(f"playground: FAIL: at {width} px these stick out of the dispatch box: {wide}")
        page.shot(f"{ranked} svg.gpubook-touch-map", shots / f"ranks-{width}.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpubook", default="target/release/gpubook")
    ap.add_argument("--shots", type=pathlib.Path, default=pathlib.Path("target/screenshots/playground"))
    a = ap.parse_args()

    port = free_port()
    log = open("target/playground-serve.log", "w")
    server = subprocess.Popen([a.gpubook, "book", "--serve", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    browser = None
    try:
        t0 = time.time()
        wait_for_server(port, server)
        print(f"playground: serving on 127.0.0.1:{port} after {time.time() - t0:.1f} s")
        log.flush()
        if "ERROR" in pathlib.Path(log.name).read_text():
            sys.exit(f"playground: FAIL: the served book's build failed, so its pages are stale (see {log.name})")
        browser = Browser()
        page = Page(browser)
        browser.open(f"http://127.0.0.1:{port}/{PAGE}", 1280)
        page.js("localStorage.clear(); location.reload(); return true")
        page.wait(f"document.querySelector(\"{LISTING} textarea\")", 30, "the listing became an editor")

        # 1. An out-of-bounds write: the diagnostic, and its line highlighted.
        src = page.js(f"return document.querySelector(\"{LISTING} textarea\").value")
        assert GOOD_LINE in src, f"the listing no longer has `{GOOD_LINE}`:\n{src}"
        line = src.split("\n").index(next(l for l in src.split("\n") if GOOD_LINE in l)) + 1
        page.js(
            f"const t = document.querySelector(\"{LISTING} textarea\");"
            f" t.value = t.value.replace({GOOD_LINE!r}, {BAD_LINE!r});"
            " t.dispatchEvent(new Event('input')); return true"
        )
        t0 = time.time()
        page.click(f"{LISTING} .gpubook-play-run")
        status, out = run_done(page)
        marked = page.js(f"return [...document.querySelectorAll(\"{LISTING} .gpubook-play-gutter span.bad\")].map((s) => s.textContent)")
        shown = page.js(f"return !document.querySelector(\"{LISTING} .gpubook-play-highlight\").hidden")
        print(f"playground: out-of-bounds run: {status!r} in {time.time() - t0:.1f} s; marked lines {marked}")
        if status != f"failed at line {line}" or "out of bounds" not in out or "y[1000]" not in out or marked != [str(line)] or not shown:
            sys.exit(f"playground: FAIL: expected the out-of-bounds write at line {line} highlighted; got {status!r}, {marked}, output:\n{out}")
        page.shot(LISTING, a.shots / "out-of-bounds.png")

        # 2. The edit is kept across a reload.
        page.js("location.reload(); return true")
        kept = page.wait(f"document.querySelector(\"{LISTING} textarea\")?.value", 30, "the editor after a reload")
        if BAD_LINE not in kept:
            sys.exit("playground: FAIL: the edit was not kept across a reload")
        print("playground: the edit is kept across a reload")

        # 3. Reset, Run: ok.
        page.click(f"{LISTING} .gpubook-play-reset")
        page.click(f"{LISTING} .gpubook-play-run")
        status, out = run_done(page)
        print(f"playground: after Reset: {status!r}")
        # The map names each element's writer: y[300] is thread 44 of block 1 (blocks of 256).
        writer = page.js(f"return [...document.querySelectorAll(\"{LISTING} svg.gpubook-touch-map rect title\")]"
                         ".map((t) => t.textContent).find((t) => t.startsWith('y[') && t.includes('element 300:')) || ''")
        print(f"playground: the map's cell of y[300]: {writer!r}")
        if "element 300: written by block 1, thread 44" not in writer:
            sys.exit(f"playground: FAIL: expected y[300]'s cell to name its writer; got {writer!r}")
        if status != "ok" or ": ok" not in out:
            sys.exit(f"playground: FAIL: the page's own kernel did not run clean: {status!r}\n{out}")

        # 4. Run the exercise's kernel from its box: the stub writes nothing, and the map says so.
        box = f"#exercise-{EXERCISE}"
        run_box = f"{box} .gpubook-play[data-play='{EXERCISE}']"
        stub = page.js(f"return document.querySelector(\"{run_box} textarea\").value")
        if "TODO" not in stub or "threadIdx" in stub:
            sys.exit(f"playground: FAIL: the exercise's editor should start from the stub:\n{stub}")
        t0 = time.time()
        page.click(f"{run_box} .gpubook-play-run")
        status, out = run_done(page, run_box, "the exercise's run finished")
        figure = page.js(f"return document.querySelector(\"{run_box} svg.gpubook-touch-map\")?.textContent || ''")
        red = page.js(f"return [...document.querySelectorAll(\"{run_box} svg.gpubook-touch-map rect\")]"
                      ".filter((r) => r.querySelector('title') && r.getAttribute('fill') === 'rgb(225,87,89)').length")
        print(f"playground: Run in the {EXERCISE} box: {status!r} in {time.time() - t0:.1f} s; {red} red cells in the map")
        if "1000 still hold the 0xFF poison" not in out or "c  (float[1000])" not in figure or "1000 never written" not in figure or red < 1:
            sys.exit(f"playground: FAIL: expected the stub's run (c never written) and its map; got {status!r}:\n{out}\n{figure}")
        page.shot(run_box, a.shots / "exercise-run.png")

        # 5. Check the (untouched) exercise: its grader's report in the page.
        check = f"{box} .gpubook-check"
        t0 = time.time()
        page.click(f"{check} .gpubook-play-check")
        status = page.wait(
            f"(() => {{ const s = document.querySelector('{check} .gpubook-play-status').textContent;"
            " return s && !s.startsWith('grading') ? s : null; })()",
            900,
            "the check finished",
        )
        report = page.js(f"return document.querySelector('{check} .gpubook-play-out').textContent")
        print(f"playground: Check {EXERCISE}: {status!r} in {time.time() - t0:.1f} s")
        if status != "not yet" or f"{EXERCISE} is not solved yet" not in report or "concept:" not in report:
            sys.exit(f"playground: FAIL: expected the stub's report, field by field; got {status!r}:\n{report}")
        page.shot(box, a.shots / "check.png")
        page.shot(f"{check} .gpubook-play-out", a.shots / "check-report.png")

        # 6. A race: chapter 4's block reverse without its barrier names both lines.
        race = ".gpubook-play[data-play='reverse_blocks']"
        browser.open(f"http://127.0.0.1:{port}/ch04-shared-memory/index.html", 1280)
        page.wait(f"document.querySelector(\"{race} textarea\")", 30, "chapter 4's listing became an editor")
        page.js(
            f"const t = document.querySelector(\"{race} textarea\");"
            " t.value = t.value.split('\\n').filter((l) => !l.includes('__syncthreads()')).join('\\n');"
            " t.dispatchEvent(new Event('input')); return true"
        )
        page.click(f"{race} .gpubook-play-run")
        status, out = run_done(page, race, "the racy run finished")
        also = page.js(f"return document.querySelectorAll(\"{race} .gpubook-play-gutter span.also\").length")
        print(f"playground: without the barrier: {status!r}, {also} more line(s) marked")
        if "data race" not in out or not status.startswith("failed at line") or also < 1:
            sys.exit(f"playground: FAIL: expected a data race naming two lines; got {status!r}:\n{out}")
        page.js(f"document.querySelector(\"{race} .gpubook-play-reset\").click(); return true")
        page.shot(race, a.shots / "race.png")
        ranks(page, browser, port, a.shots)
        print("playground: ok")
    finally:
        try:
            if browser:
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()


if __name__ == "__main__":
    main()
