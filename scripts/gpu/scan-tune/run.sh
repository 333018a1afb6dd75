#!/usr/bin/env bash
# On the GPU machine (nvcc there), from the repo root: the one-pass scan at several tile shapes
# (threads a block x uint4s a thread) and look-back widths (predecessors a lane reads a round),
# each against a device-to-device copy in the same process, with probes of where the time goes.
# Its output chose kernels/perf/scan.cu's THREADS, VEC and LOOK (docs/measurements.md has it).
# SHAPES="128x8,256x8" LOOKS="1,4" narrows the sweep.
set -u
dir=$(mktemp -d)
shapes=${SHAPES:-128x8,128x16,256x4,256x8}
looks=${LOOKS:-1,2,4,8}
for shape in ${shapes//,/ }; do
  for look in ${looks//,/ }; do
    t=${shape%x*} v=${shape#*x}
    nvcc -O3 -arch=sm_90 -DTHREADS="$t" -DVEC="$v" -DLOOK="$look" -o "$dir/scan-$t-$v-$look" scripts/gpu/scan-tune/scan_tune.cu &
  done
done
wait
for b in "$dir"/scan-*; do "$b"; done
