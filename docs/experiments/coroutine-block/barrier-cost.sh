#!/usr/bin/env bash
# The cost of a barrier wait in the emulator: barriers.cu with 1000 and 2000 barriers a thread,
# 64 blocks of 256 threads, in each mode; (t2000 - t1000) / (64 * 256 * 1000) a wait.
#   docs/experiments/coroutine-block/barrier-cost.sh [GPUBOOK_BINARY]
set -euo pipefail
bin=$(realpath "${1:-target/release/gpubook}")
cd "$(dirname "$0")"
for mode in fast check; do
  t=()
  for k in 1000 2000; do
    s=$(date +%s%N)
    GPUBOOK_BACKEND=emu "$bin" run barriers.cu --kernel bars_only --grid 64 --block 256 \
      --arg 'f32[16384]:zeros' --arg "i32=$k" --mode "$mode" --show 1 >/dev/null
    t+=($(( $(date +%s%N) - s )))
  done
  awk -v m="$mode" -v a="${t[0]}" -v b="${t[1]}" \
    'BEGIN { printf "%s: %.3f s (1000 barriers), %.3f s (2000): %.1f ns a wait\n", m, a / 1e9, b / 1e9, (b - a) / (64 * 256 * 1000) }'
done
