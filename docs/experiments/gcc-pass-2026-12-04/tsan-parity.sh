#!/usr/bin/env bash
# For each function of access_kinds.cpp: the calls g++'s ThreadSanitizer pass emits (check mode's
# flags), and those left once the production draft's plugin has run: by default the
# gpubook_pass.cpp of production-draft.patch, applied to a copy of today's runtime; or the
# plugin source named (an applied patch: crates/gpubook-emu/runtime/pass/gpubook_pass.cpp).
#   tsan-parity.sh [PLUGIN_SOURCE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ -n "${1:-}" ]; then
  src=$1
else
  mkdir -p "$out/tree/crates/gpubook-emu"
  cp -r "$repo/crates/gpubook-emu/runtime" "$out/tree/crates/gpubook-emu/"
  (cd "$out/tree" && git apply --include='crates/gpubook-emu/runtime/*' "$here/production-draft.patch")
  src=$out/tree/crates/gpubook-emu/runtime/pass/gpubook_pass.cpp
fi
inc=${PLUGIN_INCLUDE:-$(g++ -print-file-name=plugin)/include}
g++ -std=c++17 -shared -fPIC -fno-rtti -fno-exceptions -O2 -I"$inc" "$src" -o "$out/pass.so"
flags="-std=c++17 -O1 -fno-tree-sra -fsanitize=thread --param tsan-distinguish-volatile=1
       --param tsan-instrument-func-entry-exit=0 -fno-strict-aliasing -fno-finite-loops -fPIC"
g++ $flags -S "$here/access_kinds.cpp" -o "$out/tsan.s"
g++ $flags -fplugin="$out/pass.so" -S "$here/access_kinds.cpp" -o "$out/pass.s"
calls() { sed -n "/^$1:/,/\.cfi_endproc/p" "$2" | grep -oE "(call|jmp)\s+(__tsan|gpubook)[_a-z0-9]*" | awk '{print $2}' | sort | uniq -c | awk '{printf "%s x%s  ", $2, $1}'; }
for f in $(grep -oE "^(void|int|double|float) [a-z_0-9]+\(" "$here/access_kinds.cpp" | awk '{print $2}' | tr -d '('); do
  printf '%-14s tsan: %-60s plugin: %s\n' "$f" "$(calls "$f" "$out/tsan.s")" "$(calls "$f" "$out/pass.s")"
done
