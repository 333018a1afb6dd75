// DeepSeek-V3's gate without groups (chapter 13 adds them), one thread per token.
// Token t has one logit per expert, logits[t * experts + e]. For each expert:
//   affinity s_e = sigmoid(logit)           (1 / (1 + expf(-logit)))
//   biased score b_e = s_e + bias[e]   the bias only CHOOSES experts (it is
//                                      tuned to balance their load); it never
//                                      weighs them
// Choose the topk experts with the highest b_e, best first (on a tie the lower
// index first), and write them to topk_idx[t * topk + k]. Their weights: the
// affinities s_e of the chosen experts divided by their sum, times route_scale, in
// topk_weights[t * topk + k].
#define MAX_EXPERTS 512

// ANCHOR: kernel
extern "C" __global__ void
moe_gate(const float* logits, const float* bias, int* topk_idx, float* topk_weights,
         int tokens, int experts, int topk, float route_scale) {
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
    float sum = 0.0f;
    for (int k = 0; k < topk; ++k) {
        // The highest biased score not taken yet; a strict > keeps the lower index.
        int best = -1;
        for (int e = 0; e < experts; ++e)
            if (!taken[e] && (best < 0 || biased[e] > biased[best])) best = e;
        taken[best] = true;
        float s = 1.0f / (1.0f + expf(-z[best]));  // the affinity, without the bias
        topk_idx[t * topk + k] = best;
        topk_weights[t * topk + k] = s;
        sum += s;
    }
    for (int k = 0; k < topk; ++k)
        topk_weights[t * topk + k] = topk_weights[t * topk + k] / sum * route_scale;
    // STUB
    // // TODO: guard t. Compute each expert's biased score (sigmoid of its logit,
    // // plus its bias) into a local array. Then topk times: find the best expert
    // // not taken yet, take it, write it to topk_idx and its affinity (no bias) to
    // // topk_weights, and add the affinity to a sum. Last, divide the weights by
    // // the sum and multiply by route_scale.
    // END SOLUTION
}
// ANCHOR_END: kernel
