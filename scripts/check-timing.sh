#!/usr/bin/env bash
# How long `gpubook check` takes warm after editing only the kernel, as a learner does: N runs,
# each after a fresh edit of the .cu (so the emulator recompiles it), and their median.
#
#   scripts/check-timing.sh [runs=9]     needs a device (a GPU or the emulator)
#
# Edits exercises/kernels/ch03/vector_add.cu in place and puts it back on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-9}
KERNEL=exercises/kernels/ch03/vector_add.cu
SAVE=$(mktemp)
cp "$KERNEL" "$SAVE"
trap 'cp "$SAVE" "$KERNEL"; rm -f "$SAVE"' EXIT

cargo build -q --bin gpubook
./target/debug/gpubook check ch03-vector-add >/dev/null || true   # warm: binaries built, stamp written
times=()
for i in $(seq "$RUNS"); do
    printf '// edit %s\n' "$i" >> "$KERNEL"                          # a new source: a new emulator build
    start=$(date +%s.%N)
    ./target/debug/gpubook check ch03-vector-add >/dev/null || true
    times+=("$(echo "$(date +%s.%N) - $start" | bc)")
done
printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 } END {
    printf "gpubook check after a .cu edit, %d runs: median %.2f s (min %.2f, max %.2f)\n", NR, t[int((NR + 1) / 2)], t[1], t[NR] }'
