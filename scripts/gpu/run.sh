#!/usr/bin/env bash
# Runs on the GPU machine from the repo root: every test binary in gpu-bin/tests with
# GPUBOOK_BACKEND=cuda, then `gpubook doctor` and `gpubook bench`; prints a pass/fail table.
# Full logs go to $OUT (the device tool brings them back).
set -u
export GPUBOOK_BACKEND=cuda
out=${OUT:-/tmp/gpubook-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
printf '%-44s %6s %6s %8s\n' binary passed failed skipped > "$out/table.txt"
status=0
for t in gpu-bin/tests/*; do
  name=$(basename "$t")
  log="$out/$name.log"
  timeout 300 "$t" --test-threads=1 --nocapture >"$log" 2>&1; rc=$?
  passed=$(grep -o '[0-9]* passed' "$log" | awk '{s+=$1} END {print s+0}')
  failed=$(grep -o '[0-9]* failed' "$log" | awk '{s+=$1} END {print s+0}')
  skipped=$(grep -c '^SKIPPED' "$log")
  [ "$rc" -eq 0 ] || status=1
  printf '%-44s %6s %6s %8s%s\n' "$name" "$passed" "$failed" "$skipped" "$([ $rc -eq 0 ] || echo "  (exit $rc)")" >> "$out/table.txt"
done
./gpu-bin/gpubook doctor > "$out/doctor.txt" 2>&1
./gpu-bin/gpubook bench > "$out/bench.txt" 2>&1
for f in "$out"/*.log; do grep -E '^(test .* FAILED|---- |thread .* panicked|SKIPPED)' "$f" | head -20 | sed "s|^|$(basename "$f"): |"; done
echo; cat "$out/doctor.txt"; echo; cat "$out/bench.txt"; echo; cat "$out/table.txt"
exit $status
