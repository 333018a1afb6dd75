// A block scan, and what the multi-block scan adds to it. All values are u32 and sums wrap.

// ANCHOR: warp_scan
// The inclusive scan over the 32 lanes of the calling warp: lane l gets the sum of the v of
// lanes 0 ..= l. All 32 lanes must call it.
__device__ unsigned warp_scan(unsigned v) {
    int lane = threadIdx.x % 32;
    // SOLUTION
    // Kogge-Stone in registers: after the step with distance d, lane l holds the sum of lanes
    // l - 2d + 1 ..= l; five steps cover 32 lanes.
    for (int d = 1; d < 32; d *= 2) {
        unsigned up = __shfl_up_sync(0xffffffffu, v, d);  // lane l - d's value (lanes < d get their own)
        if (lane >= d) v += up;
    }
    // STUB
    // // TODO: for d = 1, 2, 4, 8, 16: add the v of the lane d places down (__shfl_up_sync), in
    // // the lanes that have one (lane >= d). Every lane calls the shuffle.
    // END SOLUTION
    return v;
}
// ANCHOR_END: warp_scan

// ANCHOR: block_scan
// y[i] = x[b0] + ... + x[i], where b0 is the first element of i's block (blockDim.x elements a
// block, a multiple of 32; 0 past n); block_sums[blockIdx.x] = the block's total.
extern "C" __global__ void block_scan(const unsigned* x, unsigned* y, unsigned* block_sums, int n) {
    __shared__ unsigned warp_totals[32];  // one per warp: at most 1024 / 32
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    // SOLUTION
    unsigned v = warp_scan(i < n ? x[i] : 0u);
    if (lane == 31) warp_totals[warp] = v;  // the warp's total
    __syncthreads();
    if (warp == 0) {  // scan the warp totals: warp_totals[w] = warps 0 ..= w
        warp_totals[lane] = warp_scan(lane < blockDim.x / 32 ? warp_totals[lane] : 0u);
    }
    __syncthreads();
    if (warp > 0) v += warp_totals[warp - 1];  // everything in the warps before this one
    if (i < n) y[i] = v;
    if (threadIdx.x == blockDim.x - 1) block_sums[blockIdx.x] = v;
    // STUB
    // // TODO: scan each warp's 32 values with warp_scan (0 past n; every lane calls it); lane 31
    // // stores the warp's total in warp_totals[warp]; wait; warp 0 scans the blockDim.x / 32
    // // totals the same way; wait; each thread adds the total of the warps before its own. Write
    // // y[i] (i < n), and the last thread writes the block's total to block_sums[blockIdx.x].
    // END SOLUTION
}
// ANCHOR_END: block_scan

// ANCHOR: add_block_offsets
// y[i] += the total of every block before i's block, for a y scanned block by block:
// scanned_sums is the inclusive scan of the block totals, so block b adds scanned_sums[b - 1].
extern "C" __global__ void add_block_offsets(unsigned* y, const unsigned* scanned_sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n) y[i] += scanned_sums[blockIdx.x - 1];
}
// ANCHOR_END: add_block_offsets
