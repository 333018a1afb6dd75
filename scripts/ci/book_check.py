#!/usr/bin/env python3
"""Reads the built book in headless Chromium, as a person would, and fails on what they would trip on.

For every page of target/book (or --pages), at a 1280 px wide window:
  - a code block or table wider than its column (scrollWidth > clientWidth: the reader would have
    to scroll sideways, or the right edge is cut);
  - a figure whose smallest text is under --min-px pixels as displayed (an inline SVG's text size
    times the scale the page draws it at), or an SVG shown as an <img> scaled below its own size
    (its text cannot be measured, so it must not be shrunk);
  - a `{{#...}}` marker left in the page's text (outside code), which a preprocessor did not expand;
and at a 400 px window (a phone), where code and figures scroll sideways in their own boxes:
  - a figure whose text is under --min-px as displayed (a figure shrunk to the screen);
  - the page itself scrolling sideways (something wider than the screen outside a scrolling box).
Then screenshots of the whole page at 1280 and at 400 px, cut into screens, for people to look at.

It drives Chromium through chromedriver (the WebDriver protocol over HTTP, with the standard
library only), in one browser session for the whole book.

Usage: book_check.py [--book DIR] [--shots DIR] [--min-px 10] [--pages PAGE...]
Exit status 0 when every page passes, 1 otherwise (each problem is printed).
"""

import argparse
import base64
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--hide-scrollbars",
]

