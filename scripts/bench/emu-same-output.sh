#!/usr/bin/env bash
# Two builds of gpubook must print the same for every kernel of the fidelity suite in check mode
# (results, access counts, diagnostics; timings left out): the check that an optimisation of the
# emulator's access path changed no count.
#   scripts/bench/emu-same-output.sh OLD_GPUBOOK NEW_GPUBOOK
set -uo pipefail
old=$1 new=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 differ=0
for cu in crates/gpubook/tests/fidelity/kernels/*.cu; do
  for side in old new; do
    bin=$old; [ "$side" = new ] && bin=$new
    GPUBOOK_BACKEND=emu "$bin" run "$cu" --mode check --show 4 2>&1 | grep -vE ' ms|µs| s$' > "$dir/$side"
  done
  n=$((n + 1))
  if ! diff -u "$dir/old" "$dir/new" > "$dir/diff"; then
    differ=$((differ + 1))
    echo "== $(basename "$cu") differs"; head -20 "$dir/diff"
  fi
done
echo "$n kernels, $differ print differently"
[ "$differ" -eq 0 ]
