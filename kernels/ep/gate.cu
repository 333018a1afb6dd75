// DeepSeek-V3's gate, one thread per token (the library's version; chapters 12 and 13 have the
// learner write it). For token t with logits z (one per expert):
//   s_e = sigmoid(z_e)                    affinity
//   b_e = s_e + bias_e                    biased score: used to choose, never to weigh
//   with groups > 1: a group's score is the sum of its two highest b_e; keep the topk_groups
//   best groups and drop every expert outside them (V3: 8 groups of 32 experts, one per node,
//   keep 4: a token reaches at most 4 nodes)
//   the topk experts by b_e, in descending order (ties: the lower index first)
//   w_k = s_{e_k} / sum_j s_{e_j} * route_scale
#define GATE_MAX_EXPERTS 512
#define GATE_MAX_GROUPS 64

__device__ inline float gate_sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }

extern "C" __global__ void moe_gate(const float* logits, const float* bias, int* topk_idx, float* topk_weights,
                                    int tokens, int experts, int groups, int topk_groups, int topk,
                                    float route_scale) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= tokens) return;
    const float* z = logits + (long long)t * experts;
    float biased[GATE_MAX_EXPERTS];
    bool taken[GATE_MAX_EXPERTS];
    for (int e = 0; e < experts; ++e) {
        biased[e] = gate_sigmoid(z[e]) + bias[e];
        taken[e] = false;
    }
    int per_group = experts / groups;
    if (groups > 1) {
        float score[GATE_MAX_GROUPS];
        bool kept[GATE_MAX_GROUPS];
        for (int g = 0; g < groups; ++g) {
            float first = -3.0e38f, second = -3.0e38f;  // below any score
            for (int e = g * per_group; e < (g + 1) * per_group; ++e) {
                float b = biased[e];
                if (b > first) { second = first; first = b; }
                else if (b > second) second = b;
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
            if (!kept[e / per_group]) taken[e] = true;  // out of reach: never chosen
    }
    float sum = 0.0f;
    for (int k = 0; k < topk; ++k) {
        int best = -1;
        for (int e = 0; e < experts; ++e)
            if (!taken[e] && (best < 0 || biased[e] > biased[best])) best = e;
        taken[best] = true;
        topk_idx[t * topk + k] = best;
        float s = gate_sigmoid(z[best]);
        topk_weights[t * topk + k] = s;
        sum += s;
    }
    for (int k = 0; k < topk; ++k) topk_weights[t * topk + k] = topk_weights[t * topk + k] / sum * route_scale;
}
