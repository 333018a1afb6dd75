#!/usr/bin/env bash
# Chapters 7-8 on the GPU (run.sh runs every gpu-bin/extra-*.sh after the tests): `gpubook
# streams-bench` at its default sizes, with the timelines as SVG, and again with 1 MiB chunks,
# where the host's issue time shows. The book's H200 outputs come from extra-record-book.sh
# (book/recorded/); these are for the log.
out=${OUT:-/tmp/gpubook-out}
echo "== gpubook streams-bench"
./gpu-bin/gpubook streams-bench --svg "$out/streams-svg"
echo "== gpubook streams-bench --chunk-elems 262144 --bw-mib 16"
./gpu-bin/gpubook streams-bench --chunk-elems 262144 --bw-mib 16
