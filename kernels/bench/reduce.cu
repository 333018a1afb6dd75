// Block sums in shared memory, for `gpubook emu-bench` (the same kernel numba's simulator runs in
// scripts/bench/numba_cudasim.py): out[block] = sum of the block's 256 inputs.
#define BLOCK 256
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
    __shared__ float partial[BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}
