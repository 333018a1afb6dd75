#!/usr/bin/env bash
# A planted-bug hunt (2026-12-03): 44 kernels with one realistic bug each and 9 correct but
# unusual ones (C*), each run as its first line says, in check mode. Prints one line a kernel:
# what the emulator said first. docs/measurements.md ("Diagnostics a planted-bug hunt found
# missing", and "Build findings") has the table before and after the fixes it led to.
#   docs/experiments/bug-hunt-2026-12-03/run.sh GPUBOOK_BINARY
set -u
bin=$(realpath "$1")
cd "$(dirname "$0")"
for f in [0-9]*.cu C*.cu; do
  cmd=$(head -1 "$f" | sed "s#^// gpubook #\"$bin\" #")
  said=$(GPUBOOK_BACKEND=emu timeout 120 bash -c "$cmd" 2>&1 | grep -v -e ' on gpubook emulator' | head -1 | cut -c1-110)
  printf '%-28s %s\n' "${f%.cu}" "$said"
done
