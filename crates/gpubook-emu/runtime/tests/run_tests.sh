#!/bin/sh
# Builds the worker and the test kernels exactly as the Rust host does, then runs the
# standalone tests. `run_tests.sh bench` also measures the fast/check timings in README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
emu=$(dirname "$here")
out=${GPUBOOK_EMU_TEST_DIR:-/tmp/gpubook-emu-tests}
mkdir -p "$out"
CXX=${CXX:-g++}

# The worker (the same flags as WORKER_FLAGS in crates/gpubook-emu/src/compile.rs).
$CXX -std=c++17 -O2 -g -pthread -rdynamic -fno-exceptions -fno-rtti \
    "$emu"/worker/*.cpp "$emu"/worker/*.S -o "$out/gpubook-emu-worker" -ldl

# Kernels, in both modes (the flags in crates/gpubook-emu/DESIGN.md).
common="-std=c++17 -fPIC -shared -g -fno-exceptions -fno-rtti -fno-strict-aliasing -fstack-clash-protection
        -I$emu -I$emu/unsupported -include gpubook_device.h -x c++"
check="-O1 -fno-tree-sra -fsanitize=thread --param tsan-distinguish-volatile=1 --param tsan-instrument-func-entry-exit=0
       -DGPUBOOK_CHECK=1 -fno-finite-loops"
fast="-O2 -fno-semantic-interposition -DGPUBOOK_FAST=1 -fno-finite-loops"
# PASS=1: check mode with its compiler pass (src/check_pass.rs), as the host uses it where g++
# has its plugin headers; PASS=0 (the default here): ThreadSanitizer's hooks alone.
if [ "${PASS:-0}" = 1 ]; then
    $CXX -std=c++17 -shared -fPIC -fno-rtti -fno-exceptions -O2 -I"$($CXX -print-file-name=plugin)/include" \
        "$emu/pass/gpubook_pass.cpp" -o "$out/gpubook-pass.so"
    check="$check -fplugin=$out/gpubook-pass.so -DGPUBOOK_CHECK_PASS=1 -O2 -fno-semantic-interposition
           -fno-isolate-erroneous-paths-dereference -fno-partial-inlining --param max-inline-insns-single=200"
fi
link="-nodefaultlibs -lgcc"
for cu in "$here"/kernels/*.cu; do
    name=$(basename "$cu" .cu)
    $CXX $common $check "$cu" -o "$out/$name.check.so" $link
    $CXX $common $fast "$cu" -o "$out/$name.fast.so" $link
done

$CXX -std=c++17 -O1 -g "$here/host.cpp" "$here/run_tests.cpp" -o "$out/run_tests"
"$out/run_tests" "$out/gpubook-emu-worker" "$out" "$@"
