#!/usr/bin/env bash
# The exercise guarantees, on the emulator: exercises/ is exactly the stubs generated from
# solutions/ (no drift); every solution passes (`cargo test -p solutions`, part of `cargo test`);
# and every untouched stub FAILS with its grader's friendly report, not a crash or a pass.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run -q --release -- stubs --check

log=target/exercises-stubs.log
set +e
cargo test -q -p exercises --no-fail-fast >"$log" 2>&1
rc=$?
set -e
ids=$(grep -c '^id = ' exercises.toml)
passed=$(grep -Eo '^test result: .*' "$log" | grep -Eo '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '^test result: .*' "$log" | grep -Eo '[0-9]+ failed' | awk '{s+=$1} END {print s+0}')
reports=$(grep -c 'is not solved yet' "$log" || true)
echo "exercises: $ids in exercises.toml; untouched stubs: $failed failed, $passed passed, $reports graders' reports"
if [ "$rc" -eq 0 ] || [ "$passed" -ne 0 ] || [ "$failed" -ne "$ids" ] || [ "$reports" -lt "$ids" ]; then
  echo "FAIL: every untouched stub must fail with its grader's report (a grader that cannot fail is a bug)"
  grep -E '^test .* ok$' "$log" || true
  exit 1
fi
echo "ok: every stub fails with a report"
