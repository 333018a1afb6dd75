// The same block sums as reduce_tree.cu, with warp shuffles: the 32 threads of a warp pass
// values register to register (__shfl_down_sync), with no shared memory and no __syncthreads.
// Shared memory is needed only once, to bring the warps' totals together.

// ANCHOR: warp_sum
// The sum of v over the 32 lanes of the calling warp, in lane 0 (other lanes hold partial sums).
// All 32 lanes must call it.
__device__ float warp_sum(float v) {
    // TODO: for offset = 16, 8, 4, 2, 1: add the value of the lane `offset` further down
    // (__shfl_down_sync(0xffffffffu, v, offset)) to v.
    return v;
}
// ANCHOR_END: warp_sum

// ANCHOR: kernel
// block_sums[b] = the sum of block b's elements of x (blockDim.x a multiple of 32).
extern "C" __global__ void reduce_warp(const float* x, float* block_sums, int n) {
    __shared__ float warp_sums[32];  // one per warp: a block has at most 1024 / 32 = 32 warps
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    // TODO: each warp adds up its 32 elements with warp_sum (0.0f past n; all lanes call it),
    // and lane 0 stores the warp's total in warp_sums[warp]. Wait for the block. Then warp 0
    // adds up the blockDim.x / 32 totals with warp_sum, and its lane 0 writes block_sums[blockIdx.x].
}
// ANCHOR_END: kernel
