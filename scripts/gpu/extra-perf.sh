#!/usr/bin/env bash
# Chapters 5-6 on the GPU (run.sh runs every gpu-bin/extra-*.sh after the tests): `gpubook
# perf-bench` at its defaults (2^26 elements, median of 20), with the roofline as SVG. Well under a
# minute on an H200. What the book and docs/measurements.md take from it:
#   the table and the roofline table (without the "wrote" line)
#                                     -> book/src/ch05-memory-performance/h200-perf-bench.txt
#   $OUT/perf-svg/roofline.svg        -> book/src/ch05-memory-performance/h200-roofline.svg
#   the header below (date, driver, command) goes with both into docs/measurements.md.
out=${OUT:-/tmp/gpubook-out}
echo "== gpubook perf-bench --svg \$OUT/perf-svg   ($(date -u +%Y-%m-%d), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1))"
./gpu-bin/gpubook perf-bench --svg "$out/perf-svg"
