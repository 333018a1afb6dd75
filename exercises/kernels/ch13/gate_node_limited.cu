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
    // TODO: chapter 12's gate (copy your moe_gate's body), with one step between
    // the biased scores and the top-k: score each group by the sum of its two
    // best biased scores, keep the topk_groups best groups, and mark every
    // expert of the other groups as taken, so the top-k never picks it.
}
// ANCHOR_END: kernel
