#!/usr/bin/env bash
# The book's GPU recordings (run.sh runs every gpu-bin/extra-*.sh after the tests; or run this one
# alone on the GPU machine: `bash gpu-bin/extra-record-book.sh`). `gpubook book --record DIR` builds
# the book on this machine's GPU and writes, for every marker with `recorded=NAME`, the output it
# made to DIR/NAME.json, with the GPU, the driver, the date, the commit and the command.
# Copy $OUT/recorded/*.json into book/recorded/ and commit them; `gpubook book` then shows them.
out=${OUT:-/tmp/gpubook-out}
export GPUBOOK_BACKEND=cuda
export GPUBOOK_COMMIT=$(cat gpu-bin/COMMIT 2>/dev/null)
echo "== gpubook book --record (commit ${GPUBOOK_COMMIT:-unknown})"
./gpu-bin/gpubook book --record "$out/recorded" --dest /tmp/gpubook-recorded-book --fresh 2>&1 | grep -v '^$'
ls "$out/recorded"
