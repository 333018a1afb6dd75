#!/usr/bin/env bash
# The playground's Run on a GPU: every exercise's declared launch (`run = ...` in exercises.toml,
# what the served book's Run button launches) with the solution's kernel, through `gpubook run`
# on the CUDA backend and on the emulator. Prints one line per exercise: ok on both, and whether
# the two printed the same buffers.
out=${OUT:-/tmp/gpubook-out}; mkdir -p "$out/exercise-runs"
python3 - "$out/exercise-runs" <<'PY'
import re, shlex, subprocess, sys
out = sys.argv[1]
text = open("exercises.toml").read()
runs = re.findall(r'^id = "([^"]+)"(?:(?!^id = ).)*?^run = "((?:[^"\\]|\\.)*)"', text, re.M | re.S)
ok = same = 0
for ex, run in runs:
    args = shlex.split(run.replace('\\"', '"'))
    args[0] = "solutions/" + args[0]
    res = {}
    for backend in ("cuda", "emu"):
        p = subprocess.run(["./gpu-bin/gpubook", "run", *args], capture_output=True, text=True, timeout=300,
                           env={**__import__("os").environ, "GPUBOOK_BACKEND": backend})
        open(f"{out}/{ex}-{backend}.log", "w").write(p.stdout + p.stderr)
        bufs = [l for l in p.stdout.splitlines() if "[" in l and not l.startswith(("device", "backend"))]
        res[backend] = (p.returncode, bufs, (p.stdout + p.stderr).strip().splitlines()[-1:] or [""])
    good = res["cuda"][0] == 0 and res["emu"][0] == 0
    ok += good
    same += good and res["cuda"][1] == res["emu"][1]
    word = "ok" if good else "FAILED"
    print(f"{ex:<28} {word:<7} {'same buffers' if res['cuda'][1] == res['emu'][1] else 'buffers differ'}"
          + ("" if good else f"  cuda rc={res['cuda'][0]}: {res['cuda'][2][0][:160]} | emu rc={res['emu'][0]}: {res['emu'][2][0][:160]}"))
print(f"{ok} of {len(runs)} declared launches ran on both backends; {same} printed the same buffers")
PY
