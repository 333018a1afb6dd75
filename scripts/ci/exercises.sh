#!/usr/bin/env bash
# The exercise guarantees, on the emulator: exercises/ (and both crates' scaffolding) is exactly
# what solutions/ and exercises.toml generate (no drift); every solution passes (`cargo test -p
# solutions`, part of `cargo test`); and every untouched stub FAILS with its grader's report, read
# from the typed reports the graders write (never from printed text), each report reading as its
# committed snapshot does.
set -euo pipefail
cd "$(dirname "$0")/../.."
gpubook=${GPUBOOK_BIN:-./target/release/gpubook}
[ -x "$gpubook" ] || cargo build -q --release --bin gpubook
"$gpubook" dev stubs --check

# The learner's crate builds the library alone: no CLI, book or server crates.
heavy=$(cargo tree -q -p exercises -e normal --prefix none | grep -Eo '^(clap|crossterm|indicatif|anstream|mdbook[a-z_-]*|tiny_http|notify) ' | sort -u | tr '\n' ' ' || true)
if [ -n "$heavy" ]; then
  echo "FAIL: the learner's crate depends on $heavy(see \`cargo tree -p exercises -i <crate>\`)"
  exit 1
fi
echo "exercises' dependencies: $(cargo tree -q -p exercises -e normal --prefix none | sed 's/ (\*)//' | sort -u | wc -l) crates, none of the CLI's or the book's"

reports=$PWD/target/stub-reports
rm -rf "$reports"
set +e
# A fixed seed: the reports are compared word for word with the snapshots.
GPUBOOK_REPORT_DIR=$reports GPUBOOK_SEED=1 cargo test -q -p exercises --no-fail-fast >target/exercises-stubs.log 2>&1
rc=$?
set -e
if [ "$rc" -eq 0 ]; then
  echo "FAIL: \`cargo test -p exercises\` passed on the untouched stubs (a grader that cannot fail is a bug)"
  exit 1
fi
"$gpubook" dev reports --from "$reports" ${UPDATE_SNAPSHOTS:+--write}
