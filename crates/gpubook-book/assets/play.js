// The served book's playground (gpubook book --serve adds this script to every page it sends):
// runnable listings become editors with Run and Reset, exercise boxes get Check. Edits are kept
// in the browser's localStorage. The server only answers requests carrying this start's token,
// which it wrote into the page as window.gpubookToken.
(function () {
  "use strict";
  const token = window.gpubookToken;

  async function post(url, body) {
    const r = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Gpubook-Token": token },
      body: JSON.stringify(body),
    });
    const answer = await r.json().catch(() => ({ error: "the server's answer was not JSON" }));
    if (!r.ok) throw new Error(answer.error || r.status + " " + r.statusText);
    return answer;
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function say(status, text, good) {
    status.textContent = text;
    status.className = "gpubook-play-status " + (good ? "ok" : "bad");
  }

  function listing(box) {
    const id = box.dataset.play;
    const original = box.dataset.source;
    const key = "gpubook-play:" + location.pathname + ":" + id;
    for (const old of box.querySelectorAll(":scope > pre, .gpubook-play-local")) old.hidden = true;

    const editor = el("div", "gpubook-play-editor");
    const gutter = el("pre", "gpubook-play-gutter");
    const area = el("div", "gpubook-play-area");
    const text = el("textarea");
    text.spellcheck = false;
    text.setAttribute("aria-label", "kernel source of " + id);
    text.value = localStorage.getItem(key) ?? original;
    const highlight = el("div", "gpubook-play-highlight");
    highlight.hidden = true;
    area.append(text);
    editor.append(gutter, area, highlight);

    const buttons = el("div", "gpubook-play-buttons");
    const run = el("button", "gpubook-play-run", "Run");
    const reset = el("button", "gpubook-play-reset", "Reset");
    const status = el("span", "gpubook-play-status");
    buttons.append(run, reset, status);
    const out = el("pre", "gpubook-play-out");
    out.hidden = true;
    box.prepend(editor, buttons, out);

    // The diagnostic's line in red (gutter and a band across the code); other lines it names
    // (a race's other access) in the gutter.
    function mark(lines) {
      for (const s of gutter.querySelectorAll("span.bad, span.also")) s.classList.remove("bad", "also");
      const spans = (lines || []).map((n) => gutter.children[n - 1]).filter(Boolean);
      highlight.hidden = spans.length === 0;
      spans.forEach((s, i) => s.classList.add(i === 0 ? "bad" : "also"));
      if (!spans.length) return;
      highlight.style.top = spans[0].offsetTop + "px";
      highlight.style.height = spans[0].offsetHeight + "px";
    }
    function lines() {
      const n = text.value.split("\n").length;
      text.rows = Math.max(n, 3);
      gutter.replaceChildren(...Array.from({ length: n }, (_, i) => el("span", "", String(i + 1))));
      mark([]);
    }
    text.addEventListener("input", () => {
      if (text.value === original) localStorage.removeItem(key);
      else localStorage.setItem(key, text.value);
      lines();
    });
    text.addEventListener("keydown", (e) => {
      if (e.key === "Tab" && !e.shiftKey) {
        e.preventDefault();
        text.setRangeText("    ", text.selectionStart, text.selectionEnd, "end");
        text.dispatchEvent(new Event("input"));
      }
    });
    reset.addEventListener("click", () => {
      text.value = original;
      localStorage.removeItem(key);
      lines();
      out.hidden = true;
      status.textContent = "";
    });
    run.addEventListener("click", async () => {
      run.disabled = true;
      say(status, "running…", true);
      mark([]);
      try {
        const r = await post("/__gpubook/run", { id, source: text.value });
        out.textContent = r.output;
        out.hidden = false;
        if (r.ok) say(status, "ok", true);
        else say(status, r.timed_out ? "stopped: too slow" : r.line ? "failed at line " + r.line : "failed", false);
        mark(r.lines);
      } catch (e) {
        say(status, "could not run: " + e.message, false);
      } finally {
        run.disabled = false;
      }
    });
    lines();
  }

  function exercise(box) {
    const id = box.dataset.check;
    const buttons = el("div", "gpubook-play-buttons");
    const check = el("button", "gpubook-play-check", "Check");
    const status = el("span", "gpubook-play-status");
    buttons.append(check, status);
    const out = el("pre", "gpubook-play-out");
    out.hidden = true;
    box.append(buttons, out);
    check.addEventListener("click", async () => {
      check.disabled = true;
      say(status, "grading your files in exercises/ (the first check builds them)…", true);
      try {
        const r = await post("/__gpubook/check", { id });
        out.textContent = r.output;
        out.hidden = false;
        say(status, r.passed ? "passed" : r.timed_out ? "stopped: too slow" : "not yet", r.passed);
      } catch (e) {
        say(status, "could not check: " + e.message, false);
      } finally {
        check.disabled = false;
      }
    });
  }

  function start() {
    if (!token) return;
    document.querySelectorAll(".gpubook-play[data-play]").forEach(listing);
    document.querySelectorAll(".gpubook-check[data-check]").forEach(exercise);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
