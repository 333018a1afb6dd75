"""Checks `gpubook moe route` against v3_gate.py (an independent numpy port of DeepSeek-V3's
gate) on random inputs: the same experts in the same order, and weights within 1e-6.

Usage: python3 scripts/moe/check_gate.py path/to/gpubook [cases]
Prints one line per case and exits 1 on the first disagreement.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v3_gate import v3_gate  # noqa: E402

# (tokens, experts, groups, topk_groups, topk, route_scale): V3's own settings, and shapes that
# are not powers of two, one group, one expert per token, every group kept.
CASES = [
    (64, 256, 8, 4, 8, 2.5),
    (37, 24, 6, 2, 5, 1.0),
    (20, 12, 1, 1, 3, 2.5),
    (9, 10, 5, 5, 10, 0.7),
    (1, 8, 4, 1, 1, 1.0),
    (50, 64, 8, 3, 6, 2.5),
]


def main():
    gpubook = sys.argv[1]
    cases = CASES[: int(sys.argv[2])] if len(sys.argv) > 2 else CASES
    rng = np.random.default_rng(2412)
    for tokens, experts, groups, topk_groups, topk, scale in cases:
        logits = rng.uniform(-4, 4, size=(tokens, experts)).astype(np.float32)
        bias = rng.uniform(-0.1, 0.1, size=experts).astype(np.float32)
        with tempfile.TemporaryDirectory() as d:
            lp, bp = os.path.join(d, "logits.json"), os.path.join(d, "bias.json")
            json.dump(logits.astype(float).tolist(), open(lp, "w"))
            json.dump(bias.astype(float).tolist(), open(bp, "w"))
            cmd = [gpubook, "moe", "route", "--logits", lp, "--bias", bp, "--groups", str(groups),
                   "--topk-groups", str(topk_groups), "--topk", str(topk), "--route-scale", str(scale), "--json"]
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        want_e, want_w = v3_gate(logits, bias, groups, topk_groups, topk, scale)
        got_e, got_w = np.array(out["experts"]), np.array(out["weights"])
        name = f"{tokens} tokens, {experts} experts, {groups} groups keep {topk_groups}, top-{topk}, scale {scale}"
        if not np.array_equal(got_e, want_e):
            t = int(np.argmax((got_e != want_e).any(axis=1)))
            print(f"DIFFER {name}: token {t}: gpubook {got_e[t].tolist()}, numpy port {want_e[t].tolist()}")
            sys.exit(1)
        err = float(np.abs(got_w - want_w).max())
        if err > 1e-6:
            print(f"DIFFER {name}: weights differ by {err:.2e}")
            sys.exit(1)
        print(f"agree  {name} (weights within {err:.1e})")


if __name__ == "__main__":
    main()
