#!/usr/bin/env bash
# Chapter 14 on the GPU (run.sh runs every gpu-bin/extra-*.sh after the tests): `gpubook moe
# channels`, every rank a logical rank on the one device. Two tables:
#  - the warp-roles dispatch (4096 tokens of 7168 floats to 8 GPUs) against its channels, each
#    run checked (the command fails if a token did not arrive): GB/s should grow with the
#    channels and flatten;
#  - a 4096^2 multiply beside a copy kernel on k SMs: the multiply's slowdown, and the share of
#    the copy hidden behind it (issue 13's goal: >= 80% with the multiply on all other SMs).
echo "== gpubook moe channels"
GPUBOOK_BACKEND=cuda ./gpu-bin/gpubook moe channels
