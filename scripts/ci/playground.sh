#!/usr/bin/env bash
# CI for the served book's playground: `gpubook book --serve` driven in headless Chromium
# (scripts/ci/playground_check.py): an out-of-bounds write edited into chapter 3's runnable
# listing is diagnosed with its line highlighted, the edit survives a reload, Reset and Run give
# "ok", Run in an exercise box shows the stub's run and the map of what it touched, and Check
# there shows the grader's report. Runs after scripts/ci/book.sh
# (which installs Chromium and fills the figure cache, so the server's first build is quick).
#
# Usage: scripts/ci/playground.sh   (GPUBOOK_BIN=path uses a gpubook binary built already)
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS
bin=${GPUBOOK_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet --bin gpubook
    bin=./target/debug/gpubook
fi
mkdir -p target
# The whole check, the server's start and a first grading build included, in a fixed budget.
timeout 900 python3 scripts/ci/playground_check.py --gpubook "$bin" --shots target/screenshots/playground
printf '[playground] ok in %d s\n' $((SECONDS - started))
