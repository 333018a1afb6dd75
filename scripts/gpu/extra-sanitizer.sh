#!/usr/bin/env bash
# The bug zoo's planted bugs (crates/gpubook/tests/kernels/zoo.cu, the cases of
# crates/gpubook/tests/it/bug_zoo.rs) on the GPU under compute-sanitizer, beside gpubook's check
# mode on the same launch. run.sh runs every gpu-bin/extra-*.sh after the tests; alone: from the
# repo root after unpacking gpu-bin. Each bug is one `gpubook run` process (a faulting kernel
# leaves its CUDA context unusable), with the sanitizer tool that fits its class; hangs are
# stopped after 20 s. Prints  bug | tool | gpubook check mode says | compute-sanitizer says.
# Success: the table is complete (every bug has both columns; what each column says is the
# measurement, for docs/measurements.md). Full outputs in $OUT/sanitizer/.
set -u
out=${OUT:-/tmp/gpubook-out}/sanitizer; mkdir -p "$out"
gb=./gpu-bin/gpubook
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
[ -n "$cs" ] || { echo "extra-sanitizer: compute-sanitizer not found"; exit 1; }
zoo=crates/gpubook/tests/kernels/zoo.cu
# bug  tool  block  shared  out-init  file
cases="
no_guard memcheck 128 0 uninit
off_by_one memcheck 128 0 uninit
negative_index memcheck 128 0 uninit
reverse_past_end memcheck 128 0 uninit
unsigned_wrap memcheck 128 0 uninit
shared_overflow memcheck 128 0 uninit
dynamic_shared memcheck 128 512 uninit
missing_sync racecheck 128 0 uninit
reduce_no_loop_sync racecheck 128 0 uninit
volatile_warp_reduce racecheck 128 0 uninit
global_sum racecheck 128 0 zeros
in_place_shift racecheck 128 0 zeros
divergent_barrier synccheck 128 0 uninit
early_return synccheck 128 0 uninit
partial_shuffle synccheck 128 0 uninit
spin_forever memcheck 128 0 zeros
stuck_loop memcheck 128 0 uninit
empty_loop memcheck 128 0 uninit
null_pointer memcheck 128 0 uninit
wild_pointer memcheck 128 0 uninit
divide_by_zero memcheck 128 0 uninit
recursion memcheck 128 0 uninit
huge_local memcheck 128 0 uninit
assert memcheck 128 0 uninit
read_unwritten initcheck 128 0 uninit
shared_tile_edge initcheck 128 0 uninit
shared_histogram initcheck 128 0 zeros
misaligned_vector memcheck 128 0 uninit
shuffle_outside_mask synccheck 128 0 uninit
shuffle_missing_lane synccheck 48 0 uninit
too_much_shared memcheck 128 0 uninit crates/gpubook/tests/kernels/zoo_shared.cu
"
echo "== bug zoo: gpubook check mode and compute-sanitizer ($("$cs" --version 2>/dev/null | grep -o 'Version [0-9.]*' | head -1); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
printf '%-22s | %-9s | %-60s | %s\n' bug tool "gpubook check mode says" "compute-sanitizer says"
while read -r bug tool block shared init file; do
  [ -n "$bug" ] || continue
  file=${file:-$zoo}
  grid=$(( (1000 + block - 1) / block ))
  args=(run "$file" --kernel "bug_$bug" --grid "$grid" --block "$block" --shared "$shared"
        --arg "f32[1000]:$init" --arg 'f32[1000]:iota' --arg i32=1000)
  timeout 60 "$gb" "${args[@]}" --mode check > "$out/$bug.gpubook.txt" 2>&1
  # The diagnostic's first line: the one after "KERNEL on DEVICE".
  says=$(grep -v -e ' on gpubook emulator' -e '^launched' "$out/$bug.gpubook.txt" | head -1 | cut -c1-60)
  GPUBOOK_BACKEND=cuda timeout 20 "$cs" --tool "$tool" --show-backtrace no "$gb" "${args[@]}" > "$out/$bug.sanitizer.txt" 2>&1
  rc=$?
  if [ $rc -eq 124 ]; then san="(still running after 20 s: killed)"
  else
    first=$(grep -m1 -E '^========= +[A-Z]' "$out/$bug.sanitizer.txt" | grep -v 'ERROR SUMMARY' | sed 's/^========= *//')
    summary=$(grep -m1 -o 'ERROR SUMMARY: [0-9]* error[s]*\|RACECHECK SUMMARY: [0-9]* hazard[s]*[^=]*' "$out/$bug.sanitizer.txt")
    [ -n "$first" ] || first=$(grep -m1 -iE 'error|fail' "$out/$bug.sanitizer.txt" | cut -c1-80)
    san="${summary:-no summary}; ${first:-nothing reported}"
  fi
  printf '%-22s | %-9s | %-60s | %s\n' "$bug" "$tool" "${says:-(ran: no diagnostic)}" "$(echo "$san" | cut -c1-110)"
done <<< "$cases"
