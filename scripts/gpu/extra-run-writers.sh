#!/usr/bin/env bash
# `gpubook run --map/--writers` on the CUDA backend: a GPU records no writers, so the map and
# the output must say "unknown" and why, and the buffers must still be right. Prints one line:
# "run-writers: ok" or what was wrong.
out=${OUT:-/tmp/gpubook-out}; mkdir -p "$out/run-writers"
log="$out/run-writers/cuda.log"; map="$out/run-writers/cuda-map.json"
GPUBOOK_BACKEND=cuda ./gpu-bin/gpubook run kernels/demos/spmd.cu --kernel scale --grid 4 --block 256 \
    --arg 'f32[1000]:iota' --arg 'f32[1000]:uninit' --arg f32=2 --arg i32=1000 \
    --map "$map" --writers 4 > "$log" 2>&1
rc=$?
python3 - "$map" "$log" "$rc" <<'PY'
import json, sys
path, log, rc = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3])
problems = []
if rc != 0: problems.append(f"exit {rc}")
if "unknown: a GPU does not record which thread wrote what" not in log: problems.append("no 'unknown' line")
if "min 0, max 1998, sum 999000" not in log: problems.append("y is wrong")
try:
    m = json.load(open(path))
    if m["writers"]["known"] is not False: problems.append(f"map writers: {m['writers']}")
    if any(b.get("writers") is not None for b in m["buffers"]): problems.append("a buffer has writers")
except Exception as e:
    problems.append(f"map: {e}")
print("run-writers: " + ("ok" if not problems else "FAILED: " + "; ".join(problems)))
PY
