// ANCHOR: kernel
// Each thread signs its own slot with where it sits in the grid: thread 7 of block 3 writes
// 30007. The launch must have exactly one slot per thread, so there is no bounds check.
extern "C" __global__ void hello(int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = blockIdx.x * 10000 + threadIdx.x;
}
// ANCHOR_END: kernel
