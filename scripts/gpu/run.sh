#!/usr/bin/env bash
# Runs on the GPU machine from the repo root: every test of every binary in gpu-bin/tests with
# GPUBOOK_BACKEND=cuda, each test in its own process (a kernel that faults on a GPU leaves its
# CUDA context unusable, which must not fail the tests after it), then `gpubook doctor` and
# `gpubook bench`. Prints a pass/fail/skip table; full logs go to $OUT.
set -u
export GPUBOOK_BACKEND=cuda
out=${OUT:-/tmp/gpubook-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
printf '%-40s %6s %6s %8s\n' binary passed failed skipped > "$out/table.txt"
status=0
for t in gpu-bin/tests/*; do
  name=$(basename "$t")
  log="$out/$name.log"; : > "$log"
  passed=0; failed=0; skipped=0
  for test in $("$t" --list --format terse 2>/dev/null | sed -n 's/: test$//p'); do
    res=$(timeout 300 "$t" --exact "$test" --nocapture 2>&1); rc=$?
    printf '==== %s\n%s\n' "$test" "$res" >> "$log"
    if grep -q '^SKIPPED' <<<"$res"; then skipped=$((skipped + 1))
    elif [ $rc -eq 0 ]; then passed=$((passed + 1))
    else failed=$((failed + 1)); status=1; echo "FAILED $name::$test"; fi
  done
  printf '%-40s %6s %6s %8s\n' "$name" "$passed" "$failed" "$skipped" >> "$out/table.txt"
done
# The untouched stubs: each grader must fail and write its report (read from the JSON, not the text).
if [ -d gpu-bin/stubs ]; then
  reports=$out/stub-reports; mkdir -p "$reports"
  for t in gpu-bin/stubs/*; do GPUBOOK_REPORT_DIR=$reports timeout 600 "$t" --test-threads=1 > "$out/stubs-$(basename "$t").log" 2>&1; done
  python3 - "$reports" <<'PY' | tee "$out/stubs.txt"
import json, os, sys
d = sys.argv[1]
rs = [json.load(open(os.path.join(d, f))) for f in sorted(os.listdir(d)) if f.endswith(".json")]
failed = [r for r in rs if not r["passed"] and r["failure"]]
passed = [r["id"] for r in rs if r["passed"]]
print(f"untouched stubs on the GPU: {len(failed)} failed with a report, {len(passed)} passed {passed}")
PY
  grep -q ", 0 passed" "$out/stubs.txt" || status=1
fi
if [ -z "${QUICK:-}" ]; then # QUICK=1: the tests alone
  ./gpu-bin/gpubook doctor > "$out/doctor.txt" 2>&1
  ./gpu-bin/gpubook bench > "$out/bench.txt" 2>&1
  for extra in gpu-bin/extra-*.sh; do [ -f "$extra" ] && bash "$extra" >> "$out/extra.txt" 2>&1; done
  echo; cat "$out/doctor.txt"; echo; cat "$out/bench.txt"; echo
  [ -f "$out/extra.txt" ] && cat "$out/extra.txt"
fi
echo; cat "$out/table.txt"
exit $status
