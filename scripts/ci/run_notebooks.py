#!/usr/bin/env python3
"""Executes Jupyter notebooks headless with the evcxr (Rust) kernel and fails on any error.

`jupyter nbconvert --execute` exits 0 when a Rust cell panics (evcxr reports the panic as text),
so this reads the outputs itself: an `error` output, or `panicked at` in any output, fails the
notebook. Executed copies go to --out for a person to look at.

Usage: run_notebooks.py [--out DIR] [--timeout SECONDS] [--expect-failure] NOTEBOOK...
Exit status: 0 when every notebook ran clean (with --expect-failure: when every one failed),
1 otherwise.
"""

import argparse
import re
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError


def output_text(output):
    """Every piece of text an output carries (streams, results, tracebacks)."""
    parts = [output.get("text", ""), output.get("ename", ""), output.get("evalue", "")]
    parts += output.get("traceback", [])
    for value in output.get("data", {}).values():
        parts.append(value if isinstance(value, str) else "".join(value))
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def is_lint(output):
    """evcxr shows a compiler warning as an `error` output named by its lint, `[unused_variables]
    Error: ...` (a stub's unused parameters), where a real error carries a code, `[E0425] Error:`."""
    tb = "".join(output.get("traceback", []))
    return re.search(r"\[[a-z][a-z_]*\] Error:", tb) is not None and re.search(r"\[E\d{4}\]", tb) is None


def problems(nb):
    """(cell number, what went wrong) for each failing cell."""
    found = []
    for number, cell in enumerate(nb.cells, start=1):
        for output in cell.get("outputs", []):
            text = output_text(output)
            if output.get("output_type") == "error" and not is_lint(output):
                found.append((number, f"{output.get('ename', 'error')}: {output.get('evalue', '').strip()}"))
            elif "panicked at" in text:
                line = next(l for l in text.splitlines() if "panicked at" in l)
                found.append((number, line.strip()))
    return found


def run(path, out_dir, timeout):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="rust",
        timeout=timeout,
        allow_errors=True,  # keep going, so the report shows every failing cell
        resources={"metadata": {"path": str(path.parent)}},  # `:dep gpubook = { path = ".." }`
    )
    started = time.monotonic()
    try:
        client.execute()
        found = problems(nb)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as e:
        found = problems(nb) + [(0, f"{type(e).__name__}: {str(e).strip()[:500]}")]
    seconds = time.monotonic() - started
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out_dir / path.name)
    return found, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path, help="write the executed notebooks here")
    parser.add_argument("--timeout", type=int, default=900, help="seconds a cell may take")
    parser.add_argument("--expect-failure", action="store_true", help="succeed only if every notebook fails (tests the check)")
    args = parser.parse_args()
    failed = 0
    for path in args.notebooks:
        found, seconds = run(path.resolve(), args.out, args.timeout)
        if found:
            failed += 1
            print(f"FAIL {path} ({seconds:.0f} s)")
            for number, what in found:
                print(f"  cell {number}: {what}")
        else:
            print(f"ok   {path} ({seconds:.0f} s)")
    if args.expect_failure:
        caught = failed == len(args.notebooks)
        print("the check caught every planted failure" if caught else "ERROR: a planted failure went unnoticed")
        return 0 if caught else 1
    print(f"{len(args.notebooks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