# What the page measures about itself. Returns {overflow: [...], figures: [...], images: [...]}.
MEASURE = r"""
const main = document.querySelector('main') || document.body;
// Folded parts (hints, reports) are measured open, as a reader who opens them sees them.
for (const d of main.querySelectorAll('details')) d.open = true;
const out = {overflow: [], figures: [], images: [], leftover: [], column: main.clientWidth,
  // How far the page itself scrolls sideways: code, tables and figures scroll in their own boxes,
  // the page never.
  page_overflow: document.documentElement.scrollWidth - window.innerWidth};
const what = (el) => {
  const h = el.closest('section, div, figure, details')?.querySelector('h1,h2,h3') ;
  let prev = el; let heading = '';
  while (prev && !heading) { prev = prev.previousElementSibling; if (prev && /^H[1-4]$/.test(prev.tagName)) heading = prev.textContent.trim(); }
  const text = el.textContent.trim().split('\n').find((l) => l.trim()) || '';
  return (heading ? heading + ': ' : '') + text.trim().slice(0, 70);
};
for (const el of main.querySelectorAll('pre, pre > code, table')) {
  // A <pre> whose <code> overflows is reported once, as the code.
  if (el.tagName === 'PRE' && el.querySelector(':scope > code')) continue;
  const box = el.tagName === 'TABLE' ? (el.parentElement.classList.contains('table-wrapper') ? el.parentElement : el) : el;
  const right = el.getBoundingClientRect().right, edge = main.getBoundingClientRect().right;
  if (box.scrollWidth > box.clientWidth + 1 || right > edge + 1) {
    out.overflow.push({tag: el.tagName.toLowerCase(), need: box.scrollWidth, have: box.clientWidth, what: what(el.tagName === 'CODE' ? el.parentElement : el)});
  }
}
for (const svg of main.querySelectorAll('svg')) {
  if (svg.closest('.buttons, .fa, .sidebar, #menu-bar') || svg.getBoundingClientRect().width < 40) continue; // icons
  let min = Infinity, sample = '';
  for (const t of svg.querySelectorAll('text')) {
    const s = t.textContent.trim();
    if (!s) continue;
    const m = t.getScreenCTM();
    if (!m) continue;
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    if (px < min) { min = px; sample = s.slice(0, 40); }
  }
  if (min < Infinity) {
    const fig = svg.closest('figure');
    const cap = fig?.querySelector('figcaption')?.textContent.trim().slice(0, 70) || svg.querySelector('text')?.textContent.trim().slice(0, 70) || '';
    out.figures.push({min: Math.round(min * 10) / 10, sample, caption: cap, width: Math.round(svg.getBoundingClientRect().width)});
  }
}
for (const img of main.querySelectorAll('img')) {
  if (!/\.svg($|\?)/.test(img.src) || img.getBoundingClientRect().width === 0) continue;
  const scale = img.getBoundingClientRect().width / (img.naturalWidth || 1);
  out.images.push({src: img.getAttribute('src'), scale: Math.round(scale * 100) / 100});
}
// Text outside code that still holds a marker: a preprocessor left it unexpanded.
const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const node = walker.currentNode;
  if (node.parentElement.closest('code, pre, script, style')) continue;
  const at = node.textContent.indexOf('{{#');
  if (at >= 0) out.leftover.push(node.textContent.slice(at, at + 60));
}
return out;
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """One chromedriver and one Chromium session."""

    def __init__(self):
        driver = shutil.which("chromedriver") or "/usr/lib/chromium/chromedriver"
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if not os.path.exists(driver) or not binary:
            sys.exit("book_check: chromium and chromedriver are needed (apt-get install -y chromium chromium-driver)")
        self.port = free_port()
        self.profile = tempfile.mkdtemp(prefix="book-check-")
        self.proc = subprocess.Popen([driver, f"--port={self.port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                self.call("GET", "/status")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        caps = {"browserName": "chrome", "goog:chromeOptions": {"binary": binary, "args": FLAGS + [f"--user-data-dir={self.profile}", "--window-size=1280,1000"]}}
        self.session = self.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=300) as r:  # a first served page under load took over 120 s once
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:  # chromedriver says why in the body (a page-load timeout ...)
            raise RuntimeError(f"chromedriver {method} {path}: HTTP {e.code}: {e.read()[:600].decode(errors='replace')}") from None

    def s(self, method, path, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def cdp(self, cmd, params):
        return self.s("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params})

    def open(self, url, width):
        self.cdp("Emulation.setDeviceMetricsOverride", {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        self.s("POST", "/url", {"url": url})
        # mdbook decides on the sidebar from the width when the page loads; settle fonts and layout.
        self.run("return document.fonts.ready.then(() => true)")

    def run(self, script):
        return self.s("POST", "/execute/sync", {"script": script, "args": []})

    def screenshots(self, stem, width, screen=1600):
        height = int(self.run("return Math.ceil(document.documentElement.scrollHeight)"))
        paths = []
        for i, y in enumerate(range(0, height, screen)):
            clip = {"x": 0, "y": y, "width": width, "height": min(screen, height - y), "scale": 1}
            shot = self.cdp("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip})
            path = stem.with_name(f"{stem.name}-{width}-{i + 1:02}.png")
            path.write_bytes(base64.b64decode(shot["data"]))
            paths.append(path)
        return paths

    def close(self):
        try:
            self.s("DELETE", "")
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            shutil.rmtree(self.profile, ignore_errors=True)


def pages_of(book):
    """Every page of the book in a stable order, without mdbook's own (print, 404, toc) and
    without the API reference under api/ (rustdoc's pages, not the book's)."""
    skip = {"print.html", "404.html", "toc.html"}
    pages = (p.relative_to(book) for p in book.rglob("*.html"))
    return sorted(str(p) for p in pages if p.name not in skip and p.parts[0] != "api")


# A page with one of each fault, which the check must catch (so that it cannot go blind).
PLANTED = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<main style="width: 750px; font-family: sans-serif">
<pre><code>%s</code></pre>
<table><tr>%s</tr></table>
<figure><svg width="1400" height="100" viewBox="0 0 1400 100" style="max-width: 100%%; height: auto">
<text x="10" y="50" font-size="16">drawn 1400 px wide, shown in 750</text></svg></figure>
<p>{{#figure left unexpanded}}</p>
</main></body></html>""" % ("x" * 120, "<td>cell_without_spaces_</td>" * 12)

# A page that reads well at 1280 px and not on a phone: a figure that shrinks to the screen, and
# a block wider than the screen that does not scroll in a box of its own.
PLANTED_NARROW = """<!DOCTYPE html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body style="margin: 0">
<main><figure style="margin: 0"><svg width="720" height="100" viewBox="0 0 720 100" style="max-width: 100%; height: auto">
<text x="10" y="50" font-size="14">drawn 720 px wide</text></svg></figure>
<div style="width: 600px">a block wider than a phone</div>
</main></body></html>"""


