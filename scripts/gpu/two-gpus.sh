#!/usr/bin/env bash
# Issue 17: the expert-parallel code on two GPUs of one host. Not an extra-*.sh (run.sh does not
# run it on one GPU); on a machine with 2 GPUs, after prepare.sh, from the repo root:
#   bash gpu-bin/two-gpus.sh
# 1. The graders of chapters 12-14 with the world spread over both GPUs (GPUBOOK_EP_DEVICES=2:
#    rank r on GPU r * 2 / ranks, peer access enabled, stores into the other GPU's buffers go
#    over NVLink): every solution must pass, as on one GPU.
# 2. A baseline built here with nvcc (scripts/gpu/peer_baseline.cu): peer-store bandwidth from
#    GPU 0 into GPU 1 (all SMs, and 20 blocks as V3 gives its channels) and NCCL's all-to-all
#    between the two, side by side.
# With fewer than 2 GPUs it prints SKIPPED and exits 0: nothing here is meaningful on one.
set -u
out=${OUT:-/tmp/gpubook-out}; mkdir -p "$out"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "${gpus:-0}" -lt 2 ]; then
  echo "SKIPPED two-gpus: ${gpus:-0} GPU(s) visible, this needs 2 (issue 17 is blocked until a two-GPU machine is lent)"
  exit 0
fi
nvidia-smi topo -m 2>/dev/null | head -5
export GPUBOOK_BACKEND=cuda GPUBOOK_EP_DEVICES=2
status=0
for t in gpu-bin/tests/solutions.ch12 gpu-bin/tests/solutions.ch13 gpu-bin/tests/solutions.ch14; do
  [ -x "$t" ] || { echo "missing $t (run scripts/gpu/prepare.sh)"; status=1; continue; }
  echo "== $(basename "$t") with GPUBOOK_EP_DEVICES=2"
  log="$out/two-gpus-$(basename "$t").log"
  timeout 600 "$t" --test-threads=1 --nocapture > "$log" 2>&1; rc=$?
  grep -E '^test |test result|SKIPPED' "$log"
  [ $rc -eq 0 ] || { echo "FAILED (exit $rc): see $log"; status=1; }
done
echo "== peer stores and NCCL all-to-all (nvcc)"
dir=$(dirname "$0")
src=$dir/peer_baseline.cu; [ -f "$src" ] || src=scripts/gpu/peer_baseline.cu
if nvcc -O2 -o /tmp/peer_baseline "$src" -lnccl 2>"$out/peer_baseline.build.log"; then
  /tmp/peer_baseline | tee "$out/peer_baseline.txt" || status=1
else
  echo "could not build the baseline (nccl.h or libnccl missing?):"; tail -5 "$out/peer_baseline.build.log"; status=1
fi
exit $status
