#!/usr/bin/env bash
# The fidelity suite (crates/gpubook/tests/fidelity/) on the emulator and on the GPU, side by
# side (run.sh runs every gpu-bin/extra-*.sh after the tests; or alone, from the repo root, after
# unpacking gpu-bin). Runs the labs' prebuilt `it` test binary's `fidelity_suite_on_the_default_backend`
# twice, GPUBOOK_BACKEND=emu then =cuda, and joins their FIDELITY lines into
#   kernel | emulator | GPU | agree
# agree: "yes" when both met every expected value of the file, "yes, same bytes" when every
# buffer is also bit for bit the same. Success: every row says yes (the last line counts them).
set -u
out=${OUT:-/tmp/gpubook-out}; mkdir -p "$out"
bin=$(ls gpu-bin/tests/gpubook-labs.it 2>/dev/null | head -1)
[ -n "$bin" ] || { echo "extra-fidelity: no gpu-bin/tests/gpubook-labs.it (run scripts/gpu/prepare.sh)"; exit 1; }
for backend in emu cuda; do
  GPUBOOK_BACKEND=$backend timeout 600 "$bin" --exact fidelity::fidelity_suite_on_the_default_backend --nocapture \
    > "$out/fidelity-$backend.log" 2>&1
done
echo "== fidelity suite: emulator (check mode) and GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
python3 - "$out/fidelity-emu.log" "$out/fidelity-cuda.log" <<'PY'
import sys
def rows(path):
    r = {}
    for line in open(path, errors="replace"):
        p = line.rstrip("\n").split(" ", 4)
        if len(p) >= 4 and p[0] == "FIDELITY":
            r[p[1]] = (p[3], p[4] if len(p) > 4 else "")
    return r
emu, gpu = rows(sys.argv[1]), rows(sys.argv[2])
names = sorted(set(emu) | set(gpu))
print(f"{'kernel':<26} {'emulator':<9} {'GPU':<9} agree")
agree = 0
for n in names:
    e, g = emu.get(n, ("missing", "")), gpu.get(n, ("missing", ""))
    ok = e[0] == "ok" and g[0] == "ok"
    same = ok and e[1] == g[1] and e[1] != "-"
    agree += ok
    print(f"{n:<26} {e[0]:<9} {g[0]:<9} {'yes, same bytes' if same else 'yes' if ok else 'NO'}")
    for side, (s, why) in (("emulator", e), ("GPU", g)):
        if s != "ok":
            print(f"    {side}: {why[:300]}")
print(f"{agree} of {len(names)} agree")
PY
