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
    const figure = el("div", "gpubook-play-map");
    figure.hidden = true;
    const title = box.querySelector(":scope > .gpubook-play-title");
    if (title) title.after(editor, buttons, out, figure);
    else box.prepend(editor, buttons, out, figure);

    // The map is laid out for the width it gets (the column, or a phone's 400 px), so its text
    // stays at 11-12 px and nothing overflows; drawn again when that width changes.
    let drawn = null;
    function redraw() {
      const width = Math.max(300, Math.min(COLUMN, Math.floor(figure.clientWidth || COLUMN)));
      if (!drawn || drawn.width === width) return;
      drawn.width = width;
      figure.replaceChildren(touchMap(drawn.map, width));
    }
    if (window.ResizeObserver) new ResizeObserver(redraw).observe(figure);

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
      figure.hidden = true;
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
        figure.hidden = !r.map;
        drawn = r.map ? { map: r.map, width: 0 } : null;
        redraw();
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

  // What a run touched (gpubook run --map), drawn at the width it is shown (at most the book's
  // 750 px column): per buffer a strip of cells, each one element or a few, blue where the
  // launches wrote (or, where check mode recorded the writer, the color of the writing block),
  // grey where the element kept its first value, red where it still holds the poison of a
  // buffer never written.
  const SVG = "http://www.w3.org/2000/svg";
  const COLUMN = 750, LEFT = 44, CELL = 13; // at 750 px: 44 + 50 × 14 px, 744
  // Block colors: Tableau 10 without the blue, red and grey that mean written with no writer
  // recorded, the poison, and "kept its first value". Seven, so that blocks a power of two
  // apart do not share one.
  const BLOCK_COLORS = ["#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"];
  // Splits text into lines of at most `width` px at `px` font size (0.55 em a character).
  function wrap(text, width, px) {
    const most = Math.max(10, Math.floor(width / (px * 0.55)));
    const lines = [];
    let line = "";
    for (const word of text.split(" ")) {
      if (line && line.length + 1 + word.length > most) {
        lines.push(line);
        line = word;
      } else line = line ? line + " " + word : word;
    }
    return line ? [...lines, line] : lines;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function mix(a, b, t) {
    const c = (x, y) => Math.round(x + (y - x) * t);
    return `rgb(${c(a[0], b[0])},${c(a[1], b[1])},${c(a[2], b[2])})`;
  }
  const GREY = [224, 224, 224], BLUE = [78, 121, 167], RED = [225, 87, 89];
  function touchMap(map, width) {
    const fig = svg("svg", { class: "gpubook-touch-map", role: "img", "font-family": "sans-serif", "font-size": "12" });
    const parts = [];
    const PER_ROW = Math.floor((width - LEFT) / (CELL + 1));
    // A color per writing block (and launch), in the order they first appear in the figure.
    const colors = new Map();
    const blockColor = (by) => {
      const key = `${by.launch}:${by.block}`;
      if (!colors.has(key)) colors.set(key, BLOCK_COLORS[colors.size % BLOCK_COLORS.length]);
      return colors.get(key);
    };
    // Lines of text, wrapped to the width; `y` is the first baseline, returns the last.
    const text = (x, y, words, attrs, px = 12) => {
      wrap(words, width - x, px).forEach((l, i) => parts.push(svg("text", { x, y: y + i * (px + 4), ...attrs }, l)));
      return y + (wrap(words, width - x, px).length - 1) * (px + 4);
    };
    let y = 18;
    const dims = (d) => (d[1] === 1 && d[2] === 1 ? String(d[0]) : d.filter((x, i) => i < 2 || x !== 1).join("×"));
    // With several ranks every launch ran once per rank: name rank 0's, say how many ranks.
    const ranks = map.ranks || 1;
    const shown = map.launches.filter((l) => !l.rank);
    const launches = shown.map((l) => `${l.kernel}<<<${dims(l.grid)}, ${dims(l.block)}>>>`).join(", then ");
    y = text(0, y, "What the run touched: " + launches, { "font-weight": "bold", "font-size": "13" }, 13);
    y += 18;
    const threads = shown.map((l) => l.threads).filter((t) => t != null);
    const how = threads.length ? `${threads.join(" + ")} threads ran to the end, ` : "";
    y = text(0, y, `${how}on ${map.backend}; a cell is one element, or a few where it says so`, { fill: "#666" });
    if (ranks > 1) {
      const each = `each launch ran on each of the ${ranks} ranks in turn, and every rank has its own copy of every buffer`;
      y = text(0, y + 16, each, { fill: "#666" });
    }
    if (map.writers && !map.writers.known) y = text(0, y + 16, `Which thread wrote what is unknown: ${map.writers.why}.`, { fill: "#666" });
    y += 10;
    const byBlock = map.writers && map.writers.known;
    const legend = [
      [BLUE, byBlock ? "written, writer not recorded" : "written by the launches"],
      [GREY, "kept its first value"],
      [RED, "never written (still the poison)"],
    ];
    // Swatches with labels, wrapped to the width.
    const swatches = (items, x0) => {
      let x = x0;
      y += 14;
      for (const [fill, label] of items) {
        const w = 22 + label.length * 6.6;
        if (x > x0 && x + w > width) {
          x = x0;
          y += 16;
        }
        parts.push(svg("rect", { x, y: y - 10, width: 11, height: 11, fill }));
        parts.push(svg("text", { x: x + 15, y }, label));
        x += w + 8;
      }
    };
    swatches(legend.map(([c, label]) => [mix(c, c, 0), label]), 0);
    y += 12;
    let rank = null;
    for (const b of map.buffers) {
      if (b.rank !== undefined && b.rank !== rank) {
        rank = b.rank;
        y += 26;
        parts.push(svg("line", { x1: 0, x2: width, y1: y - 14, y2: y - 14, stroke: "#bbb" }));
        parts.push(svg("text", { x: 0, y, "font-weight": "bold", "font-size": "13" }, `rank ${rank}`));
      }
      y += 20;
      const traffic = (name, t) => (t ? `${name} ${t[0]} req / ${t[1]} sectors` : null);
      const counts = [traffic("loads", b.loads), traffic("stores", b.stores), b.atomics ? `${b.atomics} atomics` : null]
        .filter(Boolean)
        .join(" · ");
      const what = `${b.written_total} written` + (b.poisoned ? `, ${b.unwritten_total} never written` : "");
      const head = `${b.name}  (${b.type}[${b.n}])`;
      parts.push(svg("text", { x: 0, y, "font-weight": "bold" }, head));
      const stats = `${what}${counts ? "; " + counts : ""}`;
      const beside = Math.max(200, head.length * 7.5);
      y = beside + stats.length * 6.6 <= width ? text(beside, y, stats, { fill: "#444" }) : text(0, y + 16, stats, { fill: "#444" });
      y += 6;
      const writers = b.writers || [];
      b.written.forEach((w, i) => {
        const row = Math.floor(i / PER_ROW), col = i % PER_ROW;
        const top = y + row * (CELL + 2);
        if (col === 0) {
          parts.push(svg("text", { x: LEFT - 6, y: top + CELL - 2, "text-anchor": "end", "font-size": "11", fill: "#666" }, String(i * b.per_cell)));
        }
        const u = b.unwritten[i] / 100;
        const by = writers[i];
        const fill = by ? blockColor(by) : u > 0 ? mix(GREY, RED, Math.max(u, 0.35)) : mix(GREY, BLUE, w / 100);
        const cell = svg("rect", { x: LEFT + col * (CELL + 1), y: top, width: CELL, height: CELL, fill });
        const first = i * b.per_cell, last = Math.min(first + b.per_cell, b.n) - 1;
        const name = b.rank === undefined ? b.name : `${b.name}@${b.rank}`;
        const which = first === last ? `${name}[${first}]` : `${name}[${first}..=${last}]`;
        const who = by ? `; element ${by.i}: written by ${by.who}` : "";
        cell.append(svg("title", {}, `${which}: ${w}% written` + (b.poisoned ? `, ${b.unwritten[i]}% never written` : "") + who));
        parts.push(cell);
      });
      const rows = Math.ceil(b.written.length / PER_ROW);
      y += rows * (CELL + 2);
      if (b.per_cell > 1) {
        y += 13;
        const note = `each cell: ${b.per_cell} elements` + (writers.some(Boolean) ? ", colored by the writer of its first" : "");
        y = text(LEFT, y, note, { "font-size": "11", fill: "#666" }, 11);
      }
      // The writing blocks' colors, in the order they first appear.
      const keys = new Map();
      for (const by of writers) if (by && !keys.has(`${by.launch}:${by.block}`)) keys.set(`${by.launch}:${by.block}`, by);
      if (keys.size) {
        const SHOWN = 16;
        // "block 3", "block (1,2)" or "launch 2, block 0": the writer's text up to its thread.
        const items = [...keys.values()].slice(0, SHOWN).map((by) => [blockColor(by), by.who.slice(0, by.who.lastIndexOf(", thread"))]);
        swatches(items, LEFT);
        const notes = [];
        if (keys.size > SHOWN) notes.push(`and ${keys.size - SHOWN} more blocks`);
        if (keys.size > BLOCK_COLORS.length) notes.push(`colors repeat every ${BLOCK_COLORS.length} blocks: hover a cell for its writer`);
        if (notes.length) y = text(LEFT, y + 16, notes.join("; "), { "font-size": "11", fill: "#666" }, 11);
      }
    }
    fig.setAttribute("viewBox", `0 0 ${width} ${y + 8}`);
    fig.setAttribute("width", String(width));
    fig.append(...parts);
    return fig;
  }

  // The runner's typed outcome (gpubook-course's runner::Outcome), in the words the terminal
  // uses: the grader's report field by field, never parsed from text.
  function showOutcome(out, id, o) {
    out.replaceChildren();
    const line = (text, cls) => out.append(el("span", cls, text + "\n"));
    const labelled = (label, text) => {
      out.append(el("span", "gpubook-report-label", "  " + label.padEnd(9)));
      out.append(document.createTextNode(text + "\n"));
    };
    switch (o.outcome) {
      case "passed":
        line("✓ " + id + " passed!", "gpubook-report-ok");
        break;
      case "failed": {
        const printed = o.detail.printed.split("\n").filter((l) => l.trim() !== "");
        if (printed.length) {
          line("your code printed:", "gpubook-report-dim");
          for (const l of printed.slice(0, 20)) line("  " + l);
          if (printed.length > 20) line("  … and " + (printed.length - 20) + " more lines", "gpubook-report-dim");
          line("");
        }
        const r = o.detail.report;
        const f = r.failure;
        line("✗ " + r.id + " is not solved yet: " + f.what, "gpubook-report-bad");
        if (f.concept) labelled("concept:", f.concept);
        if (f.input) labelled("input:", f.input);
        for (const d of f.details) d.split("\n").forEach((l, k) => line("  " + (k === 0 ? "- " : "  ") + l));
        labelled("backend:", r.backend + "; seed " + r.seed + " (GPUBOOK_SEED=" + r.seed + " reproduces these inputs)");
        labelled("next:", "`gpubook hint " + r.id + "` for a hint");
        break;
      }
      case "does_not_compile":
        line("✗ " + id + " does not compile yet:", "gpubook-report-bad");
        line(o.detail.trimEnd());
        labelled("next:", "`gpubook hint " + id + "` for a hint");
        break;
      case "broken":
        line("✗ " + id + " could not be graded:", "gpubook-report-bad");
        line(o.detail.trimEnd());
        break;
      case "timed_out":
        line("stopped after " + o.detail.seconds + " s: the time limit of a check from the page", "gpubook-report-bad");
        break;
      default:
        line("an outcome this page does not know: " + JSON.stringify(o), "gpubook-report-bad");
    }
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
        showOutcome(out, id, r.outcome);
        out.hidden = false;
        const timedOut = r.outcome.outcome === "timed_out";
        say(status, r.passed ? "passed" : timedOut ? "stopped: too slow" : "not yet", r.passed);
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
