#!/usr/bin/env python3
"""Exercises in the chapter notebooks: each one's kernel cell, host-function cell and check cell
(`gpubook::check!`), after the demonstrations, with the stub in place.

The cells are made from the learner's files (exercises/, generated from solutions/): the kernel
becomes a string constant and `kernel!("chNN/x.cu")` becomes `Source::text("x.cu", X_CU)`.

  --update NOTEBOOK...   write (or refresh) the exercise cells of EXERCISES into the notebooks
  --check NOTEBOOK...    CI, after scripts/ci/notebooks.sh ran the notebooks into target/notebooks:
                         1. the cells match exercises/ (no drift);
                         2. in the executed notebook each stub's check cell shows its failing
                            report ("is not solved yet", the grader's words);
                         3. the same cells filled in from solutions/ (setup cells and exercise cells
                            only) run, and each check cell shows "passed".
"""

import argparse
import json
import os
import pathlib
import re
import secrets
import sys
import tempfile
import tomllib

import nbformat

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run_notebooks import output_text, run  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The exercises each notebook holds, in order. An exercise needs a host function named in
# exercises.toml and graded by `gpubook::grade::chNN::FUNCTION(answer)`, with plain .cu kernels.
EXERCISES = {
    "ch01-heterogeneous": ["ch01-who-am-i", "ch01-first-launch"],
    "ch03-spmd": ["ch03-vector-add", "ch03-grid-stride", "ch03-matrix-add"],
}
TAG = "gpubook_exercise"
# The notebooks whose exercises CI also runs filled in from solutions/: a solved run is a fresh
# kernel (minutes on CI's 2 cores), so one notebook proves the path; GPUBOOK_NB_SOLVE_ALL=1 runs all.
SOLVED_IN_CI = {"ch01-heterogeneous"}


def catalog():
    return {e["id"]: e for e in tomllib.loads((ROOT / "exercises.toml").read_text())["exercise"]}


def anchored(text, name):
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip() == f"// ANCHOR: {name}")
    end = next(i for i, l in enumerate(lines) if i > start and l.strip() == f"// ANCHOR_END: {name}")
    return lines[start + 1 : end]


def solved(lines):
    """Solution lines: the SOLUTION parts kept, the STUB parts and every marker dropped."""
    out, stub = [], False
    for l in lines:
        s = l.strip()
        if s == "// STUB":
            stub = True
        elif s == "// END SOLUTION":
            stub = False
        elif not stub and s != "// SOLUTION" and "ANCHOR" not in s:
            out.append(l)
    return out


def const_name(kernel):
    return re.sub(r"\W", "_", pathlib.Path(kernel).stem).upper() + "_CU"


def cells_of(ex, tree):
    """(part, source) of the exercise's code cells, from `tree` (exercises/ or solutions/): a
    constant for each kernel its host function loads, the host function with the chapter's
    imports, and the check."""
    base = ROOT / tree
    fix = solved if tree == "solutions" else (lambda ls: [l for l in ls if "ANCHOR" not in l])
    chapter = ex["id"].split("-")[0]
    rust = (base / "src" / f"{chapter}.rs").read_text()
    body = "\n".join(fix(anchored(rust, ex["function"])))
    parts = []
    for rel in re.findall(r'kernel!\("([^"]+)"\)', body):
        k = f"kernels/{rel}"
        text = "\n".join(fix((base / k).read_text().splitlines())).strip("\n")
        parts.append(("kernel", f'const {const_name(k)}: &str = r#"\n{text}\n"#;'))
        body = body.replace(f'kernel!("{rel}")', f'Source::text("{pathlib.Path(k).name}", {const_name(k)})')
    imports = [l for l in rust.splitlines() if l.startswith("use gpubook::gpu::")]
    imports = [l.replace("};", ", Source};") for l in imports]
    parts.append(("function", "\n".join(imports) + "\n\n" + body))
    parts.append(("check", f"gpubook::check!({chapter}::{ex['function']}({ex['function']}))"))
    return parts


def intro(ex):
    files = " and ".join(f"`exercises/{f}`" for f in ex["files"])
    return (
        f"## Exercise `{ex['id']}`: {ex['title']}\n\n"
        "Complete the kernel and the host function in the two cells below (the same code as "
        f"{files}), run them, then the check cell: it grades your answer with the same grader as "
        f"`gpubook check {ex['id']}`, shows the report, and records a pass in your progress."
    )


def tagged(nb, ex_id):
    return [c for c in nb.cells if c.get("metadata", {}).get(TAG, {}).get("id") == ex_id]


