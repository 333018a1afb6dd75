// DeepSeek-V3's gate in full: chapter 12's, plus node-limited routing. The experts
// come in `groups` groups of experts / groups, in order (V3: 8 groups of 32, one
// group per node). For each token, one thread:
//   biased scores b_e = sigmoid(logit) + bias[e], as in chapter 12
//   a group's score: the sum of its TWO highest biased scores
//   keep the topk_groups groups with the highest scores (on a tie the lower group
//   first); the experts of the other groups cannot be chosen
//   then as chapter 12: the topk best experts among those left, best first,
//   weights = their affinities (no bias) over their sum, times route_scale
#define MAX_EXPERTS 512
#define MAX_GROUPS 64

// ANCHOR: kernel
extern "C" __global__ void
moe_gate_node_limited(const float* logits, const float* bias, int* topk_idx,
                      float* topk_weights, int tokens, int experts, int groups,
                      int topk_groups, int topk, float route_scale) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    // SOLUTION
    if (t >= tokens) return;
    const float* z = logits + (long long)t * experts;
    float biased[MAX_EXPERTS];
    bool taken[MAX_EXPERTS];
    for (int e = 0; e < experts; ++e) {
        biased[e] = 1.0f / (1.0f + expf(-z[e])) + bias[e];
        taken[e] = false;
    }
    // ANCHOR: groups
    int per_group = experts / groups;
    float score[MAX_GROUPS];
    bool kept[MAX_GROUPS];
    for (int g = 0; g < groups; ++g) {
        float first = -3.0e38f, second = -3.0e38f;  // the group's two best
        for (int e = g * per_group; e < (g + 1) * per_group; ++e) {
            if (biased[e] > first) {
                second = first;
                first = biased[e];
            } else if (biased[e] > second) {
                second = biased[e];
            }
        }
        score[g] = first + second;
        kept[g] = false;
    }
    for (int n = 0; n < topk_groups; ++n) {
        int best = -1;
        for (int g = 0; g < groups; ++g)
            if (!kept[g] && (best < 0 || score[g] > score[best])) best = g;
        kept[best] = true;
    }
    for (int e = 0; e < experts; ++e)
        if (!kept[e / per_group]) taken[e] = true;  // out of reach
    // ANCHOR_END: groups
    float sum = 0.0f;
    for (int k = 0; k < topk; ++k) {
        int best = -1;
        for (int e = 0; e < experts; ++e)
            if (!taken[e] && (best < 0 || biased[e] > biased[best])) best = e;
        taken[best] = true;
        float s = 1.0f / (1.0f + expf(-z[best]));
        topk_idx[t * topk + k] = best;
        topk_weights[t * topk + k] = s;
        sum += s;
    }
    for (int k = 0; k < topk; ++k)
        topk_weights[t * topk + k] = topk_weights[t * topk + k] / sum * route_scale;
    // STUB
    // // TODO: chapter 12's gate (copy your moe_gate's body), with one step between
    // // the biased scores and the top-k: score each group by the sum of its two
    // // best biased scores, keep the topk_groups best groups, and mark every
    // // expert of the other groups as taken, so the top-k never picks it.
    // END SOLUTION
}
// ANCHOR_END: kernel
