#!/usr/bin/env bash
# Builds and runs block_sum.cpp two ways (README.md says what it measures):
#   plain  g++ -O2: the coroutine engine alone
#   hooks  g++ -O2 -fsanitize=thread with hooks that only test the address range and count
#   docs/experiments/coroutine-block/run.sh   (CXX=clang++ to try another compiler)
set -euo pipefail
cd "$(dirname "$0")"
cxx=${CXX:-g++}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "$($cxx --version | head -1); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
$cxx -std=c++20 -O2 -o "$out/plain" block_sum.cpp
echo "== plain (-O2)"
"$out/plain"
# The libraries after the source: a linker with --as-needed (Ubuntu's) drops those given before.
$cxx -std=c++20 -O2 -DHOOKS -fsanitize=thread --param tsan-instrument-func-entry-exit=0 \
  -nodefaultlibs -o "$out/hooks" block_sum.cpp -lstdc++ -lm -lc -lgcc_s -lgcc
echo "== hooks (-O2 -fsanitize=thread, hooks that test the range and count)"
"$out/hooks"
