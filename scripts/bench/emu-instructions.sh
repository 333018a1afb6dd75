#!/usr/bin/env bash
# Instructions the emulator's worker executes for one emu-bench row, counted by valgrind's
# callgrind: a measure of check mode's cost that does not move with a shared VM's load (wall
# times here swing by a third). Prints the worker's total and its top functions (self cost).
#   scripts/bench/emu-instructions.sh GPUBOOK_BINARY ROW [TOP]
# e.g. scripts/bench/emu-instructions.sh target/release/gpubook matmul 25
# KEEP_PROFILE=FILE keeps the worker's callgrind profile.
# The worker runs both modes of the row (check once, fast once; --reps 1).
set -euo pipefail
bin=$(realpath "$1") row=$2 top=${3:-20}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
( cd "$out" && GPUBOOK_BACKEND=emu GPUBOOK_EMU_WATCHDOG_S=900 GPUBOOK_EMU_QUIT_GRACE_MS=60000 \
  valgrind --tool=callgrind --trace-children=yes \
    --trace-children-skip='*c++*,*g++*,*cc1plus*,*/as,*/ld*,*collect2*,*addr2line*,*/native' \
    "$bin" emu-bench --reps 1 --only "$row" >/dev/null 2>valgrind.log ) || { tail -20 "$out/valgrind.log"; exit 1; }
profile=$(grep -l "gpubook-emu-worker" "$out"/callgrind.out.* | head -1)
[ -n "$profile" ] || { echo "no worker profile (did the worker exit before its profile was written?)"; exit 1; }
# KEEP_PROFILE=FILE keeps the profile, for `callgrind_annotate --auto=yes FILE` (costs per source line).
[ -z "${KEEP_PROFILE:-}" ] || cp "$profile" "$KEEP_PROFILE"
callgrind_annotate --threshold=100 "$profile" 2>/dev/null \
  | sed -E 's#/root/.cache/gpubook/emu-runtime-[0-9a-f]+/##g; s#/[^ ]*/gpubook-emu-worker##; s#\[[^]]*\]##g' \
  | awk -v top="$top" '/PROGRAM TOTALS/{print "worker instructions:", $1} /file:function/{on=1; next} on && NF && n<top {print; n++}' \
  | cut -c1-160
