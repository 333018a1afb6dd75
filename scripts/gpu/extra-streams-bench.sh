#!/usr/bin/env bash
# Chapters 7-8 on the GPU (run.sh runs every gpu-bin/extra-*.sh after the tests): `gpubook
# streams-bench` at its default sizes, with the timelines as SVG, and again with 1 MiB chunks,
# where the host's issue time shows. The book's H200 figures and tables come from these:
#   $OUT/streams-svg/serial.svg          -> book/src/ch07-streams/h200-serial.svg
#   $OUT/streams-svg/ping-pong.svg       -> book/src/ch08-double-buffering/h200-ping-pong.svg
#   $OUT/streams-svg/three-streams.svg   -> book/src/ch08-double-buffering/h200-three-streams.svg
#   the two tables                       -> book/src/ch08-double-buffering/h200-streams-bench{,-1mib}.txt
out=${OUT:-/tmp/gpubook-out}
echo "== gpubook streams-bench"
./gpu-bin/gpubook streams-bench --svg "$out/streams-svg"
echo "== gpubook streams-bench --chunk-elems 262144 --bw-mib 16"
./gpu-bin/gpubook streams-bench --chunk-elems 262144 --bw-mib 16
