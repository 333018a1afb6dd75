// Wrong: threadIdx.x alone is the index within a block, not within the grid. Every block
// writes slots 0..blockDim.x, and the slots after them are never written.
extern "C" __global__ void who_am_i(int* block, int* thread, int n) {
    int i = threadIdx.x;
    if (i < n) {
        block[i] = blockIdx.x;
        thread[i] = threadIdx.x;
    }
}
