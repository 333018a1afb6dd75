// Wrong: no bounds check. The last block's threads past n write beyond the arrays; a GPU may not
// notice (allocations are rounded up), the emulator does.
extern "C" __global__ void who_am_i(int* block, int* thread, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    block[i] = blockIdx.x;
    thread[i] = threadIdx.x;
}
