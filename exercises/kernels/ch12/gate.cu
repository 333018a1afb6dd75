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
    // TODO: guard t. Compute each expert's biased score (sigmoid of its logit,
    // plus its bias) into a local array. Then topk times: find the best expert
    // not taken yet, take it, write it to topk_idx and its affinity (no bias) to
    // topk_weights, and add the affinity to a sum. Last, divide the weights by
    // the sum and multiply by route_scale.
}
// ANCHOR_END: kernel
