#!/bin/sh
# Runs the same tests against an aarch64 worker under qemu-user (the x86_64 test host stays
# native). Needs g++-aarch64-linux-gnu and qemu-user (apt).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
emu=$(dirname "$here")
out=${GPUBOOK_EMU_TEST_DIR:-/tmp/gpubook-emu-tests}-aarch64
mkdir -p "$out"
CXX=aarch64-linux-gnu-g++
$CXX -std=c++17 -O2 -g -pthread -rdynamic -fno-exceptions -fno-rtti \
    "$emu"/worker/*.cpp "$emu"/worker/*.S -o "$out/gpubook-emu-worker" -ldl
common="-std=c++17 -fPIC -shared -g -fno-exceptions -fno-rtti -fno-strict-aliasing -fstack-clash-protection
        -I$emu -I$emu/unsupported -include gpubook_device.h -x c++"
for cu in "$here"/kernels/*.cu; do
    name=$(basename "$cu" .cu)
    $CXX $common -O1 -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0 \
        --param asan-stack=0 --param asan-globals=0 -DGPUBOOK_CHECK=1 "$cu" -o "$out/$name.check.so"
    $CXX $common -O2 -DGPUBOOK_FAST=1 "$cu" -o "$out/$name.fast.so"
done
printf '#!/bin/sh\nexec qemu-aarch64 -L /usr/aarch64-linux-gnu "%s/gpubook-emu-worker" "$@"\n' "$out" > "$out/worker.sh"
chmod +x "$out/worker.sh"
g++ -std=c++17 -O1 -g "$here/host.cpp" "$here/run_tests.cpp" -o "$out/run_tests"
GPUBOOK_EMU_TEST_NO_SIGFPE=1 "$out/run_tests" "$out/worker.sh" "$out"
