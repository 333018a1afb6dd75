// DeepEP's get_dispatch_layout, with places: one block per destination rank d
// (blockIdx.x). Expert e lives on rank e / (experts / ranks). For this rank's
// tokens, write
//   num_tokens_per_expert[e]   for d's experts: how many tokens chose e
//   num_tokens_per_rank[d]     how many tokens go to d: a token goes to a rank
//                              ONCE, however many of its experts live there
//   send_pos[t * ranks + d]    -1 if token t does not go to d, else its place
//                              among the tokens that go to d, in token order
// The block walks the tokens a tile of blockDim.x at a time. Dynamic shared memory
// holds experts / ranks counters, then blockDim.x ints for the scan.

// ANCHOR: kernel
extern "C" __global__ void
get_dispatch_layout(const int* topk_idx, int* num_tokens_per_rank,
                    int* num_tokens_per_expert, int* send_pos, int tokens, int topk,
                    int experts, int ranks) {
    extern __shared__ int smem[];
    int per_rank = experts / ranks;
    int* expert_count = smem;     // per_rank counters, one per expert of rank d
    int* scan = smem + per_rank;  // a flag per thread of the tile, scanned in place
    int d = blockIdx.x, tid = threadIdx.x, n = blockDim.x;
    // TODO: zero expert_count and wait. Then for each tile of n tokens: thread
    // tid takes token base + tid; its flag is 1 if one of its experts lives on d
    // (count each such expert with atomicAdd on expert_count). Scan the flags in
    // `scan` (an inclusive prefix sum, with a __syncthreads between reading and
    // writing), write send_pos from the scan and a running carry, and add the
    // tile's total to the carry. At the end: num_tokens_per_rank[d] and
    // num_tokens_per_expert for d's experts.
}
// ANCHOR_END: kernel
