// Wrong: gridDim.x (blocks in the grid) where blockDim.x (threads in a block) belongs. Right
// only when the two happen to be equal.
extern "C" __global__ void who_am_i(int* block, int* thread, int n) {
    int i = blockIdx.x * gridDim.x + threadIdx.x;
    if (i < n) {
        block[i] = blockIdx.x;
        thread[i] = threadIdx.x;
    }
}
