#!/usr/bin/env bash
# Chapter 11 on the GPU (run.sh runs every gpu-bin/extra-*.sh after the tests): `gpubook overlap`
# at its defaults, then with `layer` filling the GPU, with their timelines as SVG; then chapter
# 14's version, the communication as a kernel on k SMs and the computation on all the others
# (issue 13's goal: a kernel row with >= 80% hidden). The book's H200 outputs come from
# extra-record-book.sh (book/recorded/); these are for the log.
out=${OUT:-/tmp/gpubook-out}
echo "== gpubook overlap"
./gpu-bin/gpubook overlap --svg "$out/overlap-svg"
echo "== gpubook overlap --blocks-per-sm 0"
./gpu-bin/gpubook overlap --blocks-per-sm 0 --svg "$out/overlap-full-svg"
echo "== gpubook overlap --comm kernel"
./gpu-bin/gpubook overlap --comm kernel --comm-sms 4,8,16,24,32
