#!/usr/bin/env bash
# Chapters 12-13 on the GPU (run.sh runs every gpu-bin/extra-*.sh after the tests): `gpubook moe
# run` at a few sizes, every rank a logical rank on the one device, links modelled. Each run
# prints its error against a dense MoE on the host (must be <= 1e-4: the command exits 1
# otherwise), the traffic per phase, and the phases' kernel times measured with CUDA events.
# The timelines go to $OUT/moe-*.svg.
out=${OUT:-/tmp/gpubook-out}
status=0
run() {
  name=$1; shift
  echo "== gpubook moe run $*"
  ./gpu-bin/gpubook moe run "$@" --svg "$out/moe-$name.svg" || status=1
}
# One node of 8 GPUs (intranode dispatch and combine), V3's 256 experts and top-8.
run node8 --nodes 1 --gpus-per-node 8 --tokens 1024 --hidden 1024 --experts 256 --topk 8 --limit-nodes 1 --channels 10 --seed 1
# Two nodes of 4 (the two-hop path), at most 2 nodes per token.
run 2x4 --nodes 2 --gpus-per-node 4 --tokens 1024 --hidden 1024 --experts 64 --topk 8 --limit-nodes 2 --channels 10 --seed 2
# V3's shape: 8 nodes of 8 GPUs, 256 experts, top-8, at most 4 nodes; a smaller hidden size so
# the 64 logical ranks' buffers and the host's dense reference stay quick.
run v3 --nodes 8 --gpus-per-node 8 --tokens 256 --hidden 512 --experts 256 --topk 8 --limit-nodes 4 --channels 10 --seed 3
# Channels: the same layer with 1 and 20 blocks per communication kernel.
run ch1 --nodes 2 --gpus-per-node 4 --tokens 2048 --hidden 1024 --experts 64 --topk 8 --limit-nodes 2 --channels 1 --seed 4
run ch20 --nodes 2 --gpus-per-node 4 --tokens 2048 --hidden 1024 --experts 64 --topk 8 --limit-nodes 2 --channels 20 --seed 4
exit $status
