#!/usr/bin/env bash
# CI for the notebooks: install the evcxr Jupyter kernel (0.22.0) and the Python client bits, run
# every notebook top to bottom headless (on the CPU emulator when there is no GPU), and fail on any
# error output or panic. Then run a notebook with a planted panic and require the check to FAIL,
# so a check that went blind cannot pass. Executed notebooks go to target/notebooks/, where
# `gpubook book` takes them for the book's notebook pages (run this before scripts/ci/book.sh).
#
# Usage: scripts/ci/notebooks.sh   (from anywhere in the checkout)
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS
say() { printf '[notebooks] %s (at %d s)\n' "$*" $((SECONDS - started)); }

# 1. The Rust kernel. A release build takes ~13 min on 2 cores; opt-level 1 ~4.5 min, and the
#    kernel's speed does not matter here (the notebooks' own code is compiled by cargo).
# (evcxr_jupyter has no --version; cargo's list of installed binaries says which one is there.)
if ! cargo install --list | grep -q '^evcxr_jupyter v0\.22\.0:'; then
    say "installing evcxr_jupyter 0.22.0"
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install --locked --quiet evcxr_jupyter --version 0.22.0
fi
evcxr_jupyter --install >/dev/null

# 2. The client side: nbclient runs notebooks without the rest of Jupyter.
python3 -m pip install --quiet --disable-pip-version-check nbclient nbformat 2>&1 | grep -v 'WARNING: Running pip as' || true

# evcxr rebuilds each cell's crate incrementally (its Cargo.toml says `incremental = true`);
# CARGO_INCREMENTAL=0, which .ci/run sets for its own builds, overrides that, and every cell then
# failed with "dlsym failed" (exit status 99).
unset CARGO_INCREMENTAL

# 3. evcxr settings for this run only: a build cache shared by the notebooks (gpubook and its
#    dependencies are compiled once, not once per notebook).
config=$(mktemp -d)
trap 'rm -rf "$config"' EXIT
echo ':cache 4096' >"$config/init.evcxr"
export EVCXR_CONFIG_DIR=$config
export CARGO_TERM_QUIET=true # the kernel's cargo builds would fill the log

# 4. Every chapter notebook must run clean...
say "running notebooks/*.ipynb"
python3 scripts/ci/run_notebooks.py --out target/notebooks notebooks/*.ipynb

# 5. The exercises in the notebooks: each untouched stub showed its grader's report above, and
#    the same cells filled in from solutions/ pass, for the chapters in SOLVED_IN_CI
#    (GPUBOOK_NB_SOLVE_ALL=1: all of them; notebooks/README.md says how long that takes).
say "exercises in the notebooks: stubs fail with their report, solutions pass"
python3 scripts/ci/notebook_exercises.py --check notebooks/*.ipynb

# 6. ...and a planted panic must be caught.
say "running the planted failure (it must FAIL)"
python3 scripts/ci/run_notebooks.py --expect-failure notebooks/tests/*.ipynb

say "ok in $((SECONDS - started)) s"
