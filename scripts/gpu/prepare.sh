#!/usr/bin/env bash
# Builds everything the H200 run needs here (the GPU machine has no Rust toolchain) into gpu-bin/:
# the release test binaries of the workspace, the gpubook binary, and run.sh, which runs them there.
# It packs them into gpu-pack/gpu-bin.tar.xz (the transfer limit is 64 MiB; unpacked they are
# ~60 MB). Then, through the device tool:
#   run(command="tar -xJf gpu-pack/gpu-bin.tar.xz && bash gpu-bin/run.sh", carry=["gpu-pack"])
# The binaries find the repo's .cu files through the working directory (the repo root there).
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=("$@")
# The front end, emulator and simulator crates and the learner's stubs have nothing to run on a GPU.
[ ${#packages[@]} -gt 0 ] || packages=(--workspace --exclude exercises --exclude gpubook-cudac --exclude gpubook-emu --exclude gpubook-sim)
out=gpu-bin
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target"
rm -rf "$out" && mkdir -p "$out/tests"
cargo build --release --bin gpubook
cp "$target/release/gpubook" "$out/"
cargo test --release --no-run --message-format=json "${packages[@]}" 2>"$target/gpu-build.log" \
  | python3 -c '
import json, sys, shutil, os
# Test binaries that never touch a device: those of the book builder.
SKIP = {"gpubook-book.book", "gpubook-book.gpubook_book-lib", "solutions.solutions-lib", "gpubook-cli.gpubook-bin"}
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        frag = m["package_id"].split("#")[-1]
        pkg = frag.split("@")[0] if "@" in frag else m["package_id"].split("#")[0].rstrip("/").split("/")[-1]
        name = m["target"]["name"] + ("-" + m["target"]["kind"][0] if m["target"]["kind"][0] != "test" else "")
        if pkg + "." + name in SKIP:
            continue
        dst = os.path.join(sys.argv[1], "tests", pkg + "." + name)
        shutil.copy(m["executable"], dst)
        print("  test binary", dst)
' "$out"
[ -n "$(ls "$out/tests")" ] || { tail -30 "$target/gpu-build.log"; exit 1; }
# The untouched stubs: on the GPU every one of their graders must fail, with a report.
mkdir -p "$out/stubs"
cargo test --release --no-run --message-format=json -p exercises 2>>"$target/gpu-build.log" \
  | python3 -c '
import json, sys, shutil, os
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable") and m["target"]["kind"][0] == "test":
        shutil.copy(m["executable"], os.path.join(sys.argv[1], "stubs", m["target"]["name"]))
' "$out"
strip "$out"/gpubook "$out"/tests/* "$out"/stubs/*
cp scripts/gpu/run.sh "$out/run.sh"
# The commit the binaries are built from, for recordings made there (extra-record-book.sh).
{ git rev-parse --short HEAD 2>/dev/null || echo unknown; } | tr -d '\n' > "$out/COMMIT"
git diff --quiet 2>/dev/null || printf -- '-dirty' >> "$out/COMMIT"
cp scripts/gpu/extra-*.sh "$out/" 2>/dev/null || true
cp scripts/gpu/two-gpus.sh scripts/gpu/peer_baseline.cu "$out/"
du -sh "$out"
mkdir -p gpu-pack
tar -cf - gpu-bin | xz -T0 -3 > gpu-pack/gpu-bin.tar.xz
ls -la gpu-pack/gpu-bin.tar.xz