def raw_cell(kind, source, meta):
    """A cell in the notebooks' own JSON layout (nbformat would reorder every cell's keys)."""
    cell = {"cell_type": kind, "id": secrets.token_hex(4), "metadata": {TAG: meta}, "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def update(path, cat):
    """The notebook's exercise cells replaced by fresh ones, in EXERCISES' order, where the first
    of them was (else at the end); a cell that was there keeps its id."""
    nb = json.loads(path.read_text())
    tag = lambda c: c.get("metadata", {}).get(TAG)  # noqa: E731
    ids = {(t["id"], t["part"]): c["id"] for c in nb["cells"] if (t := tag(c)) and "id" in c}
    block = []
    for ex_id in EXERCISES[path.stem]:
        ex = cat[ex_id]
        block.append(raw_cell("markdown", intro(ex), {"id": ex_id, "part": "intro"}))
        block += [raw_cell("code", src, {"id": ex_id, "part": part}) for part, src in cells_of(ex, "exercises")]
    for c in block:
        c["id"] = ids.get((c["metadata"][TAG]["id"], c["metadata"][TAG]["part"]), c["id"])
    at = next((i for i, c in enumerate(nb["cells"]) if tag(c)), len(nb["cells"]))
    rest = [c for c in nb["cells"] if not tag(c)]
    nb["cells"] = rest[:at] + block + rest[at:]
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print(f"updated {path}: {', '.join(EXERCISES[path.stem])}")


def check_cell(nb, ex_id):
    return next(c for c in tagged(nb, ex_id) if c.metadata[TAG]["part"] == "check")


def check_one(path, cat, executed_dir):
    ok = True
    nb = nbformat.read(path, as_version=4)
    ids = EXERCISES[path.stem]
    for ex_id in ids:
        want = [src for _, src in cells_of(cat[ex_id], "exercises")]
        have = [c.source for c in tagged(nb, ex_id) if c.cell_type == "code"]
        if want != have:
            print(f"FAIL {path.name}: {ex_id}'s cells differ from exercises/ (scripts/ci/notebook_exercises.py --update)")
            ok = False
    executed = nbformat.read(executed_dir / path.name, as_version=4)
    for ex_id in ids:
        text = "\n".join(output_text(o) for o in check_cell(executed, ex_id).get("outputs", []))
        if f"{ex_id} is not solved yet" not in text or "<pre" not in text:
            print(f"FAIL {path.name}: the stub of {ex_id} did not show its failing report; its check cell showed:\n{text[:2000]}")
            ok = False
        else:
            print(f"ok   {path.name}: the stub of {ex_id} fails, with its report shown")
    if path.stem not in SOLVED_IN_CI and not os.environ.get("GPUBOOK_NB_SOLVE_ALL"):
        print(f"--   {path.name}: solutions not run (SOLVED_IN_CI; GPUBOOK_NB_SOLVE_ALL=1 runs them)")
        return ok
    # The solutions, filled in: the notebook's setup (its first two code cells) and the
    # exercises' cells only, so that the demonstrations do not run twice.
    setup = [c for c in nb.cells if c.cell_type == "code" and TAG not in c.metadata][:2]
    cells = list(setup)
    for ex_id in ids:
        solution = [src for _, src in cells_of(cat[ex_id], "solutions")]
        code = [c for c in tagged(nb, ex_id) if c.cell_type == "code"]
        for c, src in zip(code, solution):
            c.source = src
        cells += code
    nb.cells = cells
    # Next to the notebook, for its `:dep gpubook = { path = "../crates/gpubook" }`.
    solved = path.with_name(f".solved-{path.name}")
    with tempfile.TemporaryDirectory() as d:
        try:
            nbformat.write(nb, solved)
            found, seconds = run(solved, pathlib.Path(d), 900)
        finally:
            solved.unlink(missing_ok=True)
        done = nbformat.read(pathlib.Path(d) / solved.name, as_version=4)
    for number, what in found:
        print(f"FAIL {path.name} (solved): cell {number}: {what}")
        ok = False
    for ex_id in ids:
        text = "\n".join(output_text(o) for o in check_cell(done, ex_id).get("outputs", []))
        if f"{ex_id} passed" not in text:
            print(f"FAIL {path.name}: the solution of {ex_id} did not pass; its check cell showed:\n{text[:2000]}")
            ok = False
        else:
            print(f"ok   {path.name}: the solution of {ex_id} passes ({seconds:.0f} s for the solved notebook)")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+", type=pathlib.Path)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--update", action="store_true", help="write the exercise cells into the notebooks")
    mode.add_argument("--check", action="store_true", help="CI: no drift, stubs fail with a report, solutions pass")
    ap.add_argument("--executed", type=pathlib.Path, default=ROOT / "target/notebooks")
    a = ap.parse_args()
    cat = catalog()
    paths = [p for p in a.notebooks if p.stem in EXERCISES]
    if a.update:
        for p in paths:
            update(p, cat)
        return
    failed = False
    for p in paths:
        failed |= not check_one(p.resolve(), cat, a.executed)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
