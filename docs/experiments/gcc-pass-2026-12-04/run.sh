#!/usr/bin/env bash
# Builds pass.cpp as a GCC plugin and kernel.cpp twice (plain, and with the pass and
# checks_inline.h), with fast mode's flags, and times native against checked in turns.
#   [VARIANTS="all NO_RACES NO_COUNTS"] run.sh [N] [REPS] [ROUNDS]
# Needs GCC's plugin headers: PLUGIN_INCLUDE=dir, else `g++ -print-file-name=plugin`/include
# (Debian: apt-get install gcc-12-plugin-dev; or apt-get download it and dpkg -x it anywhere).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
inc=${PLUGIN_INCLUDE:-$(g++ -print-file-name=plugin)/include}
[ -f "$inc/gcc-plugin.h" ] || { echo "no gcc-plugin.h in $inc: set PLUGIN_INCLUDE"; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags="-std=c++17 -fno-exceptions -fno-rtti -fno-strict-aliasing -O2 -fno-semantic-interposition -fno-finite-loops"
g++ -shared -fPIC -fno-rtti -O2 -I"$inc" "$here/pass.cpp" -o "$out/pass.so"
g++ $flags -c "$here/kernel.cpp" -o "$out/native.o"
g++ $flags -c "$here/main.cpp" -o "$out/main.o"
echo "$(g++ --version | head -1); $(uname -m); $(nproc) cores"
# VARIANTS: "all" (every check), and -D flags (joined by +) that leave one part out or move the
# checks out of line (OUT_OF_LINE, OUT_OF_LINE+NO_SAVE), or test for device memory with the
# opaque call the pass folds after inlining (DEVICE_TEST).
for v in ${VARIANTS:-all}; do
  d=""; [ "$v" = all ] || d="-D${v//+/ -D}"
  g++ $flags -DCHECKED $d -fplugin="$out/pass.so" -c "$here/kernel.cpp" -o "$out/checked.o"
  g++ "$out/native.o" "$out/checked.o" "$out/main.o" -o "$out/bench"
  for r in $(seq "${3:-3}"); do printf '%-9s ' "$v"; "$out/bench" "${1:-16777216}" "${2:-5}"; done
done
# The locals check: a method of a local struct called on device data (local_struct.cpp). Its
# body is instrumented before it is inlined, so its accesses of `this` arrive as checks of a
# local; with DEVICE_TEST the pass's second part folds those away after the IPA inliner.
lflags="$flags -fno-unroll-loops -fno-peel-loops -fno-tree-loop-vectorize"
for d in "" -DDEVICE_TEST; do
  g++ $lflags $d -fplugin="$out/pass.so" -S "$here/local_struct.cpp" -o "$out/local.s"
  echo "locals check ${d:-(plain)}: checks left in method_on_local: $(sed -n '/^method_on_local:/,/\.cfi_endproc/p' "$out/local.s" | grep -c gpubook_slow_bounds) (p[i]'s alone: 1)"
done
