#!/usr/bin/env python3
"""Exercises in the chapter notebooks: every exercise of exercises.toml, after the demonstrations,
with the stub in place, graded by one `gpubook_course::check!` cell.

The cells are made from the learner's files (exercises/, generated from solutions/, so they show
only what the learner's crate shows: never a reference answer). A chapter's Rust file is split
into its top-level items:
- the learner's items: each exercise's answer functions (exercises.toml `answers`, else
  `function`), and every item that differs between exercises/ and solutions/ (or exists only in
  solutions/), which goes with the first exercise that uses it;
- the given items: the rest (constants, helper functions and types the file gives complete),
  with the file's `use` lines, in one cell before the exercises.
A kernel file loaded with `kernel!("chNN/x.cu")` becomes a string constant `X_CU` (in a cell of
its own, before the first cell that loads it) and the call `Source::text("x.cu", X_CU)`.
Items, not the book's anchors, because the anchors follow the book's prose, not the exercises:
ch04's `reductions` holds two exercises, ch09's combine exercise spans two anchors and a type
outside both, and ch08's and ch14's kernel-only exercises have none.

  --update NOTEBOOK...   write (or refresh) the exercise cells into the notebooks
  --check NOTEBOOK...    CI, after scripts/ci/notebooks.sh ran the notebooks into target/notebooks:
                         1. the cells match exercises/ (no drift);
                         2. in the executed notebook each stub's check cell shows its failing
                            report ("is not solved yet", the grader's words);
                         3. for the notebooks in SOLVED_IN_CI (all with GPUBOOK_NB_SOLVE_ALL=1):
                            the same cells filled in from solutions/ (the setup cells and the
                            exercise cells only) run in a course of their own (GPUBOOK_ROOT), each
                            check cell shows "passed", and the course's progress record says
                            passed: a notebook's pass counts like any other.
  --prove NOTEBOOK...    without the demonstrations, one kernel per notebook: the setup cells, the
                         exercise cells as they are (each check must fail with its report), then
                         filled in from solutions/ (each must pass and be recorded)
  --list                 the cells each notebook gets, by part (for a person to look at)
"""

import argparse
import json
import os
import pathlib
import re
import secrets
import shutil
import sys
import tempfile
import tomllib
from datetime import datetime

import nbformat

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run_notebooks import output_text, run  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAG = "gpubook_exercise"
# The notebooks whose exercises CI also runs filled in from solutions/. Each solved run is a fresh
# kernel (gpubook loaded, the setup and every exercise cell compiled: minutes on CI's 2 cores), and
# the stubs of all 40 exercises already add minutes to the run, so CI solves one chapter: ch09,
# whose exercises need what the generator must get right (kernels, a type and a helper given
# outside the functions, two answers graded together). GPUBOOK_NB_SOLVE_ALL=1 solves all 14;
# --prove proves all 14 without the demonstrations.
SOLVED_IN_CI = {"ch09-zero-copy"}
ITEM = re.compile(r"^(?:pub(?:\([a-z]+\))? )?(?:fn|const|static|struct|enum|type|trait|mod) (\w+)")
IMPL = re.compile(r"^impl(?:<[^>]*>)? (?:[\w:]+(?:<[^>]*>)? for )?(\w+)")


# --- The learner's files, and their solutions -------------------------------------------------


def catalog():
    data = tomllib.loads((ROOT / "exercises.toml").read_text())
    folders = {c["number"]: c["folder"] for c in data["chapter"]}
    exercises = [dict(e, notebook=folders[e["chapter"]]) for e in data["exercise"]]
    return folders, exercises


def answers(ex):
    return ex.get("answers", [ex["function"]])


def marker(line):
    s = line.strip()
    return s in ("// SOLUTION", "// STUB", "// END SOLUTION") or s.startswith(("// ANCHOR:", "// ANCHOR_END:"))


def solved(lines):
    """Solution lines: the SOLUTION parts kept, the STUB parts and every marker dropped."""
    out, stub = [], False
    for line in lines:
        s = line.strip()
        if s == "// STUB":
            stub = True
        elif s == "// END SOLUTION":
            stub = False
        elif not stub and not marker(line):
            out.append(line)
    return out


