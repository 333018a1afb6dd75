#!/usr/bin/env bash
# How long `gpubook check` takes warm after editing only the kernel, as a learner does once the
# host code is written: N runs, each after a fresh edit of the .cu (a new source, so the emulator
# compiles it again), and their median. GPUBOOK_ALWAYS_CARGO=1 times the path through cargo.
#
#   scripts/check-timing.sh [runs=9]     needs a device (a GPU or the emulator)
#
# Puts the solved ch03-vector-add into exercises/ and restores both files on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-9}
HOST=exercises/src/ch03.rs
KERNEL=exercises/kernels/ch03/vector_add.cu
SAVE=$(mktemp -d)
cp "$HOST" "$KERNEL" "$SAVE/"
trap 'cp "$SAVE/ch03.rs" "$HOST"; cp "$SAVE/vector_add.cu" "$KERNEL"; rm -rf "$SAVE"' EXIT

cargo build -q --bin gpubook
cp solutions/src/ch03.rs "$HOST"
cp solutions/kernels/ch03/vector_add.cu "$KERNEL"
./target/debug/gpubook check ch03-vector-add >/dev/null || true   # warm: binaries built, stamp written
times=()
for i in $(seq "$RUNS"); do
    # A real change to the code (not a comment), so no cache can recognise it.
    printf '__device__ int gpubook_timing_edit_%s;\n' "$i" >> "$KERNEL"
    start=$(date +%s.%N)
    ./target/debug/gpubook check ch03-vector-add >"$SAVE/out" || { echo "run $i did not pass:"; cat "$SAVE/out"; exit 1; }
    times+=("$(echo "$(date +%s.%N) - $start" | bc)")
done
printf '%s\n' "${times[@]}" | sort -n | awk -v cargo="${GPUBOOK_ALWAYS_CARGO:+ (through cargo every time)}" '{ t[NR] = $1 } END {
    printf "gpubook check after a .cu edit%s, %d runs: median %.2f s (min %.2f, max %.2f)\n", cargo, NR, t[int((NR + 1) / 2)], t[1], t[NR] }'
