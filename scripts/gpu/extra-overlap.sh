#!/usr/bin/env bash
# Chapter 11 on the GPU (run.sh runs every gpu-bin/extra-*.sh after the tests): `gpubook overlap`
# at its defaults, then with `layer` filling the GPU. The book's H200 tables and timelines come
# from these:
#   the first output (without its "wrote" lines)   -> book/src/ch11-dualpipe/h200-overlap.txt
#   $OUT/overlap-svg/chunk_pair_dualpipe.svg         -> book/src/ch11-dualpipe/h200-dualpipe.svg
#   the second output                                -> book/src/ch11-dualpipe/h200-overlap-full.txt
#   $OUT/overlap-full-svg/chunk_pair_dualpipe.svg    -> book/src/ch11-dualpipe/h200-dualpipe-full.svg
out=${OUT:-/tmp/gpubook-out}
echo "== gpubook overlap"
./gpu-bin/gpubook overlap --svg "$out/overlap-svg"
echo "== gpubook overlap --blocks-per-sm 0"
./gpu-bin/gpubook overlap --blocks-per-sm 0 --svg "$out/overlap-full-svg"
