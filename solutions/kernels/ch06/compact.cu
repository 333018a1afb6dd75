// Stream compaction: the indices of the tokens routed to one expert, in order. Three kernels,
// one thread per token, blocks of 256: count each block's kept tokens, scan the counts (given),
// then write each kept token at its place.

// ANCHOR: lanes_below
// The lanes of this warp below the calling lane, as a mask (CUDA's %lanemask_lt).
__device__ unsigned lanes_below() {
    return (1u << (threadIdx.x % 32)) - 1u;
}
// ANCHOR_END: lanes_below

// ANCHOR: count_kept
// block_counts[blockIdx.x] = how many tokens of this block have experts[i] == expert.
extern "C" __global__ void count_kept(const unsigned* experts, unsigned* block_counts, int n, unsigned expert) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool keep = i < n && experts[i] == expert;
    // SOLUTION
    // A barrier that also counts: how many threads of the block passed it with keep true.
    unsigned kept = __syncthreads_count(keep);
    if (threadIdx.x == 0) block_counts[blockIdx.x] = kept;
    // STUB
    // // TODO: count the block's kept tokens (every thread of the block takes part) and let one
    // // thread write the count to block_counts[blockIdx.x]. Hint: __syncthreads_count, or
    // // __ballot_sync and __popc per warp.
    // END SOLUTION
}
// ANCHOR_END: count_kept

// ANCHOR: compact
// tokens[block_offsets[b] + k] = the index of block b's k-th kept token (block_offsets is the
// exclusive scan of block_counts).
extern "C" __global__ void compact(const unsigned* experts, const unsigned* block_offsets, unsigned* tokens, int n,
                                   unsigned expert) {
    __shared__ unsigned warp_offsets[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    bool keep = i < n && experts[i] == expert;
    // SOLUTION
    unsigned kept = __ballot_sync(0xffffffffu, keep);  // bit l: lane l keeps its token
    if (lane == 0) warp_offsets[warp] = __popc(kept);   // the warp's count
    __syncthreads();
    if (threadIdx.x == 0) {  // exclusive scan of the (at most 32) warp counts
        unsigned sum = 0;
        for (int w = 0; w < blockDim.x / 32; w++) {
            unsigned c = warp_offsets[w];
            warp_offsets[w] = sum;
            sum += c;
        }
    }
    __syncthreads();
    if (keep) {
        // Before this token: the blocks before, the warps before, the kept lanes below.
        tokens[block_offsets[blockIdx.x] + warp_offsets[warp] + __popc(kept & lanes_below())] = i;
    }
    // STUB
    // // TODO: the place of a kept token is the number of kept tokens before it: in the blocks
    // // before (block_offsets[blockIdx.x]), in the warps of this block before its own (count
    // // each warp's with __ballot_sync and __popc, then an exclusive scan of the warp counts in
    // // warp_offsets), and in the lanes below it in its warp (lanes_below()). Write
    // // tokens[place] = i for each kept token.
    // END SOLUTION
}
// ANCHOR_END: compact

// ANCHOR: scan_counts
// offsets = the exclusive scan of counts[0 .. blocks), *total = their sum: one block of 1024
// threads, 1024 counts at a time (Kogge-Stone in shared memory), with a running carry.
extern "C" __global__ void scan_counts(const unsigned* counts, unsigned* offsets, unsigned* total, int blocks) {
    __shared__ unsigned s[1024];
    unsigned carry = 0;
    int t = threadIdx.x;
    for (int base = 0; base < blocks; base += blockDim.x) {
        unsigned own = base + t < blocks ? counts[base + t] : 0u;
        s[t] = own;
        __syncthreads();
        for (int d = 1; d < blockDim.x; d *= 2) {
            unsigned before = t >= d ? s[t - d] : 0u;
            __syncthreads();  // every read of this step before any write
            s[t] += before;
            __syncthreads();
        }
        if (base + t < blocks) offsets[base + t] = carry + s[t] - own;
        carry += s[blockDim.x - 1];
        __syncthreads();  // everyone has read s before the next round overwrites it
    }
    if (t == 0) *total = carry;
}
// ANCHOR_END: scan_counts
