#!/usr/bin/env bash
# gpubook emu-bench on the GPU machine's CPU (more cores than the dev VM, and no other tenant's
# builds): fast mode and the native baseline on as many threads as it has. With a second build at
# gpu-bin/gpubook-old (copied there by hand), the two run in turns (scripts/bench/emu-bench-ab.sh).
set -u
out=${OUT:-/tmp/gpubook-out}; mkdir -p "$out"
echo "emu-bench: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
if [ -x gpu-bin/gpubook-old ]; then
  bash scripts/bench/emu-bench-ab.sh gpu-bin/gpubook-old gpu-bin/gpubook "${ROUNDS:-3}" --reps 5 2>&1 | tee "$out/emu-bench.txt"
else
  GPUBOOK_BACKEND=emu ./gpu-bin/gpubook emu-bench --reps 5 2>&1 | tee "$out/emu-bench.txt"
fi