def self_test(browser):
    """The planted faults are all found: an overflowing code block and table, small text, a
    marker left unexpanded."""
    d = tempfile.mkdtemp(prefix="book-check-planted-")
    try:
        page = pathlib.Path(d) / "planted.html"
        page.write_text(PLANTED)
        browser.open(page.as_uri(), 1280)
        m = browser.run(MEASURE)
        narrow = pathlib.Path(d) / "planted-narrow.html"
        narrow.write_text(PLANTED_NARROW)
        browser.open(narrow.as_uri(), 400)
        n = browser.run(MEASURE)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    found = {
        "an overflowing code block": any(o["tag"] == "code" for o in m["overflow"]),
        "an overflowing table": any(o["tag"] == "table" for o in m["overflow"]),
        "text under 10 px": any(f["min"] < 10 for f in m["figures"]),
        "an unexpanded marker": bool(m["leftover"]),
        "a figure shrunk on a phone": any(f["min"] < 10 for f in n["figures"]),
        "a page scrolling sideways on a phone": n["page_overflow"] > 1,
    }
    missed = [what for what, ok in found.items() if not ok]
    if missed:
        print("ERROR: the check missed planted faults: " + ", ".join(missed))
        return False
    print("self-test: the check finds a planted overflowing code block and table, small text, a leftover marker, "
          "and on a phone a shrunk figure and a page scrolling sideways")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--book", type=pathlib.Path, default=pathlib.Path("target/book"))
    ap.add_argument("--shots", type=pathlib.Path, default=pathlib.Path("target/screenshots"))
    ap.add_argument("--min-px", type=float, default=10.0)
    ap.add_argument("--widths", default="1280,400", help="widths: every check at the first, figure text and sideways scrolling at the others; screenshots at all")
    ap.add_argument("--no-shots", action="store_true")
    ap.add_argument("--pages", nargs="*")
    args = ap.parse_args()
    book = args.book.resolve()
    if args.shots.exists():
        for old in args.shots.glob("*.png"):
            old.unlink()
    args.shots.mkdir(parents=True, exist_ok=True)
    widths = [int(w) for w in args.widths.split(",")]
    pages = args.pages or pages_of(book)
    browser = Browser()
    problems, smallest, report = [], [], []
    try:
        if not self_test(browser):
            return 1
        for page in pages:
            url = (book / page).as_uri()
            browser.open(url, widths[0])
            m = browser.run(MEASURE)
            for o in m["overflow"]:
                problems.append(f"{page}: a {o['tag']} needs {o['need']} px in a column of {o['have']} px: {o['what']}")
            for f in m["figures"]:
                smallest.append((f["min"], page, f))
                if f["min"] < args.min_px:
                    problems.append(f"{page}: figure text {f['min']} px as displayed (under {args.min_px}): \"{f['sample']}\" in {f['caption']!r}")
            for left in m["leftover"]:
                problems.append(f"{page}: a marker was left unexpanded: {left!r}")
            for i in m["images"]:
                if i["scale"] < 0.99:
                    problems.append(f"{page}: the SVG image {i['src']} is shrunk to {i['scale']:.2f}: its text cannot be checked, inline it or draw it for the column")
            if m["page_overflow"] > 1:
                problems.append(f"{page}: at {widths[0]} px the page scrolls sideways by {m['page_overflow']} px")
            figs = ", ".join(f"{f['min']:g}" for f in m["figures"])
            report.append(f"{page}: column {m['column']} px, {len(m['overflow'])} overflowing, figures' smallest text (px): {figs or '-'}")
            stem = args.shots / page.removesuffix(".html").replace("/", "-")
            if not args.no_shots:
                browser.screenshots(stem, widths[0])
            for w in widths[1:]:
                browser.open(url, w)
                n = browser.run(MEASURE)
                for f in n["figures"]:
                    if f["min"] < args.min_px:
                        problems.append(f"{page}: at {w} px, figure text {f['min']} px as displayed (under {args.min_px}): \"{f['sample']}\" in {f['caption']!r}")
                if n["page_overflow"] > 1:
                    problems.append(f"{page}: at {w} px the page scrolls sideways by {n['page_overflow']} px (something wider than the screen outside a scrolling box)")
                if not args.no_shots:
                    browser.screenshots(stem, w)
    finally:
        browser.close()
    print("\n".join(report))
    if smallest:
        low = min(smallest, key=lambda s: s[0])
        print(f"smallest figure text in the book: {low[0]} px ({low[1]}: \"{low[2]['sample']}\")")
    shots = "no screenshots" if args.no_shots else f"screenshots at {', '.join(map(str, widths))} px in {args.shots}"
    print(f"{len(pages)} pages checked at {', '.join(map(str, widths))} px; {shots}")
    if problems:
        print(f"\n{len(problems)} problem(s):")
        print("\n".join("  " + p for p in problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
