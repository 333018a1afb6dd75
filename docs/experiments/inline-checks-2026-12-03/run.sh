#!/usr/bin/env bash
# Builds inline_checks.cpp with the emulator's compiler and fast mode's flags (compile.rs's
# fast_mode_flags), whole, without the race shadow or the counts, and with an 8-byte shadow, and runs each three times
# on the 16M and the 64K vector add.   docs/experiments/inline-checks-2026-12-03/run.sh [CXX]
set -euo pipefail
cxx=${1:-g++}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c++17 -fno-exceptions -fno-rtti -fno-strict-aliasing -O2 -fno-semantic-interposition -fno-finite-loops)
"$cxx" --version | head -1
for variant in all NO_RACES NO_COUNTS SHADOW8; do
    def=(); [ "$variant" = all ] || def=(-D"$variant")
    "$cxx" "${flags[@]}" "${def[@]}" -o "$out/$variant" "$here/inline_checks.cpp"
done
for n in 16777216 65536; do
    reps=7; [ "$n" = 65536 ] && reps=101
    for variant in all NO_RACES NO_COUNTS SHADOW8; do
        for run in 1 2 3; do
            printf '%-9s run %s: ' "$variant" "$run"
            "$out/$variant" "$n" "$reps" | head -1
        done
    done
done
