// DeepEP's get_dispatch_layout, with positions: one block per destination rank d.
//   num_tokens_per_expert[e]  tokens routed to expert e (for d's experts)
//   num_tokens_per_rank[d]    tokens sent to rank d: a token goes to a rank once, however many
//                             of its experts live there
//   send_pos[t * ranks + d]   -1 if token t does not go to d, else its place among the tokens that
//                             go to d, in token order: a scan of the 0/1 flags "t goes to d"
// The block walks the tokens a tile of blockDim.x at a time, counting experts with shared-memory
// atomics and scanning the flags in shared memory, carrying the running total between tiles.
// Dynamic shared memory: (experts / ranks + blockDim.x) ints.
extern "C" __global__ void get_dispatch_layout(const int* topk_idx, int* num_tokens_per_rank,
                                               int* num_tokens_per_expert, int* send_pos, int tokens,
                                               int topk, int experts, int ranks) {
    extern __shared__ int smem[];
    int per_rank = experts / ranks;
    int* expert_count = smem;           // per_rank counters
    int* scan = smem + per_rank;        // blockDim.x flags, scanned in place
    int d = blockIdx.x, tid = threadIdx.x, n = blockDim.x;
    for (int j = tid; j < per_rank; j += n) expert_count[j] = 0;
    __syncthreads();
    int carry = 0;                      // tokens of earlier tiles that go to d
    for (int base = 0; base < tokens; base += n) {
        int t = base + tid;
        int flag = 0;
        if (t < tokens) {
            for (int k = 0; k < topk; ++k) {
                int e = topk_idx[t * topk + k];
                if (e / per_rank == d) {
                    flag = 1;
                    atomicAdd(&expert_count[e - d * per_rank], 1);
                }
            }
        }
        scan[tid] = flag;
        __syncthreads();
        // Hillis-Steele inclusive scan: log2(n) steps, each reading before any thread writes.
        for (int off = 1; off < n; off *= 2) {
            int v = tid >= off ? scan[tid - off] : 0;
            __syncthreads();
            scan[tid] += v;
            __syncthreads();
        }
        if (t < tokens) send_pos[t * ranks + d] = flag ? carry + scan[tid] - 1 : -1;
        carry += scan[n - 1];
        __syncthreads();  // scan[n - 1] is read by all before the next tile overwrites it
    }
    if (tid == 0) num_tokens_per_rank[d] = carry;
    for (int j = tid; j < per_rank; j += n) num_tokens_per_expert[d * per_rank + j] = expert_count[j];
}
