#!/usr/bin/env bash
# What g++'s flow analysis says of locals read before a store, with check mode's flags
# (crates/gpubook-emu/src/compile.rs, src/uninitialized.rs): without and with the 0xFE pattern.
#   bash docs/experiments/uninitialized-locals-2026-12-03/run.sh [CXX]
cd "$(dirname "$0")"
cxx=${1:-g++}
for pattern in "" -ftrivial-auto-var-init=pattern; do
  echo "== ${pattern:-no pattern}"
  for f in buggy.cpp correct.cpp; do
    "$cxx" -std=c++17 -O1 -fno-tree-sra -fsanitize=thread -Wuninitialized -Wmaybe-uninitialized $pattern \
      -c "$f" -o /dev/null 2>&1 | grep -E "warning: .*uninitialized" | sed 's/^/  /'
  done
done
