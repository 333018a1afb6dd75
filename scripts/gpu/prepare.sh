#!/usr/bin/env bash
# Builds everything the H200 run needs here (the GPU machine has no Rust toolchain) into gpu-bin/:
# the release test binaries of the workspace, the gpubook binary, and run.sh, which runs them there.
# Then, through the device tool:   run(command="bash gpu-bin/run.sh", carry=["gpu-bin"])
# The binaries find the repo's .cu files through the working directory (the repo root there).
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=("$@")
# The emulator and simulator crates and the learner's stubs have nothing to run on a GPU.
[ ${#packages[@]} -gt 0 ] || packages=(--workspace --exclude exercises --exclude gpubook-emu --exclude gpubook-sim)
out=gpu-bin
rm -rf "$out" && mkdir -p "$out/tests"
cargo build --release --bin gpubook
cp target/release/gpubook "$out/"
cargo test --release --no-run --message-format=json "${packages[@]}" 2>target/gpu-build.log \
  | python3 -c '
import json, sys, shutil, os
# Tests that never touch a device.
SKIP = {"cli_runner", "book", "viz", "gpubook-bin"}
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        frag = m["package_id"].split("#")[-1]
        pkg = frag.split("@")[0] if "@" in frag else m["package_id"].split("#")[0].rstrip("/").split("/")[-1]
        name = m["target"]["name"] + ("-" + m["target"]["kind"][0] if m["target"]["kind"][0] != "test" else "")
        if name in SKIP:
            continue
        dst = os.path.join(sys.argv[1], "tests", pkg + "." + name)
        shutil.copy(m["executable"], dst)
        print("  test binary", dst)
' "$out"
[ -n "$(ls "$out/tests")" ] || { tail -30 target/gpu-build.log; exit 1; }
strip "$out"/gpubook "$out"/tests/*
cp scripts/gpu/run.sh "$out/run.sh"
# The commit the binaries are built from, for recordings made there (extra-record-book.sh).
{ git rev-parse --short HEAD 2>/dev/null || echo unknown; } | tr -d '\n' > "$out/COMMIT"
git diff --quiet 2>/dev/null || printf -- '-dirty' >> "$out/COMMIT"
cp scripts/gpu/extra-*.sh "$out/" 2>/dev/null || true
du -sh "$out"
