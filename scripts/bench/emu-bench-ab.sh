#!/usr/bin/env bash
# Two builds of gpubook's emu-bench in turns (A, B, A, B ...), so that a change to the emulator
# is measured against the build before it on the same machine in the same minutes (a shared VM's
# speed drifts by a third between runs). Prints each run's rows, labelled, and the load.
#   scripts/bench/emu-bench-ab.sh OLD_GPUBOOK NEW_GPUBOOK [ROUNDS] [emu-bench args...]
set -euo pipefail
old=$1 new=$2 rounds=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
for r in $(seq 1 "$rounds"); do
  for side in old new; do
    bin=$old; [ "$side" = new ] && bin=$new
    echo "== round $r, $side ($(cut -d' ' -f1-3 /proc/loadavg))"
    GPUBOOK_BACKEND=emu "$bin" emu-bench "$@" | grep -E '^(vector_add|block_sum|matmul)'
  done
done
