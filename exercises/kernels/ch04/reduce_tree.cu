// One partial sum per block: block b adds up x[b * blockDim.x ...] (blockDim.x elements, or
// fewer in the last block) and writes the total to block_sums[b]. The host launches it again
// on the block sums until one value is left.
//
// The block's values go into shared memory, then a tree: at each step the first half of the
// live values adds in the second half, so blockDim.x values become one in log2(blockDim.x)
// steps. blockDim.x must be a power of two; the launch gives the block blockDim.x floats of
// dynamic shared memory (shared_mem_bytes).

// ANCHOR: kernel
extern "C" __global__ void reduce_tree(const float* x, float* block_sums, int n) {
    extern __shared__ float partial[];  // blockDim.x floats, sized by the launch
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    // TODO: store this thread's element in partial[t] (0.0f past n) and wait for the block.
    // Then for stride = blockDim.x / 2, blockDim.x / 4, ..., 1: threads t < stride add
    // partial[t + stride] into partial[t], and the whole block waits before the next step.
    // Finally thread 0 writes partial[0] to block_sums[blockIdx.x].
}
// ANCHOR_END: kernel
