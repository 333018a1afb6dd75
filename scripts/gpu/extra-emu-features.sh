#!/usr/bin/env bash
# The feature kernels of issue 12 (crates/gpubook/tests/fidelity/features/*.cu: cooperative groups,
# cuda_fp16.h / cuda_bf16.h and buffers of them, template kernels by name expression, C++-linkage
# and static kernels, __align__ and the wide vector types, dynamic shared memory past 48 KiB) on
# the GPU with GPUBOOK_BACKEND=cuda, through the same test that runs them on the emulator. run.sh
# runs every gpu-bin/extra-*.sh after the tests; alone, from the repo root after prepare.sh:
#   bash scripts/gpu/extra-emu-features.sh
# Prints `ok      cuda FILE` or `failed  cuda FILE: why` per kernel, then the CUDA headers line of
# `gpubook doctor` (where NVRTC's include path came from).
export GPUBOOK_BACKEND=cuda
bin=$(ls gpu-bin/tests/gpubook.it 2>/dev/null || ls target/release/deps/it-* 2>/dev/null | grep -v '\.d$' | head -1)
[ -n "$bin" ] || { echo "extra-emu-features: no gpubook integration test binary (run scripts/gpu/prepare.sh)"; exit 1; }
echo "== feature kernels on the GPU ($bin)"
timeout 600 "$bin" --exact emu_features::feature_kernels_on_the_gpu --nocapture 2>&1 | grep -E '^(ok|failed|SKIPPED)|panicked'
echo "== names: ambiguous, template without arguments, two instantiations"
timeout 300 "$bin" --exact emu_features::names_on_the_gpu --nocapture 2>&1 | grep -E '^(ok|failed|SKIPPED)|panicked|test result'
[ -x gpu-bin/gpubook ] && ./gpu-bin/gpubook doctor 2>&1 | grep -E '^(CUDA headers|NVRTC)'
