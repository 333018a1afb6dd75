"""DeepSeek-V3's gate, written from the published formulas (the V3 report, section 2.1.2 and
the routing settings of its config), independently of gpubook's Rust and CUDA versions, so that
`gpubook moe route` can be checked against it (check_gate.py).

For a token with logits z (one per expert):
  s = sigmoid(z)                         affinities
  b = s + bias                           biased scores: they choose, they never weigh
  groups > 1: group score = sum of the two highest b in the group; keep the topk_groups best
              groups, drop the experts of the others
  experts = the topk highest b among those left, highest first (ties: lower index first)
  weights = s[experts] / sum(s[experts]) * route_scale
"""

import numpy as np


def v3_gate(logits, bias, groups, topk_groups, topk, route_scale):
    logits = np.asarray(logits, dtype=np.float64)
    bias = np.asarray(bias, dtype=np.float64)
    tokens, experts = logits.shape
    affinity = 1.0 / (1.0 + np.exp(-logits))
    biased = affinity + bias[None, :]
    allowed = np.ones((tokens, experts), dtype=bool)
    if groups > 1:
        per_group = experts // groups
        grouped = biased.reshape(tokens, groups, per_group)
        top2 = -np.sort(-grouped, axis=2)[:, :, :2]
        group_score = top2.sum(axis=2)
        # A stable sort of the negated scores keeps the lower index first among equals.
        kept = np.argsort(-group_score, axis=1, kind="stable")[:, :topk_groups]
        keep = np.zeros((tokens, groups), dtype=bool)
        np.put_along_axis(keep, kept, True, axis=1)
        allowed = np.repeat(keep, per_group, axis=1)
    masked = np.where(allowed, biased, -np.inf)
    chosen = np.argsort(-masked, axis=1, kind="stable")[:, :topk]
    weights = np.take_along_axis(affinity, chosen, axis=1)
    weights = weights / weights.sum(axis=1, keepdims=True) * route_scale
    return chosen, weights