def read(tree, rel):
    """A file of exercises/ (as the learner has it) or solutions/ (solved), markers dropped."""
    lines = (ROOT / tree / rel).read_text().splitlines()
    return solved(lines) if tree == "solutions" else [l for l in lines if not marker(l)]


def items(lines):
    """The file's `use` lines, and its top-level items as {name: [(first line, last line, text)]}
    in file order (an item's doc comments and attributes with it; an `impl` joins its type's
    item). rustfmt's layout makes this simple: an item starts at column 0 and ends at the first
    `}` (or `;`) there."""
    uses, found, lead, i = [], {}, [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("use "):
            uses.append(line)
        elif line.startswith(("///", "#[", "//")) and not line.startswith("//!"):
            lead.append(line)
        elif (m := ITEM.match(line) or IMPL.match(line)) is not None:
            end = i
            while not (lines[end].startswith("}") or (lines[end].endswith(";") and "{" not in "".join(lines[i : end + 1]))):
                end += 1
            found.setdefault(m.group(1), []).append((i - len(lead), end, "\n".join(lead + lines[i : end + 1])))
            lead, i = [], end
        elif line.strip() == "":
            lead = []
        elif not line.startswith("//!"):
            sys.exit(f"notebook_exercises.py: cannot place this line of a chapter's file: {line!r}")
        i += 1
    return uses, found


def words(text):
    """The names a piece of code uses (comments left out)."""
    return set(re.findall(r"\b\w+\b", re.sub(r"//.*", "", text)))


def const_name(kernel):
    return re.sub(r"\W", "_", pathlib.Path(kernel).stem).upper() + "_CU"


def with_text_kernels(text):
    """`kernel!("chNN/x.cu")` as `Source::text("x.cu", X_CU)`: a notebook has no exercises/ crate."""
    return re.sub(r'kernel!\("([^"]+)"\)', lambda m: f'Source::text("{pathlib.Path(m[1]).name}", {const_name(m[1])})', text)


def kernels_in(text):
    return re.findall(r'kernel!\("([^"]+)"\)', text)


# --- A notebook's exercise cells ---------------------------------------------------------------


class Chapter:
    """The exercise cells of one chapter's notebook, as (key, kind, source-by-tree) in order."""

    def __init__(self, folder, exercises):
        self.folder, self.exercises = folder, exercises
        self.chapter = exercises[0]["id"].split("-")[0]
        rel = f"src/{self.chapter}.rs"
        self.uses, self.stub = items(read("exercises", rel))
        _, self.solution = items(read("solutions", rel))
        names = set(self.stub) | set(self.solution)
        every_answer = {a for ex in exercises for a in answers(ex)}
        same = lambda n: [t for *_, t in self.stub.get(n, [])] == [t for *_, t in self.solution.get(n, [])]  # noqa: E731
        helpers = {n for n in names if not same(n)} - every_answer
        learner = every_answer | helpers
        # Each of the learner's other items goes with the first exercise whose items use it.
        self.owned, taken = {}, set()
        for ex in exercises:
            mine, todo = [], list(answers(ex))
            while todo:
                name = todo.pop(0)
                if name in taken or name not in names:
                    continue
                taken.add(name)
                mine.append(name)
                used = words(self.text("exercises", [name]) + self.text("solutions", [name]))
                todo += sorted(n for n in used & helpers if n not in taken)
            self.owned[ex["id"]] = sorted(mine, key=self.order)
        left = sorted(learner - taken, key=self.order)
        self.owned[exercises[0]["id"]] += left
        self.given = [n for n in self.stub if n not in learner]
        self.variables = set()  # the demonstrations' variables (see `check`)

    def order(self, name):
        both = list(self.solution) + [n for n in self.stub if n not in self.solution]
        return both.index(name)

    def text(self, tree, names):
        """The items, in file order; items that touch in the file touch in the cell."""
        source = self.stub if tree == "exercises" else self.solution
        out, last = "", None
        for first, end, text in sorted(seg for n in names for seg in source.get(n, [])):
            out += ("" if last is None else "\n" if first == last + 1 else "\n\n") + text
            last = end
        return out

    def kernels(self, names):
        """The kernels the items load, stub or solved (a stub may not load what its solution does)."""
        found = []
        for tree in ("exercises", "solutions"):
            found += [k for k in kernels_in(self.text(tree, names)) if k not in found]
        return found

    def cells(self, tree):
        """[(key, kind, source)]: markdown and code cells, the code as `tree` has it. A kernel's
        constant is defined once, before the first cell that loads it."""
        out, defined = [], {}

        def kernel_cells(owner, names):
            for rel in self.kernels(names):
                if rel not in defined:
                    defined[rel] = owner
                    text = "\n".join(read(tree, f"kernels/{rel}")).strip("\n")
                    out.append(((owner, f"kernel {rel}"), "code", f'const {const_name(rel)}: &str = r#"\n{text}\n"#;'))

        out.append(((self.chapter, "intro"), "markdown", self.chapter_intro()))
        kernel_cells(self.chapter, self.given)
        uses = [u for u in self.uses if u != "use gpubook::kernel;"]
        if self.kernels(self.given + [n for names in self.owned.values() for n in names]):
            uses = [re.sub(r"^use gpubook::gpu::\{(.*)\};$", lambda m: self.with_source(m[1]), u) for u in uses]
        given = "\n".join(uses) + ("\n\n" + with_text_kernels(self.text(tree, self.given)) if self.given else "")
        out.append(((self.chapter, "given"), "code", given))
        for ex in self.exercises:
            owned = self.owned[ex["id"]]
            from_above = {rel: defined[rel] for rel in self.kernels(owned) if rel in defined}
            out.append(((ex["id"], "intro"), "markdown", self.intro(ex, from_above)))
            kernel_cells(ex["id"], owned)
            out.append(((ex["id"], "function"), "code", with_text_kernels(self.text(tree, owned))))
            out.append(((ex["id"], "check"), "code", self.check(ex)))
        return out

    @staticmethod
    def with_source(names):
        listed = [n.strip() for n in names.split(",")]
        return "use gpubook::gpu::{" + ", ".join(listed if "Source" in listed else listed + ["Source"]) + "};"

    def chapter_intro(self):
        return (
            f"## The exercises of chapter {int(self.chapter[2:])}\n\n"
            f"Each exercise below is the code of your `exercises/src/{self.chapter}.rs` and its kernels, "
            "with the stub in place. Fill in what its text names, run its cells, then its check cell: "
            "the check grades your cells with the same grader as `gpubook check`, shows the report here, "
            "and records the result in your progress (`gpubook list` shows it). `gpubook hint <id>` gives "
            "a hint.\n\n"
            "Run the next cell first: the file's imports, and the constants and helpers it gives you "
            "complete."
        )

    def intro(self, ex, from_above):
        """What to fill in: the kernels and functions whose stub differs from the solution."""
        fill = []
        for k in (f for f in ex["files"] if f.endswith(".cu")):
            if read("exercises", k) != read("solutions", k):
                fill.append(f"the kernel `{const_name(k)}` (your `exercises/{k}`)")
        todo = [n for n in self.owned[ex["id"]] if self.text("exercises", [n]) and self.text("exercises", [n]) != self.text("solutions", [n])]
        if todo:
            names = " and ".join(f"`{n}`" for n in todo)
            fill.append(f"the host code of {names} (your `exercises/src/{self.chapter}.rs`)")
        given = [] if todo else ["The host code is complete: run its cell as it is."]
        given += [
            f"It loads `{const_name(rel)}` from the cells of {'`' + owner + '`' if owner != self.chapter else 'the chapter'} above."
            for rel, owner in from_above.items()
        ]
        return (
            f"### Exercise `{ex['id']}`: {ex['title']}\n\n"
            f"Fill in {' and '.join(fill)}. {' '.join(given)} Run its cells in order: the last one "
            f"grades them as `gpubook check {ex['id']}` grades your files."
        ).replace("  ", " ")

    def check(self, ex):
        """The check cell. A demonstration's variable of an answer's name would shadow the
        function: `crate::` names the function then."""
        shadowed = [a for a in answers(ex) if a in self.variables]
        args = ", ".join(f"crate::{a}" if a in shadowed else a for a in answers(ex))
        note = f"// crate:: names the function above, not the variable `{shadowed[0]}` of the demonstrations\n" if shadowed else ""
        return f"{note}gpubook_course::check!({self.chapter}::{ex['function']}({args}))"


def chapters():
    folders, exercises = catalog()
    return {
        folder: Chapter(folder, [e for e in exercises if e["notebook"] == folder])
        for folder in folders.values()
        if any(e["notebook"] == folder for e in exercises)
    }


def demo_variables(nb_cells):
    text = "\n".join("".join(c["source"]) for c in nb_cells if c["cell_type"] == "code" and TAG not in c.get("metadata", {}))
    return set(re.findall(r"\blet\s+(?:mut\s+)?(\w+)", text))


def key_of(cell):
    t = cell.get("metadata", {}).get(TAG)
    return (t["id"], t["part"]) if t else None


def raw_cell(kind, source, key):
    """A cell in the notebooks' own JSON layout (nbformat would reorder every cell's keys)."""
    meta = {TAG: {"id": key[0], "part": key[1]}}
    cell = {"cell_type": kind, "id": secrets.token_hex(4), "metadata": meta, "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def demo_imports(nb_cells):
    """Names the demonstrations' `use` lines bring in: `use a::b;`, `use a::b as c;`, `a::b::{self, ..}`."""
    text = "\n".join("".join(c["source"]) for c in nb_cells if c["cell_type"] == "code" and TAG not in c.get("metadata", {}))
    names = set(re.findall(r"(\w+)::\{\s*self\b", text))
    names |= set(re.findall(r"^\s*use\s+[\w:]+::(\w+)\s*;", text, re.M))
    names |= set(re.findall(r"^\s*use\s+[\w:]+\s+as\s+(\w+)\s*;", text, re.M))
    return names


def prepare(ch, cells):
    ch.variables = demo_variables(cells)
    # evcxr keeps one item per name: an answer's function replaces a demonstration's `use` of the
    # same name, and a variable whose type was written through that import no longer compiles
    # (every later cell then fails with only lint output: ch11 once did, with `chunk_pair`).
    clash = sorted(demo_imports(cells) & {a for ex in ch.exercises for a in answers(ex)})
    if clash:
        sys.exit(f"{ch.folder}: the demonstrations import `{clash[0]}`, the name of an exercise's function; "
                 f"name the module in full there (gpubook::...::{clash[0]}::item)")
    return ch


def update(path, ch):
    """The notebook's exercise cells replaced by fresh ones, where the first of them was (else at
    the end); a cell that was there keeps its id."""
    nb = json.loads(path.read_text())
    prepare(ch, nb["cells"])
    ids = {key_of(c): c["id"] for c in nb["cells"] if key_of(c) and "id" in c}
    block = []
    for key, kind, source in ch.cells("exercises"):
        cell = raw_cell(kind, source, key)
        cell["id"] = ids.get(key, cell["id"])
        block.append(cell)
    at = next((i for i, c in enumerate(nb["cells"]) if key_of(c)), len(nb["cells"]))
    rest = [c for c in nb["cells"] if not key_of(c)]
    nb["cells"] = rest[:at] + block + rest[at:]
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print(f"updated {path}: {', '.join(e['id'] for e in ch.exercises)}")


# --- CI -----------------------------------------------------------------------------------------


def check_texts(nb, ex_ids):
    return {
        key_of(c)[0]: "\n".join(output_text(o) for o in c.get("outputs", []))
        for c in nb.cells
        if key_of(c) and key_of(c)[1] == "check" and key_of(c)[0] in ex_ids
    }


def check_one(path, ch, executed_dir):
    ok = True
    nb = nbformat.read(path, as_version=4)
    prepare(ch, nb.cells)
    ids = [e["id"] for e in ch.exercises]
    want = [(key, src) for key, kind, src in ch.cells("exercises") if kind == "code"]
    have = [(key_of(c), c.source) for c in nb.cells if key_of(c) and c.cell_type == "code"]
    if want != have:
        print(f"FAIL {path.name}: its exercise cells differ from exercises/ (scripts/ci/notebook_exercises.py --update)")
        return False
    executed = nbformat.read(executed_dir / path.name, as_version=4)
    print(f"     {path.name}: its exercise cells took {seconds_in([c for c in executed.cells if key_of(c)]):.0f} s of the run")
    texts = check_texts(executed, ids)
    for ex_id in ids:
        text = texts.get(ex_id, "")
        if f"{ex_id} is not solved yet" not in text or 'class="gpubook-report"' not in text:
            print(f"FAIL {path.name}: the stub of {ex_id} did not show its failing report; its check cell showed:\n{text[:2000]}")
            ok = False
        else:
            print(f"ok   {path.name}: the stub of {ex_id} fails, with its report shown")
    if path.stem not in SOLVED_IN_CI and not os.environ.get("GPUBOOK_NB_SOLVE_ALL"):
        print(f"--   {path.name}: solutions not run (SOLVED_IN_CI; GPUBOOK_NB_SOLVE_ALL=1 runs them)")
        return ok
    return solve(path, nb, ch, ids) and ok


def seconds_in(cells):
    """The time the cells took to run, from the timings nbclient records in their metadata."""
    total = 0.0
    for c in cells:
        t = c.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in t and "shell.execute_reply" in t:
            total += (datetime.fromisoformat(t["shell.execute_reply"]) - datetime.fromisoformat(t["iopub.execute_input"])).total_seconds()
    return total


def run_in_course(path, cells):
    """Runs the cells as a notebook next to `path` (for its `:dep gpubook = { path = ".." }`), in a
    course of its own (GPUBOOK_ROOT: a copy of exercises.toml, where the checks record progress).
    Returns (problems, seconds, the executed notebook, the course's progress record)."""
    nb = nbformat.v4.new_notebook(cells=cells, metadata=nbformat.read(path, as_version=4).metadata)
    temp_path = path.with_name(f".solved-{path.name}")
    with tempfile.TemporaryDirectory() as d:
        course = pathlib.Path(d) / "course"
        course.mkdir()
        shutil.copy(ROOT / "exercises.toml", course)
        os.environ["GPUBOOK_ROOT"] = str(course)  # the kernel inherits it
        try:
            nbformat.write(nb, temp_path)
            found, seconds = run(temp_path, pathlib.Path(d), 900)
        finally:
            temp_path.unlink(missing_ok=True)
            del os.environ["GPUBOOK_ROOT"]
        done = nbformat.read(pathlib.Path(d) / temp_path.name, as_version=4)
        record = course / ".gpubook" / "progress.json"
        progress = json.loads(record.read_text()).get("exercises", {}) if record.exists() else {}
    return found, seconds, done, progress


def exercise_cells(ch, tree):
    cells = []
    for key, kind, src in ch.cells(tree):
        if kind == "code":
            cell = nbformat.v4.new_code_cell(src)
            cell.metadata[TAG] = {"id": key[0], "part": key[1]}
            cells.append(cell)
    return cells


def setup_cells(nb):
    """The notebook's setup: its first two code cells (the `:dep` and the `Gpu`)."""
    return [c for c in nb.cells if c.cell_type == "code" and not key_of(c)][:2]


def passed(path, ids, texts, progress, what="solution"):
    ok = True
    for ex_id in ids:
        status = progress.get(ex_id, {}).get("status")
        if f"{ex_id} passed" not in texts.get(ex_id, ""):
            print(f"FAIL {path.name}: the {what} of {ex_id} did not pass; its check cell showed:\n{texts.get(ex_id, '')[:2000]}")
            ok = False
        elif status != "passed":
            print(f"FAIL {path.name}: the {what} of {ex_id} passed but the progress record says {status!r}")
            ok = False
        else:
            print(f"ok   {path.name}: the {what} of {ex_id} passes, and the progress record says passed")
    return ok


def solve(path, nb, ch, ids):
    """The notebook's setup and its exercise cells filled in from solutions/ (no demonstrations),
    in a fresh kernel: every check passes and is recorded."""
    found, seconds, done, progress = run_in_course(path, setup_cells(nb) + exercise_cells(ch, "solutions"))
    for number, what in found:
        print(f"FAIL {path.name} (solved): cell {number}: {what}")
    ok = passed(path, ids, check_texts(done, ids), progress) and not found
    print(f"     {path.name}: the solved notebook took {seconds:.0f} s")
    return ok


def prove(path, ch):
    """A quick proof without the demonstrations, for all chapters on a laptop: in one kernel, the
    setup, the exercise cells as the notebook has them (each check must fail with its report),
    then filled in from solutions/ (each check must pass and be recorded)."""
    nb = nbformat.read(path, as_version=4)
    prepare(ch, nb.cells)
    ids = [e["id"] for e in ch.exercises]
    stubs = [c for c in nb.cells if key_of(c) and c.cell_type == "code"]
    solutions = exercise_cells(ch, "solutions")
    found, seconds, done, progress = run_in_course(path, setup_cells(nb) + stubs + solutions)
    ran = done.cells[len(setup_cells(nb)) :]
    ok = True
    for number, what in found:
        # A stub's own failure is its check's report, which is not an error output.
        print(f"FAIL {path.name}: cell {number}: {what}")
        ok = False
    stub_texts = check_texts(nbformat.v4.new_notebook(cells=ran[: len(stubs)]), ids)
    for ex_id in ids:
        text = stub_texts.get(ex_id, "")
        if f"{ex_id} is not solved yet" not in text or 'class="gpubook-report"' not in text:
            print(f"FAIL {path.name}: the stub of {ex_id} did not show its failing report; its check cell showed:\n{text[:2000]}")
            ok = False
        else:
            print(f"ok   {path.name}: the stub of {ex_id} fails, with its report shown")
    ok &= passed(path, ids, check_texts(nbformat.v4.new_notebook(cells=ran[len(stubs) :]), ids), progress)
    print(
        f"     {path.name}: {seconds:.0f} s in all; the stubs' cells {seconds_in(ran[: len(stubs)]):.0f} s, "
        f"the solutions' {seconds_in(ran[len(stubs) :]):.0f} s"
    )
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=pathlib.Path)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--update", action="store_true", help="write the exercise cells into the notebooks")
    mode.add_argument("--check", action="store_true", help="CI: no drift, stubs fail with a report, solutions pass")
    mode.add_argument("--prove", action="store_true", help="without the demonstrations: stubs fail, solutions pass")
    mode.add_argument("--list", action="store_true", help="print each notebook's exercise cells")
    ap.add_argument("--executed", type=pathlib.Path, default=ROOT / "target/notebooks")
    a = ap.parse_args()
    by_folder = chapters()
    paths = [p for p in a.notebooks if p.stem in by_folder]
    if a.list:
        for p in paths or [ROOT / "notebooks" / f"{f}.ipynb" for f in by_folder]:
            ch = prepare(by_folder[p.stem], json.loads(p.read_text())["cells"])
            for (owner, part), kind, src in ch.cells("exercises"):
                first = src.splitlines()[0] if src else ""
                print(f"{p.stem:28} {owner:26} {part:28} {len(src.splitlines()):4} lines  {first[:60]}")
        return
    if a.update:
        for p in paths:
            update(p, by_folder[p.stem])
        return
    failed = False
    for p in paths:
        if a.prove:
            failed |= not prove(p.resolve(), by_folder[p.stem])
        else:
            failed |= not check_one(p.resolve(), by_folder[p.stem], a.executed)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
